package zkp_test

import (
	"context"
	"testing"
	"time"

	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/zkp"
)

// TestServiceTimeoutWhileProving: when the deadline passes while gnark is
// proving, the root family answers with the API's "... ZK proof generation
// timed out", through the real Attestor, for both operations.
func TestServiceTimeoutWhileProving(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	prover, err := zkp.NewProver(zkp.SharedSystem(), zkp.WithMaxConcurrent(2)) // one slot per abandoned proof
	require.NoError(t, err)
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	zkp.SetProvingHook(prover, func(ctx context.Context) {
		entered <- struct{}{}
		<-ctx.Done()
		<-release // an abandoned proof finishes after the test
	})
	ledger, err := chain.NewSimulated(ctx) // nothing reaches it: no verifier is registered
	require.NoError(t, err)
	t.Cleanup(func() { ledger.Close() })
	policy, err := trust.New(trust.Self, babyjub.PrivateKey{7}, ledger.Governed(), nil)
	require.NoError(t, err)
	a, err := attest.New(prover, ledger, attest.WithTrust(policy))
	require.NoError(t, err)
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	day := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	svc, err := healthagents.New(kr, healthagents.WithAttestor(a), healthagents.WithClock(func() time.Time { return day }))
	require.NoError(t, err)
	rec := &record.Record{PatientID: "PT-1", Coverage: &record.Coverage{MemberID: "M1", Status: "active", Start: "2026-01-01", End: "2026-12-31"}}
	b, err := rec.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(rec.PatientID, b, kr)
	require.NoError(t, err)

	for prefix, call := range map[string]func(context.Context) error{
		"Eligibility check failed": func(ctx context.Context) error {
			_, err := svc.VerifyEligibility(ctx, &env, "PROC001")
			return err
		},
		"Prescription validation failed": func(ctx context.Context) error {
			_, err := svc.ValidatePrescription(ctx, &env, "6809")
			return err
		},
	} {
		deadline, expire := zkp.ManualDeadline()
		errc := make(chan error, 1)
		go func() { errc <- call(deadline) }()
		<-entered // proving
		expire()
		err := <-errc
		require.Error(t, err, prefix)
		assert.Equal(t, prefix+": ZK proof generation timed out", err.Error())
		assert.Equal(t, healthagents.CodeInternal, healthagents.ErrorCode(err))
		assert.ErrorIs(t, err, healthagents.ErrProofTimeout)
		assert.ErrorIs(t, err, zkp.ErrTimeout)
	}
}
