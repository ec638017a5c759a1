package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// TestCrashRecovery runs the server (this test binary re-executed as the
// command, see TestServeChild), drives it with concurrent writes (API keys
// created with the ADMIN_TOKEN, eligibility checks whose webhook events queue
// behind a receiver that does not answer, federated submissions entering a
// round, one of them in flight at the kill), kills it with SIGKILL in the
// middle, checks the database, restarts it on the same DATA_DIR and
// database, and asserts that every acknowledged write survived: each key
// authenticates, exactly the acknowledged federated submissions are in
// their round, the audit log's hash chain verifies and holds every
// acknowledged access, and each acknowledged eligibility check's event is
// delivered, signed, the deliveries interrupted by the crash under the
// webhook-id they had before. SQLite always; PostgreSQL (a fresh schema)
// when HEALTHAGENTS_TEST_POSTGRES is set.
//
// The two databases' runs go at once in the test's one parallel slot
// (t.Run from two goroutines): as parallel subtests they waited for two
// slots after the test's own, and they mostly wait (server starts, the
// lease).
//
// Declared in z_longest_test.go.
func crashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and kills server processes")
	}
	t.Parallel()
	backends := []struct{ name, url string }{{"sqlite", ""}}
	if os.Getenv(storetest.PostgresEnv) != "" {
		backends = append(backends, struct{ name, url string }{"postgres", storetest.PostgresDSN(t)})
	}
	var wg sync.WaitGroup
	for _, b := range backends {
		wg.Go(func() { t.Run(b.name, func(t *testing.T) { crashAndRecover(t, b.url) }) })
	}
	wg.Wait()
}

// crashChildEnv marks the re-executed test binary as the server.
const crashChildEnv = "HEALTHAGENTS_TEST_CRASH_CHILD"

// crashTimeout is the webhook attempt timeout of the crash test's servers:
// their receiver is on loopback and answers at once after the restart, so
// 3 s instead of the default 10 s (a lease must outlast an attempt).
const crashTimeout = 3 * time.Second

// crashLease is their webhook lease: the attempt timeout and
// webhook.LeaseMargin (recording the attempt, clock leeway), which no
// dispatcher goes below, and 2 s for the claim itself (a dispatcher does
// not start an attempt that could outlast its lease: one whose claim took
// longer waits for the next). 20 s instead of the default 40 s.
const crashLease = crashTimeout + webhook.LeaseMargin + 2*time.Second

// TestServeChild is the server process TestCrashRecovery starts and kills:
// the command's own run("serve"), configured by the environment it was
// given. (Re-executing the test binary instead of `go build`ing the command
// saves a link of about 30 s per run; the code that runs is the same.)
func TestServeChild(t *testing.T) {
	if os.Getenv(crashChildEnv) == "" {
		t.Skip("started by TestCrashRecovery")
	}
	err := run(context.Background(), []string{"serve"}, os.Getenv, nil, io.Discard, os.Stderr)
	t.Fatalf("serve returned: %v", err) // it runs until killed
}

// acked records what the server acknowledged (2xx) and what was attempted.
type acked struct {
	mu                sync.Mutex
	keys              []string
	patients          []string
	patientsTried     map[string]bool
	orgs, orgsTried   []string
	eligibilityErrors []string
}

func (a *acked) add(list *[]string, v string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	*list = append(*list, v)
}

func (a *acked) counts() (keys, patients, orgs int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.keys), len(a.patients), len(a.orgs)
}

// delivery is one webhook request the receiver answered 2xx.
type delivery struct {
	id        string
	patientID string
	signed    bool
}

// crashReceiver is the webhook endpoint: while hanging it holds every
// delivery open (so events queue and the first ones are in flight when the
// server dies); afterwards it accepts them.
type crashReceiver struct {
	*httptest.Server
	hanging atomic.Bool
	secret  atomic.Value // string
	// heldAgain: a webhook-id was held a second time (its retry); when
	// that attempt times out, the next is minutes away.
	heldAgain atomic.Bool

	mu        sync.Mutex
	held      map[string]bool // webhook-ids seen while hanging
	firstHeld time.Time       // when the first was
	delivered []delivery
}

