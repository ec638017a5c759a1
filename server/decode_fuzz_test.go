package server

import (
	"errors"
	"testing"

	"github.com/healthagents/healthagents"
)

// FuzzDecode feeds arbitrary bodies to the request decoder of the root
// family: it never panics, and every refusal is a 400 with a detail.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"patient_data":{"patient_id":"P","encrypted_data":"x","ipfs_cid":"Qm","data_hash":"00"},"procedure_code":"PROC001"}`,
		`{"patient_data":null}`, `[]`, `{`, ``, `{"procedure_code":7}`, `{"a":[[[[[[[[[[[]]]]]]]]]]]}`,
		`{"patient_data":{"patient_id":"\u0000"},"procedure_code":"\ud800"}`, `{} {}`, `"str"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req healthagents.EligibilityRequest
		err := decode(body, &req, "patient_data", "procedure_code")
		if err == nil {
			if req.PatientData == nil {
				t.Fatal("accepted a body without patient_data")
			}
			return
		}
		var e *healthagents.Error
		if !errors.As(err, &e) || e.Code != healthagents.CodeInvalid || e.Detail == "" {
			t.Fatalf("refusal is not a 400 with a detail: %#v", err)
		}
	})
}
