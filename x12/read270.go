package x12

// Reading a 270: the envelope (envelope.go), then each transaction set
// against the 005010X279A1 structure — the HL hierarchy 2000A/B/C/D, the
// segments each loop allows in their order and counts, and the elements
// the service interprets.

import (
	"fmt"
	"strings"
)

// SyntaxError is a 270 interchange whose functional groups or transaction
// sets fail the implementation guide's checks: a 999 answers it
// (Render999), naming each segment and element in error. Nothing of the
// interchange is decided.
type SyntaxError struct {
	ic *interchange
}

func (e *SyntaxError) Error() string {
	n, first := 0, ""
	for _, g := range e.ic.groups {
		n += len(g.errors)
		for _, t := range g.sets {
			n += len(t.errors) + len(t.segErrs)
			if first == "" && len(t.segErrs) > 0 {
				se := t.segErrs[0]
				first = fmt.Sprintf(" (first: segment %s at %d, IK304 %s)", se.ID, se.Pos, se.Code)
			}
		}
	}
	return fmt.Sprintf("%v: 270 rejected with a 999: %d errors%s", ErrInvalid, n, first)
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *SyntaxError) Unwrap() error { return ErrInvalid }

// Envelope returns the rejected interchange's envelope.
func (e *SyntaxError) Envelope() Envelope { return e.ic.env }

// Read270 reads an interchange of 270 transaction sets (005010X279A1). An
// interchange that cannot be read as one is an *InterchangeError (answer:
// a TA1); one whose groups or sets fail the guide's checks a *SyntaxError
// (answer: a 999). Both wrap ErrInvalid and never quote the interchange's
// content.
func Read270(b []byte) (*Inquiry, error) {
	ic, ierr := readInterchange(b)
	if ierr != nil {
		return nil, ierr
	}
	inq := &Inquiry{Envelope: ic.env, ApplicationSender: ic.groups[0].gs.elem(2), ApplicationReceiver: ic.groups[0].gs.elem(3)}
	failed := false
	for _, g := range ic.groups {
		if len(g.errors) > 0 {
			failed = true
		}
		for _, t := range g.sets {
			// Every set is read, whatever its trailer says, so the 999 names
			// all that is wrong with it.
			r := &setReader{t: t, seps: ic.env.Separators, tx: &Transaction270{Control: t.control()}}
			r.read()
			inq.Transactions = append(inq.Transactions, r.tx)
			if t.rejected() {
				if len(t.segErrs) > 0 {
					t.errors = appendCode(t.errors, "5")
				}
				failed = true
			}
		}
		if len(g.sets) == 0 {
			g.errors = appendCode(g.errors, "5")
			failed = true
		}
	}
	if failed {
		return nil, &SyntaxError{ic: ic}
	}
	return inq, nil
}

// maxSegmentErrors bounds the IK3 loops reported for one set.
const maxSegmentErrors = 50

// slot is one segment a loop allows: at most max times, required or not,
// in loop; eq marks the repeating EQ loop (2110C/2110D).
type slot struct {
	id   string
	max  int
	req  bool
	loop string
	eq   bool
	read func(r *setReader, seg segment)
}

// level is one HL level's grammar.
type level struct {
	code  string // HL03
	loop  string // 2000A ...
	slots []slot
}

// segments270 are the segment ids a 270 may hold.
var segments270 = map[string]bool{"ST": true, "BHT": true, "HL": true, "TRN": true, "NM1": true, "REF": true, "N3": true, "N4": true,
	"PRV": true, "DMG": true, "INS": true, "HI": true, "DTP": true, "EQ": true, "AMT": true, "III": true, "SE": true}