func newCrashReceiver(t *testing.T) *crashReceiver {
	rc := &crashReceiver{held: map[string]bool{}}
	rc.hanging.Store(true)
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.Header.Get("webhook-id")
		if rc.hanging.Load() {
			rc.mu.Lock()
			if rc.held[id] {
				rc.heldAgain.Store(true)
			}
			rc.held[id] = true
			if rc.firstHeld.IsZero() {
				rc.firstHeld = time.Now()
			}
			rc.mu.Unlock()
			<-r.Context().Done() // until the sender dies
			return
		}
		var p struct {
			Data struct {
				PatientID string `json:"patient_id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &p)
		secret, _ := rc.secret.Load().(string)
		rc.mu.Lock()
		rc.delivered = append(rc.delivered, delivery{id: id, patientID: p.Data.PatientID, signed: verifySignature(secret, r.Header, body)})
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// verifySignature checks a Standard Webhooks signature with secret.
func verifySignature(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)))
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, s := range strings.Fields(h.Get("webhook-signature")) {
		if v, sig, ok := strings.Cut(s, ","); ok && v == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

// process is a running server.
type process struct {
	cmd  *exec.Cmd
	url  string
	logs *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServer runs the server with env and waits for its listening address, which
// it logs as {"msg":"healthagents listening","addr":"http://..."}.
func startServer(t *testing.T, env []string) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeChild$")
	cmd.Env = append(append(slices.Clip(env), crashChildEnv+"=1"), clitest.HarnessEnv(t)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &process{cmd: cmd, logs: &lockedBuffer{}}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			fmt.Fprintf(p.logs, "%s\n", line)
			var m struct{ Msg, Addr string }
			if json.Unmarshal(line, &m) == nil && m.Msg == "healthagents listening" {
				addr <- m.Addr
			}
		}
	}()
	select {
	case p.url = <-addr:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the server did not start; its log:\n%s", p.logs.String())
	}
	return p
}

// kill sends SIGKILL and reaps the process.
func (p *process) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	_ = p.cmd.Wait()
}

var crashClient = &http.Client{Timeout: 30 * time.Second}

// call sends a JSON request and returns the status and body.
func call(ctx context.Context, method, url, bearer string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := crashClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// mustCall is call for requests that must succeed with want.
func mustCall(t *testing.T, method, url, bearer string, body any, want int) []byte {
	t.Helper()
	status, out, err := call(t.Context(), method, url, bearer, body)
	require.NoError(t, err)
	require.Equal(t, want, status, "%s %s: %s", method, url, out)
	return out
}

func createKey(ctx context.Context, base, admin string, req map[string]any) (string, int, error) {
	status, out, err := call(ctx, "POST", base+"/auth/keys", admin, req)
	if err != nil || status != http.StatusOK {
		return "", status, err
	}
	var k struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal(out, &k); err != nil || k.APIKey == "" {
		return "", status, fmt.Errorf("key creation answered %s", out)
	}
	return k.APIKey, status, nil
}

// crashRecord is a covered patient with a diagnosis label (usable both for
// eligibility and for federated training).
func crashRecord(id string, i int) []byte {
	r := &record.Record{
		Schema: record.Schema, PatientID: id, BirthDate: "1968-04-02",
		Coverage: &record.Coverage{
			PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789",
			Status: "active", Start: "2026-01-01", End: "2027-12-31",
			Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		},
		Observations: map[string]float64{"glucose": float64(90 + 7*i), "bmi": float64(22 + i%12)},
		Diagnosis:    map[bool]string{true: "positive", false: "negative"}[i%2 == 0],
	}
	b, err := r.Marshal()
	if err != nil {
		panic(err)
	}
	return b
}

func crashAndRecover(t *testing.T, databaseURL string) {
	dataDir := zkkeys.DataDir(t)
	fernet, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(fernet)
	require.NoError(t, err)
	admin := "crash-admin-" + hex.EncodeToString([]byte(t.Name()))
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dataDir, "HOST=127.0.0.1", "PORT=0", "LOG_LEVEL=info",
		"DATA_DIR=" + dataDir, "ADMIN_TOKEN=" + admin, "FERNET_KEY=" + fernet, "DATABASE_URL=" + databaseURL,
		// Crash safety, not load shedding, is under test: on a loaded machine
		// the default gate (GOMAXPROCS proofs, 500 ms queue) would shed the
		// federated submission that runs beside two eligibility workers.
		"MAX_IN_FLIGHT=16",
		// The deliveries the killed server had claimed are attempted again
		// once their lease runs out, which the restarted server waits for:
		// crashLease instead of the default 40 s.
		clitest.WebhookLeaseEnv + "=" + crashLease.String(),
		clitest.WebhookTimeoutEnv + "=" + crashTimeout.String(),
	}
	seal := func(id string, i int) *cipher.Envelope {
		e, err := cipher.Seal(id, crashRecord(id, i), kr)
		require.NoError(t, err)
		return &e
	}
	rc := newCrashReceiver(t)

	srv := startServer(t, env)
	// The tenant whose eligibility checks emit events, and its endpoint.
	clinic, status, err := createKey(t.Context(), srv.url, admin, map[string]any{
		"name": "clinic", "tier": "enterprise", "organization": "clinic-w", "scopes": []string{"eligibility", "webhooks"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	var ep struct{ ID, Secret string }
	require.NoError(t, json.Unmarshal(mustCall(t, "POST", srv.url+"/webhooks", clinic,
		map[string]any{"url": rc.URL + "/hook", "events": []string{"eligibility.verified"}}, http.StatusCreated), &ep))
	rc.secret.Store(ep.Secret)
	fedKeys := map[string]string{}
	for _, org := range []string{"fed-a", "fed-b"} {
		fedKeys[org], status, err = createKey(t.Context(), srv.url, admin, map[string]any{
			"name": org, "tier": "enterprise", "organization": org, "scopes": []string{"federated"}})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
	}
	fedBatch := make([]*cipher.Envelope, 8)
	for i := range fedBatch {
		fedBatch[i] = seal(fmt.Sprintf("PT-FED-%d", i), i)
	}

	// The load: it runs until the kill makes every request fail.
	var (
		got  = &acked{patientsTried: map[string]bool{}}
		wg   sync.WaitGroup
		seq  atomic.Int64
		ctx  = t.Context()
		dead atomic.Bool
	)
	submit := func(org string) {
		got.add(&got.orgsTried, org)
		status, out, err := call(ctx, "POST", srv.url+"/submit-federated-update", fedKeys[org],
			map[string]any{"patient_data_list": fedBatch, "round_number": 0})
		switch {
		case err == nil && status == http.StatusOK:
			got.add(&got.orgs, org)
		case err == nil && !dead.Load():
			t.Errorf("federated submission of %s: %d %s", org, status, out)
		}
	}
	for range 2 { // key creation
		wg.Go(func() {
			for !dead.Load() {
				n := seq.Add(1)
				key, status, err := createKey(ctx, srv.url, admin, map[string]any{
					"name": fmt.Sprint("load-", n), "tier": "enterprise", "scopes": []string{"webhooks"}})
				switch {
				case err == nil && status == http.StatusOK:
					got.add(&got.keys, key)
				case err == nil && !dead.Load():
					t.Errorf("key creation answered %d", status)
				case err != nil && !dead.Load():
					t.Errorf("key creation: %v", err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	for w := range 2 { // eligibility checks, each a distinct patient
		wg.Go(func() {
			for i := 0; !dead.Load(); i++ {
				id := fmt.Sprintf("PT-CRASH-%d-%d", w, i)
				env := seal(id, i)
				got.mu.Lock()
				got.patientsTried[id] = true
				got.mu.Unlock()
				status, out, err := call(ctx, "POST", srv.url+"/verify-eligibility", clinic,
					map[string]any{"patient_data": env, "procedure_code": "PROC001"})
				switch {
				case err == nil && status == http.StatusOK:
					got.add(&got.patients, id)
				case err == nil && !dead.Load():
					got.add(&got.eligibilityErrors, fmt.Sprintf("%d %s", status, out))
				}
			}
		})
	}
	wg.Go(func() { submit("fed-a") })

	// Kill once every kind of write has been acknowledged at least once
	// and the receiver holds a delivery open, with the second federated
	// submission sent just before. The held deliveries bound the wait: one
	// fails after the crashTimeout and is retried (and held) about 5 s
	// later; a second failure would put its next attempt 5 min away, past
	// the wait after the restart. So the kill comes at the latest when a
	// webhook-id is held the second time (crashTimeout before that attempt
	// can fail; no other delivery has failed twice by then), whatever the
	// counts (each is at least one by then on any machine that got that
	// far; the assertions below say so if not). Before a first hold, the
	// service's start and first answers may take long on a busy machine:
	// up to two minutes.
	firstHeld := func() time.Time {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return rc.firstHeld
	}
	waitFrom := time.Now()
	for {
		k, p, o := got.counts()
		first := firstHeld()
		if !first.IsZero() && (k >= 5 && p >= 3 && o >= 1 || rc.heldAgain.Load()) {
			break
		}
		if first.IsZero() && time.Since(waitFrom) > 2*time.Minute {
			t.Fatalf("no webhook delivery reached the receiver in two minutes (%d keys, %d eligibility checks, %d federated submissions acknowledged)", k, p, o)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The second federated submission is in flight at the kill: its
	// request is sent but for the last byte of its body, which only
	// follows the kill, so the server cannot have acknowledged or entered
	// it, whatever the timing.
	got.add(&got.orgsTried, "fed-b")
	inFlight := inFlightRequest(t, srv.url+"/submit-federated-update", fedKeys["fed-b"],
		map[string]any{"patient_data_list": fedBatch, "round_number": 0})
	dead.Store(true)
	srv.kill(t)
	require.Error(t, inFlight(), "a request cut off by the kill has no answer")
	wg.Wait()
	keys, patients, orgs := got.counts()
	t.Logf("acknowledged before SIGKILL: %d keys, %d eligibility checks (%d tried), %d federated submissions (%d tried)",
		keys, patients, len(got.patientsTried), orgs, len(got.orgsTried))
	require.Empty(t, got.eligibilityErrors, "eligibility refusals before the kill")
	require.NotZero(t, keys)
	require.NotZero(t, patients)
	require.NotZero(t, orgs)

	// The database after the crash: intact, fully migrated.
	dsn := databaseURL
	if dsn == "" {
		dsn = filepath.Join(dataDir, "healthagents.db")
	}
	pseudonymKey := checkDatabase(t, dsn, kr)

	// Restart on the same database with the receiver up.
	rc.hanging.Store(false)
	restarted := time.Now()
	srv = startServer(t, env)

	// Every acknowledged key authenticates.
	for _, k := range got.keys {
		mustCall(t, "GET", srv.url+"/webhooks", k, nil, http.StatusOK)
	}
	// Every acknowledged submission is in round 0, which is still open.
	var st struct {
		FL struct {
			Round        int `json:"current_round"`
			Participants int `json:"participants"`
		} `json:"federated_learning"`
	}
	require.NoError(t, json.Unmarshal(mustCall(t, "GET", srv.url+"/status", "", nil, http.StatusOK), &st))
	assert.Equal(t, 0, st.FL.Round)
	assert.Equal(t, orgs, st.FL.Participants, "the acknowledged submissions are in the round, the one in flight is not")
	for _, org := range got.orgs {
		status, out, err := call(t.Context(), "POST", srv.url+"/submit-federated-update", fedKeys[org],
			map[string]any{"patient_data_list": fedBatch[:1], "round_number": 0})
		require.NoError(t, err)
		assert.Equal(t, http.StatusConflict, status, "%s", out)
		assert.Contains(t, string(out), "already takes part in round 0")
	}

	// The audit log survived whole: its hash chain verifies, and it holds
	// an entry for every acknowledged eligibility check and federated
	// submission (each was written before its answer).
	auditor, status, err := createKey(t.Context(), srv.url, admin, map[string]any{
		"name": "auditor", "tier": "enterprise", "scopes": []string{"keys:admin"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	var verified struct {
		Valid          bool   `json:"valid"`
		Entries        int64  `json:"entries"`
		FirstBrokenSeq *int64 `json:"first_broken_seq"`
	}
	require.NoError(t, json.Unmarshal(mustCall(t, "GET", srv.url+"/api/v1/audit/verify", auditor, nil, http.StatusOK), &verified))
	assert.True(t, verified.Valid, "the audit chain is intact after the crash (first broken: %v)", verified.FirstBrokenSeq)
	assert.GreaterOrEqual(t, verified.Entries, int64(patients+orgs), "every acknowledged access has its entry")
	t.Logf("audit log after the restart: %d entries, chain valid %v", verified.Entries, verified.Valid)

	// Every acknowledged event is delivered, signed, and each delivery held
	// open at the crash again under its webhook-id, once. Deliveries in
	// flight at the crash wait for their lease (crashLease from the claim)
	// to run out.
	// The clinic's pseudonym of a patient: derived from the deployment-wide
	// reference (the audit log's patient_ref) and the owner.
	pseudonym := func(id string) string {
		m := hmac.New(sha256.New, pseudonymKey)
		m.Write([]byte(id))
		return webhook.OwnerPseudonym(hex.EncodeToString(m.Sum(nil)), "org:clinic-w")
	}
	want := map[string]string{} // pseudonym → patient
	for _, id := range got.patients {
		want[pseudonym(id)] = id
	}
	tried := map[string]bool{}
	for id := range got.patientsTried {
		tried[pseudonym(id)] = true
	}
	missing := func() (events []string, ids []string) {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		seenP, seenID := map[string]bool{}, map[string]bool{}
		for _, d := range rc.delivered {
			seenP[d.patientID], seenID[d.id] = true, true
		}
		for p, id := range want {
			if !seenP[p] {
				events = append(events, id)
			}
		}
		for id := range rc.held {
			if !seenID[id] {
				ids = append(ids, id)
			}
		}
		return events, ids
	}
	require.Eventually(t, func() bool {
		e, i := missing()
		return len(e) == 0 && len(i) == 0
	}, 90*time.Second, 50*time.Millisecond, "undelivered after the restart: %v", func() any { e, i := missing(); return [][]string{e, i} }())
	delivered := time.Now()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	assert.NotEmpty(t, rc.held, "a delivery was in flight at the crash")
	accepted := map[string]int{}
	for _, d := range rc.delivered {
		assert.True(t, d.signed, "delivery %s is signed with the endpoint's secret", d.id)
		assert.True(t, tried[d.patientID], "delivery %s is of an eligibility check that was sent", d.id)
		accepted[d.id]++
	}
	// At least once, and no more than that here: a delivery the receiver
	// accepted is recorded before the next claim, so only a crash between
	// the answer and its record could send it twice, and there was none
	// after the restart.
	for id, n := range accepted {
		assert.Equal(t, 1, n, "delivery %s accepted once", id)
	}
	t.Logf("%d deliveries after the restart, %d held open at the crash; all delivered %.1f s after the restart began", len(rc.delivered), len(rc.held), delivered.Sub(restarted).Seconds())
}

// inFlightRequest starts a POST of body and sends all of it but the last
// byte, returning once the rest of the request is on its way; the returned
// func finishes the body and waits for the answer's error (nil if the
// server answered).
func inFlightRequest(t *testing.T, url, bearer string, body any) func() error {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, pr)
	require.NoError(t, err)
	req.ContentLength = int64(len(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+bearer)
	done := make(chan error, 1)
	go func() {
		resp, err := crashClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	_, err = pw.Write(b[:len(b)-1]) // returns once the client has taken it
	require.NoError(t, err)
	return func() error {
		go func() { // the transport may never read it once the connection is gone
			_, _ = pw.Write(b[len(b)-1:])
			_ = pw.Close()
		}()
		return <-done
	}
}

// checkDatabase opens the database the killed server used (as the restart
// will), checks it, and returns the webhook pseudonym key kept in it
// (sealed with the server's Fernet keyring kr).
func checkDatabase(t *testing.T, dsn string, kr *cipher.Keyring) []byte {
	t.Helper()
	ctx := t.Context()
	db, err := store.Open(ctx, dsn)
	require.NoError(t, err, "the database opens after the crash")
	defer db.Close()
	if db.Dialect() == store.SQLite {
		var res string
		require.NoError(t, db.SQL().QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res))
		assert.Equal(t, "ok", res)
		rows, err := db.SQL().QueryContext(ctx, `PRAGMA foreign_key_check`)
		require.NoError(t, err)
		assert.False(t, rows.Next(), "foreign keys hold")
		require.NoError(t, rows.Close())
	}
	files, err := filepath.Glob("../../store/migrations/*.sql")
	require.NoError(t, err)
	versions := map[string]bool{} // a migration may have one file per dialect
	for _, f := range files {
		v, _, _ := strings.Cut(filepath.Base(f), "_")
		versions[v] = true
	}
	var applied, distinct int
	require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations`).Scan(&applied, &distinct))
	assert.Equal(t, len(versions), applied, "every migration applied")
	assert.Equal(t, applied, distinct, "each recorded once")
	var stored string
	require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT value FROM webhook_settings WHERE name = 'pseudonym_key'`).Scan(&stored))
	assert.True(t, strings.HasPrefix(stored, "sealed:"), "the pseudonym key is sealed at rest")
	ws, err := store.NewWebhookStore(db, store.WithKeySealer(kr))
	require.NoError(t, err)
	key, err := ws.PseudonymKey(ctx, nil)
	require.NoError(t, err)
	require.Len(t, key, 32)
	return key
}
