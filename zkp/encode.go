package zkp

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// DayBits bounds every date: day numbers count days since 1970-01-01 and
// must be below 2^DayBits (that is, before the year 13000).
const DayBits = 22

// CanonicalCode is the form in which the eligibility agent compares codes
// and looks up overrides: surrounding space trimmed, upper-cased.
func CanonicalCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// foldCase replaces every rune by the smallest rune of its simple-folding
// orbit, the relation strings.EqualFold uses; invalid UTF-8 bytes are kept
// as U+FFFD exactly as EqualFold treats them.
func foldCase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		if min == utf8.RuneError {
			b.WriteRune(utf8.RuneError)
			continue
		}
		b.WriteRune(min)
	}
	return b.String()
}

// DayNumber returns the number of days from 1970-01-01 to t's calendar date
// in UTC (as the eligibility agent reads a service date). It fails for dates
// before 1970-01-01 or from 2^DayBits days after it.
func DayNumber(t time.Time) (uint64, error) {
	y, m, d := t.UTC().Date()
	days := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	if days < 0 || days >= 1<<DayBits {
		return 0, fmt.Errorf("%w: date outside the provable range 1970-01-01 .. +2^%d days", ErrRecordTooLarge, DayBits)
	}
	return uint64(days), nil
}
