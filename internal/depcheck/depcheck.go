// Package depcheck is for tests that keep a package light: it lists what a
// program importing the package links (go list -deps) and reports every
// dependency under a forbidden prefix.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// Deps returns every package a program importing pkg links, failing t when
// go list fails or the list does not name pkg itself.
func Deps(t testing.TB, pkg string) []string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	deps := strings.Fields(string(out))
	if !contains(deps, pkg) {
		t.Fatalf("go list -deps %s does not list the package itself", pkg)
	}
	return deps
}

// Forbid reports (t.Errorf) each of deps that is one of forbidden or below
// it: an entry ending in "/" is a prefix (a module owner), any other entry a
// package and its subpackages. Entries in allowed are never reported.
func Forbid(t testing.TB, pkg string, deps, forbidden []string, allowed ...string) {
	t.Helper()
	for _, d := range deps {
		if contains(allowed, d) {
			continue
		}
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
