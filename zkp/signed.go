package zkp

import (
	"fmt"
	"math/big"
	"time"

	"github.com/consensys/gnark/frontend"
	"golang.org/x/crypto/sha3"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/zkp/internal/iden3"
	"github.com/healthagents/healthagents/zkp/statement"
)

// The circuits this package proves: public inputs exactly [issuerKeyHash,
// digest, circuitId] (the GovernedRegistry's shape); the payer's signed
// credential checked inside; every code, day and output only inside the
// digest. eligibility-v3 and prescription-v4 are eligibility-v2 and
// prescription-v3 with the same digest and a cheaper signature check
// (issue 30: fixed-base and signed-digit scalar multiplications,
// internal/iden3), so a new circuit id and new keys.
const (
	CircuitEligibilityV3  = "eligibility-v3"
	CircuitPrescriptionV4 = "prescription-v4"
)

// Retired circuits: no longer proven and no keys made for them, but the
// statements the chain recorded under them stay checkable (Schema knows
// them; their verifiers stay registered under their ids).
// (Unexported, so code written for a retired circuit does not compile
// against this one.)
const (
	retiredEligibilityV2  = "eligibility-v2"
	retiredPrescriptionV2 = "prescription-v2"
	retiredPrescriptionV3 = "prescription-v3"
)

// Indexes of credential.Fields (docs/credentials.md).
const (
	fSchema     = 0
	fSubject    = 1
	fPayer      = 2
	fPlan       = 3
	fStatus     = 4
	fStart      = 5
	fEnd        = 6
	fDeductible = 7
	fMet        = 8
	fCopay      = 9
	fExpires    = 10
	fNonce      = 11
	fExcluded   = 12
	fOvCode     = fExcluded + credential.ExclusionSlots
	fOvPct      = fOvCode + credential.OverrideSlots
)

// CentsBits bounds every amount in cents (credential.Cents allows up to
// 10^14 cents, below 2^47).
const CentsBits = 48

// CircuitID is a circuit's id on chain and its last public input:
// uint256(keccak256(name)) mod r, as chain.CircuitID computes it.
func CircuitID(name string) *big.Int {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(name))
	return new(big.Int).Mod(new(big.Int).SetBytes(h.Sum(nil)), fieldOrder)
}

var fieldOrder, _ = new(big.Int).SetString("21888242871839275222246405745257275088548364400416034343698204186575808495617", 10)

// signedVars is a payer's coverage credential inside a v2 circuit: the
// signed field list, the issuer's public key and the EdDSA-Poseidon
// signature.
type signedVars struct {
	Fields     [credential.NumFields]frontend.Variable
	KeyX, KeyY frontend.Variable
	R8X, R8Y   frontend.Variable
	S          frontend.Variable
}

// verify constrains the credential: the issuer key hashes to the public
// issuerKeyHash, the signature verifies over Message(fields) (two halves
// of 12, then the pair), the schema version is ours, and the day and
// amount fields the rules compare are range-checked.
func (c *signedVars) verify(api frontend.API, issuerKeyHash frontend.Variable) {
	api.AssertIsEqual(iden3.Poseidon(api, c.KeyX, c.KeyY), issuerKeyHash)
	h1 := iden3.Poseidon(api, c.Fields[:12]...)
	h2 := iden3.Poseidon(api, c.Fields[12:]...)
	msg := iden3.Poseidon(api, h1, h2)
	iden3.VerifyEdDSAPoseidon(api, iden3.Point{X: c.KeyX, Y: c.KeyY}, iden3.Point{X: c.R8X, Y: c.R8Y}, c.S, msg)
	api.AssertIsEqual(c.Fields[fSchema], credential.SchemaVersion)
	for _, i := range []int{fStart, fEnd, fExpires} {
		api.ToBinary(c.Fields[i], DayBits)
	}
	for _, i := range []int{fDeductible, fMet} {
		api.ToBinary(c.Fields[i], CentsBits)
	}
}

// covered returns active ∧ start ≤ day ≤ end, and asserts day ≤ expiry
// (the credential holds on the day). day must be range-checked.
func (c *signedVars) covered(api frontend.API, day frontend.Variable) frontend.Variable {
	api.AssertIsEqual(leq(api, day, c.Fields[fExpires], DayBits), 1)
	active := api.IsZero(api.Sub(c.Fields[fStatus], 1))
	in := api.Mul(leq(api, c.Fields[fStart], day, DayBits), leq(api, day, c.Fields[fEnd], DayBits))
	return api.Mul(active, in)
}

// excludes returns 1 iff an exclusion slot equals one of codes (codes are
// never 0, the value of an empty slot).
func (c *signedVars) excludes(api frontend.API, codes ...frontend.Variable) frontend.Variable {
	notFound := frontend.Variable(1)
	for i := range credential.ExclusionSlots {
		for _, code := range codes {
			notFound = api.Mul(notFound, api.Sub(1, api.IsZero(api.Sub(c.Fields[fExcluded+i], code))))
		}
	}
	return api.Sub(1, notFound)
}

// override returns (found, pct) of the first override slot whose code is
// code.
func (c *signedVars) override(api frontend.API, code frontend.Variable) (found, pct frontend.Variable) {
	found, pct = 0, 0
	for i := range credential.OverrideSlots {
		hit := api.Mul(api.IsZero(api.Sub(c.Fields[fOvCode+i], code)), api.Sub(1, found))
		pct = api.Add(pct, api.Mul(hit, c.Fields[fOvPct+i]))
		found = api.Add(found, hit)
	}
	return found, pct
}

