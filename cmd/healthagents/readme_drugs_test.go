package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/server"
)

// TestREADMEDrugTable checks the README's drug table row by row: each code
// is in the catalogue under the name the row gives, and POST
// /validate-prescription with the sample record answers the row's status
// (and, for a 422, names what the row says).
func TestREADMEDrugTable(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([a-z ]+) \\| (200|422), (.+) \\|$")
	rows := row.FindAllStringSubmatch(string(readme), -1)
	require.GreaterOrEqual(t, len(rows), 5, "the README's drug table")

	drugs, err := prescription.New()
	require.NoError(t, err)
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	svc, err := healthagents.New(kr)
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: svc})
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()
	plaintext, err := os.ReadFile("../../testdata/record.json")
	require.NoError(t, err)
	env, err := cipher.Seal("PT-000123", plaintext, kr)
	require.NoError(t, err)

	for _, m := range rows {
		code, name, status, answer := m[1], m[2], m[3], m[4]
		t.Run(code, func(t *testing.T) {
			d, err := drugs.Lookup(code)
			require.NoError(t, err, "%s is not in the catalogue", code)
			assert.Equal(t, name, d.Name)
			b, _ := json.Marshal(map[string]any{"patient_data": env, "drug_code": code})
			resp, err := http.Post(ts.URL+"/validate-prescription", "application/json", bytes.NewReader(b))
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, status, strconv.Itoa(resp.StatusCode), "%s", body)
			switch {
			case status == "200":
				assert.Contains(t, string(body), `"valid":true`)
			case strings.Contains(answer, "interaction with "):
				other := strings.TrimPrefix(answer, "interaction with ")
				assert.Contains(t, string(body), "Drug interaction detected with "+other)
			case strings.Contains(answer, "contraindicated"):
				assert.Contains(t, strings.ToLower(string(body)), "contraindicat")
			}
		})
	}
}
