// Package onnxtest runs the service's ONNX exports with onnxruntime (the
// onnxruntime-node npm package, a runtime we did not write), installed by
// .ci/onnxruntime.sh under testdata/onnxruntime. Tests skip when RuntimeEnv
// is unset.
package onnxtest

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RuntimeEnv names the directory where testdata/onnxruntime is installed
// (npm ci); .ci/onnxruntime.sh sets it.
const RuntimeEnv = "HEALTHAGENTS_TEST_ONNXRUNTIME"

// Result is what onnxruntime computed for the rows.
type Result struct {
	Inputs        []string    `json:"inputs"`
	Outputs       []string    `json:"outputs"`
	Probabilities [][]float64 `json:"probabilities"`
	Class         []int64     `json:"class"`
}

// Run loads model into onnxruntime and runs it over rows of raw feature
// values (NaN: missing). It skips the test when RuntimeEnv is unset.
func Run(t testing.TB, model []byte, rows [][]float64) Result {
	t.Helper()
	dir := os.Getenv(RuntimeEnv)
	if dir == "" {
		t.Skipf("%s is unset: run .ci/onnxruntime.sh (needs node and npm)", RuntimeEnv)
	}
	tmp := t.TempDir()
	modelPath, rowsPath := filepath.Join(tmp, "model.onnx"), filepath.Join(tmp, "rows.json")
	// JSON has no NaN: a missing value travels as null.
	js := make([][]*float64, len(rows))
	for i, r := range rows {
		js[i] = make([]*float64, len(r))
		for j, v := range r {
			if !math.IsNaN(v) {
				js[i][j] = &v
			}
		}
	}
	b, err := json.Marshal(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(modelPath, model, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rowsPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(dir, "predict.js"), modelPath, rowsPath)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("onnxruntime refused the model: %v\n%s", err, stderr.String())
	}
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("onnxruntime's output: %v", err)
	}
	if len(res.Probabilities) != len(rows) || len(res.Class) != len(rows) {
		t.Fatalf("onnxruntime answered %d rows for %d", len(res.Probabilities), len(rows))
	}
	return res
}
