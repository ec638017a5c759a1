package healthagents

import (
	"errors"

	"github.com/healthagents/healthagents/trust"
)

// CoverageRefusal turns a refusal of the record's coverage credential by the
// COVERAGE_TRUST policy (trust.Policy.Credential: expired, revoked nonce,
// unknown or retired issuer, subject mismatch, bad signature, no credential
// under "registered") into the API error: 400 with a detail naming what is
// wrong and no value of the record; terms a credential cannot encode are
// 422. prefix starts the detail (e.g. "Eligibility check failed"). It
// returns nil when err is not such a refusal.
func CoverageRefusal(prefix string, err error) error {
	detail, ok := trust.Detail(err)
	if !ok {
		return nil
	}
	code := CodeInvalid
	if errors.Is(err, trust.ErrUnsupported) {
		code = CodeUnprocessable
	}
	return WrapError(code, err, prefix+": Invalid patient record: "+detail)
}
