package attest_test

import (
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	ethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/iden3/go-iden3-crypto/poseidon"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/zkp"
)

// iden3Credential issues a credential the way a payer would from
// docs/credentials.md with go-iden3-crypto alone: the field list encoded by
// hand, Poseidon over the two halves, babyjub SignPoseidon, iden3's
// compressed forms. Nothing of package credential is used.
func iden3Credential(t *testing.T, k babyjub.PrivateKey) (json.RawMessage, *big.Int) {
	t.Helper()
	str := func(s string) *big.Int { return new(big.Int).SetBytes([]byte(s)) }
	member, salt := str("M-IDEN3"), big.NewInt(987654321)
	subject, err := poseidon.Hash([]*big.Int{member, salt})
	require.NoError(t, err)
	n := big.NewInt
	fields := []*big.Int{
		n(1), subject, str("77777"), str("HMO-SILVER"), n(1), // version, subject, payer, plan, active
		n(20454), n(20818), // 2026-01-01 .. 2026-12-31
		n(200000), n(50000), n(4000), // deductible 2000.00, met 500.00, copay 40.00
		n(20818), n(11), // expires 2026-12-31, nonce 11
		str("PROC005"), n(0), n(0), n(0),
		str("PROC002"), n(0), n(0), n(0),
		n(70), n(0), n(0), n(0),
	}
	h1, err := poseidon.Hash(fields[:12])
	require.NoError(t, err)
	h2, err := poseidon.Hash(fields[12:])
	require.NoError(t, err)
	msg, err := poseidon.Hash([]*big.Int{h1, h2})
	require.NoError(t, err)
	sig := k.SignPoseidon(msg).Compress()
	pub := k.Public().Compress()
	doc, err := json.Marshal(map[string]any{
		"schema": "healthagents/coverage-credential/v1",
		"terms": map[string]any{
			"member_id": "M-IDEN3", "salt": "987654321", "payer_id": "77777", "plan_id": "HMO-SILVER", "status": "active",
			"start": "2026-01-01", "end": "2026-12-31", "deductible": 2000, "deductible_met": 500, "copay": 40,
			"expires": "2026-12-31", "revocation_nonce": 11,
			"excluded_procedures": []string{"PROC005"}, "coverage_overrides": map[string]int{"PROC002": 70},
		},
		"issuer":    hex.EncodeToString(pub[:]),
		"signature": hex.EncodeToString(sig[:]),
	})
	require.NoError(t, err)
	kh, err := poseidon.Hash([]*big.Int{k.Public().X, k.Public().Y})
	require.NoError(t, err)
	return doc, kh
}

// TestIden3CredentialEndToEnd is the "done when", on the embedded
// chain and over JSON-RPC (the embedded chain served over HTTP, dialled as an
// external node): a credential signed with go-iden3-crypto outside our code
// is accepted under COVERAGE_TRUST=registered and proven on chain; one field
// changed after signing is refused; the digest recomputed with iden3's
// Poseidon from the returned opening equals the event's.
func TestIden3CredentialEndToEnd(t *testing.T) {
	t.Parallel()
	sys, embedded := fixture(t)
	ctx := t.Context()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(addr), chain.WithKey(key))
	require.NoError(t, err)
	defer node.Close()
	require.NoError(t, prepare(ctx, node, sys))
	remote, err := chain.Dial(ctx, "http://"+addr, chain.DialConfig{
		Key: common.Bytes2Hex(crypto.FromECDSA(key)), Registry: node.Registry().Hex(),
	})
	require.NoError(t, err)
	defer remote.Close()

	for name, c := range map[string]struct{ ledger, admin *chain.Ledger }{
		"embedded": {embedded, embedded}, "json-rpc": {remote, node},
	} {
		t.Run(name, func(t *testing.T) { iden3EndToEnd(t, sys, c.ledger, c.admin) })
	}
}

