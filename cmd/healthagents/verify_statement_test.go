package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatementClaimFromResponse: --statement takes the statement or the
// whole decision response, and refuses an opening whose plain
// revocation_nonce is not the committed one (jq 1.6 rounds the 19-digit
// nonce to a float: 2402863899112159179 becomes 2402863899112159000, and the
// revocation check would look up another nonce).
func TestStatementClaimFromResponse(t *testing.T) {
	t.Parallel()
	const opening = `{"circuit":"eligibility-v2","circuit_id":"77","issuer_key_hash":"88","revocation_nonce":NONCE,
	"fields":[{"name":"payer_id","value":"232736699700","text":"60054"},{"name":"revocation_nonce","value":"2402863899112159179"},{"name":"salt","value":"12345"}]}`
	statementOf := func(nonce string) string {
		return `{"digest":"1","opening":` + strings.Replace(opening, "NONCE", nonce, 1) + `}`
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}

	plain, err := readStatementClaim(write("statement.json", statementOf("2402863899112159179")))
	require.NoError(t, err)
	require.NotNil(t, plain.RevocationNonce)
	assert.Equal(t, uint64(2402863899112159179), *plain.RevocationNonce)

	resp, err := readStatementClaim(write("decision.json", `{"eligible":true,"verification_proof":{"blockchain_tx":"0x01"},"statement":`+statementOf("2402863899112159179")+`,"issuer":"self"}`))
	require.NoError(t, err)
	assert.Equal(t, plain, resp, "the response's statement is the statement")

	_, err = readStatementClaim(write("rounded.json", statementOf("2402863899112159000")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not the committed revocation_nonce field")
}
