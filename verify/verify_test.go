package verify_test

import (
	"math/big"
	"net"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/verify"
)

// statementCircuit has the registry's three public inputs and a secret whose
// square binds them, so every proof is a real Groth16 proof of a real statement.
type statementCircuit struct {
	Issuer    frontend.Variable `gnark:",public"`
	Digest    frontend.Variable `gnark:",public"`
	CircuitID frontend.Variable `gnark:",public"`
	X         frontend.Variable
}

func (c *statementCircuit) Define(api frontend.API) error {
	api.AssertIsEqual(api.Mul(c.X, c.X), api.Add(c.Issuer, c.Digest, c.CircuitID))
	return nil
}

type setupT struct {
	ccs constraint.ConstraintSystem
	pk  groth16.ProvingKey
	vk  chain.VerifyingKey
}

var setup = sync.OnceValues(func() (*setupT, error) {
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &statementCircuit{})
	if err != nil {
		return nil, err
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, err
	}
	cvk, err := chain.VerifyingKeyFromGnark(vk)
	return &setupT{ccs, pk, cvk}, err
})

// fixture is a governed registry on a simulated chain served over JSON-RPC,
// read by the checks through ethclient as a third party would.
type fixture struct {
	l        *chain.Ledger
	gov      *chain.Governed
	rpc      *ethclient.Client
	verifier common.Address
}

const issuer, circuit = 424242, 17

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	s, err := setup()
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	l, err := chain.NewSimulated(ctx, chain.WithHTTP(addr))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	endpoint, _ := l.Network()
	rpc, err := ethclient.DialContext(ctx, endpoint)
	require.NoError(t, err)
	t.Cleanup(rpc.Close)

	gov, err := chain.DeployGoverned(ctx, l, l.Client(), l.Account())
	require.NoError(t, err)
	verifier, err := chain.DeployVerifier(ctx, l, s.vk)
	require.NoError(t, err)
	for _, a := range []chain.OwnerAction{gov.AddCircuit(big.NewInt(circuit), verifier),
		gov.RegisterIssuer(big.NewInt(issuer), common.Address{}), gov.SetSubmitter(l.Account(), true)} {
		_, err := gov.Apply(ctx, l, a)
		require.NoError(t, err, a.Summary)
	}
	return &fixture{l: l, gov: gov, rpc: rpc, verifier: verifier}
}

// record proves and records a statement whose digest is x*x - issuer - circuit.
func (f *fixture) record(t *testing.T, x int64) (common.Hash, *big.Int) {
	t.Helper()
	s, err := setup()
	require.NoError(t, err)
	digest := big.NewInt(x*x - issuer - circuit)
	w, err := frontend.NewWitness(&statementCircuit{Issuer: issuer, Digest: digest, CircuitID: circuit, X: x}, ecc.BN254.ScalarField())
	require.NoError(t, err)
	p, err := groth16.Prove(s.ccs, s.pk, w)
	require.NoError(t, err)
	proof, err := chain.ProofFromGnark(p)
	require.NoError(t, err)
	data, err := f.gov.Record(big.NewInt(circuit), proof, []*big.Int{big.NewInt(issuer), digest, big.NewInt(circuit)})
	require.NoError(t, err)
	r, err := f.gov.Apply(t.Context(), f.l, chain.OwnerAction{Data: data, Summary: "record"})
	require.NoError(t, err)
	return r.TxHash, digest
}

func failed(r verify.Report) []string {
	var names []string
	for _, c := range r.Checks {
		if !c.OK {
			names = append(names, c.Name)
		}
	}
	return names
}

