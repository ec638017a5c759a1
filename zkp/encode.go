package zkp

import (
	"crypto/sha256"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/mimc"

	"github.com/healthagents/healthagents/record"
)

const tagMember = "healthagents/zkp/v1/member\x00"

// EncodeCode maps a code (procedure, class or drug) of 1..MaxCodeLen bytes
// injectively to a field element below 2^68: its length times 2^64 plus its
// bytes, left-aligned and zero-padded, read as a big-endian integer. The
// value is never zero. A longer code gives ErrRecordTooLarge.
func EncodeCode(code string) (fr.Element, error) {
	var e fr.Element
	if len(code) == 0 || len(code) > MaxCodeLen {
		return e, fmt.Errorf("%w: a code must have 1..%d bytes", ErrRecordTooLarge, MaxCodeLen)
	}
	var buf [MaxCodeLen]byte
	copy(buf[:], code)
	v := new(big.Int).SetUint64(uint64(len(code)))
	v.Lsh(v, 8*MaxCodeLen).Or(v, new(big.Int).SetBytes(buf[:]))
	e.SetBigInt(v)
	return e, nil
}

// CanonicalCode is the form in which the eligibility agent compares codes
// and looks up overrides: surrounding space trimmed, upper-cased.
func CanonicalCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// EncodeCodeFolded is EncodeCode of the code's case-folded form: two codes
// that strings.EqualFold considers equal encode to the same element.
// Exclusions are matched with it.
func EncodeCodeFolded(code string) (fr.Element, error) { return EncodeCode(foldCase(code)) }

// hashMember maps coverage.member_id to a field element: SHA-256 of a
// domain tag and the id's exact bytes, reduced modulo the BN254 scalar
// field r.
func hashMember(id string) fr.Element {
	h := sha256.New()
	h.Write([]byte(tagMember))
	h.Write([]byte(id))
	var e fr.Element
	e.SetBigInt(new(big.Int).SetBytes(h.Sum(nil))) // SetBigInt reduces mod r
	return e
}

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

// Class is a procedure class as the circuit sees it.
type Class struct {
	Index   int    // 1-based, the public input ClassIndex
	Code    string // e.g. "PROC001"
	BasePct int    // base coverage percent
	PreAuth bool   // whether the class requires prior authorization
	exact   *big.Int
	folded  *big.Int
}

// Classes returns the procedure classes the eligibility circuit is compiled
// with. They mirror the eligibility agent's catalogue; changing them changes
// the circuit and therefore its keys.
func Classes() []Class {
	out := make([]Class, 0, 5)
	for _, c := range classTable() {
		out = append(out, Class{Index: c.Index, Code: c.Code, BasePct: c.BasePct, PreAuth: c.PreAuth})
	}
	return out
}

func classTable() []Class {
	raw := []Class{
		{Index: 1, Code: "PROC001", BasePct: 80, PreAuth: true},
		{Index: 2, Code: "PROC002", BasePct: 60, PreAuth: false},
		{Index: 3, Code: "PROC003", BasePct: 100, PreAuth: true},
		{Index: 4, Code: "PROC004", BasePct: 90, PreAuth: false},
		{Index: 5, Code: "PROC005", BasePct: 85, PreAuth: true},
	}
	for i := range raw {
		e, _ := EncodeCode(raw[i].Code) // constant codes of 7 bytes: cannot fail
		f, _ := EncodeCodeFolded(raw[i].Code)
		raw[i].exact, raw[i].folded = e.BigInt(new(big.Int)), f.BigInt(new(big.Int))
	}
	return raw
}

// coverageWitness is the native (out-of-circuit) value of coverageVars.
type coverageWitness struct {
	member      fr.Element
	active      bool
	start, end  uint64
	excluded    [MaxExclusions]fr.Element
	overrideKey [MaxOverrides]fr.Element
	overridePct [MaxOverrides]uint64
	blinding    fr.Element
}

