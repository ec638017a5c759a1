package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store/storetest"
)

// blockingAttestor stands in for the prover in the load-shedding test: its
// work blocks until release is closed, so the test controls how long the
// heavy requests hold their slots. The real prover is exercised by the
// app package's TestOverloadSheds.
type blockingAttestor struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// releaseAll lets every blocked and future proof finish. Tests register it
// with t.Cleanup after setup, so it runs before the server closes.
func (b *blockingAttestor) releaseAll() { b.once.Do(func() { close(b.release) }) }

func (b *blockingAttestor) attest(ctx context.Context) (*healthagents.Attestation, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
		return &healthagents.Attestation{Circuit: "test", Verified: true}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *blockingAttestor) AttestEligibility(ctx context.Context, _ *record.Record, _ eligibility.Decision) (*healthagents.Attestation, error) {
	return b.attest(ctx)
}

func (b *blockingAttestor) AttestPrescription(ctx context.Context, _ *record.Record, _ []prescription.Decision, _ time.Time) (*healthagents.Attestation, error) {
	return b.attest(ctx)
}

// TestLoadShedding fills a gate of two slots with blocked proofs: every
// further heavy request is refused at once with 503 and Retry-After while
// the blocked ones still run, cheap routes keep answering, and once the
// proofs finish the server serves normally again.
func TestLoadShedding(t *testing.T) {
	t.Parallel()
	const slots, excess = 2, 12
	att := &blockingAttestor{entered: make(chan struct{}, slots+excess), release: make(chan struct{})}
	f := setup(t, setupOpts{
		svcOpts:    []healthagents.Option{healthagents.WithAttestor(att)},
		serverOpts: []server.Option{server.WithMaxInFlight(slots), server.WithAdmissionQueue(0, time.Second)},
	})
	t.Cleanup(att.releaseAll)
	body := map[string]any{"patient_data": f.seal(t, baseRecord()), "procedure_code": "PROC001"}

	type answer struct {
		status int
		body   map[string]any
	}
	running := make(chan answer, slots)
	for range slots {
		go func() {
			status, _, b := f.do(t, "POST", "/verify-eligibility", body)
			running <- answer{status, b}
		}()
	}
	for range slots {
		<-att.entered // both slots now hold a blocked proof
	}

	shed := make(chan answer, excess)
	for i := range excess {
		path, b := "/verify-eligibility", body
		if i%2 == 1 {
			path, b = "/validate-prescription", map[string]any{"patient_data": body["patient_data"], "drug_code": "6809"}
		}
		go func() {
			status, h, out := f.do(t, "POST", path, b)
			assert.Equal(t, "1", h.Get("Retry-After"))
			shed <- answer{status, out}
		}()
	}
	// Every excess request is answered although the proofs in the slots are
	// still blocked; one reaching the prover instead fails the test.
	for range excess {
		select {
		case a := <-shed:
			requireDetail(t, a.status, a.body, http.StatusServiceUnavailable, "Service temporarily unavailable")
		case <-att.entered:
			t.Fatal("a request beyond the gate reached the prover")
		}
	}

	status, _, _ := f.do(t, "GET", "/health", nil)
	assert.Equal(t, http.StatusOK, status, "/health is outside the gate")
	status, _, _ = f.do(t, "GET", "/status", nil)
	assert.Equal(t, http.StatusOK, status, "/status is outside the gate")

	att.releaseAll()
	for range slots {
		a := <-running
		require.Equal(t, http.StatusOK, a.status, "%v", a.body)
		assert.Equal(t, true, a.body["zk_proof_verified"])
	}
	status, _, out := f.do(t, "POST", "/verify-eligibility", body)
	require.Equal(t, http.StatusOK, status, "%v", out)
	<-att.entered
	raw, _ := json.Marshal(out)
	assert.NotContains(t, string(raw), "detail")
}

