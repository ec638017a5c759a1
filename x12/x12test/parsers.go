// Package x12test reads the service's X12 answers with two parsers we did
// not write — node-x12 (strict mode and its rule engine) and x12-parser —
// installed from npm by .ci/x12parsers.sh (testdata/x12-parsers). Tests
// skip when ParsersEnv is unset.
package x12test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// ParsersEnv names the directory where testdata/x12-parsers is installed
// (npm ci); .ci/x12parsers.sh sets it.
const ParsersEnv = "HEALTHAGENTS_TEST_X12_PARSERS"

// Report is what the two parsers made of one interchange.
type Report struct {
	NodeX12 struct {
		OK bool `json:"ok"`
		// Error is the strict parser's refusal, if any.
		Error string `json:"error"`
		// RuleErrors are segments that failed the rule engine.
		RuleErrors []json.RawMessage `json:"ruleErrors"`
		Header     []string          `json:"header"`
		Trailer    []string          `json:"trailer"`
		Groups     []struct {
			Header       []string `json:"header"`
			Trailer      []string `json:"trailer"`
			Transactions []struct {
				Header   []string   `json:"header"`
				Trailer  []string   `json:"trailer"`
				Segments [][]string `json:"segments"`
			} `json:"transactions"`
		} `json:"groups"`
		// TA1 is the TA1 segment of an interchange without groups.
		TA1 []string `json:"ta1"`
	} `json:"nodeX12"`
	X12Parser struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		// Segments are the stream parser's objects: "name" and the
		// elements by position ("1", "2", "13-1" for a component).
		Segments []map[string]string `json:"segments"`
		// HL are the grouper's HL loops: the segment names of each.
		HL [][]string `json:"hl"`
	} `json:"x12Parser"`
}

// Accepted reports whether both parsers read the interchange without
// complaint.
func (r Report) Accepted() bool { return r.NodeX12.OK && r.X12Parser.OK }

// Parse runs both parsers over each interchange and returns their reports,
// in order. It skips the test when ParsersEnv is unset.
func Parse(t testing.TB, interchanges ...[]byte) []Report {
	t.Helper()
	dir := os.Getenv(ParsersEnv)
	if dir == "" {
		t.Skipf("%s is unset: run .ci/x12parsers.sh (needs node and npm)", ParsersEnv)
	}
	tmp := t.TempDir()
	args := []string{filepath.Join(dir, "check.js")}
	for i, b := range interchanges {
		p := filepath.Join(tmp, "interchange-"+strconv.Itoa(i)+".x12")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	cmd := exec.CommandContext(t.Context(), "node", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("running the X12 parsers: %v\n%s", err, stderr.String())
	}
	var reports []Report
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r Report
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("reading the parsers' report: %v\n%s", err, sc.Bytes())
		}
		reports = append(reports, r)
	}
	if len(reports) != len(interchanges) {
		t.Fatalf("the parsers reported on %d of %d interchanges: %v\n%s", len(reports), len(interchanges), err, stderr.String())
	}
	return reports
}

// RequireAccepted parses the interchanges and fails the test, with both
// parsers' complaints, unless both accept every one.
func RequireAccepted(t testing.TB, interchanges ...[]byte) []Report {
	t.Helper()
	reports := Parse(t, interchanges...)
	for i, r := range reports {
		if !r.Accepted() {
			b, _ := json.MarshalIndent(r, "", "  ")
			t.Fatalf("interchange %d refused by the npm parsers:\n%s\n--- interchange:\n%s", i, b, interchanges[i])
		}
	}
	return reports
}

// Segments returns node-x12's segments of every transaction set, in
// order, each as [id, elements...].
func (r Report) Segments() [][]string {
	var out [][]string
	for _, g := range r.NodeX12.Groups {
		for _, t := range g.Transactions {
			out = append(out, t.Header)
			out = append(out, t.Segments...)
			out = append(out, t.Trailer)
		}
	}
	return out
}