// encodeCoverage maps a validated coverage block to its canonical witness:
// exclusions deduplicated case-insensitively and sorted, overrides sorted by
// key hash, empty slots zero.
func encodeCoverage(c *record.Coverage, blinding fr.Element) (*coverageWitness, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: record has no coverage", ErrRecordTooLarge)
	}
	w := &coverageWitness{member: hashMember(c.MemberID), active: c.Status == record.StatusActive, blinding: blinding}
	// Errors name the field, never its value (time.Parse's would).
	start, err := time.Parse(record.DateLayout, c.Start)
	if err != nil {
		return nil, malformed("coverage.start", "must be a date YYYY-MM-DD")
	}
	end, err := time.Parse(record.DateLayout, c.End)
	if err != nil {
		return nil, malformed("coverage.end", "must be a date YYYY-MM-DD")
	}
	if w.start, err = DayNumber(start); err != nil {
		return nil, err
	}
	if w.end, err = DayNumber(end); err != nil {
		return nil, err
	}

	var excl []fr.Element
	for _, code := range c.ExcludedProcedures {
		h, err := EncodeCodeFolded(code)
		if err != nil {
			// Empty, or longer than MaxCodeLen once folded: it can never
			// equal (case-insensitively) a provable requested code, whose
			// folded form has 1..MaxCodeLen bytes, so it changes no outcome.
			continue
		}
		if !slices.ContainsFunc(excl, func(e fr.Element) bool { return e.Equal(&h) }) {
			excl = append(excl, h)
		}
	}
	if len(excl) > MaxExclusions {
		return nil, fmt.Errorf("%w: %d distinct excluded_procedures, at most %d are provable", ErrRecordTooLarge, len(excl), MaxExclusions)
	}
	slices.SortFunc(excl, func(a, b fr.Element) int { return a.Cmp(&b) })
	copy(w.excluded[:], excl)

	type ov struct {
		key fr.Element
		pct uint64
	}
	// The eligibility agent looks an override up by the canonical
	// (trimmed, upper-cased) code: the key equal to it wins, else the
	// lexically smallest key whose canonical form equals it. Resolve every
	// canonical group here the same way; the circuit then matches canonical
	// codes.
	winners := make(map[string]string, len(c.CoverageOverrides))
	for k := range c.CoverageOverrides {
		ck := CanonicalCode(k)
		if w, ok := winners[ck]; !ok || (w != ck && (k == ck || k < w)) {
			winners[ck] = k
		}
	}
	ovs := make([]ov, 0, len(winners))
	for ck, k := range winners {
		key, err := EncodeCode(ck)
		if err != nil {
			continue // empty or too long: never equals a provable requested code
		}
		pct := c.CoverageOverrides[k]
		if pct < 0 || pct > 100 {
			return nil, malformed("coverage.coverage_overrides", "must hold percentages 0-100")
		}
		ovs = append(ovs, ov{key, uint64(pct)})
	}
	if len(ovs) > MaxOverrides {
		return nil, fmt.Errorf("%w: %d distinct coverage_overrides, at most %d are provable", ErrRecordTooLarge, len(ovs), MaxOverrides)
	}
	slices.SortFunc(ovs, func(a, b ov) int { return a.key.Cmp(&b.key) })
	for i, o := range ovs {
		w.overrideKey[i], w.overridePct[i] = o.key, o.pct
	}
	return w, nil
}

// packCodesNative is the native counterpart of packCodes in the circuit.
func packCodesNative(codes []fr.Element, tail *big.Int) fr.Element {
	v := new(big.Int).Set(tail)
	for i := len(codes) - 1; i >= 0; i-- {
		v.Lsh(v, codeBits).Or(v, codes[i].BigInt(new(big.Int)))
	}
	var e fr.Element
	e.SetBigInt(v)
	return e
}

// commitment computes MiMC(MemberID, packExcl, packOver, Blinding) exactly
// as coverageVars.open does.
func (w *coverageWitness) commitment() fr.Element {
	small := new(big.Int).SetUint64(w.end)
	small.Lsh(small, DayBits).Or(small, new(big.Int).SetUint64(w.start))
	small.Lsh(small, 1)
	if w.active {
		small.SetBit(small, 0, 1)
	}
	pcts := new(big.Int)
	for i := len(w.overridePct) - 1; i >= 0; i-- {
		pcts.Lsh(pcts, pctBits).Or(pcts, new(big.Int).SetUint64(w.overridePct[i]))
	}
	h := mimc.NewMiMC()
	for _, e := range []fr.Element{w.member, packCodesNative(w.excluded[:], small), packCodesNative(w.overrideKey[:], pcts), w.blinding} {
		b := e.Bytes()
		h.Write(b[:])
	}
	var out fr.Element
	out.SetBytes(h.Sum(nil))
	return out
}

// assign fills the circuit variables.
func (w *coverageWitness) assign() coverageVars {
	var v coverageVars
	v.MemberID = w.member
	v.Active = boolInt(w.active)
	v.Start, v.End = w.start, w.end
	for i := range w.excluded {
		v.Excluded[i] = w.excluded[i]
	}
	for i := range w.overrideKey {
		v.OverrideKey[i], v.OverridePct[i] = w.overrideKey[i], w.overridePct[i]
	}
	v.Blinding = w.blinding
	return v
}

// inWindow and excludes are the native rules, used to report a false claim
// before the solver does.
func (w *coverageWitness) inWindow(day uint64) bool { return w.start <= day && day <= w.end }

func (w *coverageWitness) excludes(codes ...fr.Element) bool {
	for _, e := range w.excluded {
		for _, c := range codes {
			if e.Equal(&c) {
				return true
			}
		}
	}
	return false
}

func (w *coverageWitness) override(key fr.Element) (uint64, bool) {
	for i, k := range w.overrideKey {
		if k.Equal(&key) {
			return w.overridePct[i], true
		}
	}
	return 0, false
}

func malformed(field, reason string) error {
	return fmt.Errorf("%w: %w", record.ErrMalformed, &record.FieldError{Field: field, Reason: reason})
}
