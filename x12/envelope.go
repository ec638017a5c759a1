package x12

// Reading an interchange's envelope: ISA/IEA, GS/GE, ST/SE, with the
// separators the ISA declares. What fails here is answered with a TA1
// (the interchange) or a 999 (a group or a transaction set); ack.go
// writes both.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Separators are the delimiters an interchange declares in its ISA: the
// element separator (ISA's fourth character), the repetition separator
// (ISA11), the component separator (ISA16) and the segment terminator (the
// character after ISA16).
type Separators struct {
	Element, Repetition, Component, Segment byte
}

// Envelope is what a received interchange's ISA declares.
type Envelope struct {
	// SenderQualifier and SenderID are ISA05/ISA06, ReceiverQualifier and
	// ReceiverID ISA07/ISA08, without their padding.
	SenderQualifier, SenderID, ReceiverQualifier, ReceiverID string
	// Date and Time are ISA09 (YYMMDD) and ISA10 (HHMM) as received.
	Date, Time string
	// Control is ISA13, nine digits.
	Control string
	// Production is ISA15 P (else T, test).
	Production bool
	Separators
}

// InterchangeError is an interchange that cannot be read as one: a bad
// ISA, a missing or mismatched IEA, content outside the functional groups.
// A TA1 answers it (RenderTA1); Note is the TA105 code, Reason says which
// part failed (never its content).
type InterchangeError struct {
	Note   string
	Reason string
	// env is what could be read of the ISA; nil if nothing could.
	env *Envelope
}

