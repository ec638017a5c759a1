package x12

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Separators of the interchanges Render271 writes.
const (
	ElementSep    = '*'
	SubElementSep = ':'
	RepetitionSep = '^'
	SegmentTerm   = '~'
)

// ErrInvalid is wrapped by the errors of values that cannot be written in
// an element, and of interchanges Split cannot read.
var ErrInvalid = errors.New("x12")

// checkValue refuses a value holding a separator or a control character,
// or longer than max.
func checkValue(name, v string, min, max int) error {
	if len(v) < min || len(v) > max {
		return fmt.Errorf("%w: %s must be %d to %d characters", ErrInvalid, name, min, max)
	}
	for _, r := range v {
		if r < 0x20 || r > 0x7e || r == ElementSep || r == SubElementSep || r == RepetitionSep || r == SegmentTerm {
			return fmt.Errorf("%w: %s holds a character X12 cannot carry here (a separator, control or non-ASCII character)", ErrInvalid, name)
		}
	}
	return nil
}

// writer accumulates segments and counts those of the transaction set.
type writer struct {
	buf      bytes.Buffer
	inSet    int // segments since ST, ST included
	counting bool
}

// seg writes one segment; trailing empty elements are dropped.
func (w *writer) seg(id string, elems ...string) {
	for len(elems) > 0 && elems[len(elems)-1] == "" {
		elems = elems[:len(elems)-1]
	}
	w.buf.WriteString(id)
	for _, e := range elems {
		w.buf.WriteByte(ElementSep)
		w.buf.WriteString(e)
	}
	w.buf.WriteByte(SegmentTerm)
	w.buf.WriteByte('\n')
	if w.counting {
		w.inSet++
	}
}

// Split reads an interchange into segments, each a slice of elements
// (element 0 is the segment id), with the separators the ISA segment
// declares. Line breaks after segment terminators are ignored.
func Split(b []byte) ([][]string, error) {
	s := strings.TrimLeft(string(b), " \r\n\t")
	if len(s) < 106 || !strings.HasPrefix(s, "ISA") {
		return nil, fmt.Errorf("%w: an interchange starts with a 106-character ISA segment", ErrInvalid)
	}
	elem, sub, term := s[3], s[104], s[105]
	_ = sub
	var out [][]string
	for _, raw := range strings.Split(s, string(term)) {
		raw = strings.Trim(raw, "\r\n")
		if raw == "" {
			continue
		}
		out = append(out, strings.Split(raw, string(elem)))
	}
	return out, nil
}

// pad is v left-aligned in a field of n characters (ISA's fixed widths).
func pad(v string, n int) string {
	if len(v) >= n {
		return v[:n]
	}
	return v + strings.Repeat(" ", n-len(v))
}
