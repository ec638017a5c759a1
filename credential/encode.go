package credential

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/iden3/go-iden3-crypto/poseidon"
)

// SchemaVersion is the version of the field list below; it is the list's
// first element, so a credential of another version never verifies as this
// one.
const SchemaVersion = 1

// Schema names the credential format in JSON.
const Schema = "healthagents/coverage-credential/v1"

// Slots of the plan's exclusions and coverage overrides: a fixed number, so
// the field list (and the circuit that reads it) has one shape. Unused
// slots are 0.
const (
	ExclusionSlots = 4
	OverrideSlots  = 4
)

// NumFields is the length of the field list.
const NumFields = 12 + ExclusionSlots + 2*OverrideSlots

// Coverage statuses as field elements.
var statusCodes = map[string]int64{"active": 1, "inactive": 2, "cancelled": 3}

// Terms are the coverage terms a payer signs. Dates are YYYY-MM-DD (UTC
// days); amounts are in dollars with at most two decimals.
type Terms struct {
	// MemberID and Salt make the subject commitment
	// Poseidon(field(member_id), salt): the member id itself is not in the
	// signed list. Salt is a decimal field element the payer chooses at
	// random and keeps with the credential.
	MemberID string `json:"member_id"`
	Salt     string `json:"salt"`

	PayerID       string         `json:"payer_id"`
	PlanID        string         `json:"plan_id"`
	Status        string         `json:"status"` // active, inactive or cancelled
	Start         string         `json:"start"`
	End           string         `json:"end"`
	Deductible    float64        `json:"deductible"`
	DeductibleMet float64        `json:"deductible_met"`
	Copay         float64        `json:"copay"`
	Expires       string         `json:"expires"` // the credential's own expiry day
	Nonce         uint64         `json:"revocation_nonce"`
	Excluded      []string       `json:"excluded_procedures,omitempty"`
	Overrides     map[string]int `json:"coverage_overrides,omitempty"` // procedure code → percent
}

// ErrEncoding is a term that cannot be encoded (wrapped with the field).
var ErrEncoding = errors.New("credential: term cannot be encoded")

func encErr(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrEncoding, field, fmt.Sprintf(format, args...))
}

// StringField encodes an identifier or code: its UTF-8 bytes (1 to 31) read
// as a big-endian unsigned integer, which is always below the BN254 field
// modulus.
func StringField(name, s string) (*big.Int, error) {
	if s == "" || len(s) > 31 || !utf8.ValidString(s) {
		return nil, encErr(name, "must be 1-31 bytes of UTF-8")
	}
	return new(big.Int).SetBytes([]byte(s)), nil
}

// DayNumber encodes a YYYY-MM-DD date as days since 1970-01-01.
func DayNumber(name, date string) (*big.Int, error) {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil || t.Year() < 1970 {
		return nil, encErr(name, "must be a date YYYY-MM-DD from 1970 on")
	}
	return big.NewInt(t.Unix() / 86400), nil
}

// Cents encodes a dollar amount as whole cents; more than two decimals or a
// negative amount is refused.
func Cents(name string, dollars float64) (*big.Int, error) {
	c := dollars * 100
	r := float64(int64(c + 0.5))
	if dollars < 0 || dollars > 1e12 || (c-r) > 1e-6 || (r-c) > 1e-6 {
		return nil, encErr(name, "must be a non-negative amount with at most two decimals")
	}
	return big.NewInt(int64(r)), nil
}

// SubjectCommitment is Poseidon(field(member_id), salt).
func SubjectCommitment(memberID, salt string) (*big.Int, error) {
	m, err := StringField("member_id", memberID)
	if err != nil {
		return nil, err
	}
	s, ok := new(big.Int).SetString(salt, 10)
	if !ok || s.Sign() < 0 || s.Cmp(fieldModulus) >= 0 {
		return nil, encErr("salt", "must be a decimal field element")
	}
	return poseidon.Hash([]*big.Int{m, s})
}

