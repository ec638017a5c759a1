package x12

// Element checks of the 270 reader: each interpreted segment's elements
// against their X12 data element definitions (reference number, type,
// length) and the code values 005010X279A1 allows.

import (
	"strconv"
	"strings"
	"time"
)

// Element kinds.
const (
	kindAN   = iota // string
	kindID          // identifier: one of codes (when given)
	kindN0          // unsigned integer
	kindR           // decimal
	kindDT          // date CCYYMMDD
	kindTM          // time HHMM[SS[d..]]
	kindSkip        // a composite or element this reader does not interpret: characters only
	kindNot         // not used in this implementation: must be empty
)

// spec is one element's definition.
type spec struct {
	ref      string
	kind     int
	min, max int
	req      bool
	codes    []string
	repeat   int // repetitions allowed (0 or 1: none)
}

func an(ref string, min, max int, req bool) spec {
	return spec{ref: ref, kind: kindAN, min: min, max: max, req: req}
}
func id(ref string, min, max int, req bool, codes ...string) spec {
	return spec{ref: ref, kind: kindID, min: min, max: max, req: req, codes: codes}
}

var (
	notUsed = spec{kind: kindNot}
	skip    = spec{kind: kindSkip}
)

// checkElements checks seg's elements against specs (element i against
// specs[i-1]), recording IK4 errors; elements beyond specs are "too many".
func (r *setReader) checkElements(seg segment, loop string, specs ...spec) {
	var errs []ElementError
	add := func(pos, ref, code string) { errs = append(errs, ElementError{Pos: pos, Ref: ref, Code: code}) }
	for i := 1; i < len(seg.el); i++ {
		v := seg.el[i]
		if i > len(specs) {
			if v != "" {
				add(strconv.Itoa(i), "", "3")
			}
			continue
		}
		s := specs[i-1]
		pos := strconv.Itoa(i)
		if !printable(v) {
			add(pos, s.ref, "6")
			continue
		}
		switch s.kind {
		case kindSkip:
			continue
		case kindNot:
			if v != "" {
				add(pos, s.ref, "I10")
			}
			continue
		}
		reps := []string{v}
		if r.seps.Repetition != 0 && strings.IndexByte(v, r.seps.Repetition) >= 0 {
			if s.repeat <= 1 {
				add(pos, s.ref, "12")
				continue
			}
			reps = strings.Split(v, string(r.seps.Repetition))
			if len(reps) > s.repeat {
				add(pos, s.ref, "12")
				continue
			}
		}
		for k, rv := range reps {
			p := pos
			if len(reps) > 1 {
				p = pos + "::" + strconv.Itoa(k+1)
			}
			if strings.IndexByte(rv, r.seps.Component) >= 0 {
				add(p, s.ref, "13")
				continue
			}
			if code := checkValue270(s, rv); code != "" {
				add(p, s.ref, code)
			}
		}
	}
	for i := len(seg.el); i <= len(specs); i++ {
		if specs[i-1].req {
			add(strconv.Itoa(i), specs[i-1].ref, "1")
		}
	}
	if len(errs) > 0 {
		r.segError(seg, loop, "8", errs...)
	}
}

