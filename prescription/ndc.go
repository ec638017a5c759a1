package prescription

import (
	"errors"
	"strings"
)

// ErrInvalidNDC is wrapped by every error NormalizeNDC returns.
var ErrInvalidNDC = errors.New("invalid NDC")

// NormalizeNDC converts a National Drug Code to its 11-digit 5-4-2 form,
// returned as 11 digits without hyphens (the HIPAA billing form).
//
// Accepted inputs (surrounding white space is ignored):
//
//	4-4-2 with hyphens  1234-5678-90   → 01234567890 (labeler padded)
//	5-3-2 with hyphens  12345-678-90   → 12345067890 (product padded)
//	5-4-1 with hyphens  12345-6789-0   → 12345678900 (package padded)
//	5-4-2 with hyphens  12345-6789-01  → 12345678901
//	11 digits           12345678901    → as is
//
// A 10-digit code without hyphens is rejected: it could be any of the three
// 10-digit layouts, and guessing would silently select the wrong product.
// Anything else (letters, other segment lengths, other digit counts) is
// rejected too. Errors wrap [ErrInvalidNDC] and never repeat the input.
func NormalizeNDC(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "-") {
		if !allDigits(s) {
			return "", ndcError("must contain only digits and hyphens")
		}
		switch len(s) {
		case 11:
			return s, nil
		case 10:
			return "", ndcError("a 10-digit NDC without hyphens is ambiguous; write it with hyphens (4-4-2, 5-3-2 or 5-4-1)")
		default:
			return "", ndcError("must have 10 or 11 digits")
		}
	}
	parts := strings.Split(s, "-")
	if len(parts) != 3 {
		return "", ndcError("must have three hyphen-separated segments")
	}
	for _, p := range parts {
		if p == "" || !allDigits(p) {
			return "", ndcError("segments must be non-empty and contain only digits")
		}
	}
	l, p, k := parts[0], parts[1], parts[2]
	switch [3]int{len(l), len(p), len(k)} {
	case [3]int{4, 4, 2}:
		l = "0" + l
	case [3]int{5, 3, 2}:
		p = "0" + p
	case [3]int{5, 4, 1}:
		k = "0" + k
	case [3]int{5, 4, 2}:
	default:
		return "", ndcError("segments must be 4-4-2, 5-3-2, 5-4-1 or 5-4-2 digits long")
	}
	return l + p + k, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

type ndcErr struct{ msg string }

func (e *ndcErr) Error() string { return "invalid NDC: " + e.msg }
func (e *ndcErr) Unwrap() error { return ErrInvalidNDC }

func ndcError(msg string) error { return &ndcErr{msg: msg} }
