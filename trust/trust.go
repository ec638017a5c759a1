package trust

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/iden3/go-iden3-crypto/babyjub"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/record"
)

// Mode is the COVERAGE_TRUST setting.
type Mode string

const (
	// Self (the default): coverage that arrives without a credential is
	// signed by the service's own issuer key; the decision then says
	// "issuer": "self". A credential the record does carry must still hold
	// (registered issuer included).
	Self Mode = "self"
	// Registered: only credentials from issuers registered (and not
	// retired) on chain; anything else is refused.
	Registered Mode = "registered"
)

// ParseMode reads a COVERAGE_TRUST value ("" is Self).
func ParseMode(s string) (Mode, error) {
	switch Mode(strings.ToLower(strings.TrimSpace(s))) {
	case "", Self:
		return Self, nil
	case Registered:
		return Registered, nil
	}
	return "", errors.New("COVERAGE_TRUST must be self or registered")
}

// SelfLabel is the issuer label of a credential signed by the service.
const SelfLabel = "self"

// Refusals of a record's coverage credential. Their texts are the detail a
// caller sees after "Invalid patient record: "; none carries a value from
// the record.
var (
	ErrNoCredential  = errors.New("the coverage has no payer credential, and COVERAGE_TRUST=registered accepts only credentials from registered issuers")
	ErrUnknownIssuer = errors.New("the coverage credential's issuer is not registered on chain (or was retired)")
	ErrRevoked       = errors.New("the payer revoked this coverage credential (its revocation nonce is revoked on chain)")
	// ErrUnsupported: coverage terms the credential encoding cannot hold
	// (docs/credentials.md: identifiers of 1-31 bytes, at most 4
	// exclusions and 4 overrides, amounts with two decimals).
	ErrUnsupported = errors.New("the coverage terms cannot be encoded in a credential (see docs/credentials.md)")
)

// Registry answers for the on-chain issuer registry; *chain.Governed is one.
type Registry interface {
	IsIssuerActive(ctx context.Context, keyHash *big.Int, block *big.Int) (bool, error)
	IsRevoked(ctx context.Context, keyHash *big.Int, nonce uint64) (bool, error)
}

// Directory names registered issuers (the issuers table); optional.
type Directory interface {
	// IssuerName returns the name an issuer was registered under, and
	// false when it is not in the directory.
	IssuerName(ctx context.Context, keyHash string) (string, bool, error)
}

// Policy decides which credential a decision is proven with.
type Policy struct {
	mode     Mode
	self     babyjub.PrivateKey
	selfHash *big.Int
	registry Registry
	names    Directory
}

// New returns the policy of mode, signing with self (the service's issuer
// key) and asking registry about other issuers. names may be nil.
func New(mode Mode, self babyjub.PrivateKey, registry Registry, names Directory) (*Policy, error) {
	if mode != Self && mode != Registered {
		return nil, fmt.Errorf("trust: unknown mode %q", mode)
	}
	if registry == nil {
		return nil, errors.New("trust: an issuer registry is required")
	}
	h, err := credential.IssuerKeyHash(self.Public())
	if err != nil {
		return nil, fmt.Errorf("trust: self key hash: %w", err)
	}
	return &Policy{mode: mode, self: self, selfHash: h, registry: registry, names: names}, nil
}

// Mode is the policy's mode.
func (p *Policy) Mode() Mode { return p.mode }

// SelfKeyHash is the issuer key hash of the service's own key, which must be
// registered on chain for self-signed statements to record.
func (p *Policy) SelfKeyHash() *big.Int { return new(big.Int).Set(p.selfHash) }

// SelfPublicKey is the service's issuer public key, iden3 compressed hex.
func (p *Policy) SelfPublicKey() string { return credential.PublicKeyHex(p.self) }

// Issuer is who vouches for the coverage a decision is proven with.
type Issuer struct {
	Label   string   // "self", or the registered issuer's name (its key hash when unnamed)
	KeyHash *big.Int // the issuer key hash, a public input of the proof
	Self    bool
}