// checkValue270 is the IK403 code of one value against its spec, or "".
func checkValue270(s spec, v string) string {
	if v == "" {
		if s.req {
			return "1"
		}
		return ""
	}
	if len(v) < s.min {
		return "4"
	}
	if containsSep(v) {
		// A separator of the answers (* : ^ ~) inside a value: this
		// interchange uses other separators, and the value could not be
		// echoed.
		return "6"
	}
	if s.max > 0 && len(v) > s.max {
		return "5"
	}
	switch s.kind {
	case kindID:
		if len(s.codes) > 0 && !contains(s.codes, v) {
			return "7"
		}
	case kindN0:
		if !digits(v) {
			return "6"
		}
	case kindR:
		if _, err := strconv.ParseFloat(v, 64); err != nil || strings.ContainsAny(v, "eE+") {
			return "6"
		}
	case kindDT:
		if !validDate("20060102", v) {
			return "8"
		}
	case kindTM:
		if !validTime(v) {
			return "9"
		}
	}
	return ""
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// validTime: HHMM, HHMMSS or HHMMSS with decimal seconds, in range.
func validTime(v string) bool {
	if len(v) < 4 || len(v) > 8 || len(v) == 5 || !digits(v) || !validDate("1504", v[:4]) {
		return false
	}
	return len(v) == 4 || v[4:6] < "60"
}

// dateRange is a D8 (one date) or RD8 (CCYYMMDD-CCYYMMDD) value.
type dateRange struct{ from, to time.Time }

// parsePeriod reads DTP03 (or DMG02) by its format qualifier; false for a
// value that is not a real date or range in it.
func parsePeriod(format, v string) (dateRange, bool) {
	switch format {
	case "D8":
		t, err := time.Parse("20060102", v)
		if err != nil || len(v) != 8 || !digits(v) {
			return dateRange{}, false
		}
		return dateRange{t, t}, true
	case "RD8":
		a, b, ok := strings.Cut(v, "-")
		f, okf := parsePeriod("D8", a)
		t, okt := parsePeriod("D8", b)
		if !ok || !okf || !okt || t.to.Before(f.from) {
			return dateRange{}, false
		}
		return dateRange{f.from, t.to}, true
	}
	return dateRange{}, false
}

// The element definitions of the segments the 270 reader interprets.
var (
	specST  = []spec{id("143", 3, 3, true), an("329", 4, 9, true), an("1705", 1, 35, true)}
	specBHT = []spec{id("1005", 4, 4, true, "0022"), id("353", 2, 2, true, "13", "01"), an("127", 1, 50, false),
		{ref: "373", kind: kindDT, min: 8, max: 8, req: true}, {ref: "337", kind: kindTM, min: 4, max: 8, req: true}, id("640", 2, 2, false, "RT")}
	specHL  = []spec{an("628", 1, 12, true), an("734", 1, 12, false), id("735", 1, 2, true, "20", "21", "22", "23"), id("736", 1, 1, true, "0", "1")}
	specTRN = []spec{id("481", 1, 2, true, "1"), an("127", 1, 50, true), an("509", 10, 10, true), an("127", 1, 50, false)}
	specDMG = []spec{id("1250", 2, 3, false, "D8"), an("1251", 1, 35, false), id("1068", 1, 1, false, "F", "M"), notUsed, notUsed, notUsed, notUsed, notUsed, notUsed, notUsed, notUsed}
	specREF = []spec{id("128", 2, 3, true), an("127", 1, 50, true), an("352", 1, 80, false), skip}
	specN3  = []spec{an("166", 1, 55, true), an("166", 1, 55, false)}
	specN4  = []spec{an("19", 2, 30, true), id("156", 2, 2, false), id("116", 3, 15, false), id("26", 2, 3, false), notUsed, notUsed, id("1715", 1, 3, false)}
	specPRV = []spec{id("1221", 1, 3, true), id("128", 2, 3, false), an("127", 1, 50, false), notUsed, notUsed, notUsed}
	specAMT = []spec{id("522", 1, 3, true, "R", "PB"), {ref: "782", kind: kindR, min: 1, max: 18, req: true}, notUsed}
	specIII = []spec{id("1270", 1, 3, true, "ZZ"), an("1271", 1, 30, true), notUsed, notUsed, notUsed, notUsed, notUsed, notUsed, notUsed}
	// INS and HI are read for their characters and element count only: the
	// service does not use them (docs/x12.md).
	specINS = []spec{skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip}
	specHI  = []spec{skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip, skip}
)

// nm1Spec is the NM1 definition of a loop: the entity codes and id
// qualifiers allowed there, and whether the last name and the id are
// required.
func nm1Spec(entities, qualifiers []string, entityTypes []string, nameReq, idReq bool) []spec {
	s := []spec{
		id("98", 2, 3, true, entities...), id("1065", 1, 1, true, entityTypes...), an("1035", 1, 60, nameReq),
		an("1036", 1, 35, false), an("1037", 1, 25, false), notUsed, an("1039", 1, 10, false),
		id("66", 1, 2, idReq, qualifiers...), an("67", 2, 80, idReq), notUsed, notUsed, notUsed,
	}
	if qualifiers == nil { // no identifier in this loop (2100D)
		s[7], s[8] = notUsed, notUsed
	}
	return s
}

var (
	specNM1A = nm1Spec([]string{"2B", "36", "GP", "P5", "PR"}, []string{"24", "46", "FI", "NI", "PI", "XV", "XX"}, []string{"1", "2"}, true, true)
	specNM1B = nm1Spec([]string{"1P", "2B", "36", "80", "FA", "GP", "P5", "PR"}, []string{"24", "34", "FI", "PI", "PP", "SV", "XV", "XX"}, []string{"1", "2"}, false, true)
	specNM1C = nm1Spec([]string{"IL"}, []string{"II", "MI"}, []string{"1", "2"}, false, false)
	specNM1D = nm1Spec([]string{"03"}, nil, []string{"1"}, false, false)
)
