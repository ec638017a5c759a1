package fhir

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	r4 "github.com/samply/golang-fhir-models/fhir-models/fhir"
)

// Input the mapping cannot read is refused by name, never skipped
// (docs/decisions/fhir.md, "Refused, not skipped"): resource types R4 does
// not define, and strings that are not text.

// isR4Resource reports whether name is a concrete FHIR R4 resource type
// (the R4 resource-types value set, less the abstract Resource and
// DomainResource).
func isR4Resource(name string) bool {
	if name == "Resource" || name == "DomainResource" {
		return false
	}
	b, err := json.Marshal(name)
	if err != nil {
		return false
	}
	var rt r4.ResourceType
	return rt.UnmarshalJSON(b) == nil && rt.Code() == name
}

// entryType is the resourceType of an entry's resource, for an error's
// path ("?" when it has none).
func entryType(raw []byte) string {
	if rt := resourceType(raw); rt != "" {
		return rt
	}
	return "?"
}

var (
	errInvalidUTF8 = errors.New("a string is not valid UTF-8")
	errControl     = errors.New("a string holds a control character (FHIR strings allow tab, carriage return and line feed only)")
	errSurrogate   = errors.New("a string holds an unpaired UTF-16 surrogate escape")
)

// checkText checks every string of the JSON document b — names and values,
// raw or escaped — the way FHIR R4 defines a string: valid Unicode (UTF-8,
// no lone surrogate escape) with no control character other than tab,
// carriage return and line feed (C0, DEL and C1 refused). Go's decoder
// would turn invalid UTF-8 into U+FFFD and keep control characters, so a
// damaged Bundle would be read as if it were text. The error names the
// problem, never the string.
func checkText(b []byte) error {
	in := false
	for i := 0; i < len(b); {
		c := b[i]
		if !in {
			if c == '"' {
				in = true
			}
			i++
			continue
		}
		switch {
		case c == '"':
			in = false
			i++
		case c == '\\':
			n, err := checkEscape(b[i:])
			if err != nil {
				return err
			}
			i += n
		case c < utf8.RuneSelf:
			if c < 0x20 || c == 0x7f {
				return errControl
			}
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				return errInvalidUTF8
			}
			if r >= 0x80 && r <= 0x9f {
				return errControl
			}
			i += size
		}
	}
	return nil
}

// checkEscape checks the escape at the start of b and returns its length.
func checkEscape(b []byte) (int, error) {
	if len(b) < 2 {
		return 0, errInvalidUTF8
	}
	switch b[1] {
	case 'n', 'r', 't', '"', '\\', '/':
		return 2, nil
	case 'b', 'f':
		return 0, errControl
	case 'u':
	default:
		return 0, errInvalidUTF8 // not valid JSON; the decoder says so first
	}
	r, ok := hex4(b[2:])
	if !ok {
		return 0, errInvalidUTF8
	}
	switch {
	case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f, r >= 0x80 && r <= 0x9f:
		return 0, errControl
	case r >= 0xdc00 && r <= 0xdfff:
		return 0, errSurrogate
	case r >= 0xd800 && r <= 0xdbff:
		if len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
			return 0, errSurrogate
		}
		lo, ok := hex4(b[8:])
		if !ok || lo < 0xdc00 || lo > 0xdfff {
			return 0, errSurrogate
		}
		return 12, nil
	}
	return 6, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(v), err == nil
}