func TestDecision(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	tx, digest := f.record(t, 1001)
	nonce := uint64(5)
	claim := &verify.Claim{Digest: digest, IssuerKeyHash: big.NewInt(issuer), CircuitID: big.NewInt(circuit), RevocationNonce: &nonce}
	opts := verify.Options{Registry: f.gov.Address(), Claim: claim, Confirmations: 1}

	t.Run("ok/real decision", func(t *testing.T) {
		r, err := verify.Decision(ctx, f.rpc, tx, opts)
		require.NoError(t, err)
		assert.True(t, r.OK(), r.String())
		names := map[string]bool{}
		for _, c := range r.Checks {
			names[c.Name] = true
		}
		for _, n := range []string{"receipt", "registry", "event", "inputs", "verifier", "proof", "issuer", "statement", "revocation"} {
			assert.True(t, names[n], "check %s ran:\n%s", n, r)
		}
		require.NotNil(t, r.Recorded)
		assert.Equal(t, 0, r.Recorded.Digest.Cmp(digest))
	})
	t.Run("fail/tampered statement", func(t *testing.T) {
		bad := *claim
		bad.Digest = new(big.Int).Add(digest, big.NewInt(1))
		o := opts
		o.Claim = &bad
		r, err := verify.Decision(ctx, f.rpc, tx, o)
		require.NoError(t, err)
		assert.False(t, r.OK())
		assert.Equal(t, []string{"statement"}, failed(r), r.String())
	})
	t.Run("fail/wrong contract", func(t *testing.T) {
		o := opts
		o.Registry = f.verifier
		r, err := verify.Decision(ctx, f.rpc, tx, o)
		require.NoError(t, err)
		assert.Equal(t, []string{"registry"}, failed(r), r.String())
	})
	t.Run("fail/unknown transaction", func(t *testing.T) {
		r, err := verify.Decision(ctx, f.rpc, common.Hash{1}, opts)
		require.NoError(t, err)
		assert.Equal(t, []string{"receipt"}, failed(r), r.String())
	})
	t.Run("fail/not a record call", func(t *testing.T) {
		// An owner action sent to the registry: right contract, no statement.
		rc, err := f.gov.Apply(ctx, f.l, f.gov.RegisterIssuer(big.NewInt(999), common.Address{}))
		require.NoError(t, err)
		r, err := verify.Decision(ctx, f.rpc, rc.TxHash, opts)
		require.NoError(t, err)
		assert.Equal(t, []string{"event"}, failed(r), r.String())
	})
	t.Run("fail/no registry", func(t *testing.T) {
		_, err := verify.Decision(ctx, f.rpc, tx, verify.Options{})
		require.ErrorIs(t, err, verify.ErrRegistryRequired)
	})
	t.Run("confirmations", func(t *testing.T) {
		o := opts
		o.Confirmations = 1000
		r, err := verify.Decision(ctx, f.rpc, tx, o)
		require.NoError(t, err)
		assert.Equal(t, []string{"confirmations"}, failed(r), r.String())
	})
}

// TestDecisionRevokedIssuer: a credential nonce revoked before a decision
// fails it; one revoked after leaves the earlier decision valid. A retired
// issuer leaves earlier decisions valid and stops new ones on chain.
func TestDecisionRevokedIssuer(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	before, d1 := f.record(t, 2002)
	nonce := uint64(9)
	_, err := f.gov.Apply(ctx, f.l, f.gov.RevokeNonce(big.NewInt(issuer), nonce))
	require.NoError(t, err)
	after, d2 := f.record(t, 2003)

	check := func(tx common.Hash, d *big.Int) verify.Report {
		r, err := verify.Decision(ctx, f.rpc, tx, verify.Options{Registry: f.gov.Address(),
			Claim: &verify.Claim{Digest: d, RevocationNonce: &nonce}})
		require.NoError(t, err)
		return r
	}
	r := check(before, d1)
	assert.True(t, r.OK(), r.String())
	assert.Contains(t, r.String(), "revoked later")
	r = check(after, d2)
	assert.Equal(t, []string{"revocation"}, failed(r), r.String())

	_, err = f.gov.Apply(ctx, f.l, f.gov.RetireIssuer(big.NewInt(issuer)))
	require.NoError(t, err)
	r, err = verify.Decision(ctx, f.rpc, before, verify.Options{Registry: f.gov.Address()})
	require.NoError(t, err)
	assert.True(t, r.OK(), r.String())
	assert.Contains(t, r.String(), "retired later")
}
