package zkp

import (
	"math/big"

	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/hash/mimc"
)

// Bounds of the fixed-size arrays and bit widths inside the circuits. A
// record that exceeds them is refused with ErrRecordTooLarge rather than
// silently truncated.
const (
	// MaxExclusions is the largest number of distinct (case-insensitive)
	// entries of coverage.excluded_procedures a provable record may hold.
	MaxExclusions = 3
	// MaxOverrides is the largest number of distinct canonical keys (see
	// CanonicalCode) of coverage.coverage_overrides a provable record may
	// hold.
	MaxOverrides = 3
	// MaxCodeLen is the longest code (procedure, class, drug) in bytes that
	// the circuits can represent; see EncodeCode.
	MaxCodeLen = 8
	// DayBits bounds every date: day numbers count days since 1970-01-01
	// and must be below 2^DayBits (that is, before the year 13000).
	DayBits = 22

	codeBits = 8*MaxCodeLen + 4 // length (4 bits) above the padded bytes
	pctBits  = 7                // a coverage percent 0..100 < 2^7
)

// coverageVars is the private part shared by both circuits: the coverage
// block of a record in its field-element encoding, plus the blinding value
// that makes the commitment hiding.
type coverageVars struct {
	MemberID    frontend.Variable                // SHA-256 mod r of coverage.member_id
	Active      frontend.Variable                // 1 iff coverage.status == "active"
	Start       frontend.Variable                // day number of coverage.start
	End         frontend.Variable                // day number of coverage.end
	Excluded    [MaxExclusions]frontend.Variable // folded code values, 0 = empty slot
	OverrideKey [MaxOverrides]frontend.Variable  // canonical code values, 0 = empty slot
	OverridePct [MaxOverrides]frontend.Variable  // percent of the same slot, 0 if empty
	Blinding    frontend.Variable                // uniformly random field element
}

// open range-checks the small fields, packs them into two field elements,
// recomputes the MiMC commitment
//
//	MiMC(MemberID, packExcl, packOver, Blinding)
//
// and asserts it equals the public one. The packing is injective because
// every packed part is range-checked and the packed total stays below r.
func (c *coverageVars) open(api frontend.API, commitment frontend.Variable) error {
	api.AssertIsBoolean(c.Active)
	api.ToBinary(c.Start, DayBits)
	api.ToBinary(c.End, DayBits)
	small := api.Add(c.Active, api.Mul(c.Start, pow2(1)), api.Mul(c.End, pow2(1+DayBits)))
	packExcl := packCodes(api, c.Excluded[:], small)

	var pcts frontend.Variable = 0
	for i := range c.OverridePct {
		// 0 <= pct < 2^7 and 100 - pct < 2^7 together mean 0 <= pct <= 100.
		api.ToBinary(c.OverridePct[i], pctBits)
		api.ToBinary(api.Sub(100, c.OverridePct[i]), pctBits)
		pcts = api.Add(pcts, api.Mul(c.OverridePct[i], pow2(i*pctBits)))
	}
	packOver := packCodes(api, c.OverrideKey[:], pcts)

	h, err := mimc.NewMiMC(api)
	if err != nil {
		return err
	}
	h.Write(c.MemberID, packExcl, packOver, c.Blinding)
	api.AssertIsEqual(h.Sum(), commitment)
	return nil
}

// packCodes returns codes[0] + 2^codeBits*codes[1] + ... + 2^(k*codeBits)*tail
// after range-checking every code to codeBits bits. The caller range-checks
// tail. With k = 3 the result has at most 3*68+45 = 249 bits.
func packCodes(api frontend.API, codes []frontend.Variable, tail frontend.Variable) frontend.Variable {
	var acc frontend.Variable = 0
	for i, code := range codes {
		api.ToBinary(code, codeBits)
		acc = api.Add(acc, api.Mul(code, pow2(i*codeBits)))
	}
	return api.Add(acc, api.Mul(tail, pow2(len(codes)*codeBits)))
}

// inWindow returns 1 iff Start <= day <= End. day must be range-checked by
// the caller (or be a DayBits-bit value by construction).
func (c *coverageVars) inWindow(api frontend.API, day frontend.Variable) frontend.Variable {
	return api.Mul(lessOrEqual(api, c.Start, day), lessOrEqual(api, day, c.End))
}

// isExcluded returns 1 iff one of the committed exclusion hashes equals one
// of codes. Empty slots hold 0 and codes are never 0 (asserted by callers).
func (c *coverageVars) isExcluded(api frontend.API, codes ...frontend.Variable) frontend.Variable {
	notFound := frontend.Variable(1)
	for _, e := range c.Excluded {
		for _, code := range codes {
			notFound = api.Mul(notFound, api.Sub(1, api.IsZero(api.Sub(e, code))))
		}
	}
	return api.Sub(1, notFound)
}

