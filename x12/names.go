package x12

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// FoldName is the form in which a person's name is compared: letters and
// digits only, accents removed, upper case ("Müller-Lüdenscheidt" and
// "MULLER LUDENSCHEIDT" are both "MULLERLUDENSCHEIDT"). An X12 name
// carries neither accents nor, reliably, punctuation; a record's may.
func FoldName(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// a combining accent: dropped
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}
