package verifytest

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

// Tamper is one way to doctor a decision an eligibility statement
// (EligibilityStatement, revocation nonce 7) was recorded for, and what a
// checker must say about it. Every checker (package verify,
// verify-decision, examples/verify-js) is tested against every Tamper.
type Tamper struct {
	Name string
	// Edit doctors the statement (a copy: its opening's fields are the
	// checker's own); nil leaves it as recorded.
	Edit func(*statement.Statement)
	// OtherRegistry: the decision is checked against another
	// GovernedRegistry deployment (Fixture.Other) than the one that
	// recorded it. OtherTx: the statement is checked against another
	// decision's transaction.
	OtherRegistry, OtherTx bool
	// Failed is the checks that must fail, in report order, and nothing
	// else; Lines are substrings of the lines the checker must print.
	Failed []string
	Lines  []string
}

// Copy is a deep copy of st: its opening's fields can be changed without
// touching st.
func Copy(st statement.Statement) statement.Statement {
	c := st
	c.Digest = new(big.Int).Set(st.Digest)
	c.Opening.Fields = slices.Clone(st.Opening.Fields)
	for i, f := range c.Opening.Fields {
		c.Opening.Fields[i].Value = new(big.Int).Set(f.Value)
	}
	return c
}

// The eligibility-v3 fields the tampers change (docs/statement.md).
const (
	fieldServiceDay = 6
	fieldEligible   = 7
	fieldPreAuth    = 9
)

// Tampers is every kind of doctored decision of issue 25, each with the
// line that names the part that does not match.
func Tampers() []Tamper {
	redigest := func(s *statement.Statement) {
		d, err := s.Opening.Recompute()
		if err == nil {
			s.Digest = d
		}
	}
	return []Tamper{
		{Name: "value", Edit: func(s *statement.Statement) { s.Opening.Fields[fieldEligible].Value = big.NewInt(0) },
			Failed: []string{"digest", "statement", "text"},
			Lines: []string{fail("digest", "the stated digest 0x"), "differs from the digest recomputed from the opening's values",
				fail("statement", "the digest recomputed from the opening differs from the recorded digest"),
				fail("text", `field 7 eligible: text "true" is not "false", the rendering of its value 0`)}},
		{Name: "value, text and digest forged together", Edit: func(s *statement.Statement) {
			s.Opening.Fields[fieldEligible].Value, s.Opening.Fields[fieldEligible].Text = big.NewInt(0), "false"
			redigest(s)
		}, Failed: []string{"statement"},
			Lines: []string{fail("statement", "the digest recomputed from the opening differs from the recorded digest")}},
		{Name: "digest", Edit: func(s *statement.Statement) { s.Digest.Add(s.Digest, big.NewInt(1)) },
			Failed: []string{"digest"},
			Lines:  []string{fail("digest", "the stated digest 0x"), pass("statement", "the digest recomputed from the opening equals the recorded digest")}},
		{Name: "name swap", Edit: func(s *statement.Statement) {
			f := s.Opening.Fields
			f[fieldEligible].Name, f[fieldPreAuth].Name = f[fieldPreAuth].Name, f[fieldEligible].Name
		}, Failed: []string{"schema"},
			Lines: []string{fail("schema", `field 7 is named "requires_authorization", eligibility-v3's field 7 is "eligible"`)}},
		{Name: "text", Edit: func(s *statement.Statement) { s.Opening.Fields[fieldServiceDay].Text = "2026-03-07" },
			Failed: []string{"text"},
			Lines:  []string{fail("text", `field 6 service_day: text "2026-03-07" is not "2026-03-06", the rendering of its value 20518`)}},
		{Name: "circuit name", Edit: func(s *statement.Statement) { s.Opening.Circuit = zkp.CircuitPrescriptionV4 },
			Failed: []string{"circuit"},
			Lines:  []string{fail("circuit", `opening.circuit "prescription-v4" (id 0x`), "is not the recorded circuit 0x"}},
		{Name: "circuit id", Edit: func(s *statement.Statement) { s.Opening.CircuitID = zkp.CircuitID(zkp.CircuitPrescriptionV4) },
			Failed: []string{"circuit id"},
			Lines:  []string{fail("circuit id", "opening.circuit_id 0x"), "is not the recorded circuit id"}},
		{Name: "issuer key hash", Edit: func(s *statement.Statement) {
			s.Opening.IssuerKeyHash = new(big.Int).Add(s.Opening.IssuerKeyHash, big.NewInt(1))
		}, Failed: []string{"issuer key"},
			Lines: []string{fail("issuer key", "opening.issuer_key_hash 0x"), "is not the recorded issuer key hash"}},
		{Name: "revocation nonce", Edit: func(s *statement.Statement) { s.Opening.RevocationNonce++ },
			Failed: []string{"nonce"},
			Lines:  []string{fail("nonce", "opening.revocation_nonce 8 is not the committed revocation_nonce field 7")}},
		{Name: "other registry", OtherRegistry: true, Failed: []string{"registry"},
			Lines: []string{fail("registry", "transaction sent to 0x")}},
		{Name: "other transaction", OtherTx: true, Failed: []string{"statement"},
			Lines: []string{fail("statement", "the digest recomputed from the opening differs from the recorded digest")}},
	}
}

func fail(check, detail string) string { return fmt.Sprintf("FAIL %-13s %s", check, detail) }
func pass(check, detail string) string { return fmt.Sprintf("ok   %-13s %s", check, detail) }

// TamperNonce is the revocation nonce of the statement the Tampers doctor.
const TamperNonce = 7

// Case is a Tamper made ready to check: the transaction, the registry to
// pin and the statement to hand the checker.
type Case struct {
	Tamper
	Tx        common.Hash
	Registry  common.Address
	Statement statement.Statement
}

// Decision records a real eligibility statement (nonce TamperNonce) on f
// and returns it with its transaction: what every Case doctors.
func (f *Fixture) Decision(t testing.TB) (statement.Statement, common.Hash) {
	t.Helper()
	st := EligibilityStatement(t, TamperNonce)
	return st, f.RecordStatement(t, st)
}

// Cases makes every Tamper ready against the decision (st, tx) recorded on
// f: it records what the tampers need (the same statement on another
// registry, another decision) and doctors a copy of the statement. f must
// be made by New (Other).
func (f *Fixture) Cases(t testing.TB, st statement.Statement, tx common.Hash) []Case {
	t.Helper()
	other := f.Other(t)
	otherRegistryTx := other.RecordStatement(t, st)
	otherTx := f.RecordStatement(t, EligibilityStatement(t, TamperNonce)) // a fresh salt: another decision
	var cases []Case
	for _, tm := range Tampers() {
		c := Case{Tamper: tm, Tx: tx, Registry: f.Gov.Address(), Statement: Copy(st)}
		switch {
		case tm.OtherRegistry:
			c.Tx = otherRegistryTx
		case tm.OtherTx:
			c.Tx = otherTx
		}
		if tm.Edit != nil {
			tm.Edit(&c.Statement)
		}
		cases = append(cases, c)
	}
	return cases
}

// FailedChecks names the checks a checker's output (verify-decision's,
// verify.mjs's: "FAIL <name padded to 13> <detail>") reports failed, in
// order, each once (as verify.Report.Failed).
func FailedChecks(out string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "FAIL "); ok && len(rest) >= 13 {
			if name := strings.TrimSpace(rest[:13]); !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}