// leq returns 1 iff a <= b for a and b known to be below 2^bits.
func leq(api frontend.API, a, b frontend.Variable, bits int) frontend.Variable {
	return api.ToBinary(api.Add(api.Sub(b, a), pow2(bits)), bits+1)[bits]
}

// digestOf is statement.Digest in the circuit.
func digestOf(api frontend.API, values []frontend.Variable) frontend.Variable {
	if len(values) <= statement.Width {
		return iden3.Poseidon(api, values...)
	}
	var chunks []frontend.Variable
	for i := 0; i < len(values); i += statement.Width {
		chunks = append(chunks, iden3.Poseidon(api, values[i:min(i+statement.Width, len(values))]...))
	}
	return iden3.Poseidon(api, chunks...)
}

// signedWitness is a credential decoded for a v2 circuit.
type signedWitness struct {
	fields    []*big.Int
	keyHash   *big.Int
	vars      signedVars
	nonce     uint64
	subject   *big.Int
	start     uint64
	end       uint64
	expires   uint64
	active    bool
	excluded  []*big.Int
	ovCodes   []*big.Int
	ovPcts    []*big.Int
	copay     *big.Int
	deductMet bool
}

// decodeSigned checks the credential's form and signature natively (a bad
// one cannot be proven: ErrUnsatisfied) and returns its witness.
func decodeSigned(c *credential.Credential) (*signedWitness, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: no coverage credential", ErrRecordTooLarge)
	}
	pk, sig, msg, err := c.Parts()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsatisfied, err)
	}
	if !pk.VerifyPoseidon(msg, sig) {
		return nil, fmt.Errorf("%w: %w", ErrUnsatisfied, credential.ErrBadSignature)
	}
	f, err := credential.Fields(c.Terms)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsatisfied, err)
	}
	kh, err := credential.IssuerKeyHash(pk)
	if err != nil {
		return nil, err
	}
	for _, i := range []int{fStart, fEnd, fExpires} {
		if f[i].BitLen() > DayBits {
			return nil, fmt.Errorf("%w: a credential date is beyond 2^%d days", ErrRecordTooLarge, DayBits)
		}
	}
	for _, i := range []int{fDeductible, fMet, fCopay} {
		if f[i].BitLen() > CentsBits {
			return nil, fmt.Errorf("%w: a credential amount exceeds 2^%d cents", ErrRecordTooLarge, CentsBits)
		}
	}
	// Codes are compared exactly as signed: the circuit cannot fold case,
	// so a code that is not in canonical form (trimmed, upper case) would
	// be compared differently than the agents compare it.
	for i := fExcluded; i < fOvPct; i++ {
		if f[i].Sign() != 0 && !canonicalField(f[i]) {
			return nil, fmt.Errorf("%w: the credential's excluded and override codes must be in canonical form (upper case, no spaces)", ErrRecordTooLarge)
		}
	}
	w := &signedWitness{
		fields: f, keyHash: kh, nonce: c.Terms.Nonce, subject: f[fSubject],
		start: f[fStart].Uint64(), end: f[fEnd].Uint64(), expires: f[fExpires].Uint64(),
		active:   f[fStatus].Cmp(big.NewInt(1)) == 0,
		excluded: f[fExcluded:fOvCode], ovCodes: f[fOvCode:fOvPct], ovPcts: f[fOvPct:],
		copay: f[fCopay], deductMet: f[fMet].Cmp(f[fDeductible]) >= 0,
	}
	for i := range f {
		w.vars.Fields[i] = f[i]
	}
	w.vars.KeyX, w.vars.KeyY = pk.X, pk.Y
	w.vars.R8X, w.vars.R8Y, w.vars.S = sig.R8.X, sig.R8.Y, sig.S
	return w, nil
}

// canonicalField reports whether a signed code is in the one form the
// agents' comparisons reduce to: trimmed, upper case, and its own case fold
// (so strings.EqualFold with a catalogue code is byte equality).
func canonicalField(v *big.Int) bool {
	s := string(v.Bytes())
	return s == CanonicalCode(s) && s == foldCase(s)
}

// covered is the native rule of signedVars.covered; ok is false when the
// credential has expired on day.
func (w *signedWitness) covered(day uint64) (covered, ok bool) {
	return w.active && w.start <= day && day <= w.end, day <= w.expires
}

func (w *signedWitness) excludes(codes ...*big.Int) bool {
	for _, e := range w.excluded {
		for _, c := range codes {
			if e.Cmp(c) == 0 {
				return true
			}
		}
	}
	return false
}

func (w *signedWitness) override(code *big.Int) (int, bool) {
	for i, k := range w.ovCodes {
		if k.Cmp(code) == 0 {
			return int(w.ovPcts[i].Int64()), true
		}
	}
	return 0, false
}

// dayOf is a date's day number, checked against DayBits.
func dayOf(t time.Time) (uint64, error) { return DayNumber(t) }

func bit(b bool) *big.Int {
	if b {
		return big.NewInt(1)
	}
	return big.NewInt(0)
}

func codeField(name, code string) (*big.Int, error) {
	v, err := credential.StringField(name, code)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRecordTooLarge, err)
	}
	return v, nil
}

func pow2(n int) *big.Int { return new(big.Int).Lsh(big.NewInt(1), uint(n)) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
