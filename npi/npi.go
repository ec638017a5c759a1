package npi

import (
	"errors"
	"fmt"
)

// Length is the number of digits of an NPI.
const Length = 10

// prefix is the card issuer prefix "80840" the NPI check digit is computed
// over (ISO 7812: 80 health, 840 United States).
const prefix = "80840"

// ErrInvalid is wrapped by every error Check returns.
var ErrInvalid = errors.New("invalid NPI")

// Error describes why a string is not an NPI. It never repeats the input.
type Error struct{ Reason string }

func (e *Error) Error() string { return "invalid NPI: " + e.Reason }

// Unwrap returns ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

// Check reports whether s is a well-formed NPI: exactly ten ASCII digits,
// the first 1 or 2 (the values CMS issues), the last the Luhn check digit
// of "80840" followed by the first nine. Errors are *Error wrapping ErrInvalid.
func Check(s string) error {
	if len(s) != Length {
		return &Error{Reason: fmt.Sprintf("must be %d digits", Length)}
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return &Error{Reason: "must contain only digits"}
		}
	}
	if s[0] != '1' && s[0] != '2' {
		return &Error{Reason: "must start with 1 or 2"}
	}
	d, _ := CheckDigit(s[:Length-1])
	if s[Length-1] != d {
		return &Error{Reason: "check digit does not match"}
	}
	return nil
}

// CheckDigit returns the check digit (as an ASCII byte) of the nine
// identifier digits base.
func CheckDigit(base string) (byte, error) {
	if len(base) != Length-1 {
		return 0, &Error{Reason: fmt.Sprintf("the base must be %d digits", Length-1)}
	}
	sum := 0
	// Luhn over prefix+base: from the right of the full number (whose
	// rightmost digit is the check digit), every second digit starting with
	// the last of base is doubled.
	full := prefix + base
	double := true
	for i := len(full) - 1; i >= 0; i-- {
		c := full[i]
		if c < '0' || c > '9' {
			return 0, &Error{Reason: "must contain only digits"}
		}
		v := int(c - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return byte('0' + (10-sum%10)%10), nil
}
