package app

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// UnknownSettingError is an environment variable that looks like one of
// ours (a SettingPrefixes prefix, or within two letters of a setting) but
// is not a setting: a misspelt name would otherwise be ignored and its
// default used without a word.
type UnknownSettingError struct {
	Name    string // the variable as set
	Nearest string // the setting nearest by edit distance
}

func (e *UnknownSettingError) Error() string {
	return fmt.Sprintf("%s: unknown setting; did you mean %s?", e.Name, e.Nearest)
}

// TestPrefix is reserved for the test suites' own variables
// (HEALTHAGENTS_TEST_POSTGRES, ...): the service reads none of them (the
// command reads two that test harnesses set for the processes they start,
// and ignores them in production: cmd/healthagents/harness.go), and
// CheckEnviron lets them pass so that a developer's shell that runs the
// tests can run the binary too.
const TestPrefix = "HEALTHAGENTS_TEST_"

// foreign are the variables with one of our prefixes that belong to
// another program run beside the service: IPFS_PATH is Kubo's repository
// directory.
func foreign(name string) bool { return name == "IPFS_PATH" }

// Kubernetes service links: every Service of the namespace becomes
// NAME_SERVICE_HOST, NAME_SERVICE_PORT[_PORTNAME], NAME_PORT=tcp://… and
// NAME_PORT_8000_TCP[_PROTO|_PORT|_ADDR] in every pod (unless the pod sets
// enableServiceLinks: false); the Service in front of this one is named
// healthagents.
var (
	serviceLink = regexp.MustCompile(`^[A-Z0-9_]+(_SERVICE_HOST|_SERVICE_PORT(_[A-Z0-9_]+)?|_PORT_[0-9]+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)$`)
	portLink    = regexp.MustCompile(`^(tcp|udp|sctp)://`)
)

// CheckEnviron refuses environ (os.Environ's "NAME=value" list) when it
// sets a variable that is not a setting but has one of SettingPrefixes, or
// is within two edits of a setting name of eight letters or more
// (MAX_CONECTIONS): one *UnknownSettingError per variable, sorted, joined.
// The test suites' variables (TestPrefix), Kubernetes service links and
// the few foreign variables we know are let through.
func CheckEnviron(environ []string) error {
	settings := Settings()
	known := settingNames()
	var errs []error
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if known[name] || foreign(name) || strings.HasPrefix(name, TestPrefix) ||
			serviceLink.MatchString(name) || strings.HasSuffix(name, "_PORT") && portLink.MatchString(value) {
			continue
		}
		nearest, d := nearestSetting(name, settings)
		ours := slices.ContainsFunc(SettingPrefixes(), func(p string) bool { return strings.HasPrefix(name, p) })
		if ours || d <= 2 && len(nearest) >= 8 {
			errs = append(errs, &UnknownSettingError{Name: name, Nearest: nearest})
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// nearestSetting is the setting nearest to name by edit distance and that
// distance; a tie goes to a name with the same first word, then to the
// first in alphabetical order.
func nearestSetting(name string, settings []Setting) (string, int) {
	word := func(s string) string { w, _, _ := strings.Cut(s, "_"); return w }
	best, bestD := "", -1
	for _, s := range settings {
		d := editDistance(name, s.Name)
		better := bestD < 0 || d < bestD
		if d == bestD {
			same, bestSame := word(s.Name) == word(name), word(best) == word(name)
			better = same && !bestSame || same == bestSame && s.Name < best
		}
		if better {
			best, bestD = s.Name, d
		}
	}
	return best, bestD
}

// editDistance is the Levenshtein distance of a and b (bytes: the names
// are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// SettingsUsage is the list of settings `healthagents serve -h` prints:
// each name with its default and one line.
func SettingsUsage() string {
	var b strings.Builder
	for _, s := range Settings() {
		fmt.Fprintf(&b, "  %s (default: %s)\n      %s\n", s.Name, strings.ReplaceAll(s.Default, "`", ""), strings.ReplaceAll(s.Usage, "`", ""))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// SettingsMarkdown is the settings table of docs/decisions.md.
func SettingsMarkdown() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning | read by |\n|---|---|---|---|\n")
	for _, s := range Settings() {
		doc := s.Doc
		if doc == "" {
			doc = s.Usage
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.Name, s.Default, doc, strings.Join(s.Read, ", "))
	}
	return b.String()
}
