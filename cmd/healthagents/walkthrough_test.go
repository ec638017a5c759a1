package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
)

// walkBlock is one fenced block of the README's walkthrough: a shell block
// (```sh walkthrough [server]) and the expected output
// shown after it (```json|text walkthrough-expect), if any.
type walkBlock struct {
	line   int
	tags   []string
	script string
	expect string // "" when the README shows no output
	lang   string // of expect: json or text
}

func (b walkBlock) has(tag string) bool {
	for _, t := range b.tags {
		if t == tag {
			return true
		}
	}
	return false
}

var fence = regexp.MustCompile("^```(\\S*)\\s*(.*)$")

// walkthroughBlocks extracts the walkthrough's blocks from a README.
func walkthroughBlocks(readme string) ([]walkBlock, error) {
	var blocks []walkBlock
	sc := bufio.NewScanner(strings.NewReader(readme))
	n := 0
	for sc.Scan() {
		n++
		m := fence.FindStringSubmatch(sc.Text())
		if m == nil || m[1] == "" {
			continue
		}
		lang, tags := m[1], strings.Fields(m[2])
		start := n
		var body strings.Builder
		closed := false
		for sc.Scan() {
			n++
			if strings.TrimSpace(sc.Text()) == "```" {
				closed = true
				break
			}
			body.WriteString(sc.Text() + "\n")
		}
		if !closed {
			return nil, fmt.Errorf("README line %d: unclosed block", start)
		}
		switch {
		case len(tags) > 0 && tags[0] == "walkthrough":
			if lang != "sh" {
				return nil, fmt.Errorf("README line %d: a walkthrough block must be sh, not %s", start, lang)
			}
			blocks = append(blocks, walkBlock{line: start, tags: tags[1:], script: body.String()})
		case len(tags) > 0 && tags[0] == "walkthrough-expect":
			if len(blocks) == 0 || blocks[len(blocks)-1].expect != "" {
				return nil, fmt.Errorf("README line %d: an expected output must follow its walkthrough block", start)
			}
			blocks[len(blocks)-1].expect, blocks[len(blocks)-1].lang = body.String(), lang
		}
	}
	return blocks, sc.Err()
}

// TestREADMEWalkthrough runs the README's walkthrough as a newcomer would:
// it builds the binary, starts it as the walkthrough's first block says (on
// a temporary DATA_DIR and free ports instead of 8000 and 8545), then runs
// every other `sh walkthrough` block in order in one bash session, in a
// scratch directory beside the repository's testdata, and checks each
// block's output against the `walkthrough-expect` block shown after it.
// In the blocks, `go run ./cmd/healthagents` runs the binary built here
// (same source; no relinking per command).
func TestREADMEWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the binary")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walkthrough needs %s", tool)
		}
	}
	t.Parallel() // its server and script wait more than they compute: the package's other tests run meanwhile
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	blocks, err := walkthroughBlocks(string(readme))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(blocks), 4, "the README has a walkthrough")
	require.True(t, blocks[0].has("server"), "the walkthrough starts with the server")
	require.Equal(t, "CHAIN_RPC_LISTEN=127.0.0.1:8545 go run ./cmd/healthagents", strings.TrimSpace(blocks[0].script),
		"this test starts the server as that block says; teach it the new command")

	bin := clitest.Binary(t)

	port, rpcPort := clitest.FreePort(t), clitest.FreePort(t)
	dataDir := zkkeys.DataDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv := exec.CommandContext(ctx, bin)
	srv.Env = append(append(os.Environ(), clitest.HarnessEnv(t)...), "DATA_DIR="+dataDir, "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", port),
		fmt.Sprintf("CHAIN_RPC_LISTEN=127.0.0.1:%d", rpcPort), "LOG_LEVEL=warn")
	srvLog, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	require.NoError(t, err)
	srv.Stdout, srv.Stderr = srvLog, srvLog
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		cancel()
		_ = srv.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(srvLog.Name())
			t.Logf("server log:\n%s", b)
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	clitest.WaitHealthy(t, base+"/health")

	// The scratch directory: the blocks' files (envelope.json, ...) land
	// here, and testdata/ is the repository's.
	work := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(root, "testdata"), filepath.Join(work, "testdata")))
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	script.WriteString(`go() { if [ "${1:-}" = run ] && [ "${2:-}" = ./cmd/healthagents ]; then shift 2; "$HEALTHAGENTS_TEST_BIN" "$@"; else command go "$@"; fi; }` + "\n")
	ports := strings.NewReplacer("http://localhost:8000", base, "127.0.0.1:8545", fmt.Sprintf("127.0.0.1:%d", rpcPort))
	for i, b := range blocks[1:] {
		fmt.Fprintf(&script, "echo '::block %d'\n", i+1)
		body := ports.Replace(b.script)
		script.WriteString(body)
	}
	script.WriteString("echo '::end'\n")
	run := exec.CommandContext(t.Context(), "bash", "-c", script.String())
	run.Dir = work
	run.Env = append(append(os.Environ(), clitest.HarnessEnv(t)...), "DATA_DIR="+dataDir, "HEALTHAGENTS_TEST_BIN="+bin)
	var stderr strings.Builder
	run.Stderr = &stderr
	stdout, err := run.Output()
	outputs := strings.Split(string(stdout), "::block ")
	require.NoError(t, err, "the walkthrough stopped in block %d\nstdout:\n%s\nstderr:\n%s", len(outputs)-1, stdout, stderr.String())
	require.Contains(t, string(stdout), "::end")
	require.Len(t, outputs, len(blocks), "stdout:\n%s", stdout)

	for i, b := range blocks[1:] {
		got := strings.TrimSuffix(outputs[i+1], "::end\n")
		_, got, _ = strings.Cut(got, "\n") // the marker's own line
		t.Run(fmt.Sprintf("block at README line %d", b.line), func(t *testing.T) {
			t.Logf("output:\n%s", got)
			if b.expect == "" {
				return
			}
			if b.lang == "json" {
				matchJSON(t, b.expect, got)
			} else {
				matchText(t, b.expect, got)
			}
		})
	}
}

