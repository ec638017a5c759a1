package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/x12"
)

// TestX12Command renders a v1 answer, alone with flags and with its
// request, as a 271 a parser reads back.
func TestX12Command(t *testing.T) {
	t.Parallel()
	answer := `{"eligible":true,"coverage_percentage":80,"requires_authorization":true,"deductible_met":false,"copay_amount":25,"reason":null,
"verification_proof":{"proof_data":"0x2c","public_inputs":["0x01"],"blockchain_tx":"0x7a334bb7e76c61c8b792a0e504a0f1f77e09bb46c97cb94c0fdd36b118616a5b"}}`
	var out bytes.Buffer
	err := run(t.Context(), []string{"x12", "271", "-member", "W123456789", "-npi", "1234567893", "-procedure", "PROC001", "-time", "2026-11-25T09:00:00Z", "-control", "42"},
		env(nil), strings.NewReader(answer), &out, io.Discard)
	require.NoError(t, err)
	segs, err := x12.Split(out.Bytes())
	require.NoError(t, err)
	assert.Equal(t, "ISA", segs[0][0])
	assert.Equal(t, "000000042", segs[0][13])
	assert.Contains(t, out.String(), "NM1*IL*1******MI*W123456789~")
	assert.Contains(t, out.String(), "EB*1*IND*********Y**ZZ:PROC001~")
	assert.Contains(t, out.String(), "MSG*DECISION PROOF TRANSACTION 0x7a33")
	assert.Equal(t, []string{"IEA", "1", "000000042"}, segs[len(segs)-1])

	out.Reset()
	both := `{"request":{"patient_id":"PT-000123","member_id":"W123456789","procedure_code":"70551","provider_npi":"1234567893"},"response":` + answer + `}`
	require.NoError(t, run(t.Context(), []string{"x12", "271", "-time", "2026-11-25T09:00:00Z"}, env(nil), strings.NewReader(both), &out, io.Discard))
	assert.Contains(t, out.String(), "BHT*0022*11*PT-000123-70551*20261125*0900~")
	assert.Contains(t, out.String(), "HC:70551")

	// An error answer, as the API's problem JSON: an AAA, no benefits.
	out.Reset()
	notFound := `{"request":{"patient_id":"PT-000999","member_id":"W123456789","procedure_code":"70551","provider_npi":"1234567893"},
"response":{"type":"about:blank","title":"Not Found","status":404,"detail":"PATIENT_NOT_FOUND: no record registered under this id"}}`
	require.NoError(t, run(t.Context(), []string{"x12", "271", "-time", "2026-11-25T09:00:00Z"}, env(nil), strings.NewReader(notFound), &out, io.Discard))
	assert.Contains(t, out.String(), "NM1*IL*1******MI*W123456789~\nAAA*Y**75*C~")
	assert.NotContains(t, out.String(), "EB*")
	err = run(t.Context(), []string{"x12", "271", "-member", "W1", "-npi", "1234567893", "-procedure", "70551"}, env(nil),
		strings.NewReader(`{"status":200,"title":"OK"}`), io.Discard, io.Discard)
	require.ErrorContains(t, err, "neither an eligibility answer")

	err = run(t.Context(), []string{"x12", "271"}, env(nil), strings.NewReader(answer), io.Discard, io.Discard)
	require.ErrorContains(t, err, "no member: give -member")
	err = run(t.Context(), []string{"x12", "999"}, env(nil), strings.NewReader(answer), io.Discard, io.Discard)
	require.ErrorContains(t, err, "usage: healthagents x12 271")
	// x12 270 is a client of a running service (x12_270.go).
	err = run(t.Context(), []string{"x12", "270"}, env(nil), strings.NewReader(answer), io.Discard, io.Discard)
	require.ErrorContains(t, err, "--server (or HEALTHAGENTS_URL) is required")
}