// Credential returns the credential rec's coverage is proven with on day,
// and its issuer:
//
//   - the record's own credential, when its signature verifies, it is not
//     expired on day, its subject is the coverage's member, its issuer is
//     registered and active on chain, and its nonce is not revoked;
//   - under Self, a credential the service signs now over the coverage
//     block (valid for day only, fresh salt and nonce) when the record has
//     none.
//
// A refusal is one of credential.ErrBadSignature, ErrExpired,
// ErrSubjectMismatch, ErrMalformed, or ErrNoCredential, ErrUnknownIssuer,
// ErrRevoked, ErrUnsupported (Detail words each). A record without coverage
// has nothing to prove: nil, zero Issuer, no error. Chain errors are
// returned wrapped, as they are.
func (p *Policy) Credential(ctx context.Context, rec *record.Record, day time.Time) (*credential.Credential, Issuer, error) {
	if rec == nil || rec.Coverage == nil {
		return nil, Issuer{}, nil
	}
	c := rec.Coverage
	if c.Credential == nil {
		if p.mode == Registered {
			return nil, Issuer{}, ErrNoCredential
		}
		return p.sign(c, day)
	}
	cred := c.Credential
	if err := cred.Check(c.MemberID, day); err != nil {
		return nil, Issuer{}, err
	}
	h, err := cred.KeyHash()
	if err != nil {
		return nil, Issuer{}, err
	}
	if h.Cmp(p.selfHash) == 0 {
		return cred, Issuer{Label: SelfLabel, KeyHash: h, Self: true}, nil
	}
	active, err := p.registry.IsIssuerActive(ctx, h, nil)
	if err != nil {
		return nil, Issuer{}, fmt.Errorf("trust: issuer registry: %w", err)
	}
	if !active {
		return nil, Issuer{}, ErrUnknownIssuer
	}
	revoked, err := p.registry.IsRevoked(ctx, h, cred.Terms.Nonce)
	if err != nil {
		return nil, Issuer{}, fmt.Errorf("trust: issuer registry: %w", err)
	}
	if revoked {
		return nil, Issuer{}, ErrRevoked
	}
	label := h.String()
	if p.names != nil {
		if name, ok, err := p.names.IssuerName(ctx, h.String()); err != nil {
			return nil, Issuer{}, fmt.Errorf("trust: issuer directory: %w", err)
		} else if ok && name != "" {
			label = name
		}
	}
	return cred, Issuer{Label: label, KeyHash: h}, nil
}

// sign makes the service's own credential over the coverage block, valid on
// day only (its expiry is the day, so a lapsed policy is still proven, as
// not covered), with a fresh salt and revocation nonce.
func (p *Policy) sign(c *record.Coverage, day time.Time) (*credential.Credential, Issuer, error) {
	salt, err := credential.RandomSalt()
	if err != nil {
		return nil, Issuer{}, fmt.Errorf("trust: salt: %w", err)
	}
	var nb [8]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return nil, Issuer{}, fmt.Errorf("trust: nonce: %w", err)
	}
	// payer_id and plan_id are optional in a record; the signed list needs
	// both, and "self" says who vouches.
	payer, plan := c.PayerID, c.PlanID
	if payer == "" {
		payer = SelfLabel
	}
	if plan == "" {
		plan = SelfLabel
	}
	t := credential.Terms{
		MemberID: c.MemberID, Salt: salt,
		PayerID: payer, PlanID: plan, Status: c.Status,
		Start: c.Start, End: c.End,
		Deductible: c.Deductible, DeductibleMet: c.DeductibleMet, Copay: c.Copay,
		Expires: day.UTC().Format(time.DateOnly),
		// Below 2^53: the nonce is a JSON number in the statement's
		// opening, and JavaScript verifiers (verify.mjs) read numbers as
		// doubles.
		Nonce:    binary.BigEndian.Uint64(nb[:]) >> 11,
		Excluded: canonicalCodes(c.ExcludedProcedures), Overrides: canonicalOverrides(c.CoverageOverrides),
	}
	cred, err := credential.Sign(p.self, t)
	if errors.Is(err, credential.ErrEncoding) {
		return nil, Issuer{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if err != nil {
		return nil, Issuer{}, fmt.Errorf("trust: sign: %w", err)
	}
	return cred, Issuer{Label: SelfLabel, KeyHash: p.SelfKeyHash(), Self: true}, nil
}

// Detail words a refusal for the caller (after "Invalid patient record: "),
// and reports whether err is one; it never repeats a value of the record.
func Detail(err error) (string, bool) {
	for _, e := range []error{ErrNoCredential, ErrUnknownIssuer, ErrRevoked, ErrUnsupported} {
		if errors.Is(err, e) {
			return e.Error(), true
		}
	}
	switch {
	case errors.Is(err, credential.ErrExpired):
		return "the payer's coverage credential has expired", true
	case errors.Is(err, credential.ErrSubjectMismatch):
		return "the coverage credential's subject is not the coverage's member", true
	case errors.Is(err, credential.ErrBadSignature):
		return "the coverage credential's signature does not verify over its terms", true
	case errors.Is(err, credential.ErrMalformed), errors.Is(err, credential.ErrEncoding):
		return "the coverage credential is malformed (schema, issuer key, signature or terms; see docs/credentials.md)", true
	}
	return "", false
}

// canonicalCodes writes codes as the agents compare them (trimmed, upper
// case), once each: the circuits compare signed codes exactly.
func canonicalCodes(codes []string) []string {
	var out []string
	for _, c := range codes {
		c = strings.ToUpper(strings.TrimSpace(c))
		if c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// canonicalOverrides keys the overrides by canonical code; where several
// keys share one, the eligibility agent's choice wins (the key equal to it,
// else the lexically smallest).
func canonicalOverrides(ov map[string]int) map[string]int {
	if len(ov) == 0 {
		return nil
	}
	winner := make(map[string]string, len(ov))
	for k := range ov {
		ck := strings.ToUpper(strings.TrimSpace(k))
		if w, ok := winner[ck]; !ok || (w != ck && (k == ck || k < w)) {
			winner[ck] = k
		}
	}
	out := make(map[string]int, len(winner))
	for ck, k := range winner {
		if ck != "" {
			out[ck] = ov[k]
		}
	}
	return out
}