func memberSlots(l string) []slot {
	name := "2100" + l
	eq := "2110" + l
	s := []slot{
		{id: "TRN", max: 2, loop: "2000" + l, read: (*setReader).trn},
		{id: "NM1", max: 1, req: true, loop: name, read: (*setReader).nm1},
		{id: "REF", max: 9, loop: name, read: checkWith(specREF)},
		{id: "N3", max: 1, loop: name, read: checkWith(specN3)},
		{id: "N4", max: 1, loop: name, read: checkWith(specN4)},
		{id: "PRV", max: 1, loop: name, read: checkWith(specPRV)},
		{id: "DMG", max: 1, loop: name, read: (*setReader).dmg},
		{id: "INS", max: 1, loop: name, read: checkWith(specINS)},
		{id: "HI", max: 1, loop: name, read: checkWith(specHI)},
		{id: "DTP", max: 2, loop: name, read: (*setReader).dtp},
		{id: "EQ", max: 1, req: true, loop: eq, eq: true, read: (*setReader).eq},
	}
	if l == "C" {
		s = append(s, slot{id: "AMT", max: 2, loop: eq, eq: true, read: checkWith(specAMT)})
	}
	return append(s,
		slot{id: "III", max: 1, loop: eq, eq: true, read: checkWith(specIII)},
		slot{id: "REF", max: 1, loop: eq, eq: true, read: checkWith(specREF)},
		slot{id: "DTP", max: 1, loop: eq, eq: true, read: (*setReader).dtp},
	)
}

var levels = map[string]*level{
	"20": {code: "20", loop: "2000A", slots: []slot{{id: "NM1", max: 1, req: true, loop: "2100A", read: (*setReader).nm1}}},
	"21": {code: "21", loop: "2000B", slots: []slot{
		{id: "NM1", max: 1, req: true, loop: "2100B", read: (*setReader).nm1},
		{id: "REF", max: 9, loop: "2100B", read: checkWith(specREF)},
		{id: "N3", max: 1, loop: "2100B", read: checkWith(specN3)},
		{id: "N4", max: 1, loop: "2100B", read: checkWith(specN4)},
		{id: "PRV", max: 1, loop: "2100B", read: checkWith(specPRV)},
	}},
	"22": {code: "22", loop: "2000C", slots: memberSlots("C")},
	"23": {code: "23", loop: "2000D", slots: memberSlots("D")},
}

func checkWith(specs []spec) func(*setReader, segment) {
	return func(r *setReader, seg segment) { r.checkElements(seg, r.slotLoop, specs...) }
}

// hl is an open HL level.
type hl struct {
	seg      segment
	lvl      *level
	p        int // index of the last slot matched, -1 before any
	counts   map[int]int
	children int
	eqs      int
}

// setReader reads one transaction set.
type setReader struct {
	t    *txSet
	seps Separators
	tx   *Transaction270

	open     map[string]*hl // by HL03: the innermost open level of each kind
	cur      *hl
	ids      map[string]bool // HL01 values
	slotLoop string          // loop of the segment being read

	source   *Source
	receiver *Receiver
	sub      *Subscriber
	member   *Member // the subscriber's or a dependent's
	inq      *BenefitInquiry
}

func (r *setReader) segError(seg segment, loop, code string, elems ...ElementError) {
	if len(r.t.segErrs) >= maxSegmentErrors {
		return
	}
	r.t.segErrs = append(r.t.segErrs, SegmentError{ID: safeID(seg.id()), Pos: seg.pos, Loop: loop, Code: code, Elements: elems})
}

// missing records a required segment absent before seg.
func (r *setReader) missing(id string, at segment, loop string) {
	if len(r.t.segErrs) >= maxSegmentErrors {
		return
	}
	r.t.segErrs = append(r.t.segErrs, SegmentError{ID: id, Pos: at.pos, Loop: loop, Code: "3"})
}

func (r *setReader) read() {
	segs := r.t.segs
	st := segs[0]
	r.checkElements(st, "", specST...)
	switch {
	case st.elem(1) != "270":
		r.t.errors = appendCode(r.t.errors, "1") // transaction set not supported
		return
	case len(st.elem(2)) < 4 || len(st.elem(2)) > 9:
		r.t.errors = appendCode(r.t.errors, "7")
	case st.elem(3) != "" && st.elem(3) != Version:
		r.t.errors = appendCode(r.t.errors, "I6") // implementation convention not supported
	}
	r.open, r.ids = map[string]*hl{}, map[string]bool{}
	body := segs[1:]
	var se segment
	if r.t.hasSE {
		se = body[len(body)-1]
		body = body[:len(body)-1]
	} else {
		se = segment{el: []string{"SE"}, pos: len(segs) + 1}
	}
	if len(body) == 0 || body[0].id() != "BHT" {
		at := se
		if len(body) > 0 {
			at = body[0]
		}
		r.missing("BHT", at, "")
	}
	for _, seg := range body {
		switch seg.id() {
		case "BHT":
			if seg.pos != 2 {
				r.segError(seg, "", "5")
				continue
			}
			before := len(r.t.segErrs)
			r.checkElements(seg, "", specBHT...)
			if len(r.t.segErrs) == before && seg.elem(2) == "01" {
				// A cancellation: a real-time request has nothing to cancel.
				r.segError(seg, "", "8", ElementError{Pos: "2", Ref: "353", Code: "I6"})
			}
			r.tx.Reference = strings.TrimSpace(seg.elem(3))
		case "HL":
			r.hl(seg)
		default:
			r.inLevel(seg)
		}
	}
	r.closeAll(se)
	if r.tx.Sources == nil {
		r.missing("HL", se, "2000A")
	}
}

