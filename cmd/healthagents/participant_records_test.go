package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
	"github.com/healthagents/healthagents/federated"
)

// Encrypted records open into the same records as the CSV they came from;
// bad envelopes are counted by reason, without content; a wrong key is one
// clear line.
func TestReadParticipantRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	tf, err := federated.ParseTaskFile(strings.NewReader(clitest.MustRead(t, filepath.Join(root, "testdata", "wdbc", "task.json"))))
	require.NoError(t, err)
	csvs := clitest.SplitCSV(t, filepath.Join(root, "testdata", "wdbc", "wdbc.csv"), dir, 3)
	keyFile := filepath.Join(dir, "hospital.key")
	key := clitest.WriteKey(t, keyFile)
	path := filepath.Join(dir, "records.ndjson")
	n := clitest.SealCSV(t, tf, csvs[0], path, key)

	kr, err := loadKeyFile(keyFile)
	require.NoError(t, err)
	got, rep, err := readParticipantRecords(t.Context(), path, kr)
	require.NoError(t, err)
	want, err := readParticipantCSV(tf, csvs[0], federated.DefaultMaxUnusable, io.Discard)
	require.NoError(t, err)
	require.Len(t, got, n)
	assert.Equal(t, n, rep.Opened)
	for i := range want {
		assert.Equal(t, want[i].PatientID, got[i].PatientID)
		assert.Equal(t, want[i].Diagnosis, got[i].Diagnosis)
		assert.Equal(t, want[i].Observations, got[i].Observations)
	}

	// Bad lines: not an envelope, a tampered hash, another hospital's key,
	// a record whose patient_id is not the envelope's, a repeat.
	lines := strings.Split(strings.TrimSpace(clitest.MustRead(t, path)), "\n")
	var e cipher.Envelope
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &e))
	tampered := e
	tampered.DataHash = strings.Repeat("0", 64)
	other, err := cipher.GenerateKey()
	require.NoError(t, err)
	okr, err := cipher.ParseKeyring(other)
	require.NoError(t, err)
	foreign, err := cipher.Seal("x-1", []byte(`{"patient_id":"x-1","diagnosis":"M"}`), okr)
	require.NoError(t, err)
	mine, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	swapped, err := cipher.Seal("x-2", []byte(`{"patient_id":"x-3","diagnosis":"M"}`), mine)
	require.NoError(t, err)
	bad := []string{`{"patient_id": "secret-value-1"`, string(mustJSON(t, tampered)), string(mustJSON(t, foreign)), string(mustJSON(t, swapped)), lines[1]}
	mixed := filepath.Join(dir, "mixed.ndjson")
	require.NoError(t, os.WriteFile(mixed, []byte(strings.Join(append(lines[2:5], bad...), "\n")), 0o600))
	got, rep, err = readParticipantRecords(t.Context(), mixed, kr)
	require.NoError(t, err)
	assert.Len(t, got, 4)
	assert.Equal(t, map[string]int{"not an envelope": 1, "data_hash mismatch": 1, reasonDecrypt: 1, "patient_id does not match the record": 1}, rep.Refused)
	assert.Equal(t, "records: 4 envelopes opened, 4 refused (1 data_hash mismatch, 1 not an envelope, 1 not decryptable with the key, 1 patient_id does not match the record)", rep.String())
	assert.NotContains(t, rep.String(), "secret-value")

	// The wrong key: one clear line.
	wrongFile := filepath.Join(dir, "wrong.key")
	clitest.WriteKey(t, wrongFile)
	wrong, err := loadKeyFile(wrongFile)
	require.NoError(t, err)
	_, _, err = readParticipantRecords(t.Context(), path, wrong)
	require.Error(t, err)
	assert.Equal(t, "participant: --key-file opens none of the "+itoa(n)+" envelopes in "+path+": wrong key?", err.Error())

	// A key file that is no key names the file, not its content.
	junk := filepath.Join(dir, "junk.key")
	require.NoError(t, os.WriteFile(junk, []byte("not-a-key-at-all"), 0o600))
	_, err = loadKeyFile(junk)
	require.Error(t, err)
	assert.Contains(t, err.Error(), junk)
	assert.NotContains(t, err.Error(), "not-a-key-at-all")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// --records goes with --key-file and instead of --data; each misuse is one
// line.
func TestParticipantRecordsFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "a.csv")
	recs := filepath.Join(dir, "a.ndjson")
	key := filepath.Join(dir, "a.key")
	for _, p := range []string{data, recs, key} {
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
	}
	env := func(string) string { return "" }
	base := []string{"--server", "http://127.0.0.1:1", "--api-key", "k"}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"ok/records":        {[]string{"--records", recs, "--key-file", key}, ""},
		"fail/no key file":  {[]string{"--records", recs}, "participant: --records needs --key-file"},
		"fail/both":         {[]string{"--data", data, "--records", recs, "--key-file", key}, "participant: give --data or --records, not both"},
		"fail/key without":  {[]string{"--data", data, "--key-file", key}, "participant: --key-file goes with --records"},
		"fail/fhir records": {[]string{"--records", recs, "--key-file", key, "--fhir-label", "s|c"}, "participant: --fhir-label reads --data; --records holds envelopes"},
		"fail/missing key":  {[]string{"--records", recs, "--key-file", key + ".none"}, "participant: --key-file: "},
		"fail/neither":      {nil, "participant: --data (or --records with --key-file) is required"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o, err := parseParticipant(append(slices.Clone(base), tc.args...), env, io.Discard)
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, recs+".participant.json", o.state)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}