// matchJSON checks got against the README's expected JSON: every key shown
// is present with the value shown; a string with "…" matches any string
// that starts with the part before it; an array shown matches an array
// whose every element matches its first element.
func matchJSON(t *testing.T, expect, got string) {
	t.Helper()
	var want, have any
	require.NoError(t, json.Unmarshal([]byte(expect), &want), "the README's expected JSON")
	require.NoError(t, json.Unmarshal([]byte(got), &have), "the block's output is JSON: %s", got)
	var walk func(path string, w, h any)
	walk = func(path string, w, h any) {
		switch w := w.(type) {
		case map[string]any:
			hm, ok := h.(map[string]any)
			if !assert.True(t, ok, "%s: want an object, got %v", path, h) {
				return
			}
			for k, v := range w {
				hv, ok := hm[k]
				if assert.True(t, ok, "%s.%s: missing", path, k) {
					walk(path+"."+k, v, hv)
				}
			}
		case []any:
			ha, ok := h.([]any)
			if !assert.True(t, ok, "%s: want an array, got %v", path, h) || len(w) == 0 {
				return
			}
			assert.NotEmpty(t, ha, path)
			for i, x := range ha {
				walk(fmt.Sprintf("%s[%d]", path, i), w[0], x)
			}
		case string:
			if prefix, _, wild := strings.Cut(w, "…"); wild {
				s, ok := h.(string)
				assert.True(t, ok && strings.HasPrefix(s, prefix) && len(s) > len(prefix), "%s: want %q, got %v", path, w, h)
				return
			}
			assert.Equal(t, w, h, path)
		default:
			assert.Equal(t, w, h, path)
		}
	}
	walk("$", want, have)
}

// matchText checks got against the README's expected lines, in order: a
// line with "…" matches a line starting with the part before it.
func matchText(t *testing.T, expect, got string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	at := 0
	for _, w := range strings.Split(strings.TrimSpace(expect), "\n") {
		prefix, _, wild := strings.Cut(w, "…")
		prefix = strings.TrimRight(prefix, " ")
		found := false
		for ; at < len(lines); at++ {
			if (wild && strings.HasPrefix(lines[at], prefix) && len(lines[at]) > len(prefix)) || (!wild && lines[at] == w) {
				found = true
				at++
				break
			}
		}
		assert.True(t, found, "no line %q (in order) in:\n%s", w, got)
	}
}
