package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSealFHIR seals a FHIR R4 Bundle built from published R4 examples;
// the envelope opens to the Bundle's bytes and names its Patient.
func TestSealFHIR(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	settings := env(map[string]string{"DATA_DIR": dir})
	bundle := fhirtest.PatientBundle("2026-01-01", "2026-12-31")
	path := filepath.Join(dir, "bundle.json")
	require.NoError(t, os.WriteFile(path, bundle, 0o600))

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"seal", "--fhir", path}, settings, nil, &out, io.Discard))
	var e cipher.Envelope
	require.NoError(t, json.Unmarshal(out.Bytes(), &e))
	assert.Equal(t, "example", e.PatientID)
	assert.NotContains(t, out.String(), "AB9876")

	// Without --fhir the Bundle is recognised by its resourceType, from stdin too.
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"seal", "-"}, settings, bytes.NewReader(bundle), &out, io.Discard))
	require.NoError(t, json.Unmarshal(out.Bytes(), &e))
	assert.Equal(t, "example", e.PatientID)

	// --fhir refuses our record JSON, and a Bundle missing what the record needs.
	err := run(t.Context(), []string{"seal", "--fhir", "../../testdata/record.json"}, settings, nil, io.Discard, io.Discard)
	require.ErrorIs(t, err, fhir.ErrInvalid)
	cov := fhirtest.Resource("coverage-example-2")
	delete(cov, "period")
	require.NoError(t, os.WriteFile(path, fhirtest.Bundle(fhirtest.Example("patient-example"), cov), 0o600))
	err = run(t.Context(), []string{"seal", "--fhir", path}, settings, nil, io.Discard, io.Discard)
	require.EqualError(t, err, "Bundle.entry[1].resource(Coverage).period: missing (the coverage's start and end dates)")
}