// TestClientGoneCancelsProof: a client that hangs up while its proof runs
// cancels the request context down to the attestor, so the slot frees for
// the next caller instead of working for nobody.
func TestClientGoneCancelsProof(t *testing.T) {
	t.Parallel()
	att := &blockingAttestor{entered: make(chan struct{}, 4), release: make(chan struct{})}
	f := setup(t, setupOpts{
		svcOpts:    []healthagents.Option{healthagents.WithAttestor(att)},
		serverOpts: []server.Option{server.WithMaxInFlight(1), server.WithAdmissionQueue(0, time.Second)},
	})
	t.Cleanup(att.releaseAll)
	body, err := json.Marshal(map[string]any{"patient_data": f.seal(t, baseRecord()), "procedure_code": "PROC001"})
	require.NoError(t, err)

	ctx, hangUp := context.WithCancel(t.Context())
	gone := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, "POST", f.url+"/verify-eligibility", bytes.NewReader(body))
		if err == nil {
			var resp *http.Response
			if resp, err = http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		gone <- err
	}()
	<-att.entered // the only slot holds this proof
	hangUp()
	require.Error(t, <-gone)

	// The next caller gets the slot once the abandoned work has stopped;
	// without cancellation it would be shed until release.
	admitted := make(chan int, 1)
	go func() {
		status := 0
		for range 10000 {
			resp, err := http.Post(f.url+"/verify-eligibility", "application/json", bytes.NewReader(body))
			if err != nil {
				break
			}
			resp.Body.Close()
			if status = resp.StatusCode; status != http.StatusServiceUnavailable {
				break
			}
			time.Sleep(time.Millisecond) // the server has not noticed the hang-up yet
		}
		admitted <- status
	}()
	select {
	case <-att.entered: // a second proof started: the hang-up freed the slot
	case status := <-admitted:
		t.Fatalf("the slot never freed after the client hung up (last status %d)", status)
	}
	att.releaseAll()
	require.Equal(t, http.StatusOK, <-admitted)
}

// TestIdempotentRetryHoldsNoSlot: a retry carrying the Idempotency-Key of
// a request that still holds the gate's only slot waits for that answer and
// gets it replayed; it is not shed, and it never reaches the prover itself.
// (With the idempotency layer inside the gate, the retry would be refused
// with 503 while its own first attempt was running.)
func TestIdempotentRetryHoldsNoSlot(t *testing.T) {
	t.Parallel()
	att := &blockingAttestor{entered: make(chan struct{}, 4), release: make(chan struct{})}
	f := setup(t, setupOpts{
		svcOpts:    []healthagents.Option{healthagents.WithAttestor(att)},
		serverOpts: []server.Option{server.WithMaxInFlight(1), server.WithAdmissionQueue(0, time.Second)},
	})
	t.Cleanup(att.releaseAll)
	body, err := json.Marshal(map[string]any{"patient_data": f.seal(t, baseRecord()), "procedure_code": "PROC001"})
	require.NoError(t, err)

	type answer struct {
		status int
		header http.Header
		body   string
	}
	post := func(out chan<- answer) {
		s, h, b := postWithKey(t, f.url+"/verify-eligibility", "order-17", body)
		out <- answer{s, h, string(b)}
	}
	first, retry := make(chan answer, 1), make(chan answer, 1)
	go post(first)
	<-att.entered // the only slot holds the first attempt's proof
	go post(retry)

	// Another request without the key is shed: the slot is really taken.
	status, h, _ := postWithKey(t, f.url+"/verify-eligibility", "", body)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, "1", h.Get("Retry-After"))
	select {
	case a := <-retry:
		t.Fatalf("the retry was answered before its first attempt: %d %s", a.status, a.body)
	default:
	}

	att.releaseAll()
	a1, a2 := <-first, <-retry
	require.Equal(t, http.StatusOK, a1.status, a1.body)
	assert.Equal(t, a1.status, a2.status)
	assert.Equal(t, a1.body, a2.body)
	assert.Equal(t, "true", a2.header.Get("Idempotent-Replayed"))
	select {
	case <-att.entered:
		t.Fatal("the retry reached the prover")
	default:
	}
}

