package app_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestMeasureReplicas measures, for docs/benchmarks.md, the throughput and
// latency percentiles of v1 eligibility verifications (open the registered
// envelope, decide, prove with Groth16, record on chain and wait for the
// block) sent round-robin to one replica, then to two, each set on its own
// PostgreSQL schema, the same Redis and its own JSON-RPC chain in this
// process. It runs only with HEALTHAGENTS_TEST_MEASURE_REPLICAS=<requests>
// (e.g. 96) and the PostgreSQL and Redis settings; concurrency is
// HEALTHAGENTS_TEST_MEASURE_CONCURRENCY (default 8).
func TestMeasureReplicas(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HEALTHAGENTS_TEST_MEASURE_REPLICAS"))
	if n <= 0 || os.Getenv(storetest.PostgresEnv) == "" || os.Getenv("HEALTHAGENTS_TEST_REDIS") == "" {
		t.Skip("set HEALTHAGENTS_TEST_MEASURE_REPLICAS, HEALTHAGENTS_TEST_POSTGRES and HEALTHAGENTS_TEST_REDIS to measure")
	}
	conc, _ := strconv.Atoi(os.Getenv("HEALTHAGENTS_TEST_MEASURE_CONCURRENCY"))
	if conc <= 0 {
		conc = 8
	}
	for _, replicas := range []int{1, 2} {
		t.Run(fmt.Sprintf("replicas=%d", replicas), func(t *testing.T) {
			ctx := t.Context()
			rs := startReplicas(t, replicas)
			a := rs.apps[0]
			var err error
			// A key per worker: the per-key endpoint limit (100/min) must not
			// be what is measured.
			workerKeys := make([]string, conc)
			for w := range workerKeys {
				workerKeys[w], _, err = a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: "measure"})
				require.NoError(t, err)
			}
			key := workerKeys[0]
			c, err := client.New(rs.urls[0], client.WithAPIKey(key), client.WithMaxAttempts(1))
			require.NoError(t, err)
			env := sealed(t, a, func(r *record.Record) { r.Medications = nil })
			require.NoError(t, c.PutPatient(ctx, env))
			elig := healthagents.V1EligibilityRequest{PatientID: env.PatientID, MemberID: "W123456789", ProcedureCode: "PROC002", ProviderNPI: "1234567893"}
			// Warm every replica (first proofs, connection pools).
			for _, u := range rs.urls {
				r := callReplica(t, "POST", u+"/api/v1/eligibility/verify", key, "", elig)
				require.Equal(t, 200, r.status, "%s", r.body)
			}
			var (
				next      atomic.Int64
				mu        sync.Mutex
				latencies []time.Duration
				statuses  = map[int]int{}
				wg        sync.WaitGroup
			)
			start := time.Now()
			for w := range conc {
				wg.Go(func() {
					for {
						i := next.Add(1) - 1
						if i >= int64(n) {
							return
						}
						t0 := time.Now()
						r := callReplica(t, "POST", rs.urls[int(i)%len(rs.urls)]+"/api/v1/eligibility/verify", workerKeys[w], "", elig)
						d := time.Since(t0)
						mu.Lock()
						statuses[r.status]++
						if r.status == 200 {
							latencies = append(latencies, d)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			slices.Sort(latencies)
			pct := func(p float64) time.Duration {
				if len(latencies) == 0 {
					return 0
				}
				return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Round(time.Millisecond)
			}
			t.Logf("replicas=%d requests=%d concurrency=%d elapsed=%s throughput=%.2f/s p50=%s p99=%s max=%s statuses=%v",
				replicas, n, conc, elapsed.Round(time.Millisecond), float64(len(latencies))/elapsed.Seconds(),
				pct(0.50), pct(0.99), pct(1), statuses)
		})
	}
}
