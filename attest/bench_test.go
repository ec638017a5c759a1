package attest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp"
)

// BenchmarkOnChain measures the verification of real proofs (eligibility: 8
// public inputs; prescription: 4) on the embedded chain, one at a time:
//
//   - submit: verifyAndRecord sent and mined, each op a new statement (a
//     fresh proof, so a fresh blinding and commitment, as every request in
//     production), proven before the timer starts;
//   - resubmit: the same statement again (its storage slot already set);
//   - check: verification by eth_call (Ledger.Check), nothing recorded.
//
// It reports ms/op and gas/op (the mean gasUsed of the mined transactions).
func BenchmarkOnChain(b *testing.B) {
	sys, l := fixture(b)
	prover, err := zkp.NewProver(sys)
	require.NoError(b, err)
	rec := testRecord()
	for _, c := range []struct {
		name  string
		kind  chain.Kind
		prove func(context.Context) (*zkp.Proof, error)
	}{
		{"eligibility", attest.KindEligibility, func(ctx context.Context) (*zkp.Proof, error) {
			return prover.ProveEligibility(ctx, zkp.EligibilityInput{
				Coverage: rec.Coverage, ClassIndex: 2, ProcedureCode: "PROC002", ServiceDate: serviceDate,
				CoveragePct: 70, PreAuth: false, Eligible: true,
			})
		}},
		{"prescription", attest.KindPrescription, func(ctx context.Context) (*zkp.Proof, error) {
			return prover.ProvePrescription(ctx, zkp.PrescriptionInput{
				Coverage: rec.Coverage, DrugCode: "6809", ServiceDate: serviceDate, Covered: true,
			})
		}},
	} {
		statements := func(b *testing.B, n int) []statement {
			out := make([]statement, n)
			for i := range out {
				p, err := c.prove(b.Context())
				require.NoError(b, err)
				out[i] = onChain(b, p)
			}
			return out
		}
		submit := func(b *testing.B, sts []statement) {
			ctx := b.Context()
			var gas uint64
			b.ResetTimer()
			for i := range b.N {
				st := sts[i%len(sts)]
				rc, err := l.Submit(ctx, c.kind, st.proof, st.inputs)
				if err != nil || !rc.Verified {
					b.Fatalf("submit: %v", err)
				}
				gas += rc.GasUsed
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
			b.ReportMetric(float64(gas)/float64(b.N), "gas/op")
		}
		b.Run(c.name+"/submit", func(b *testing.B) { submit(b, statements(b, b.N)) })
		b.Run(c.name+"/resubmit", func(b *testing.B) {
			sts := statements(b, 1)
			_, err := l.Submit(b.Context(), c.kind, sts[0].proof, sts[0].inputs) // the first time, outside the timer
			require.NoError(b, err)
			submit(b, sts)
		})
		b.Run(c.name+"/check", func(b *testing.B) {
			st := statements(b, 1)[0]
			ctx := b.Context()
			b.ResetTimer()
			for range b.N {
				ok, err := l.Check(ctx, c.kind, st.proof, st.inputs)
				if err != nil || !ok {
					b.Fatalf("check: %v %v", ok, err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
		})
	}
}
