// Package verifytest is a test fixture for checkers of recorded decisions: a
// GovernedRegistry on a simulated chain served over JSON-RPC, with one
// registered issuer and a real Groth16 verifier of a small circuit bound to
// the circuit ids of its own Kind, of the service's circuits and of the
// retired ones (zkp.RetiredCircuitNames), on which a test records statements with any digest —
// in particular real statements of the service's circuits
// (EligibilityStatement, PrescriptionStatement), made without their
// seconds-long proofs. It is used by package verify's tests and by the
// verify-decision command's; it is not part of the API.
package verifytest

import (
	"encoding/hex"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

// Issuer is the fixture's registered issuer key hash.
const Issuer = 424242

// Kind is the statement kind of the fixture's circuit; its circuit id is
// chain.CircuitID(Kind) (Fixture.Circuit).
const Kind chain.Kind = "verifytest"

// statementCircuit has the registry's three public inputs and a secret that
// is the inverse of their sum, so every proof is a real Groth16 proof bound
// to its inputs, whatever the digest.
type statementCircuit struct {
	Issuer    frontend.Variable `gnark:",public"`
	Digest    frontend.Variable `gnark:",public"`
	CircuitID frontend.Variable `gnark:",public"`
	X         frontend.Variable
}

func (c *statementCircuit) Define(api frontend.API) error {
	api.AssertIsEqual(api.Mul(c.X, api.Add(c.Issuer, c.Digest, c.CircuitID)), 1)
	return nil
}

type keys struct {
	ccs constraint.ConstraintSystem
	pk  groth16.ProvingKey
	vk  chain.VerifyingKey
}

var setup = sync.OnceValues(func() (*keys, error) {
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &statementCircuit{})
	if err != nil {
		return nil, err
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, err
	}
	cvk, err := chain.VerifyingKeyFromGnark(vk)
	return &keys{ccs, pk, cvk}, err
})

// VerifyingKey is the verifying key of the fixture's circuit, whose public
// inputs are the registry's three [issuerKeyHash, digest, circuitId]: a copy
// each call, so a test that tampers with it changes nobody else's.
func VerifyingKey(t testing.TB) chain.VerifyingKey {
	t.Helper()
	k, err := setup()
	must(t, err, "setup")
	vk := k.vk
	vk.IC = make([][2]*big.Int, len(k.vk.IC))
	for i, p := range k.vk.IC {
		vk.IC[i] = [2]*big.Int{new(big.Int).Set(p[0]), new(big.Int).Set(p[1])}
	}
	for _, a := range []*[4]*big.Int{&vk.Beta2, &vk.Gamma2, &vk.Delta2} {
		for i, v := range a {
			a[i] = new(big.Int).Set(v)
		}
	}
	for i, v := range vk.Alpha1 {
		vk.Alpha1[i] = new(big.Int).Set(v)
	}
	return vk
}

// Prove makes a real Groth16 proof, for VerifyingKey, of the statement with
// these three public inputs (any digest; their sum must not be zero), and
// returns it in the registry's encoding with its public inputs.
func Prove(t testing.TB, issuer, digest, circuitID *big.Int) ([8]*big.Int, []*big.Int) {
	t.Helper()
	k, err := setup()
	must(t, err, "setup")
	r := ecc.BN254.ScalarField()
	sum := new(big.Int).Add(issuer, digest)
	sum.Add(sum, circuitID)
	x := new(big.Int).ModInverse(sum.Mod(sum, r), r)
	if x == nil {
		t.Fatalf("verifytest: the inputs %s, %s, %s sum to zero", issuer, digest, circuitID)
	}
	w, err := frontend.NewWitness(&statementCircuit{Issuer: issuer, Digest: digest, CircuitID: circuitID, X: x}, r)
	must(t, err, "witness")
	p, err := groth16.Prove(k.ccs, k.pk, w)
	must(t, err, "prove")
	proof, err := chain.ProofFromGnark(p)
	must(t, err, "proof")
	return proof, []*big.Int{issuer, digest, circuitID}
}

// Fixture is a governed registry on a simulated chain served over JSON-RPC.
type Fixture struct {
	Ledger   *chain.Ledger
	Gov      *chain.Governed
	RPC      *ethclient.Client // a third party's client of Endpoint
	Endpoint string            // the chain's JSON-RPC URL
	Verifier common.Address    // the verifier bound to Circuit
	Circuit  *big.Int          // the circuit id of Kind

	spare [2]string // funded keys for Other (New only)
}

func must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("verifytest: %s: %v", what, err)
	}
}

// New serves an in-process simulated chain over JSON-RPC and sets the
// fixture up on it (NewOn). Options are the Ledger's (chain.WithAnchor
// makes its Submit anchor in batches, as the service's CHAIN_ANCHOR=batch).
func New(t testing.TB, opts ...chain.Option) *Fixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err, "listen")
	addr := ln.Addr().String()
	must(t, ln.Close(), "close listener")
	sk, err := crypto.GenerateKey()
	must(t, err, "key")
	owner, err := crypto.GenerateKey()
	must(t, err, "owner key")
	var spare [2]string
	var funded []common.Address
	for i := range spare {
		k, err := crypto.GenerateKey()
		must(t, err, "spare key")
		spare[i], funded = hex.EncodeToString(crypto.FromECDSA(k)), append(funded, crypto.PubkeyToAddress(k.PublicKey))
	}
	l, err := chain.NewSimulated(t.Context(), chain.WithHTTP(addr), chain.WithKey(sk),
		chain.WithFunded(append(funded, crypto.PubkeyToAddress(owner.PublicKey))...))
	must(t, err, "simulated chain")
	t.Cleanup(func() { _ = l.Close() })
	endpoint, _ := l.Network()
	f := NewOn(t, endpoint, hex.EncodeToString(crypto.FromECDSA(sk)), hex.EncodeToString(crypto.FromECDSA(owner)), opts...)
	f.spare = spare
	return f
}

