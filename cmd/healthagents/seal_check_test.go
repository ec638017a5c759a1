package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

func TestSealNotes(t *testing.T) {
	t.Parallel()
	drugs, err := prescription.New()
	require.NoError(t, err)
	today := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	sample, err := os.ReadFile("../../testdata/record.json")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, plaintext string
		want            []string
	}{
		{"ok/the sample record", string(sample), nil},
		{"no coverage", `{"patient_id":"PT-1"}`, []string{"no 'coverage'"}},
		{"typos", `{"patient_id":"PT-1","conditons":["E11.9"],"coverage":{"member_id":"M","status":"active","start":"2026-01-01","end":"2026-12-31","copy":25}}`,
			[]string{"'conditons' is not a record field", "'coverage.copy' is not a record field"}},
		{"inactive", `{"patient_id":"PT-1","coverage":{"member_id":"M","status":"cancelled","start":"2026-01-01","end":"2026-12-31"}}`,
			[]string{`coverage.status is "cancelled"`}},
		{"expired", `{"patient_id":"PT-1","coverage":{"member_id":"M","status":"active","start":"2025-01-01","end":"2025-12-31"}}`,
			[]string{"does not include today (2026-11-21)"}},
		{"unknown medication", `{"patient_id":"PT-1","coverage":{"member_id":"M","status":"active","start":"2026-01-01","end":"2026-12-31"},"medications":["11289","not-a-drug"]}`,
			[]string{"medications[1] is not in the drug catalogue"}},
		{"medications as EHRs write them", `{"patient_id":"PT-1","coverage":{"member_id":"M","status":"active","start":"2026-01-01","end":"2026-12-31"},"medications":["855332","warfarin sodium 5 MG Oral Tablet","Coumadin 5 mg tablet"],"allergies":["Cashew nuts","NKDA"]}`, nil},
		{"unidentified allergy", `{"patient_id":"PT-1","coverage":{"member_id":"M","status":"active","start":"2026-01-01","end":"2026-12-31"},"allergies":["penicillin","not-a-drug"]}`,
			[]string{"allergies[1] names no allergen the rules know"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, err := record.Parse([]byte(tc.plaintext))
			require.NoError(t, err)
			notes := sealNotes([]byte(tc.plaintext), rec, nil, today, drugs)
			require.Len(t, notes, len(tc.want), "%q", notes)
			for i, w := range tc.want {
				assert.Contains(t, notes[i], w)
			}
			for _, n := range notes {
				assert.NotContains(t, n, "not-a-drug", "notes never repeat a value")
			}
		})
	}
}

// TestSealSaysWhatIsMissing: a record the service cannot use is not sealed,
// and the error names the field; a usable one with gaps is sealed, with a
// note per gap on standard error.
func TestSealSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	settings := env(map[string]string{"DATA_DIR": dir})
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"patient_id":"PT-1","coverage":{"status":"active"}}`), 0o600))
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"seal", bad}, settings, nil, &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "coverage.member_id")
	assert.Empty(t, out.String())

	gaps := filepath.Join(dir, "gaps.json")
	require.NoError(t, os.WriteFile(gaps, []byte(`{"patient_id":"PT-1","conditons":["E11.9"]}`), 0o600))
	out.Reset()
	errOut.Reset()
	require.NoError(t, run(t.Context(), []string{"seal", gaps}, settings, nil, &out, &errOut))
	var envelope map[string]string
	require.NoError(t, json.Unmarshal(out.Bytes(), &envelope))
	assert.Equal(t, "PT-1", envelope["patient_id"])
	notes := errOut.String()
	assert.Contains(t, notes, "note: 'conditons' is not a record field")
	assert.Contains(t, notes, "note: no 'coverage'")
	assert.False(t, strings.Contains(notes, "E11.9"), "notes never repeat a value")
}