// override returns (found, pct) for the first slot whose key equals key.
func (c *coverageVars) override(api frontend.API, key frontend.Variable) (found, pct frontend.Variable) {
	found, pct = 0, 0
	for i, k := range c.OverrideKey {
		hit := api.Mul(api.IsZero(api.Sub(k, key)), api.Sub(1, found))
		pct = api.Add(pct, api.Mul(hit, c.OverridePct[i]))
		found = api.Add(found, hit)
	}
	return found, pct
}

// lessOrEqual returns 1 iff a <= b, for a and b known to be DayBits-bit
// values. It decomposes b - a + 2^DayBits into DayBits+1 bits (no
// commitment, no lookup): the top bit is set exactly when b >= a.
func lessOrEqual(api frontend.API, a, b frontend.Variable) frontend.Variable {
	bits := api.ToBinary(api.Add(api.Sub(b, a), pow2(DayBits)), DayBits+1)
	return bits[DayBits]
}

func pow2(n int) *big.Int { return new(big.Int).Lsh(big.NewInt(1), uint(n)) }

// EligibilityCircuit is the statement behind an eligibility decision. Its
// public inputs, in witness order, are Commitment, ClassIndex, Procedure,
// ProcedureFolded, ServiceDay, CoveragePct, PreAuth and Eligible.
type EligibilityCircuit struct {
	Coverage coverageVars `gnark:",secret"`

	Commitment      frontend.Variable `gnark:",public"` // MiMC commitment to Coverage
	ClassIndex      frontend.Variable `gnark:",public"` // procedure class 1..len(Classes)
	Procedure       frontend.Variable `gnark:",public"` // EncodeCode(CanonicalCode(requested code)), for overrides
	ProcedureFolded frontend.Variable `gnark:",public"` // EncodeCodeFolded(CanonicalCode(requested code)), for exclusions
	ServiceDay      frontend.Variable `gnark:",public"` // day number of the service date
	CoveragePct     frontend.Variable `gnark:",public"` // claimed coverage percent
	PreAuth         frontend.Variable `gnark:",public"` // claimed requires_authorization
	Eligible        frontend.Variable `gnark:",public"` // claimed eligible
}

// Define implements frontend.Circuit.
func (c *EligibilityCircuit) Define(api frontend.API) error {
	cov := &c.Coverage
	if err := cov.open(api, c.Commitment); err != nil {
		return err
	}
	api.AssertIsDifferent(c.Procedure, 0)
	api.AssertIsDifferent(c.ProcedureFolded, 0)
	api.ToBinary(c.ServiceDay, DayBits)

	// Select the class constants by the public index; exactly one must match.
	var sel, base, preAuth, classExact, classFolded frontend.Variable = 0, 0, 0, 0, 0
	for i, cl := range classTable() {
		is := api.IsZero(api.Sub(c.ClassIndex, i+1))
		sel = api.Add(sel, is)
		base = api.Add(base, api.Mul(is, cl.BasePct))
		preAuth = api.Add(preAuth, api.Mul(is, boolInt(cl.PreAuth)))
		classExact = api.Add(classExact, api.Mul(is, cl.exact))
		classFolded = api.Add(classFolded, api.Mul(is, cl.folded))
	}
	api.AssertIsEqual(sel, 1)

	excluded := cov.isExcluded(api, c.ProcedureFolded, classFolded)
	eligible := api.Mul(api.Mul(cov.Active, cov.inWindow(api, c.ServiceDay)), api.Sub(1, excluded))

	codeFound, codePct := cov.override(api, c.Procedure)
	classFound, classPct := cov.override(api, classExact)
	pct := api.Select(codeFound, codePct, api.Select(classFound, classPct, base))

	api.AssertIsEqual(c.Eligible, eligible)
	api.AssertIsEqual(c.CoveragePct, api.Mul(eligible, pct))
	api.AssertIsEqual(c.PreAuth, preAuth)
	return nil
}

// PrescriptionCircuit is the coverage statement behind a prescription's
// zk_proof_verified. Its public inputs, in witness order, are Commitment,
// Drug, ServiceDay and Covered: Covered is 1 exactly when the committed
// coverage is active, ServiceDay lies within [start, end] and Drug (the
// EncodeCodeFolded of the RxCUI) is not among the plan's exclusions.
type PrescriptionCircuit struct {
	Coverage coverageVars `gnark:",secret"`

	Commitment frontend.Variable `gnark:",public"`
	Drug       frontend.Variable `gnark:",public"`
	ServiceDay frontend.Variable `gnark:",public"`
	Covered    frontend.Variable `gnark:",public"`
}

// Define implements frontend.Circuit.
func (c *PrescriptionCircuit) Define(api frontend.API) error {
	cov := &c.Coverage
	if err := cov.open(api, c.Commitment); err != nil {
		return err
	}
	api.AssertIsDifferent(c.Drug, 0)
	api.ToBinary(c.ServiceDay, DayBits)
	excluded := cov.isExcluded(api, c.Drug)
	covered := api.Mul(api.Mul(cov.Active, cov.inWindow(api, c.ServiceDay)), api.Sub(1, excluded))
	api.AssertIsEqual(c.Covered, covered)
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
