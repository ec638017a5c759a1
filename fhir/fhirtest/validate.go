package fhirtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// ValidatorEnv names the directory where testdata/fhir-validator is
// installed (npm ci); .ci/fhirvalidator.sh sets it.
const ValidatorEnv = "HEALTHAGENTS_TEST_FHIR_VALIDATOR"

// Validate checks resources against the official FHIR R4 JSON schema with
// @asymmetrik/fhir-json-schema-validator (testdata/fhir-validator), and
// returns the validator's report and whether every resource is valid. It
// skips the test when ValidatorEnv is unset.
func Validate(t testing.TB, resources ...[]byte) (report string, valid bool) {
	t.Helper()
	dir := os.Getenv(ValidatorEnv)
	if dir == "" {
		t.Skipf("%s is unset: run .ci/fhirvalidator.sh (needs node and npm)", ValidatorEnv)
	}
	tmp := t.TempDir()
	args := []string{filepath.Join(dir, "validate.js")}
	for i, r := range resources {
		p := filepath.Join(tmp, "resource-"+strconv.Itoa(i)+".json")
		if err := os.WriteFile(p, r, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	cmd := exec.CommandContext(t.Context(), "node", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("running the FHIR validator: %v\n%s", err, out)
		}
		return string(out), false
	}
	return string(out), true
}
