package healthagents

import (
	"errors"
	"fmt"
)

// Code classifies an error. The server maps each code to one HTTP status in a
// single table; the client maps the status back, so errors.Is and ErrorCode
// behave the same in-process and over HTTP.
type Code string

// Error codes.
const (
	CodeInvalid       Code = "invalid"         // 400
	CodeUnauthorized  Code = "unauthorized"    // 401
	CodeForbidden     Code = "forbidden"       // 403
	CodeNotFound      Code = "not_found"       // 404
	CodeConflict      Code = "conflict"        // 409
	CodeTooLarge      Code = "too_large"       // 413
	CodeUnprocessable Code = "unprocessable"   // 422
	CodeRateLimited   Code = "rate_limited"    // 429
	CodeInternal      Code = "internal"        // 500
	CodeUnavailable   Code = "unavailable"     // 503
	CodeTimeout       Code = "gateway_timeout" // 504
)

// Error is the one error type of the service. Detail is the text the HTTP API
// puts in {"detail": ...}; it never contains plaintext medical data, keys or
// ciphertext.
type Error struct {
	Code   Code
	Detail string
	err    error // the cause, for errors.Is/As; never shown to callers
}

// Errorf returns an *Error with a formatted detail.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// WrapError returns an *Error with the given detail whose cause is err.
func WrapError(code Code, err error, detail string) *Error {
	return &Error{Code: code, Detail: detail, err: err}
}

func (e *Error) Error() string { return e.Detail }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.err }

// Is reports whether target is the sentinel e's Code or v1 code stands for
// (sentinelsOf), so that errors.Is answers alike for the service's own
// error, whose cause may also match, and for one read back from an HTTP
// answer (package client), which carries only the status and detail.
func (e *Error) Is(target error) bool {
	for _, s := range e.sentinels() {
		if s == target {
			return true
		}
	}
	return false
}

// sentinels are the sentinel errors an *Error stands for by its Code, its v1
// code and, for the proof codes, its fixed detail: one table for both sides
// of the wire.
func (e *Error) sentinels() []error {
	var out []error
	switch e.Code {
	case CodeUnauthorized:
		out = append(out, ErrUnauthorized)
	case CodeRateLimited:
		out = append(out, ErrRateLimited)
	}
	v1 := V1Code(e)
	switch v1 {
	case V1PatientNotFound:
		out = append(out, ErrPatientNotFound)
	case V1NoInsurance:
		out = append(out, ErrNoInsurance)
	case V1NetworkError:
		out = append(out, ErrChainUnavailable)
	case V1ProofInvalid, V1ProofFailed:
		switch {
		case e.Code == CodeUnavailable:
			out = append(out, ErrChainUnavailable)
		case e.Detail == v1+": "+detailProofTimeout:
			out = append(out, ErrProofTimeout)
		case e.Detail == v1+": "+detailProofRejected:
			out = append(out, ErrProofRejected)
		}
	}
	return out
}

// ErrorCode returns the code of the first *Error in err's chain, CodeInternal
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorDetail returns the detail of the first *Error in err's chain and a
// generic text for any other error, so that unexpected errors never leak
// internals to callers.
func ErrorDetail(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Detail
	}
	return "Internal server error"
}

// Sentinel causes an Attestor wraps so the service can choose the message.
var (
	// ErrProofTimeout: proof generation exceeded its deadline (5 s by default).
	ErrProofTimeout = errors.New("zk proof generation timed out")
	// ErrProofRejected: the verifier contract (or the prover) rejected the statement.
	ErrProofRejected = errors.New("zk proof verification failed")
	// ErrProofUnsupported: the record is valid but lies outside the bounds
	// the circuit can prove (e.g. more excluded procedures than it holds).
	ErrProofUnsupported = errors.New("record outside the bounds of the ZK circuit")
	// ErrChainUnavailable: the chain could not be reached in time.
	ErrChainUnavailable = errors.New("blockchain unavailable")
)

// Sentinels of refusals, matched by an *Error's Code or v1 code (Error.Is)
// in process and through package client alike.
var (
	// ErrUnauthorized: a missing, invalid or expired API key (401).
	ErrUnauthorized = errors.New("healthagents: unauthorized")
	// ErrRateLimited: the caller's rate limit or quota is used up (429).
	ErrRateLimited = errors.New("healthagents: rate limited")
	// ErrNoInsurance: the patient's record holds no coverage for the
	// request (v1 NO_INSURANCE, 422).
	ErrNoInsurance = errors.New("healthagents: no insurance")
)

// The fixed details of the v1 proof errors, which say which proof sentinel
// an error read back from HTTP stands for.
const (
	detailProofTimeout  = "ZK proof generation timed out"
	detailProofRejected = "ZK proof verification failed"
)
