package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// clock is a hand-moved clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// received is one request the receiver got.
type received struct {
	Header http.Header
	Body   []byte
}

// receiver is a real HTTP endpoint that records requests and answers with
// the statuses queued in replies (200 once they run out).
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []received
	replies []func(w http.ResponseWriter)
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{Header: r.Header.Clone(), Body: body})
		var reply func(http.ResponseWriter)
		if len(rc.replies) > 0 {
			reply, rc.replies = rc.replies[0], rc.replies[1:]
		}
		rc.mu.Unlock()
		if reply == nil {
			w.WriteHeader(http.StatusOK)
			return
		}
		reply(w)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) reply(status int, header ...string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.replies = append(rc.replies, func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte("reply body"))
	})
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// verifyStandardWebhooks checks a delivery the way the Standard Webhooks
// specification describes, written here from the spec text and not shared
// with the package: the signed content is "{webhook-id}.{webhook-timestamp}.{body}",
// the key is the Base64-decoded part of the secret after "whsec_", the
// signature is HMAC-SHA256 in Base64 after "v1,", and the header may hold
// several space-separated signatures.
func verifyStandardWebhooks(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)))
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, s := range strings.Split(h.Get("webhook-signature"), " ") {
		v, sig, ok := strings.Cut(s, ",")
		if ok && v == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

// staticResolver answers from a map, for names tests make up.
type staticResolver map[string][]netip.Addr

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &netErr{host}
}

type netErr struct{ host string }

func (e *netErr) Error() string { return "no such host " + e.host }

// env is a Registry and a Dispatcher over one real database.
type env struct {
	db    *store.DB
	st    *store.WebhookStore
	reg   *webhook.Registry
	disp  *webhook.Dispatcher
	clock *clock
}

const owner = "org-1"

func newEnv(t *testing.T, db *store.DB, opts ...webhook.Option) *env {
	t.Helper()
	st, err := store.NewWebhookStore(db)
	require.NoError(t, err)
	c := newClock()
	// No jitter unless a test asks: schedules are asserted to the second.
	all := append([]webhook.Option{webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithClock(c.Now), webhook.WithJitter(0)}, opts...)
	reg, err := webhook.NewRegistry(st, all...)
	require.NoError(t, err)
	disp, err := webhook.NewDispatcher(st, all...)
	require.NoError(t, err)
	t.Cleanup(func() { disp.Close() })
	return &env{db: db, st: st, reg: reg, disp: disp, clock: c}
}

func (e *env) register(t *testing.T, url string, events ...string) *webhook.Created {
	t.Helper()
	if len(events) == 0 {
		events = []string{healthagents.EventEligibilityVerified}
	}
	c, err := e.reg.Create(t.Context(), owner, webhook.CreateRequest{URL: url, Events: events})
	require.NoError(t, err)
	return c
}

func eligibilityEvent(patient string) healthagents.Event {
	return healthagents.Event{
		Type: healthagents.EventEligibilityVerified, PatientID: patient,
		Data: map[string]any{
			"coverage_percentage": 80, "requires_auth": true, "procedure_code": "PROC001",
			"eligible": true, "zk_proof_verified": true, "diagnosis": "positive",
		},
	}
}

func (e *env) runOnce(t *testing.T) int {
	t.Helper()
	n, err := e.disp.RunOnce(t.Context())
	require.NoError(t, err)
	return n
}

func (e *env) attempts(t *testing.T, id string) []webhook.Attempt {
	t.Helper()
	as, _, err := e.reg.Attempts(t.Context(), owner, id, webhook.ListParams{Limit: 100})
	require.NoError(t, err)
	return as
}

func forEach(t *testing.T, fn func(t *testing.T, b storetest.Backend, db *store.DB)) {
	storetest.ForEach(t, fn)
}

func unix(h http.Header) int64 {
	n, _ := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	return n
}

func timeOf(r *http.Request) time.Time { return time.Unix(unix(r.Header), 0) }
