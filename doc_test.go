package healthagents_test

import (
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPackageDocPointsOn: the root package doc names client, server and
// app, and every runnable program under examples/ (a new example must be
// listed there for a newcomer to find it).
func TestPackageDocPointsOn(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	require.NotNil(t, f.Doc)
	doc := f.Doc.Text()
	for _, pkg := range []string{"Package client", "Package server", "Package app"} {
		assert.Contains(t, doc, pkg)
	}
	entries, err := os.ReadDir("examples")
	require.NoError(t, err)
	for _, e := range entries {
		if _, err := os.Stat("examples/" + e.Name() + "/main.go"); err == nil {
			assert.True(t, strings.Contains(doc, "examples/"+e.Name()), "doc.go does not point to examples/%s", e.Name())
		}
	}
}