// iden3EndToEnd runs the done-when checks on ledger; admin registers the
// payer (the registry's owner).
func iden3EndToEnd(t *testing.T, sys *zkp.System, ledger, admin *chain.Ledger) {
	ctx := t.Context()
	payer := babyjub.NewRandPrivKey()
	doc, keyHash := iden3Credential(t, payer)
	_, err := admin.RegisterIssuer(ctx, keyHash, common.Address{})
	require.NoError(t, err)
	var cred credential.Credential
	require.NoError(t, json.Unmarshal(doc, &cred))
	rec := &record.Record{PatientID: "PT-9", Coverage: &record.Coverage{
		MemberID: "M-IDEN3", PayerID: "77777", PlanID: "HMO-SILVER", Status: "active",
		Start: "2026-01-01", End: "2026-12-31", Deductible: 2000, DeductibleMet: 500, Copay: 40,
		ExcludedProcedures: []string{"PROC005"}, CoverageOverrides: map[string]int{"PROC002": 70},
		Credential: &cred,
	}}
	policy, err := trust.New(trust.Registered, selfKey, ledger.Governed(), nil)
	require.NoError(t, err)
	prover, err := zkp.NewProver(sys, zkp.WithTimeout(testProofTimeout))
	require.NoError(t, err)
	a, err := attest.New(prover, ledger, attest.WithTrust(policy))
	require.NoError(t, err)

	att, err := a.AttestEligibility(ctx, rec, decide(t, rec, "71046")) // an X-ray: PROC002, the 70 % override
	require.NoError(t, err)
	require.True(t, att.Verified)
	assert.Equal(t, keyHash.String(), att.Issuer, "an unnamed registered issuer is labelled by its key hash")
	recorded, err := ledger.Statement(ctx, common.HexToHash(att.TxHash))
	require.NoError(t, err)
	assert.Zero(t, recorded.Inputs[0].Cmp(keyHash), "the event names the payer's key")

	// The digest, recomputed from the opening with iden3's Poseidon.
	var values []*big.Int
	for _, f := range att.Statement.Opening.Fields {
		v, ok := new(big.Int).SetString(f.Value, 10)
		require.True(t, ok)
		values = append(values, v)
	}
	require.LessOrEqual(t, len(values), 16)
	digest, err := poseidon.Hash(values)
	require.NoError(t, err)
	assert.Zero(t, digest.Cmp(recorded.Inputs[1]), "digest from the opening = the event's")

	// One field changed after signing: refused before any proof.
	altered := cred
	altered.Terms.Copay = 4
	rec.Coverage.Copay, rec.Coverage.Credential = 4, &altered
	_, err = a.AttestEligibility(ctx, rec, decide(t, rec, "71046"))
	require.ErrorIs(t, err, credential.ErrBadSignature)
	_, ok := trust.Detail(err)
	assert.True(t, ok, "worded as a 400 by the service")
}

// TestIden3CredentialOnGanache runs the same on an external node that is
// not go-ethereum: ganache (.ci/ganache.sh sets HEALTHAGENTS_TEST_GANACHE).
// Its two accounts are fresh keys funded with ganache's
// evm_setAccountBalance, so it shares no nonce with the other ganache tests.
func TestIden3CredentialOnGanache(t *testing.T) {
	endpoint := os.Getenv("HEALTHAGENTS_TEST_GANACHE")
	if endpoint == "" {
		t.Skip("HEALTHAGENTS_TEST_GANACHE is not set (.ci/ganache.sh starts ganache)")
	}
	sys, _ := fixture(t)
	ctx := t.Context()
	rpc, err := ethrpc.DialContext(ctx, endpoint)
	require.NoError(t, err)
	defer rpc.Close()
	fund := func() *ecdsa.PrivateKey {
		k, err := crypto.GenerateKey()
		require.NoError(t, err)
		require.NoError(t, rpc.CallContext(ctx, nil, "evm_setAccountBalance", crypto.PubkeyToAddress(k.PublicKey), "0x3635C9ADC5DEA00000"))
		return k
	}
	hot, owner := fund(), fund()
	verifiers := map[chain.Kind]chain.VerifyingKey{}
	for _, name := range zkp.CircuitNames() {
		vk, err := chain.VerifyingKeyFromGnark(sys.VerifyingKey(name))
		require.NoError(t, err)
		verifiers[chain.Kind(name)] = vk
	}
	addrs, err := chain.Deploy(ctx, endpoint, hot, chain.DeployConfig{OwnerKey: owner, Verifiers: verifiers},
		chain.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	l, err := chain.Dial(ctx, endpoint, chain.DialConfig{Key: hex.EncodeToString(crypto.FromECDSA(hot)), Registry: addrs.Registry.Hex()},
		chain.WithOwnerKey(owner), chain.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, l.EnsureSubmitter(ctx))
	iden3EndToEnd(t, sys, l, l)
}

// The circuit ids the circuits assert are the registry's.
func TestCircuitIDsMatchChain(t *testing.T) {
	t.Parallel()
	for _, name := range []string{zkp.CircuitEligibilityV3, zkp.CircuitPrescriptionV4} {
		assert.Zero(t, zkp.CircuitID(name).Cmp(chain.CircuitID(chain.Kind(name))), name)
	}
}
