package server_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/store/storetest"
)

// BenchmarkEligibilityX12OverHTTP compares, request for request, a
// one-subscriber 270 (one EQ: HC:70551) over POST /api/v1/eligibility/x12
// with the same question over POST /api/v1/eligibility/verify, both
// through the SDK against the real app (Groth16 proof, mined transaction,
// SQLite). The two alternate, so load on the machine falls on both alike;
// reported: each one's p50, and the p50 of the per-pair difference (what
// the X12 layer adds: reading the 270, the member index lookup, the 271).
//
//	go test ./server -run '^$' -bench EligibilityX12OverHTTP -benchtime 40x
func BenchmarkEligibilityX12OverHTTP(b *testing.B) {
	db := storetest.Open(b, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(b)})
	e := newV1Env(b, db)
	ctx := b.Context()
	c := e.client(b, apikey.CreateParams{Tier: apikey.Enterprise, Organization: "bench-x12"})
	require.NoError(b, c.PutPatient(ctx, e.seal(b, v1Record("PT-BX", func(r *record.Record) {
		r.Name = &record.Name{Family: "Doe", Given: "Jane"}
		r.BirthDate = "1968-04-02"
	}))))
	in := x12Request(time.Now().UTC(), "HL*3*2*22*0~TRN*1*BENCH*9CLEARHOUS~NM1*IL*1*DOE*JANE****MI*W123456789~DMG*D8*19680402~EQ**HC:70551")
	req := healthagents.V1EligibilityRequest{PatientID: "PT-BX", MemberID: "W123456789", ProcedureCode: "70551", ProviderNPI: v1Provider}
	// Warm both paths (connections, the prover's tables).
	_, err := c.EligibilityX12(ctx, in)
	require.NoError(b, err)
	_, err = c.VerifyEligibilityV1(ctx, req)
	require.NoError(b, err)
	var jsonD, x12D, diff []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		_, err := c.VerifyEligibilityV1(ctx, req)
		t1 := time.Now()
		require.NoError(b, err)
		out, err := c.EligibilityX12(ctx, in)
		t2 := time.Now()
		require.NoError(b, err)
		require.Contains(b, string(out), "EB*1*IND*")
		jsonD, x12D = append(jsonD, t1.Sub(t0)), append(x12D, t2.Sub(t1))
		diff = append(diff, t2.Sub(t1)-t1.Sub(t0))
	}
	b.StopTimer()
	b.ReportMetric(p50ms(jsonD), "json-p50-ms")
	b.ReportMetric(p50ms(x12D), "x12-p50-ms")
	b.ReportMetric(p50ms(diff), "x12-added-p50-ms")
}

func p50ms(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}
