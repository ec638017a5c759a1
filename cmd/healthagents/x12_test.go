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

// TestX12ServerErrors: the service's own error answers ({"detail": ...},
// no status in the body) become a 271 with its AAA when the status comes
// from -status or from `curl -i` output: a 404 and a 422 as the service
// words them.
func TestX12ServerErrors(t *testing.T) {
	t.Parallel()
	const (
		notFound = `{"detail":"PATIENT_NOT_FOUND: no patient record is registered under this patient_id"}`
		mismatch = `{"detail":"NO_INSURANCE: member_id does not match the patient's coverage"}`
	)
	asked := []string{"x12", "271", "-member", "W123456789", "-npi", "1234567893", "-procedure", "70551", "-time", "2026-11-25T09:00:00Z"}
	render := func(t *testing.T, stdin string, flags ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		err := run(t.Context(), append(append([]string(nil), asked...), flags...), env(nil), strings.NewReader(stdin), &out, io.Discard)
		return out.String(), err
	}
	for _, tt := range []struct {
		name, stdin string
		flags       []string
		aaa         string
	}{
		{"ok/404 with -status", notFound, []string{"-status", "404"}, "NM1*IL*1******MI*W123456789~\nAAA*Y**75*C~"},
		{"ok/422 with -status", mismatch, []string{"-status", "422"}, "NM1*IL*1******MI*W123456789~\nAAA*Y**72*C~"},
		{"ok/404 from curl -i", "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nX-Request-Id: 01JD\r\n\r\n" + notFound, nil, "AAA*Y**75*C~"},
		{"ok/422 from curl -i over HTTP/2 after 100 Continue", "HTTP/1.1 100 Continue\r\n\r\nHTTP/2 422 \r\ncontent-type: application/json\r\n\r\n" + mismatch + "\n", nil, "AAA*Y**72*C~"},
		{"ok/curl -i and the same -status", "HTTP/1.1 404 Not Found\r\n\r\n" + notFound, []string{"-status", "404"}, "AAA*Y**75*C~"},
		{"ok/a proxy's 502 page", "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n\r\n<html>bad gateway</html>", nil, "AAA*Y**42*R~"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := render(t, tt.stdin, tt.flags...)
			require.NoError(t, err)
			assert.Contains(t, out, tt.aaa)
			assert.NotContains(t, out, "EB*")
			assert.NotContains(t, out, "PATIENT_NOT_FOUND", "the problem's text is never copied")
			segs, err := x12.Split([]byte(out))
			require.NoError(t, err)
			assert.Equal(t, "IEA", segs[len(segs)-1][0])
		})
	}
	// A 200 from curl -i with an answer renders the benefits.
	out, err := render(t, "HTTP/1.1 200 OK\r\n\r\n"+`{"eligible":true,"coverage_percentage":80,"requires_authorization":false,"deductible_met":true,"copay_amount":0,"reason":null}`)
	require.NoError(t, err)
	assert.Contains(t, out, "EB*1*IND*")

	for _, tt := range []struct {
		name, stdin string
		flags       []string
		want        string
	}{
		{"fail/an error body without a status", notFound, nil, "give -status, pipe `curl -i`"},
		{"fail/-status and the status line disagree", "HTTP/1.1 422 Unprocessable Entity\r\n\r\n" + mismatch, []string{"-status", "404"}, "-status 404 but the answer's status line says 422"},
		{"fail/-status out of range", notFound, []string{"-status", "4040"}, "-status must be an HTTP status"},
		{"fail/a success status on an error body", notFound, []string{"-status", "200"}, "neither an eligibility answer"},
		{"fail/an answer with an error status", `{"eligible":true}`, []string{"-status", "404"}, "cannot come with status 404"},
		{"fail/headers without a blank line", "HTTP/1.1 404 Not Found\r\nContent-Type: application/json", nil, "no blank line"},
		{"fail/not a status line", "HTTP/1.1 abc\r\n\r\n" + notFound, nil, "is not an HTTP status line"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, tt.stdin, tt.flags...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
