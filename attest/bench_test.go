package attest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/zkp"
)

// BenchmarkOnChain measures the verification of real proofs (eligibility-v3:
// 3 public inputs; prescription-v4 of five drugs: 3) on the embedded chain, one at a time:
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
	cred, _, err := selfTrust(b, l).Credential(b.Context(), rec, serviceDate)
	require.NoError(b, err)
	for _, c := range []struct {
		name  string
		kind  chain.Kind
		prove func(context.Context) (*zkp.Proof, error)
	}{
		{"eligibility-v3", attest.KindEligibility, func(ctx context.Context) (*zkp.Proof, error) {
			p, _, err := prover.ProveEligibilityV3(ctx, zkp.EligibilityV3Input{
				Credential: cred, ProcedureCode: "PROC002", ServiceDate: serviceDate, CoveragePct: 70, Eligible: true,
			})
			return p, err
		}},
		{"prescription-v4", attest.KindPrescription, func(ctx context.Context) (*zkp.Proof, error) {
			p, _, _, err := prover.ProvePrescriptionV4(ctx, zkp.PrescriptionV4Input{
				Credential: cred, Drugs: []string{"6809", "11289", "1191", "36567", "4493"}, ServiceDate: serviceDate,
			})
			return p, err
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

// BenchmarkAttest measures a decision's attestation end to end, as the
// service runs it after its agents decided: the trust policy's credential
// (self-signed here), the -v2 proof with the fixed-base prover, and the
// record transaction mined on the embedded chain. It reports p50 and p99
// wall milliseconds per decision and the process's CPU milliseconds per
// decision (cpu-ms/op, which other load on the machine barely moves).
func BenchmarkAttest(b *testing.B) {
	sys, l := fixture(b)
	<-sys.Warm()
	a := newAttestor(b, l, l)
	rec := testRecord()
	// A patient on two medications, with an allergy and a condition: the
	// circuit proves every slot whatever is filled, so this changes only
	// the witness.
	rx, err := prescription.New()
	require.NoError(b, err)
	rxRec := testRecord()
	rxRec.Medications, rxRec.Allergies, rxRec.Conditions = []string{"5640", "83367"}, []string{"penicillin"}, []string{"I50.9"}
	batch, err := rx.Check(b.Context(), nil, []string{"6809", "11289", "1191", "36567", "4493"}, rxRec)
	require.NoError(b, err)
	five := batch.Decisions
	elig := decide(b, rec, "PROC002")
	for _, c := range []struct {
		name string
		run  func(context.Context) (*healthagents.Attestation, error)
	}{
		{"eligibility-v3", func(ctx context.Context) (*healthagents.Attestation, error) {
			return a.AttestEligibility(ctx, rec, elig)
		}},
		{"prescription-v4-5-drugs", func(ctx context.Context) (*healthagents.Attestation, error) {
			return a.AttestPrescription(ctx, rxRec, five, serviceDate)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var samples []time.Duration
			cpu := cpuTime()
			for b.Loop() {
				start := time.Now()
				att, err := c.run(b.Context())
				if err != nil || !att.Verified {
					b.Fatalf("attest: %v", err)
				}
				samples = append(samples, time.Since(start))
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(len(samples)), "cpu-ms/op")
			slices.Sort(samples)
			ms := func(q float64) float64 {
				return float64(samples[min(len(samples)-1, int(q*float64(len(samples))))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(0.5), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
		})
	}
}
