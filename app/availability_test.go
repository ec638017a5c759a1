package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/store/storetest"
)

// cutProxy forwards TCP connections to target until cut: then it closes
// every open connection and closes each new one at once, as a dead server
// looks; hung, it holds new connections open without an answer, as a
// partitioned or stalled one looks. Restoring forwards again.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	hung  bool
	conns map[net.Conn]struct{}
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() {
		ln.Close()
		p.setCut(true)
	})
	go p.serve()
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *cutProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *cutProxy) forward(c net.Conn) {
	if !p.track(c) {
		c.Close()
		return
	}
	p.mu.Lock()
	hung := p.hung
	p.mu.Unlock()
	if hung {
		return // held open until the mode changes
	}
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil || !p.track(up) {
		if up != nil {
			up.Close()
		}
		c.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

func (p *cutProxy) setCut(cut bool) { p.set(cut, false) }

func (p *cutProxy) setHung(hung bool) { p.set(false, hung) }

// set changes the mode, dropping the connections of the previous one.
func (p *cutProxy) set(cut, hung bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut, p.hung = cut, hung
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// within fails the test when a request hangs: no assertion on how fast it
// answers, only that it answers.
func within(t *testing.T, method, url string, body io.Reader) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "%s %s did not answer", method, url)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestHealthFollowsDependencies runs the service against a JSON-RPC node
// (the embedded chain served over HTTP) and, when HEALTHAGENTS_TEST_POSTGRES
// is set, PostgreSQL, each behind a proxy the test cuts: GET /health answers
// 503 `Service temporarily unavailable` while either is unreachable and 200
// once it is back, the connection pool recovers, and endpoints that do not
// need the dependency keep answering meanwhile.
func TestHealthFollowsDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("sets up a service on a JSON-RPC node")
	}
	t.Parallel()
	shared(t) // its Groth16 keys are copied, not set up again
	ctx := t.Context()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rpcAddr := ln.Addr().String()
	ln.Close()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	_, useNode := externalNode(t, rpcAddr, key)
	rpc := newCutProxy(t, rpcAddr)

	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "zkp"), os.DirFS(filepath.Join(sharedDir, "zkp"))))
	cfg := app.Config{DataDir: dir, AdminToken: "availability-admin-token"}
	useNode(&cfg, "http://"+rpc.addr())
	var db *cutProxy
	if os.Getenv(storetest.PostgresEnv) != "" {
		u, err := url.Parse(storetest.PostgresDSN(t))
		require.NoError(t, err)
		db = newCutProxy(t, u.Host)
		u.Host = db.addr()
		cfg.DatabaseURL = u.String()
	}
	a, err := app.Open(ctx, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer a.Close()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	envl, err := json.Marshal(sealed(t, a, nil))
	require.NoError(t, err)
	eligibility := `{"patient_data": ` + string(envl) + `, "procedure_code": "PROC002"}`

	health := func() (int, string) { return within(t, "GET", ts.URL+"/health", nil) }
	status, body := health()
	require.Equal(t, http.StatusOK, status, body)

	waitFor := func(want int) {
		t.Helper()
		var last string
		require.Eventually(t, func() bool {
			status, body := health()
			last = body
			return status == want
		}, 30*time.Second, 50*time.Millisecond, "GET /health never answered %d; last: %s", want, last)
		if want == http.StatusServiceUnavailable {
			assert.JSONEq(t, `{"detail":"Service temporarily unavailable"}`, last)
		}
	}
	unrelated := func() {
		t.Helper()
		for _, path := range []string{"/openapi.json", "/docs", "/status"} {
			status, body := within(t, "GET", ts.URL+path, nil)
			assert.Equal(t, http.StatusOK, status, "GET %s: %s", path, body)
		}
	}

	// The chain is unreachable: 503; eligibility, which needs it, answers
	// 503 at once instead of hanging; the rest answers.
	rpc.setCut(true)
	waitFor(http.StatusServiceUnavailable)
	status, body = within(t, "POST", ts.URL+"/verify-eligibility", strings.NewReader(eligibility))
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.JSONEq(t, `{"detail":"Service temporarily unavailable"}`, body)
	unrelated()
	rpc.setCut(false)
	waitFor(http.StatusOK)
	// The chain stalls (connections accepted, never answered): the check's
	// own deadline turns it into 503, and nothing else waits for it.
	rpc.setHung(true)
	waitFor(http.StatusServiceUnavailable)
	unrelated()
	rpc.setHung(false)
	waitFor(http.StatusOK)
	status, body = within(t, "POST", ts.URL+"/verify-eligibility", strings.NewReader(eligibility))
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"zk_proof_verified":true`)

	if db == nil {
		t.Log("PostgreSQL part skipped: " + storetest.PostgresEnv + " is not set")
		return
	}
	// The database is unreachable, then stalls: 503 each time, and back.
	db.setCut(true)
	waitFor(http.StatusServiceUnavailable)
	unrelated()
	db.setCut(false)
	waitFor(http.StatusOK)
	db.setHung(true)
	waitFor(http.StatusServiceUnavailable)
	unrelated()
	db.setHung(false)
	waitFor(http.StatusOK)
	// The pool serves writes again (a key is a database row).
	req, err := http.NewRequestWithContext(ctx, "POST", ts.URL+"/auth/keys", strings.NewReader(`{"name":"after-the-cut"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+cfg.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
}