// TestStalledProofsDoNotShedFederated: with every proof slot held by an
// attestation that never returns (as behind a chain RPC that hangs), a
// federated submission, which needs no proof and no chain, is still served:
// the two classes of heavy route have separate gates. A further proof
// request is shed, so the proof gate really is full.
func TestStalledProofsDoNotShedFederated(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	fed, err := app.OpenFederated(t.Context(), db, testFedConfig(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { fed.Close() })
	const slots = 1
	att := &blockingAttestor{entered: make(chan struct{}, 4), release: make(chan struct{})}
	f := setup(t, setupOpts{
		svcOpts: []healthagents.Option{healthagents.WithAttestor(att)},
		deps: func(d *server.Deps) {
			d.FederatedAPI, d.Federated = fed.API, fed.API
		},
		serverOpts: []server.Option{server.WithMaxInFlight(slots), server.WithAdmissionQueue(0, time.Second)},
	})
	t.Cleanup(att.releaseAll)
	body := map[string]any{"patient_data": f.seal(t, baseRecord()), "procedure_code": "PROC001"}
	running := make(chan int, slots)
	for range slots {
		go func() {
			status, _, _ := f.do(t, "POST", "/verify-eligibility", body)
			running <- status
		}()
	}
	for range slots {
		<-att.entered // every proof slot holds a stalled attestation
	}
	status, h, out := f.do(t, "POST", "/validate-prescription", map[string]any{"patient_data": body["patient_data"], "drug_code": "6809"})
	requireDetail(t, status, out, http.StatusServiceUnavailable, "Service temporarily unavailable")
	assert.Equal(t, "1", h.Get("Retry-After"))

	envs := make([]*healthagents.PatientData, 0, 20)
	for i := range 20 {
		r := baseRecord()
		r.PatientID = fmt.Sprintf("PT-FED-%03d", i)
		r.Diagnosis = map[bool]string{true: "positive", false: "negative"}[i%2 == 0]
		envs = append(envs, f.seal(t, r))
	}
	status, _, out = f.do(t, "POST", "/submit-federated-update", map[string]any{"patient_data_list": envs, "round_number": 0})
	require.Equal(t, http.StatusOK, status, "a federated submission while every proof slot is stalled: %v", out)
	assert.EqualValues(t, 1, out["participants"])
	select {
	case <-running:
		t.Fatal("the stalled proof finished before its release")
	default:
	}
	att.releaseAll()
	for range slots {
		assert.Equal(t, http.StatusOK, <-running)
	}
}

// metricValue reads one sample of the fixture's /metrics (-1 when absent).
func metricValue(t *testing.T, f *fixture, sample string) float64 {
	t.Helper()
	resp, err := http.Get(f.url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	require.NoError(t, err)
	for _, line := range strings.Split(b.String(), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			var x float64
			_, err := fmt.Sscan(v, &x)
			require.NoError(t, err)
			return x
		}
	}
	return -1
}

// TestBurstQueuesThenSheds: on a gate sized for 2 cores with the default
// queue, a burst of 12 parallel eligibility calls all get 200 (2 run, 10
// wait their turn), the queue's depth showing in /metrics meanwhile; a
// sustained overload (30 at once while the proofs are stalled) fills the
// 16 places and sheds the rest at once with 503 and Retry-After, counted,
// while /health answers.
func TestBurstQueuesThenSheds(t *testing.T) {
	t.Parallel()
	const slots = 2
	queue := 8 * slots // the default, per slot
	body := func(f *fixture) map[string]any {
		return map[string]any{"patient_data": f.seal(t, baseRecord()), "procedure_code": "PROC001"}
	}
	start := func(t *testing.T, n int) (*fixture, *blockingAttestor, chan int) {
		att := &blockingAttestor{entered: make(chan struct{}, n), release: make(chan struct{})}
		f := setup(t, setupOpts{
			svcOpts:    []healthagents.Option{healthagents.WithAttestor(att)},
			serverOpts: []server.Option{server.WithMaxInFlight(slots), server.WithMetrics(prometheus.NewRegistry())},
		})
		t.Cleanup(att.releaseAll)
		b := body(f)
		statuses := make(chan int, n)
		for range n {
			go func() {
				status, h, _ := f.do(t, "POST", "/verify-eligibility", b)
				if status == http.StatusServiceUnavailable {
					assert.Equal(t, "1", h.Get("Retry-After"))
				}
				statuses <- status
			}()
		}
		return f, att, statuses
	}

	t.Run("a burst of 12 queues and is served", func(t *testing.T) {
		t.Parallel()
		const burst = 12
		f, att, statuses := start(t, burst)
		for range slots {
			<-att.entered
		}
		// Every request beyond the slots waits: none is shed.
		for metricValue(t, f, `healthagents_admission_queue_depth{gate="proof"}`) != burst-slots {
			require.NoError(t, t.Context().Err(), "the burst never queued")
			time.Sleep(time.Millisecond)
		}
		status, _, _ := f.do(t, "GET", "/health", nil)
		assert.Equal(t, http.StatusOK, status, "/health answers while the queue is full")
		att.releaseAll()
		for range burst {
			assert.Equal(t, http.StatusOK, <-statuses)
		}
		assert.Equal(t, float64(-1), metricValue(t, f, `healthagents_admission_shed_total{gate="proof"}`), "nothing shed")
		assert.Equal(t, float64(burst-slots), metricValue(t, f, `healthagents_admission_wait_seconds_count{gate="proof"}`), "every queued request's wait observed")
	})

	t.Run("a sustained overload sheds the excess", func(t *testing.T) {
		t.Parallel()
		const overload = 30
		f, att, statuses := start(t, overload)
		for range slots {
			<-att.entered
		}
		// The proofs are stalled: the queue fills and the rest is shed at once.
		excess := overload - slots - queue
		for range excess {
			assert.Equal(t, http.StatusServiceUnavailable, <-statuses)
		}
		assert.Equal(t, float64(queue), metricValue(t, f, `healthagents_admission_queue_depth{gate="proof"}`))
		assert.Equal(t, float64(excess), metricValue(t, f, `healthagents_admission_shed_total{gate="proof"}`))
		status, _, _ := f.do(t, "GET", "/health", nil)
		assert.Equal(t, http.StatusOK, status, "/health answers under overload")
		att.releaseAll()
		for range slots + queue {
			assert.Equal(t, http.StatusOK, <-statuses)
		}
	})
}