func (e *InterchangeError) Error() string {
	return fmt.Sprintf("%v: interchange rejected (TA1 %s): %s", ErrInvalid, e.Note, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *InterchangeError) Unwrap() error { return ErrInvalid }

// Envelope returns what could be read of the interchange's ISA, or nil.
func (e *InterchangeError) Envelope() *Envelope { return e.env }

func interchangeError(env *Envelope, note, format string, args ...any) *InterchangeError {
	return &InterchangeError{Note: note, Reason: fmt.Sprintf(format, args...), env: env}
}

// segment is one segment: its elements (el[0] is the id) and its position
// in its transaction set (ST = 1; 0 outside a set).
type segment struct {
	el  []string
	pos int
}

func (s segment) id() string { return s.el[0] }

// elem returns element i (1-based), "" when absent.
func (s segment) elem(i int) string {
	if i < len(s.el) {
		return s.el[i]
	}
	return ""
}

// interchange is a read interchange: its envelope and functional groups.
type interchange struct {
	env    Envelope
	groups []*group
}

// group is one functional group (GS ... GE).
type group struct {
	gs       segment
	sets     []*txSet
	hasGE    bool
	declared string   // GE01
	errors   []string // AK905 codes
}

func (g *group) control() string { return g.gs.elem(6) }

// txSet is one transaction set (ST ... SE).
type txSet struct {
	segs    []segment // ST first; SE last when present
	hasSE   bool
	errors  []string // IK5 transaction set syntax error codes
	segErrs []SegmentError
}

func (t *txSet) control() string { return t.segs[0].elem(2) }

// rejected reports whether the set failed any check.
func (t *txSet) rejected() bool { return len(t.errors) > 0 || len(t.segErrs) > 0 }

// SegmentError is one IK3 of a 999: the segment in error by id, position
// in its transaction set and loop, the IK304 code, and the IK4 element
// errors.
type SegmentError struct {
	ID   string
	Pos  int
	Loop string
	// Code is IK304: 1 unrecognized segment id, 2 unexpected segment, 3
	// required segment missing, 5 segment exceeds maximum use, 6 segment
	// not in the transaction set, 7 not in proper sequence, 8 data element
	// errors.
	Code     string
	Elements []ElementError
}

// ElementError is one IK4: the element's position (IK401, "3" or "2:1"
// for a component or "1::2" for a repetition), its data element reference
// number (IK402) and the IK403 code: 1 required element missing, 2
// conditional element missing, 3 too many elements, 4 too short, 5 too
// long, 6 invalid character, 7 invalid code value, 8 invalid date, 9
// invalid time, 10 exclusion condition violated, 12 too many
// repetitions, 13 too many components, I6 code value not used in this
// implementation. The bad value itself is never copied (IK404).
type ElementError struct {
	Pos, Ref, Code string
}

// Limits of what the reader takes: far above any real-time 270, they
// bound the work a hostile interchange can cause.
const (
	maxSegments = 20000
	maxElements = 64
)

// readInterchange reads b's envelope. Group and transaction set errors are
// recorded in the result (for a 999); an interchange-level error is
// returned (for a TA1), with what was read when the interchange ends
// without its IEA (a group without its GE: hasGE false).
func readInterchange(b []byte) (*interchange, *InterchangeError) {
	s := strings.TrimLeft(string(b), " \t\r\n\ufeff")
	env, ierr := readISA(s)
	if ierr != nil {
		return nil, ierr
	}
	ic := &interchange{env: *env}
	rest := s[106:]
	raw := strings.Split(rest, string(env.Segment))
	if len(raw) > maxSegments {
		return nil, interchangeError(env, "024", "more than %d segments", maxSegments)
	}
	var (
		g      *group
		set    *txSet
		ieaSeg segment
		seen   bool // IEA seen
	)
	closeSet := func() {
		if set != nil && !set.hasSE {
			set.errors = appendCode(set.errors, "2") // transaction set trailer missing
		}
		set = nil
	}
	for _, r := range raw {
		r = strings.Trim(r, "\r\n")
		if strings.TrimSpace(r) == "" {
			continue
		}
		if seen {
			return nil, interchangeError(env, "024", "content after the IEA segment")
		}
		el := strings.Split(r, string(env.Element))
		if len(el) > maxElements {
			if set == nil {
				return nil, interchangeError(env, "024", "a segment outside a transaction set has more than %d elements", maxElements)
			}
			el = el[:maxElements]
		}
		seg := segment{el: el}
		id := strings.TrimSpace(el[0])
		seg.el[0] = id
		switch {
		case id == "ISA":
			return nil, interchangeError(env, "024", "a second ISA segment: one interchange per request")
		case id == "IEA":
			closeSet()
			if g != nil {
				g.errors = appendCode(g.errors, "3") // functional group trailer missing
				g = nil
			}
			ieaSeg, seen = seg, true
		case id == "GS":
			closeSet()
			if g != nil {
				g.errors = appendCode(g.errors, "3")
			}
			g = &group{gs: seg}
			ic.groups = append(ic.groups, g)
		case id == "GE":
			closeSet()
			if g == nil {
				return nil, interchangeError(env, "024", "a GE segment outside a functional group")
			}
			checkGE(g, seg)
			g = nil
		case id == "ST":
			if g == nil {
				return nil, interchangeError(env, "024", "a transaction set outside a functional group")
			}
			closeSet()
			set = &txSet{}
			seg.pos = 1
			set.segs = append(set.segs, seg)
			g.sets = append(g.sets, set)
		case set == nil:
			if g == nil {
				return nil, interchangeError(env, "024", "a %s segment outside a functional group", safeID(id))
			}
			return nil, interchangeError(env, "024", "a %s segment outside a transaction set", safeID(id))
		default:
			seg.pos = len(set.segs) + 1
			set.segs = append(set.segs, seg)
			if id == "SE" {
				set.hasSE = true
				checkSE(set, seg)
				set = nil
			}
		}
	}
	if !seen {
		// What was read goes back beside the error, so that a reader can
		// say where the text was cut (Decisions).
		closeSet()
		return ic, interchangeError(env, "023", "the interchange ends without an IEA segment")
	}
	if ieaSeg.elem(2) != env.Control {
		return nil, interchangeError(env, "001", "IEA02 is not ISA13")
	}
	if n, err := strconv.Atoi(ieaSeg.elem(1)); err != nil || n != len(ic.groups) || len(ieaSeg.elem(1)) > 5 {
		return nil, interchangeError(env, "021", "IEA01 does not count the functional groups")
	}
	if len(ic.groups) == 0 {
		return nil, interchangeError(env, "024", "the interchange holds no functional group")
	}
	for _, g := range ic.groups {
		if err := checkGS(env, g); err != nil {
			return nil, err
		}
	}
	return ic, nil
}

// safeID is a segment id fit to name in an error: a short run of
// uppercase letters and digits, else "unrecognized".
func safeID(id string) string {
	if validSegmentID(id) {
		return id
	}
	return "unrecognized"
}

func validSegmentID(id string) bool {
	if len(id) < 2 || len(id) > 3 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return id[0] >= 'A' && id[0] <= 'Z'
}

func appendCode(codes []string, c string) []string {
	for _, x := range codes {
		if x == c {
			return codes
		}
	}
	return append(codes, c)
}

// isaWidths are the fixed widths of ISA01..ISA16, and the TA105 note code
// each one's error gives.
var isaWidths = [16]struct {
	width int
	note  string
}{
	{2, "010"}, {10, "011"}, {2, "012"}, {10, "013"}, {2, "005"}, {15, "006"}, {2, "007"}, {15, "008"},
	{6, "014"}, {4, "015"}, {1, "016"}, {5, "017"}, {9, "018"}, {1, "019"}, {1, "020"}, {1, "027"},
}

// idQualifiers are the interchange id qualifiers of 005010 (ISA05, ISA07).
var idQualifiers = map[string]bool{"01": true, "14": true, "20": true, "27": true, "28": true, "29": true, "30": true, "33": true, "ZZ": true}

// readISA reads the ISA segment: 106 characters whose element separator is
// the fourth, each element at its fixed width, ISA16 the component
// separator and the next character the segment terminator.
func readISA(s string) (*Envelope, *InterchangeError) {
	if !strings.HasPrefix(s, "ISA") || len(s) < 4 {
		return nil, interchangeError(nil, "024", "the interchange does not start with an ISA segment")
	}
	sep := s[3]
	if isAlnum(sep) || sep == ' ' || sep < 0x20 || sep > 0x7e {
		return nil, interchangeError(nil, "026", "the data element separator (the ISA segment's fourth character) must be a printable special character")
	}
	// The sixteen elements end at the sixteenth separator; ISA16 is one
	// character, then the terminator.
	var elems [16]string
	at := 4
	for i := 0; i < 15; i++ {
		j := strings.IndexByte(s[at:], sep)
		if j < 0 || at+j > 200 {
			return nil, interchangeError(nil, "022", "the ISA segment has fewer than 16 elements")
		}
		elems[i] = s[at : at+j]
		at += j + 1
	}
	if len(s) < at+2 {
		return nil, interchangeError(nil, "023", "the interchange ends inside its ISA segment")
	}
	elems[15] = s[at : at+1]
	env := &Envelope{}
	for i, w := range isaWidths {
		if len(elems[i]) != w.width {
			return nil, interchangeError(nil, w.note, "ISA%02d must be %d characters (the ISA segment is 106 characters long)", i+1, w.width)
		}
	}
	env.Separators = Separators{Element: sep, Repetition: elems[10][0], Component: elems[15][0], Segment: s[at+1]}
	env.SenderQualifier, env.SenderID = elems[4], strings.TrimRight(elems[5], " ")
	env.ReceiverQualifier, env.ReceiverID = elems[6], strings.TrimRight(elems[7], " ")
	env.Date, env.Time, env.Control = elems[8], elems[9], elems[12]
	env.Production = elems[14] == "P"
	// From here on the envelope is known well enough to address a TA1.
	c, r, term := env.Component, env.Repetition, env.Segment
	switch {
	case !separatorChar(c) || c == sep:
		return nil, interchangeError(nil, "027", "the component separator (ISA16) must be a special character other than the element separator")
	case !separatorChar(r) || r == sep || r == c:
		return nil, interchangeError(nil, "016", "the repetition separator (ISA11) must be a special character other than the element and component separators")
	case isAlnum(term) || term == ' ' || term == sep || term == c || term == r:
		return nil, interchangeError(nil, "004", "the segment terminator (after ISA16) must differ from the other separators and from letters, digits and space")
	}
	for i, q := range []string{elems[0], elems[2]} {
		if q != "00" && !(i == 0 && q == "03") && !(i == 1 && q == "01") {
			return nil, interchangeError(env, isaWidths[2*i].note, "ISA%02d is not an authorization/security qualifier of 005010", 2*i+1)
		}
	}
	for _, e := range elems {
		if !printable(e) {
			return nil, interchangeError(env, "022", "the ISA segment holds a control or non-ASCII character")
		}
	}
	switch {
	case !idQualifiers[env.SenderQualifier]:
		return nil, interchangeError(env, "005", "ISA05 is not an interchange id qualifier")
	case strings.TrimSpace(env.SenderID) == "" || containsSep(env.SenderID):
		// An id holding a separator of the answers (* : ^ ~) cannot be
		// written back: the TA1 goes to no one by name.
		return nil, interchangeError(nil, "006", "ISA06 (the sender) is blank or holds * : ^ or ~")
	case !idQualifiers[env.ReceiverQualifier]:
		return nil, interchangeError(env, "007", "ISA07 is not an interchange id qualifier")
	case strings.TrimSpace(env.ReceiverID) == "" || containsSep(env.ReceiverID):
		return nil, interchangeError(nil, "008", "ISA08 (the receiver) is blank or holds * : ^ or ~")
	case !validDate("060102", env.Date):
		return nil, interchangeError(env, "014", "ISA09 is not a date YYMMDD")
	case !validDate("1504", env.Time):
		return nil, interchangeError(env, "015", "ISA10 is not a time HHMM")
	case elems[11] != "00501":
		return nil, interchangeError(env, "017", "ISA12 must be 00501 (this service reads 005010 interchanges)")
	case !digits(env.Control):
		return nil, interchangeError(env, "018", "ISA13 must be nine digits")
	case elems[13] != "0" && elems[13] != "1":
		return nil, interchangeError(env, "019", "ISA14 must be 0 or 1")
	case elems[14] != "P" && elems[14] != "T":
		return nil, interchangeError(env, "020", "ISA15 must be P or T")
	}
	return env, nil
}

func isAlnum(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// separatorChar: a printable character that is neither a letter, a digit
// nor a space.
func separatorChar(c byte) bool { return c > 0x20 && c <= 0x7e && !isAlnum(c) }

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func digits(s string) bool {
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

// validDate reports whether s has exactly layout's length and parses as a
// real date or time in it.
func validDate(layout, s string) bool {
	if len(s) != len(layout) || !digits(s) {
		return false
	}
	_, err := time.Parse(layout, s)
	return err == nil
}

// checkGS records the group header's errors: those a 999 can name
// (AK905) on the group, the others (a malformed GS) as a TA1 024.
func checkGS(env *Envelope, g *group) *InterchangeError {
	gs := g.gs
	for i := 2; i <= 3; i++ {
		if v := gs.elem(i); len(v) < 2 || len(v) > 15 || !printable(v) || containsSep(v) {
			return interchangeError(env, "024", "GS%02d must be 2 to 15 characters, none of them * : ^ or ~", i)
		}
	}
	if !validDate("20060102", gs.elem(4)) {
		return interchangeError(env, "024", "GS04 is not a date CCYYMMDD")
	}
	if t := gs.elem(5); !(len(t) >= 4 && len(t) <= 8 && digits(t) && validDate("1504", t[:4])) {
		return interchangeError(env, "024", "GS05 is not a time HHMM[SS[dd]]")
	}
	if len(gs.el) > 9 {
		return interchangeError(env, "024", "the GS segment has more than 8 elements")
	}
	if c := gs.elem(6); !digits(c) || len(c) > 9 {
		g.errors = appendCode(g.errors, "6") // group control number violates syntax
	}
	if gs.elem(1) != "HS" {
		g.errors = appendCode(g.errors, "1") // functional group not supported
	}
	if gs.elem(7) != "X" || gs.elem(8) != Version {
		g.errors = appendCode(g.errors, "2") // functional group version not supported
	}
	// ST02 unique within the group.
	seen := map[string]bool{}
	for _, t := range g.sets {
		c := t.control()
		if seen[c] {
			t.errors = appendCode(t.errors, "23")
		}
		seen[c] = true
	}
	return nil
}

// checkGE compares the group trailer with the group.
func checkGE(g *group, ge segment) {
	g.hasGE, g.declared = true, ge.elem(1)
	if ge.elem(2) != g.control() {
		g.errors = appendCode(g.errors, "4") // group control numbers differ
	}
	if n, err := strconv.Atoi(ge.elem(1)); err != nil || n != len(g.sets) || len(ge.elem(1)) > 6 {
		g.errors = appendCode(g.errors, "5") // transaction set count differs
	}
}

// checkSE compares the transaction set trailer with the set.
func checkSE(t *txSet, se segment) {
	if se.elem(2) != t.control() {
		t.errors = appendCode(t.errors, "3") // control numbers in ST and SE differ
	}
	if n, err := strconv.Atoi(se.elem(1)); err != nil || n != len(t.segs) || len(se.elem(1)) > 10 {
		t.errors = appendCode(t.errors, "4") // segment count differs
	}
}
