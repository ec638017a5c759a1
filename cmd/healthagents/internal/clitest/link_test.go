package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/testcache"
)

// linkModule writes a small module to dir: a main package printing a
// constant of another package and a file that package embeds, and a test
// file.
func linkModule(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"go.mod":              "module example.com/linktest\n\ngo 1.26.0\n",
		"main.go":             "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/linktest/msg\"\n)\n\nfunc main() { fmt.Print(msg.Word, \" \", msg.Greeting) }\n",
		"msg/msg.go":          "package msg\n\nimport _ \"embed\"\n\nconst Word = \"one\"\n\n//go:embed greeting.txt\nvar Greeting string\n",
		"msg/greeting.txt":    "hello",
		"msg/msg_test.go":     "package msg\n\nimport \"testing\"\n\nfunc TestWord(t *testing.T) {}\n",
		"msg/ignored.go":      "//go:build never\n\npackage msg\n\nconst Ignored = 1\n",
		"msg/notes/readme.md": "not a Go file\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

// runBinary runs the binary at path and returns what it printed.
func runBinary(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(path).Output()
	require.NoError(t, err)
	return string(out)
}

// TestLinkByContent: Link hands out one binary per content of the sources
// it is built from, wherever they are checked out, and a change to any of
// them (a Go file of a package it links, an embedded file, a file a build
// tag adds, the build environment) links another one that runs the new
// code: never a stale binary. A change to what the binary is not built
// from (a test file, a file excluded by its build tag, a non-Go file)
// keeps the binary.
func TestLinkByContent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	c, err := testcache.OpenDir(t.TempDir())
	require.NoError(t, err)
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "elsewhere", "b")
	linkModule(t, a)
	linkModule(t, b)
	link := func(root string) string {
		t.Helper()
		path, err := Link(c, root, ".")
		require.NoError(t, err)
		return path
	}

	first := link(a)
	assert.Equal(t, "one hello", runBinary(t, first))
	info, err := os.Stat(first)
	require.NoError(t, err)
	assert.Equal(t, first, link(a), "the same sources: the same binary")
	assert.Equal(t, first, link(b), "the same sources in another checkout: the same binary")
	again, err := os.Stat(first)
	require.NoError(t, err)
	assert.True(t, os.SameFile(info, again) && info.ModTime().Equal(again.ModTime()), "not linked again")

	// What the binary is not built from changes nothing.
	writeFile(t, filepath.Join(b, "msg/msg_test.go"), "package msg\n\nimport \"testing\"\n\nfunc TestOther(t *testing.T) {}\n")
	writeFile(t, filepath.Join(b, "msg/ignored.go"), "//go:build never\n\npackage msg\n\nconst Ignored = 2\n")
	writeFile(t, filepath.Join(b, "msg/notes/readme.md"), "still not a Go file\n")
	assert.Equal(t, first, link(b))

	// A changed source file: another binary, running the change; the
	// first checkout keeps its own.
	writeFile(t, filepath.Join(b, "msg/msg.go"), "package msg\n\nimport _ \"embed\"\n\nconst Word = \"two\"\n\n//go:embed greeting.txt\nvar Greeting string\n")
	second := link(b)
	assert.NotEqual(t, first, second)
	assert.Equal(t, "two hello", runBinary(t, second))
	assert.Equal(t, first, link(a))
	assert.Equal(t, "one hello", runBinary(t, first))

	// A changed embedded file.
	writeFile(t, filepath.Join(b, "msg/greeting.txt"), "hi")
	third := link(b)
	assert.NotContains(t, []string{first, second}, third)
	assert.Equal(t, "two hi", runBinary(t, third))

	// A new file in the build.
	writeFile(t, filepath.Join(b, "msg/extra.go"), "package msg\n\nfunc init() { Greeting += \"!\" }\n")
	fourth := link(b)
	assert.NotContains(t, []string{first, second, third}, fourth)
	assert.Equal(t, "two hi!", runBinary(t, fourth))

	// The build environment: a tag that takes the excluded file in.
	goflags := os.Getenv("GOFLAGS")
	t.Setenv("GOFLAGS", strings.TrimSpace(goflags+" -tags=never"))
	writeFile(t, filepath.Join(a, "msg/ignored.go"), "//go:build never\n\npackage msg\n\nfunc init() { Greeting = \"tagged\" }\n")
	tagged := link(a)
	assert.NotEqual(t, first, tagged)
	assert.Equal(t, "one tagged", runBinary(t, tagged))
	t.Setenv("GOFLAGS", goflags)
	assert.Equal(t, first, link(a))

	// A binary that does not match its recorded digest is linked again.
	require.NoError(t, os.WriteFile(first, []byte("not the binary"), 0o700))
	assert.Equal(t, first, link(a))
	assert.Equal(t, "one hello", runBinary(t, first))
}

// TestPrune: of a package's binaries, Link keeps the ones handed out in the
// last binaryIdle and the most recent keepBinaries in all, and deletes the
// rest.
func TestPrune(t *testing.T) {
	base := t.TempDir()
	now := time.Now()
	ages := map[string]time.Duration{
		"kept": 3 * time.Hour, // the one handed out
		"new1": time.Minute, "new2": 30 * time.Minute, "new3": 50 * time.Minute, "new4": 55 * time.Minute,
		"old1": 2 * time.Hour, "old2": 3 * time.Hour,
	}
	for name, age := range ages {
		dir := filepath.Join(base, name)
		require.NoError(t, os.Mkdir(dir, 0o700))
		require.NoError(t, os.Chtimes(dir, now.Add(-age), now.Add(-age)))
	}
	prune(base, filepath.Join(base, "kept"))
	left, err := os.ReadDir(base)
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	assert.Equal(t, "kept new1 new2 new3 new4", strings.Join(names, " "), "recently used ones stay beyond keepBinaries")

	require.NoError(t, os.Chtimes(filepath.Join(base, "new4"), now.Add(-2*time.Hour), now.Add(-2*time.Hour)))
	prune(base, filepath.Join(base, "kept"))
	left, err = os.ReadDir(base)
	require.NoError(t, err)
	names = names[:0]
	for _, e := range left {
		names = append(names, e.Name())
	}
	assert.Equal(t, "kept new1 new2 new3", strings.Join(names, " "))
}
