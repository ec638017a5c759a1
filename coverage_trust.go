package healthagents

import (
	"errors"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/trust"
)

// coverageRefusal turns a refusal of the record's coverage credential by the
// COVERAGE_TRUST policy (trust.Policy.Credential) into the root family's
// error; prefix starts the detail (e.g. "Eligibility check failed"). It
// returns nil when err is not such a refusal. The detail names what is
// wrong and no value of the record:
//
//   - a credential the service does not trust for this decision (no
//     credential under COVERAGE_TRUST=registered, an issuer not registered
//     or retired, a revoked nonce, expired on the service date): 422
//     "<prefix>: Untrusted coverage credential: <reason>" — the one status
//     of these refusals on both families; the v1 family's detail starts
//     UNTRUSTED_CREDENTIAL instead (docs/decisions.md, "Errors");
//   - a credential that cannot be read or does not hold over its own record
//     (malformed, bad signature, subject mismatch): 400 "<prefix>: Invalid
//     patient record: <reason>", as any other malformed record;
//   - coverage terms a credential cannot encode: 422 "<prefix>: Invalid
//     patient record: <reason>".
func coverageRefusal(prefix string, err error) error {
	r, ok := refusalOf(err)
	if !ok {
		return nil
	}
	label := "Invalid patient record"
	if r.untrusted {
		label = "Untrusted coverage credential"
	}
	return WrapError(r.code, err, prefix+": "+label+": "+r.reason)
}

// refusal is a classified credential refusal.
type refusal struct {
	code      Code
	untrusted bool   // the credential holds but is not trusted for the decision
	reason    string // trust.Detail's words
}

// refusalOf classifies err as coverageRefusal words it.
func refusalOf(err error) (refusal, bool) {
	reason, ok := trust.Detail(err)
	if !ok {
		return refusal{}, false
	}
	switch {
	case errors.Is(err, trust.ErrNoCredential), errors.Is(err, trust.ErrUnknownIssuer),
		errors.Is(err, trust.ErrRevoked), errors.Is(err, credential.ErrExpired):
		return refusal{code: CodeUnprocessable, untrusted: true, reason: reason}, true
	case errors.Is(err, trust.ErrUnsupported):
		return refusal{code: CodeUnprocessable, reason: reason}, true
	}
	return refusal{code: CodeInvalid, reason: reason}, true
}