// classify is the IK304 code of a segment no slot takes.
func classify(id string) string {
	switch {
	case !validSegmentID(id):
		return "1" // unrecognized segment id
	case segments270[id]:
		return "2" // unexpected here
	default:
		return "6" // not in the 270
	}
}

// inLevel reads a segment inside the current HL level.
func (r *setReader) inLevel(seg segment) {
	h := r.cur
	if h == nil {
		r.segError(seg, "", classify(seg.id()))
		return
	}
	slots := h.lvl.slots
	idx := -1
	if seg.id() == "EQ" {
		for i, s := range slots {
			if s.id == "EQ" {
				idx = i
			}
		}
		if idx >= 0 {
			r.passRequired(h, idx, seg)
			for i := idx; i < len(slots); i++ {
				delete(h.counts, i) // a new 2110 loop
			}
		}
	} else {
		for i := max(h.p, 0); i < len(slots); i++ {
			if slots[i].id == seg.id() {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		code, loop := classify(seg.id()), h.lvl.loop
		for i := 0; i < h.p && code == "2"; i++ {
			if slots[i].id == seg.id() {
				code, loop = "7", slots[i].loop // allowed in this loop, but earlier
			}
		}
		r.segError(seg, loop, code)
		return
	}
	r.passRequired(h, idx, seg)
	h.p = idx
	h.counts[idx]++
	sl := slots[idx]
	if h.counts[idx] > sl.max {
		r.segError(seg, sl.loop, "5")
		return
	}
	r.slotLoop = sl.loop
	sl.read(r, seg)
}

// passRequired records the required slots between the current one and
// idx that were skipped.
func (r *setReader) passRequired(h *hl, idx int, at segment) {
	for i := h.p + 1; i < idx; i++ {
		if s := h.lvl.slots[i]; s.req && !s.eq && h.counts[i] == 0 {
			r.missing(s.id, at, s.loop)
			h.counts[i] = -1 << 20 // reported once
		}
	}
}

// hl opens an HL level, closing the levels it ends.
func (r *setReader) hl(seg segment) {
	r.checkElements(seg, "", specHL...)
	code := seg.elem(3)
	lvl := levels[code]
	r.inq = nil
	if lvl == nil {
		r.cur = nil // HL03's code error is recorded; what follows belongs to no level
		return
	}
	parentOf := map[string]string{"21": "20", "22": "21", "23": "22"}
	// Close the levels at or below this one.
	for _, c := range []string{"23", "22", "21", "20"} {
		r.close(c, seg)
		if c == code {
			break
		}
	}
	id := seg.elem(1)
	var elemErrs []ElementError
	if r.ids[id] {
		elemErrs = append(elemErrs, ElementError{Pos: "1", Ref: "628", Code: "7"})
	}
	r.ids[id] = true
	parent := r.open[parentOf[code]]
	switch {
	case code == "20" && seg.elem(2) != "":
		elemErrs = append(elemErrs, ElementError{Pos: "2", Ref: "734", Code: "I10"})
	case code != "20" && parent == nil:
		r.segError(seg, lvl.loop, "7") // a level without its parent
		r.cur = nil
		return
	case code != "20" && seg.elem(2) != parent.seg.elem(1):
		elemErrs = append(elemErrs, ElementError{Pos: "2", Ref: "734", Code: "7"})
	}
	if (code == "20" || code == "21") && seg.elem(4) != "1" || code == "23" && seg.elem(4) != "0" {
		elemErrs = append(elemErrs, ElementError{Pos: "4", Ref: "736", Code: "7"})
	}
	if code == "23" && parent.seg.elem(4) != "1" {
		elemErrs = append(elemErrs, ElementError{Pos: "2", Ref: "734", Code: "7"}) // its subscriber said no dependents
	}
	if len(elemErrs) > 0 {
		r.segError(seg, lvl.loop, "8", elemErrs...)
	}
	if parent != nil {
		parent.children++
	}
	h := &hl{seg: seg, lvl: lvl, p: -1, counts: map[int]int{}}
	r.open[code], r.cur = h, h
	switch code {
	case "20":
		r.source = &Source{}
		r.tx.Sources = append(r.tx.Sources, r.source)
	case "21":
		r.receiver = &Receiver{}
		r.source.Receivers = append(r.source.Receivers, r.receiver)
	case "22":
		r.sub = &Subscriber{}
		r.receiver.Subscribers = append(r.receiver.Subscribers, r.sub)
		r.member = &r.sub.Member
	case "23":
		r.member = &Member{}
		r.sub.Dependents = append(r.sub.Dependents, r.member)
	}
}

// close ends the open level of kind code at segment at: its required
// segments and children must have been seen.
func (r *setReader) close(code string, at segment) {
	h := r.open[code]
	if h == nil {
		return
	}
	delete(r.open, code)
	if r.cur == h {
		r.cur = nil
	}
	r.passRequired(h, len(h.lvl.slots), at)
	switch code {
	case "20", "21":
		if h.children == 0 {
			child := map[string]string{"20": "2000B", "21": "2000C"}[code]
			r.missing("HL", at, child)
		}
	case "22":
		if h.seg.elem(4) == "1" && h.children == 0 {
			r.segError(h.seg, h.lvl.loop, "8", ElementError{Pos: "4", Ref: "736", Code: "7"})
		}
		if h.seg.elem(4) == "0" && h.eqs == 0 {
			r.missing("EQ", at, "2110C")
		}
	case "23":
		if h.eqs == 0 {
			r.missing("EQ", at, "2110D")
		}
	}
}

func (r *setReader) closeAll(at segment) {
	for _, c := range []string{"23", "22", "21", "20"} {
		r.close(c, at)
	}
}

// The segment readers: each checks its elements and fills the inquiry.

func (r *setReader) nm1(seg segment) {
	var sp []spec
	switch r.cur.lvl.code {
	case "20":
		sp = specNM1A
	case "21":
		sp = specNM1B
	case "22":
		sp = specNM1C
	default:
		sp = specNM1D
	}
	r.checkElements(seg, r.slotLoop, sp...)
	p := Party{Entity: seg.elem(1), EntityType: seg.elem(2), LastName: strings.TrimSpace(seg.elem(3)), FirstName: strings.TrimSpace(seg.elem(4)),
		IDQualifier: seg.elem(8), ID: strings.TrimSpace(seg.elem(9))}
	if (seg.elem(8) == "") != (seg.elem(9) == "") && r.cur.lvl.code == "22" {
		pos := "8"
		if seg.elem(8) != "" {
			pos = "9"
		}
		r.segError(seg, r.slotLoop, "8", ElementError{Pos: pos, Ref: map[string]string{"8": "66", "9": "67"}[pos], Code: "2"})
	}
	switch r.cur.lvl.code {
	case "20":
		r.source.Party = p
	case "21":
		r.receiver.Party = p
	default:
		r.member.Party = p
	}
}

func (r *setReader) trn(seg segment) {
	r.checkElements(seg, r.slotLoop, specTRN...)
	r.member.Traces = append(r.member.Traces, Trace{Number: strings.TrimSpace(seg.elem(2)), Originator: seg.elem(3), Additional: strings.TrimSpace(seg.elem(4))})
}

func (r *setReader) dmg(seg segment) {
	before := len(r.t.segErrs)
	r.checkElements(seg, r.slotLoop, specDMG...)
	if len(r.t.segErrs) > before {
		return
	}
	f, v := seg.elem(1), seg.elem(2)
	switch {
	case f == "" && v == "":
	case f == "" || v == "":
		pos, ref := "1", "1250"
		if v == "" {
			pos, ref = "2", "1251"
		}
		r.segError(seg, r.slotLoop, "8", ElementError{Pos: pos, Ref: ref, Code: "2"})
	default:
		p, ok := parsePeriod(f, v)
		if !ok || p.from != p.to {
			r.segError(seg, r.slotLoop, "8", ElementError{Pos: "2", Ref: "1251", Code: "8"})
			return
		}
		r.member.BirthDate = p.from
	}
}

var (
	specDTP2100 = []spec{id("374", 3, 3, true, "102", "291"), id("1250", 2, 3, true, "D8", "RD8"), an("1251", 1, 35, true)}
	specDTP2110 = []spec{id("374", 3, 3, true, "291"), id("1250", 2, 3, true, "D8", "RD8"), an("1251", 1, 35, true)}
)

func (r *setReader) dtp(seg segment) {
	before := len(r.t.segErrs)
	inEQ := r.inq != nil && strings.HasPrefix(r.slotLoop, "2110")
	sp := specDTP2100
	if inEQ {
		sp = specDTP2110
	}
	r.checkElements(seg, r.slotLoop, sp...)
	if len(r.t.segErrs) > before {
		return
	}
	p, ok := parsePeriod(seg.elem(2), seg.elem(3))
	if !ok {
		r.segError(seg, r.slotLoop, "8", ElementError{Pos: "3", Ref: "1251", Code: "8"})
		return
	}
	if seg.elem(1) != "291" {
		return // 102, the card's issue date: not used (docs/x12.md)
	}
	per := &Period{From: p.from, To: p.to}
	switch {
	case inEQ:
		r.inq.ServiceDate = per
	case r.member.ServiceDate != nil:
		r.segError(seg, r.slotLoop, "8", ElementError{Pos: "1", Ref: "374", Code: "I6"}) // a second plan date
	default:
		r.member.ServiceDate = per
	}
}

var specEQ = []spec{{ref: "1365", kind: kindID, min: 1, max: 2, repeat: 99}, skip, id("1207", 3, 3, false, "FAM"), notUsed, skip}

func (r *setReader) eq(seg segment) {
	r.inq = &BenefitInquiry{}
	r.member.Inquiries = append(r.member.Inquiries, r.inq)
	r.cur.eqs++
	sp := specEQ
	if r.cur.lvl.code == "23" {
		sp = append(append([]spec(nil), specEQ[:2]...), notUsed, notUsed, skip)
	}
	before := len(r.t.segErrs)
	r.checkElements(seg, r.slotLoop, sp...)
	if len(r.t.segErrs) > before {
		return
	}
	var errs []ElementError
	if v := seg.elem(1); v != "" {
		for k, c := range strings.Split(v, string(r.seps.Repetition)) {
			if !serviceTypeCodes[c] {
				errs = append(errs, ElementError{Pos: fmt.Sprintf("1::%d", k+1), Ref: "1365", Code: "7"})
			}
			r.inq.ServiceTypes = append(r.inq.ServiceTypes, c)
		}
	}
	if v := seg.elem(2); v != "" {
		errs = append(errs, r.procedure(v)...)
	}
	if seg.elem(1) == "" && seg.elem(2) == "" {
		errs = append(errs, ElementError{Pos: "1", Ref: "1365", Code: "2"}) // EQ01 or EQ02 is required
	}
	if len(errs) > 0 {
		r.segError(seg, r.slotLoop, "8", errs...)
	}
}

// procedure reads EQ02, the composite medical procedure identifier C003.
func (r *setReader) procedure(v string) []ElementError {
	parts := strings.Split(v, string(r.seps.Component))
	comp := []spec{
		id("235", 2, 2, true, "AD", "CJ", "HC", "ID", "IV", "N4", "ZZ"), an("234", 1, 48, true),
		an("1339", 2, 2, false), an("1339", 2, 2, false), an("1339", 2, 2, false), an("1339", 2, 2, false), notUsed, notUsed,
	}
	var errs []ElementError
	if len(parts) > len(comp) {
		return []ElementError{{Pos: "2", Ref: "C003", Code: "13"}}
	}
	for i := range comp {
		p := ""
		if i < len(parts) {
			p = parts[i]
		}
		code := checkValue270(comp[i], p)
		if comp[i].kind == kindNot && p != "" {
			code = "I10"
		}
		if code != "" {
			errs = append(errs, ElementError{Pos: fmt.Sprintf("2:%d", i+1), Ref: comp[i].ref, Code: code})
		}
	}
	r.inq.ProcedureQualifier, r.inq.ProcedureCode = parts[0], strings.TrimSpace(safeIndex(parts, 1))
	return errs
}

func safeIndex(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}