// Other deploys a second, independent GovernedRegistry on the same chain
// (its own submitting and owner accounts, the same verifiers), as another
// deployment would: a decision it records is not one of f's. Only a
// fixture made by New has the funded accounts; call it once.
func (f *Fixture) Other(t testing.TB) *Fixture {
	t.Helper()
	if f.spare[0] == "" {
		t.Fatal("verifytest: Other needs a fixture made by New")
	}
	o := NewOn(t, f.Endpoint, f.spare[0], f.spare[1])
	f.spare = [2]string{}
	return o
}

// NewOn deploys a GovernedRegistry owned by ownerKey's account on the node
// at endpoint (any Ethereum JSON-RPC node: the simulated chain, ganache,
// geth), paid by and submitting with key, with a verifier for Kind, registers
// Issuer, and dials it as a third party would. Both accounts must be funded.
// Everything is closed when the test ends. Options are the Ledger's.
func NewOn(t testing.TB, endpoint, key, ownerKey string, opts ...chain.Option) *Fixture {
	t.Helper()
	ctx := t.Context()
	k, err := setup()
	must(t, err, "setup")
	sk, err := crypto.HexToECDSA(strings.TrimPrefix(key, "0x"))
	must(t, err, "key")
	ok, err := crypto.HexToECDSA(strings.TrimPrefix(ownerKey, "0x"))
	must(t, err, "owner key")
	verifiers := map[chain.Kind]chain.VerifyingKey{Kind: k.vk}
	for _, name := range append(zkp.CircuitNames(), zkp.RetiredCircuitNames()...) {
		verifiers[chain.Kind(name)] = k.vk
	}
	addrs, err := chain.Deploy(ctx, endpoint, sk, chain.DeployConfig{OwnerKey: ok, Verifiers: verifiers},
		chain.WithPollInterval(20*time.Millisecond))
	must(t, err, "deploy")
	// A shared node on a loaded CI machine can take long to answer: the
	// fixture waits for it rather than fail a check that is not under test.
	l, err := chain.Dial(ctx, endpoint, chain.DialConfig{Key: key, Registry: addrs.Registry.Hex()},
		append([]chain.Option{chain.WithOwnerKey(ok), chain.WithPollInterval(20 * time.Millisecond), chain.WithSubmitTimeout(2 * time.Minute)}, opts...)...)
	must(t, err, "dial ledger")
	t.Cleanup(func() { _ = l.Close() })
	rpc, err := ethclient.DialContext(ctx, endpoint)
	must(t, err, "dial")
	t.Cleanup(rpc.Close)
	gov := l.Governed()
	circuit := chain.CircuitID(Kind)
	verifier, err := gov.VerifierOf(ctx, circuit)
	must(t, err, "verifier")
	f := &Fixture{Ledger: l, Gov: gov, RPC: rpc, Endpoint: endpoint, Verifier: verifier, Circuit: circuit}
	f.Own(t, gov.RegisterIssuer(big.NewInt(Issuer), common.Address{}))
	return f
}

// Own sends an owner action (register, retire, revoke) with the owner's key
// and returns its transaction.
func (f *Fixture) Own(t testing.TB, a chain.OwnerAction) common.Hash {
	t.Helper()
	g, err := f.Ledger.Govern(t.Context(), a)
	must(t, err, a.Summary)
	if g.Receipt == nil {
		t.Fatalf("verifytest: %s was not sent", a.Summary)
	}
	return g.Receipt.TxHash
}

// Record proves and records a statement with this digest under Issuer and
// f.Circuit, and returns its transaction.
func (f *Fixture) Record(t testing.TB, digest *big.Int) common.Hash {
	t.Helper()
	return f.RecordAs(t, big.NewInt(Issuer), digest, f.Circuit)
}

// RecordAs proves and records a statement with these public inputs (the
// issuer must be registered, the circuit one of the fixture's) and returns
// its transaction.
func (f *Fixture) RecordAs(t testing.TB, issuer, digest, circuit *big.Int) common.Hash {
	t.Helper()
	proof, inputs := Prove(t, issuer, digest, circuit)
	data, err := f.Gov.Record(circuit, proof, inputs)
	must(t, err, "record call")
	rc, err := f.Gov.Apply(t.Context(), f.Ledger, chain.OwnerAction{Data: data, Summary: "record"})
	must(t, err, "record")
	return rc.TxHash
}

// RecordStatement records st as the registry would record its decision:
// its issuer key hash (registered first if it is not), digest and circuit
// id. It returns the transaction.
func (f *Fixture) RecordStatement(t testing.TB, st statement.Statement) common.Hash {
	t.Helper()
	o := st.Opening
	state, err := chain.NewRegistryView(f.RPC, f.Gov.Address()).Issuer(t.Context(), o.IssuerKeyHash)
	must(t, err, "issuer")
	if state.RegisteredAt == 0 {
		f.Own(t, f.Gov.RegisterIssuer(o.IssuerKeyHash, common.Address{}))
	}
	return f.RecordAs(t, o.IssuerKeyHash, st.Digest, o.CircuitID)
}
