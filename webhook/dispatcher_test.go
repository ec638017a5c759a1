package webhook_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

func TestDeliverySignedPseudonymousAndRecorded(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		rc := newReceiver(t)
		ep := e.register(t, rc.URL+"/hook", healthagents.EventEligibilityVerified, healthagents.EventPrescriptionValidated)

		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-000123")))
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-000123")))
		require.NoError(t, e.reg.Emit(t.Context(), healthagents.Event{
			Type: healthagents.EventPrescriptionValidated, PatientID: "PT-000999",
			Data: map[string]any{"valid": true, "drug_code": "11289", "zk_proof_verified": false,
				"prescription_id": "rx_1", "validation_status": "approved"},
		}))
		assert.Equal(t, 3, e.runOnce(t))

		got := rc.requests()
		require.Len(t, got, 3)
		pids := map[string]int{}
		for _, r := range got {
			assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
			assert.True(t, verifyStandardWebhooks(ep.Secret, r.Header, r.Body), "signature verifies independently")
			assert.Equal(t, e.clock.Now().Unix(), unix(r.Header))
			assert.Regexp(t, `^msg_[a-z2-7]{16}$`, r.Header.Get("webhook-id"))
			assert.NotContains(t, string(r.Body), "PT-000", "raw patient id never leaves")
			assert.NotContains(t, string(r.Body), "diagnosis")
			assert.NotContains(t, string(r.Body), "PROC001")
			assert.NotContains(t, string(r.Body), "11289")

			var p struct {
				Event     string         `json:"event"`
				Timestamp time.Time      `json:"timestamp"`
				Data      map[string]any `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.Body, &p))
			pid, _ := p.Data["patient_id"].(string)
			raw, err := hex.DecodeString(pid)
			require.NoError(t, err)
			assert.Len(t, raw, 32)
			pids[pid]++
			switch p.Event {
			case healthagents.EventEligibilityVerified:
				assert.Equal(t, map[string]any{"patient_id": pid, "coverage_percentage": 80.0, "requires_auth": true,
					"eligible": true, "zk_proof_verified": true}, p.Data)
			case healthagents.EventPrescriptionValidated:
				assert.Equal(t, map[string]any{"patient_id": pid, "valid": true, "zk_proof_verified": false,
					"prescription_id": "rx_1", "validation_status": "approved"}, p.Data)
			default:
				t.Errorf("unexpected event %q", p.Event)
			}
		}
		assert.Len(t, pids, 2, "one pseudonym per patient, stable across events")

		as := e.attempts(t, ep.ID)
		require.Len(t, as, 3)
		for _, a := range as {
			assert.Equal(t, webhook.ResultDelivered, a.Result)
			assert.Equal(t, 200, a.StatusCode)
			assert.Equal(t, 1, a.Number)
			assert.Empty(t, a.Error)
		}
		assert.Zero(t, e.runOnce(t), "delivered messages are not sent again")
	})
}

func TestRetriesFollowTheScheduleWithOneWebhookID(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		rc.reply(500)
		rc.reply(503)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))

		assert.Equal(t, 1, e.runOnce(t)) // immediately: 500
		assert.Zero(t, e.runOnce(t), "not due before 5 s")
		e.clock.Advance(5 * time.Second)
		assert.Equal(t, 1, e.runOnce(t)) // 503
		e.clock.Advance(4 * time.Minute)
		assert.Zero(t, e.runOnce(t), "not due before 5 min")
		e.clock.Advance(time.Minute)
		assert.Equal(t, 1, e.runOnce(t)) // 200

		got := rc.requests()
		require.Len(t, got, 3)
		for _, r := range got {
			assert.Equal(t, got[0].Header.Get("webhook-id"), r.Header.Get("webhook-id"))
			assert.Equal(t, got[0].Body, r.Body)
			assert.True(t, verifyStandardWebhooks(ep.Secret, r.Header, r.Body))
		}
		assert.Less(t, unix(got[0].Header), unix(got[2].Header), "each attempt is signed at its own time")

		as := e.attempts(t, ep.ID)
		require.Len(t, as, 3)
		assert.Equal(t, []string{webhook.ResultDelivered, webhook.ResultRetrying, webhook.ResultRetrying},
			[]string{as[0].Result, as[1].Result, as[2].Result})
		assert.Equal(t, []int{3, 2, 1}, []int{as[0].Number, as[1].Number, as[2].Number})
		assert.Equal(t, 500, as[2].StatusCode)
		assert.Equal(t, webhook.ClassHTTPStatus, as[2].Error)
		assert.Equal(t, "reply body", as[2].Response)
		assert.Equal(t, as[2].At.Add(5*time.Second), as[2].NextAttempt)
		ok, err := e.reg.Get(t.Context(), owner, ep.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusActive, ok.Status)
	})
}

func TestRetryAfterIsHonouredAndCapped(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db, webhook.WithMaxRetryAfter(10*time.Minute))
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		rc.reply(429, "Retry-After", "120")
		rc.reply(503, "Retry-After", "86400")
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))

		assert.Equal(t, 1, e.runOnce(t))
		e.clock.Advance(5 * time.Second)
		assert.Zero(t, e.runOnce(t), "Retry-After 120 beats the 5 s step")
		e.clock.Advance(115 * time.Second)
		assert.Equal(t, 1, e.runOnce(t))
		e.clock.Advance(10*time.Minute - time.Second)
		assert.Zero(t, e.runOnce(t))
		e.clock.Advance(time.Second)
		assert.Equal(t, 1, e.runOnce(t), "a day-long Retry-After is capped at 10 min")
		assert.Len(t, rc.requests(), 3)
		assert.Equal(t, webhook.ResultDelivered, e.attempts(t, ep.ID)[0].Result)
	})
}

func TestGoneDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		rc.reply(http.StatusGone)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		assert.Equal(t, 1, e.runOnce(t))

		got, err := e.reg.Get(t.Context(), owner, ep.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusDisabled, got.Status)
		assert.Equal(t, webhook.ReasonGone, got.DisabledReason)
		assert.Equal(t, e.clock.Now(), got.DisabledAt)
		assert.Equal(t, webhook.ResultDisabled, e.attempts(t, ep.ID)[0].Result)

		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-2")))
		e.clock.Advance(24 * time.Hour)
		assert.Zero(t, e.runOnce(t), "a disabled endpoint gets nothing")
		assert.Len(t, rc.requests(), 1)
	})
}

func TestFailingForDaysDisablesAndExhaustedMessagesFail(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db, webhook.WithSchedule(0, time.Hour))
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		for range 10 {
			rc.reply(500)
		}
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		assert.Equal(t, 1, e.runOnce(t))
		e.clock.Advance(time.Hour)
		assert.Equal(t, 1, e.runOnce(t))
		as := e.attempts(t, ep.ID)
		assert.Equal(t, webhook.ResultFailed, as[0].Result, "two attempts, no third")
		e.clock.Advance(time.Hour)
		assert.Zero(t, e.runOnce(t))

		e.clock.Advance(5 * 24 * time.Hour)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-2")))
		assert.Equal(t, 1, e.runOnce(t))
		got, err := e.reg.Get(t.Context(), owner, ep.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusDisabled, got.Status)
		assert.Equal(t, webhook.ReasonFailing, got.DisabledReason)
	})
}

func TestSuccessResetsTheFailurePeriod(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db, webhook.WithSchedule(0))
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		rc.reply(500)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		assert.Equal(t, 1, e.runOnce(t))
		e.clock.Advance(4 * 24 * time.Hour)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-2")))
		assert.Equal(t, 1, e.runOnce(t)) // 200: resets
		rc.reply(500)
		e.clock.Advance(2 * 24 * time.Hour)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-3")))
		assert.Equal(t, 1, e.runOnce(t))
		got, err := e.reg.Get(t.Context(), owner, ep.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusActive, got.Status)
	})
}

func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		target := newReceiver(t)
		rc := newReceiver(t)
		rc.reply(http.StatusTemporaryRedirect, "Location", target.URL)
		ep := e.register(t, rc.URL)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		assert.Equal(t, 1, e.runOnce(t))
		assert.Empty(t, target.requests())
		a := e.attempts(t, ep.ID)[0]
		assert.Equal(t, http.StatusTemporaryRedirect, a.StatusCode)
		assert.Equal(t, webhook.ClassRedirect, a.Error)
		assert.Equal(t, webhook.ResultRetrying, a.Result)
	})
}

func TestRebindingIsRefusedAtConnectTime(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		rc := newReceiver(t)
		port := netip.MustParseAddrPort(rc.Listener.Addr().String()).Port()
		res := &switchResolver{addr: netip.MustParseAddr("93.184.215.14")}
		st, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		reg, err := webhook.NewRegistry(st, webhook.AllowHTTP(), webhook.WithResolver(res))
		require.NoError(t, err)
		ep, err := reg.Create(t.Context(), owner, webhook.CreateRequest{
			URL: "http://hooks.example:" + itoa(int(port)) + "/", Events: []string{healthagents.EventEligibilityVerified}})
		require.NoError(t, err, "a public address is accepted at registration")

		res.set(netip.MustParseAddr("127.0.0.1")) // the name now points inside
		disp, err := webhook.NewDispatcher(st, webhook.WithResolver(res), webhook.WithTimeout(2*time.Second))
		require.NoError(t, err)
		require.NoError(t, reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		n, err := disp.RunOnce(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.Empty(t, rc.requests(), "the loopback receiver is never reached")
		as, _, err := reg.Attempts(t.Context(), owner, ep.ID, webhook.ListParams{Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, webhook.ClassAddressRefused, as[0].Error)
		assert.Zero(t, as[0].StatusCode)
	})
}

type switchResolver struct {
	mu   sync.Mutex
	addr netip.Addr
}

func (r *switchResolver) set(a netip.Addr) { r.mu.Lock(); r.addr = a; r.mu.Unlock() }

func (r *switchResolver) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return []netip.Addr{r.addr}, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRestartDeliversPendingWithTheSameWebhookID(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t)
			db1, err := store.Open(t.Context(), b.DSN)
			require.NoError(t, err)
			e1 := newEnv(t, db1)
			ep := e1.register(t, rc.URL)
			require.NoError(t, e1.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
			require.NoError(t, e1.reg.Emit(t.Context(), eligibilityEvent("PT-2")))
			// The first process claims one message and dies before
			// attempting it; the other was never claimed.
			st1, err := store.NewWebhookStore(db1)
			require.NoError(t, err)
			now := e1.clock.Now()
			jobs, err := st1.Claim(t.Context(), webhook.ClaimParams{Holder: "wrk_dead", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 1, PerEndpoint: 2})
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			require.NoError(t, db1.Close())

			db2 := storetest.Open(t, b)
			e2 := newEnv(t, db2)
			assert.Equal(t, 1, e2.runOnce(t), "the unclaimed message goes at once")
			e2.clock.Advance(time.Minute)
			assert.Equal(t, 1, e2.runOnce(t), "the dead worker's lease ran out")
			got := rc.requests()
			require.Len(t, got, 2)
			assert.Equal(t, jobs[0].MessageID, got[1].Header.Get("webhook-id"))
			assert.NotEqual(t, got[0].Header.Get("webhook-id"), got[1].Header.Get("webhook-id"))
			for _, r := range got {
				assert.True(t, verifyStandardWebhooks(ep.Secret, r.Header, r.Body))
			}
		})
	}
}

func TestConcurrentClaimsAreDisjoint(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		const endpoints, n = 4, 40
		for i := range endpoints {
			e.register(t, "http://127.0.0.1:"+itoa(9+i)+"/")
		}
		for i := range n / endpoints {
			require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-"+itoa(i))))
		}
		const workers = 4
		claimed := make([][]webhook.Job, workers)
		var wg sync.WaitGroup
		for w := range workers {
			db := storetest.Open(t, b) // a replica has its own pool
			st, err := store.NewWebhookStore(db)
			require.NoError(t, err)
			wg.Go(func() {
				now := e.clock.Now()
				for {
					jobs, err := st.Claim(t.Context(), webhook.ClaimParams{Holder: "wrk_" + itoa(w), Now: now,
						LeaseUntil: now.Add(time.Minute), Limit: 3, PerEndpoint: n})
					if !assert.NoError(t, err) || len(jobs) == 0 {
						return
					}
					claimed[w] = append(claimed[w], jobs...)
				}
			})
		}
		wg.Wait()
		seen := map[string]bool{}
		for _, js := range claimed {
			for _, j := range js {
				k := j.MessageID + " " + j.EndpointID
				assert.False(t, seen[k], "delivery %s claimed twice", k)
				seen[k] = true
			}
		}
		assert.Len(t, seen, n)
	})
}

// Concurrent claimers (replicas with their own pools) never lease more
// deliveries of one endpoint than PerEndpoint between them.
func TestConcurrentClaimsKeepThePerEndpointCap(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		ep := e.register(t, "http://127.0.0.1:9/")
		for i := range 20 {
			require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-"+itoa(i))))
		}
		const workers = 6
		claimed := make([][]webhook.Job, workers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range workers {
			st, err := store.NewWebhookStore(storetest.Open(t, b))
			require.NoError(t, err)
			wg.Go(func() {
				<-start
				now := e.clock.Now()
				for range 3 {
					jobs, err := st.Claim(t.Context(), webhook.ClaimParams{Holder: "wrk_" + itoa(w), Now: now,
						LeaseUntil: now.Add(time.Minute), Limit: 4, PerEndpoint: 2})
					if !assert.NoError(t, err) {
						return
					}
					claimed[w] = append(claimed[w], jobs...)
				}
			})
		}
		close(start)
		wg.Wait()
		total := 0
		for _, js := range claimed {
			for _, j := range js {
				assert.Equal(t, ep.ID, j.EndpointID)
				total++
			}
		}
		assert.Equal(t, 2, total, "two in flight for the endpoint, whoever claimed them")
	})
}

func TestDispatcherStartDeliversAndCloses(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		st, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		// An hour between polls: only the enqueue hook can make this
		// delivery happen within the test.
		opts := []webhook.Option{webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithPollInterval(time.Hour)}
		disp, err := webhook.NewDispatcher(st, opts...)
		require.NoError(t, err)
		reg, err := webhook.NewRegistry(st, append(opts, webhook.WithEnqueueHook(disp.Notify))...)
		require.NoError(t, err)
		rc := newReceiver(t)
		_, err = reg.Create(t.Context(), owner, webhook.CreateRequest{URL: rc.URL, Events: webhook.Events()})
		require.NoError(t, err)
		require.NoError(t, disp.Start(t.Context()))
		require.Error(t, disp.Start(t.Context()))
		require.NoError(t, reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		require.Eventually(t, func() bool { return len(rc.requests()) == 1 }, 10*time.Second, 5*time.Millisecond)
		require.NoError(t, disp.Close())
	})
}

func TestSecretsAreSealedAtRest(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		fk, err := cipher.GenerateKey()
		require.NoError(t, err)
		kr, err := cipher.ParseKeyring(fk)
		require.NoError(t, err)
		e := newEnv(t, db, webhook.WithSecretSealer(kr))
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)

		var stored string
		require.NoError(t, db.SQL().QueryRowContext(t.Context(), db.Rebind(`SELECT secret FROM webhook_endpoints WHERE id = ?`), ep.ID).Scan(&stored))
		assert.True(t, strings.HasPrefix(stored, "sealed:"), stored)
		assert.NotContains(t, stored, ep.Secret[len("whsec_"):])

		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		// A dispatcher without the key sends nothing and says why.
		blind, err := webhook.NewDispatcher(e.st, webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithClock(e.clock.Now))
		require.NoError(t, err)
		n, err := blind.RunOnce(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.Empty(t, rc.requests())
		assert.Equal(t, webhook.ClassSecret, e.attempts(t, ep.ID)[0].Error)

		e.clock.Advance(6 * time.Second) // the blind dispatcher spreads the 5 s step by ±20 %
		assert.Equal(t, 1, e.runOnce(t))
		got := rc.requests()
		require.Len(t, got, 1)
		assert.True(t, verifyStandardWebhooks(ep.Secret, got[0].Header, got[0].Body))
	})
}

func TestPruneDropsOnlyOldFinishedRows(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db, webhook.WithRetention(24*time.Hour))
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		rc.reply(500)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1"))) // fails, stays pending
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-2"))) // delivered
		assert.Equal(t, 2, e.runOnce(t))
		n, err := e.disp.Prune(t.Context())
		require.NoError(t, err)
		assert.Zero(t, n, "nothing is old yet")

		e.clock.Advance(25 * time.Hour)
		n, err = e.disp.Prune(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 3, n, "two attempts and the delivered message")
		assert.Empty(t, e.attempts(t, ep.ID))
		assert.Equal(t, 1, e.runOnce(t), "the pending message survives and is retried")
		assert.Len(t, rc.requests(), 3)
	})
}