// fieldModulus is the BN254 scalar field modulus, Poseidon's field.
var fieldModulus, _ = new(big.Int).SetString("21888242871839275222246405745257275088548364400416034343698204186575808495617", 10)

// Fields returns the signed list, in order:
//
//	0 schema version, 1 subject commitment, 2 payer id, 3 plan id,
//	4 status, 5 start day, 6 end day, 7 deductible (cents),
//	8 deductible met (cents), 9 copay (cents), 10 expiry day,
//	11 revocation nonce, 12-15 excluded procedure codes,
//	16-19 override procedure codes, 20-23 override percents.
//
// Excluded codes fill their slots in ascending byte order, overrides in
// ascending order of code; unused slots are 0.
func Fields(t Terms) ([]*big.Int, error) {
	f := make([]*big.Int, 0, NumFields)
	add := func(v *big.Int, err error) error {
		if err == nil {
			f = append(f, v)
		}
		return err
	}
	st, ok := statusCodes[strings.ToLower(t.Status)]
	if !ok {
		return nil, encErr("status", "must be active, inactive or cancelled")
	}
	steps := []func() error{
		func() error { return add(big.NewInt(SchemaVersion), nil) },
		func() error { return add(SubjectCommitment(t.MemberID, t.Salt)) },
		func() error { return add(StringField("payer_id", t.PayerID)) },
		func() error { return add(StringField("plan_id", t.PlanID)) },
		func() error { return add(big.NewInt(st), nil) },
		func() error { return add(DayNumber("start", t.Start)) },
		func() error { return add(DayNumber("end", t.End)) },
		func() error { return add(Cents("deductible", t.Deductible)) },
		func() error { return add(Cents("deductible_met", t.DeductibleMet)) },
		func() error { return add(Cents("copay", t.Copay)) },
		func() error { return add(DayNumber("expires", t.Expires)) },
		func() error { return add(new(big.Int).SetUint64(t.Nonce), nil) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	if len(t.Excluded) > ExclusionSlots {
		return nil, encErr("excluded_procedures", "at most %d codes", ExclusionSlots)
	}
	if len(t.Overrides) > OverrideSlots {
		return nil, encErr("coverage_overrides", "at most %d codes", OverrideSlots)
	}
	excluded := slices.Clone(t.Excluded)
	slices.Sort(excluded)
	for i := range ExclusionSlots {
		if i >= len(excluded) {
			f = append(f, new(big.Int))
			continue
		}
		if err := add(StringField("excluded_procedures", excluded[i])); err != nil {
			return nil, err
		}
	}
	codes := make([]string, 0, len(t.Overrides))
	for c := range t.Overrides {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	pcts := make([]*big.Int, OverrideSlots)
	for i := range OverrideSlots {
		pcts[i] = new(big.Int)
		if i >= len(codes) {
			f = append(f, new(big.Int))
			continue
		}
		if err := add(StringField("coverage_overrides", codes[i])); err != nil {
			return nil, err
		}
		p := t.Overrides[codes[i]]
		if p < 0 || p > 100 {
			return nil, encErr("coverage_overrides", "percent must be 0-100")
		}
		pcts[i].SetInt64(int64(p))
	}
	f = append(f, pcts...)
	return f, nil
}

// Message is the signed message: Poseidon(Poseidon(fields 0-11),
// Poseidon(fields 12-23)). iden3's Poseidon takes at most 16 inputs, so the
// list is hashed in two halves of 12.
func Message(t Terms) (*big.Int, error) {
	f, err := Fields(t)
	if err != nil {
		return nil, err
	}
	return messageOf(f)
}

func messageOf(f []*big.Int) (*big.Int, error) {
	h1, err := poseidon.Hash(f[:12])
	if err != nil {
		return nil, err
	}
	h2, err := poseidon.Hash(f[12:])
	if err != nil {
		return nil, err
	}
	return poseidon.Hash([]*big.Int{h1, h2})
}
