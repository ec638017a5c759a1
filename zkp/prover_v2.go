package zkp

import (
	"context"
	"math/big"

	"github.com/iden3/go-iden3-crypto/babyjub"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/zkp/statement"
)

// salt draws a statement's fresh salt (a uniformly random field element),
// or returns the given one.
func (p *Prover) salt(given *big.Int) (*big.Int, error) {
	if given != nil {
		return new(big.Int).Set(given), nil
	}
	b, err := p.blinding(nil)
	if err != nil {
		return nil, err
	}
	return b.BigInt(new(big.Int)), nil
}

// ProveEligibilityV3 proves in with the eligibility-v3 circuit and returns
// the proof (public inputs [issuerKeyHash, digest, circuitId]) and the
// statement whose digest it proves. Errors: ErrUnsatisfied for a claim that
// does not follow from the signed terms (or a credential whose signature
// does not verify), ErrRecordTooLarge for terms or a code outside the
// circuit's bounds, ErrTimeout past the deadline.
func (p *Prover) ProveEligibilityV3(ctx context.Context, in EligibilityV3Input) (*Proof, statement.Statement, error) {
	salt, err := p.salt(in.Salt)
	if err != nil {
		return nil, statement.Statement{}, err
	}
	a, op, err := eligibilityV3Statement(in, salt)
	if err != nil {
		return nil, statement.Statement{}, err
	}
	st, err := newStatement(op)
	if err != nil {
		return nil, statement.Statement{}, err
	}
	proof, err := p.prove(ctx, CircuitEligibilityV3, a)
	if err != nil {
		return nil, statement.Statement{}, err
	}
	return proof, st, nil
}

// Statement reads a v2 proof's public inputs: the issuer key hash, the
// digest and the circuit id.
func (p *Proof) Statement() (issuerKeyHash, digest, circuitID *big.Int, ok bool) {
	if len(p.Public) != 3 {
		return nil, nil, nil, false
	}
	b := p.PublicBig()
	return b[0], b[1], b[2], true
}

// sampleCredential is the fixed credential of the v2 circuits' key
// self-check, signed with a fixed key.
func sampleCredential() (*credential.Credential, error) {
	var k babyjub.PrivateKey
	copy(k[:], "healthagents zkp self-check key!")
	return credential.Sign(k, credential.Terms{
		MemberID: "SELF-CHECK", Salt: "1", PayerID: "self", PlanID: "self", Status: "active",
		Start: "2026-01-01", End: "2026-12-31", Expires: "2026-12-31", Nonce: 1,
		Excluded: []string{"PROC005"}, Overrides: map[string]int{"PROC002": 70},
	})
}
