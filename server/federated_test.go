package server_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/secagg"
	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// fedServer is server.New over the real federated wiring (store-backed
// coordinator, hosted participants, SQL organization registry) and a real
// key service, on one database.
type fedServer struct {
	url  string
	ks   *keyServer // for call()
	kr   *cipher.Keyring
	fed  *app.Federated
	keys map[string]string // organization → raw key ("" : a key bound to none)
	ts   *httptest.Server
}

func testFedConfig() federated.Config {
	return federated.Config{DisablePrivacy: true, RoundTimeout: time.Hour}
}

// newFedServer opens (or, over the same db, reopens) the service. kr and
// keys carry over a restart.
func newFedServer(t testing.TB, db *store.DB, cfg federated.Config, kr *cipher.Keyring, keys map[string]string, tune func(*server.FederatedAPI)) *fedServer {
	t.Helper()
	return newFedServerWith(t, db, cfg, kr, keys, tune)
}

// newFedServerWith is newFedServer with app.OpenFederated's options. Its
// keys include "admin": federated and keys:admin, bound to no organization.
func newFedServerWith(t testing.TB, db *store.DB, cfg federated.Config, kr *cipher.Keyring, keys map[string]string, tune func(*server.FederatedAPI), opts ...app.FederatedOption) *fedServer {
	t.Helper()
	return newFedServerOn(t, nil, db, cfg, kr, keys, tune, opts...)
}

// newFedServerOn is newFedServerWith serving on ln (nil: a new loopback
// listener), for a replica whose address must be known before it opens.
func newFedServerOn(t testing.TB, ln net.Listener, db *store.DB, cfg federated.Config, kr *cipher.Keyring, keys map[string]string, tune func(*server.FederatedAPI), opts ...app.FederatedOption) *fedServer {
	t.Helper()
	ctx := context.Background()
	ks, err := store.NewKeyStore(db)
	require.NoError(t, err)
	keySvc, err := apikey.New(ks)
	require.NoError(t, err)
	t.Cleanup(func() { keySvc.Close(context.Background()) })
	if kr == nil {
		fk, err := cipher.GenerateKey()
		require.NoError(t, err)
		kr, err = cipher.ParseKeyring(fk)
		require.NoError(t, err)
	}
	if keys == nil {
		keys = map[string]string{}
		for _, org := range []string{"hospital-a", "hospital-b", "hospital-c", "hospital-d", ""} {
			raw, _, err := keySvc.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeFederated}, Organization: org})
			require.NoError(t, err)
			keys[org] = raw
		}
		raw, _, err := keySvc.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeEligibility}, Organization: "hospital-e"})
		require.NoError(t, err)
		keys["no-scope"] = raw
		raw, _, err = keySvc.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeFederated, apikey.ScopeKeysAdmin}})
		require.NoError(t, err)
		keys["admin"] = raw
	}
	svc, err := healthagents.New(kr)
	require.NoError(t, err)
	f, err := app.OpenFederated(ctx, db, cfg, nil, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	if tune != nil {
		tune(f.API)
	}
	h, err := server.New(server.Deps{Service: svc, Keys: keySvc, FederatedAPI: f.API, Federated: f.API})
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(h)
	if ln != nil {
		ts.Listener.Close()
		ts.Listener = ln
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return &fedServer{url: ts.URL, ks: &keyServer{url: ts.URL}, kr: kr, fed: f, keys: keys, ts: ts}
}

func (s *fedServer) client(t testing.TB, org string) *client.Client {
	t.Helper()
	c, err := client.New(s.url, client.WithAPIKey(s.keys[org]), client.WithMaxAttempts(1))
	require.NoError(t, err)
	return c
}

func (s *fedServer) register(t *testing.T, orgs ...string) {
	t.Helper()
	for _, org := range orgs {
		_, err := s.client(t, org).RegisterFederatedOrganization(t.Context(), client.OrganizationRequest{
			OrganizationName: "Hospital " + org, Endpoint: "https://" + org + ".example.org/fl", EncryptionKey: x25519Hex(t),
		})
		require.NoError(t, err)
	}
}

func x25519Hex(t testing.TB) string {
	t.Helper()
	k := make([]byte, 32)
	for i := range k {
		k[i] = byte(i*7 + 9)
	}
	return hex.EncodeToString(k)
}

// hospitals prepares participants on the three synthetic cohorts.
func hospitals(t testing.TB, orgs []string, size int) []*federated.Participant {
	t.Helper()
	return cohortParticipants(t, orgs, federated.Task{}, size, 11)
}

// cohortParticipants prepares participants of task (zero: the built-in
// one) on the three synthetic cohorts of size and seed.
func cohortParticipants(t testing.TB, orgs []string, task federated.Task, size int, seed uint64) []*federated.Participant {
	t.Helper()
	var ps []*federated.Participant
	for i, c := range synth.ThreeCohorts(size, seed) {
		p, err := federated.NewParticipant(federated.ParticipantConfig{Org: orgs[i], Task: task}, synth.Records(c))
		require.NoError(t, err)
		ps = append(ps, p)
	}
	return ps
}

// runRound has ps train one round of task ("": the default) over HTTP,
// each with its organization's key, long-polling.
func (s *fedServer) runRound(t *testing.T, task string, ps []*federated.Participant) {
	t.Helper()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() {
			api := s.client(t, p.Org()).ForFederatedTask(task).FederatedRoundAPILongPoll(p.Org(), 5*time.Second)
			_, err := p.RunRound(t.Context(), api, time.Second)
			assert.NoError(t, err, p.Org())
		})
	}
	wg.Wait()
}

// stepAll makes every participant do what the current phase asks.
func stepAll(t *testing.T, s *fedServer, ps []*federated.Participant) {
	t.Helper()
	for _, p := range ps {
		_, err := p.Step(t.Context(), s.client(t, p.Org()).FederatedRoundAPI(p.Org()))
		require.NoError(t, err, p.Org())
	}
}

func TestFederatedV1RoundsOverHTTP(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		s := newFedServer(t, db, testFedConfig(), nil, nil, nil)
		orgs := []string{"hospital-a", "hospital-b", "hospital-c"}

		// Before any round: the initial model, no accuracy.
		m, err := s.client(t, "hospital-a").FederatedModel(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "1.0.0", m.ModelVersion)
		assert.Nil(t, m.Accuracy)
		assert.Equal(t, -1, m.TrainingRound)
		assert.Equal(t, 0, m.OrganizationsContributed)
		w, err := client.DecodeWeights(m)
		require.NoError(t, err)
		assert.Len(t, w, 5)

		// Unregistered organizations may not take part.
		_, err = s.client(t, "hospital-a").FederatedRound(t.Context())
		requireStatus(t, err, 403)
		s.register(t, orgs...)

		ps := hospitals(t, orgs, 300)
		// Round 0 all the way through over HTTP, three remote participants.
		var wg sync.WaitGroup
		for _, p := range ps {
			wg.Go(func() {
				_, err := p.RunRound(t.Context(), s.client(t, p.Org()).FederatedRoundAPI(p.Org()), 5*time.Millisecond)
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		m, err = s.client(t, "hospital-b").FederatedModel(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "1.0.1", m.ModelVersion)
		assert.Equal(t, 0, m.TrainingRound)
		assert.Equal(t, 3, m.OrganizationsContributed)
		require.NotNil(t, m.Accuracy, "round 0 measured the initial model")
		assert.Equal(t, "1.0.0", m.AccuracyModelVersion)

		// Round 1: bad gradients are refused and change nothing; a
		// restart mid-round resumes where it was.
		// RunRound returned at the view of round 1 without joining it.
		stepAll(t, s, ps) // advertise
		stepAll(t, s, ps) // share
		r, err := s.client(t, "hospital-a").FederatedRound(t.Context())
		require.NoError(t, err)
		require.Equal(t, 1, r.Round)
		require.Equal(t, "masked_input", r.Phase)
		require.Len(t, r.Inbox, 2)
		good := secagg.MaskedInput(make([]uint64, r.Dim))
		enc := func(m secagg.MaskedInput) string { b, _ := m.MarshalBinary(); return hex.EncodeToString(b) }
		for name, tc := range map[string]struct {
			body   client.GradientSubmission
			status int
			detail string
		}{
			"closed round": {client.GradientSubmission{OrganizationID: "hospital-a", Round: 0, GradientsEncrypted: enc(good), ModelVersion: "1.0.1"}, 400, "WRONG_ROUND: round 0 requested, the current round is 1"},
			"future round": {client.GradientSubmission{OrganizationID: "hospital-a", Round: 9, GradientsEncrypted: enc(good), ModelVersion: "1.0.1"}, 400, "WRONG_ROUND: round 9 requested, the current round is 1"},
			"stale model":  {client.GradientSubmission{OrganizationID: "hospital-a", Round: 1, GradientsEncrypted: enc(good), ModelVersion: "1.0.0"}, 400, "STALE_MODEL: "},
			"other org":    {client.GradientSubmission{OrganizationID: "hospital-b", Round: 1, GradientsEncrypted: enc(good), ModelVersion: "1.0.1"}, 403, "Forbidden: Insufficient permissions"},
		} {
			_, err := s.client(t, "hospital-a").SubmitFederatedGradients(t.Context(), tc.body)
			e := requireStatus(t, err, tc.status)
			assert.Contains(t, e.Detail, tc.detail, name)
		}
		// A lagging round or model, or another organization's body, changes
		// nothing; a malformed body refuses its sender for the round
		// (TestMalformedGradientsRefuseTheSender).
		r2, err := s.client(t, "hospital-a").FederatedRound(t.Context())
		require.NoError(t, err)
		assert.False(t, r2.Done, "refused bodies changed nothing")
		assert.Equal(t, 3, r2.Participants)

		// Restart: a new coordinator over the same database, a new listener.
		s.ts.Close()
		require.NoError(t, s.fed.Close())
		s = newFedServer(t, db, testFedConfig(), s.kr, s.keys, nil)
		st, err := s.client(t, "hospital-a").Status(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 1, st.FederatedLearning.CurrentRound)
		assert.Equal(t, 3, st.FederatedLearning.Participants)
		assert.Equal(t, "trained", st.Agents.DiagnosisModel)
		stepAll(t, s, ps) // masked input
		_, err = s.client(t, "hospital-a").SubmitFederatedGradients(t.Context(), client.GradientSubmission{OrganizationID: "hospital-a", Round: 1, GradientsEncrypted: enc(good), ModelVersion: "1.0.1"})
		e := requireStatus(t, err, 409)
		assert.True(t, strings.HasPrefix(e.Detail, "WRONG_PHASE: "), e.Detail)
		stepAll(t, s, ps) // unmask: the round closes
		m, err = s.client(t, "hospital-c").FederatedModel(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "1.0.2", m.ModelVersion)
		assert.Equal(t, 1, m.TrainingRound)
		require.NotNil(t, m.Accuracy)
		assert.Equal(t, "1.0.1", m.AccuracyModelVersion)
		assert.Greater(t, *m.Accuracy, 0.6, "one round of training beats chance on held-out records")
		assert.Equal(t, 2, m.CurrentRound)
	})
}

func TestFederatedDropoutOfOneOfFourOverHTTP(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	cfg := testFedConfig()
	cfg.TargetParticipants = 4
	// Long enough that three loaded participants finish each phase inside
	// it (300 ms was not, on a busy 2-core CI machine), short enough to wait
	// out once for the one that drops.
	cfg.PhaseTimeout = 2 * time.Second
	s := newFedServer(t, db, cfg, nil, nil, nil)
	orgs := []string{"hospital-a", "hospital-b", "hospital-c", "hospital-d"}
	s.register(t, orgs...)
	ps := hospitals(t, orgs, 200)
	p4, err := federated.NewParticipant(federated.ParticipantConfig{Org: "hospital-d"}, synth.Records(synth.ThreeCohorts(200, 5)[0]))
	require.NoError(t, err)
	all := append(ps, p4)
	stepAll(t, s, all)     // four advertise
	stepAll(t, s, all)     // four share keys
	stepAll(t, s, all[:3]) // hospital-d drops out before its masked input
	require.Eventually(t, func() bool {
		r, err := s.client(t, "hospital-a").FederatedRound(t.Context())
		return err == nil && r.Phase == "unmasking"
	}, 30*time.Second, 50*time.Millisecond, "the phase deadline moves on without hospital-d")
	stepAll(t, s, all[:3])
	m, err := s.client(t, "hospital-a").FederatedModel(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "1.0.1", m.ModelVersion)
	assert.Equal(t, 3, m.OrganizationsContributed)
}

// sealCohort seals n synthetic records of cohort i.
func sealCohort(t testing.TB, kr *cipher.Keyring, i, n int) []*healthagents.PatientData {
	t.Helper()
	recs := synth.Records(synth.ThreeCohorts(n, 3)[i])
	out := make([]*healthagents.PatientData, len(recs))
	for j, r := range recs {
		out[j] = sealRecord(t, kr, r)
	}
	return out
}

func sealRecord(t testing.TB, kr *cipher.Keyring, r *record.Record) *healthagents.PatientData {
	t.Helper()
	b, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, b, kr)
	require.NoError(t, err)
	return &env
}

func TestSubmitFederatedUpdateHostsParticipants(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		s := newFedServer(t, db, testFedConfig(), nil, nil, nil)
		initial, err := s.client(t, "hospital-a").FederatedModel(t.Context())
		require.NoError(t, err)

		// Anonymous callers are one participant together.
		anon, err := client.New(s.url, client.WithMaxAttempts(1))
		require.NoError(t, err)
		res, err := anon.SubmitFederatedUpdate(t.Context(), sealCohort(t, s.kr, 0, 50), 0)
		require.NoError(t, err)
		assert.Equal(t, 1, res.Participants)
		_, err = anon.SubmitFederatedUpdate(t.Context(), sealCohort(t, s.kr, 1, 50), 0)
		e := requireStatus(t, err, 409)
		assert.Contains(t, e.Detail, "already takes part in round 0")
		// A key bound to no organization counts as anonymous too.
		_, err = s.client(t, "").SubmitFederatedUpdate(t.Context(), sealCohort(t, s.kr, 1, 50), 0)
		requireStatus(t, err, 409)

		unlabelled := *synth.Records(synth.ThreeCohorts(1, 9)[0])[0]
		unlabelled.Diagnosis = ""
		for i, org := range []string{"hospital-a", "hospital-b"} {
			envs := append(sealCohort(t, s.kr, i, 300), sealRecord(t, s.kr, &unlabelled))
			res, err := s.client(t, org).SubmitFederatedUpdate(t.Context(), envs, 0)
			require.NoError(t, err)
			assert.Equal(t, 0, res.Round)
			assert.Equal(t, initial.ModelHash, res.ModelHash)
			assert.Len(t, res.ModelHash, 64)
			assert.Equal(t, 300, res.Records, "the unlabelled record is not counted")
			if i == 0 {
				assert.Equal(t, 2, res.Participants)
			}
		}
		// The third organization completes key advertisement; the hosted
		// participants finish the round on their own.
		require.Eventually(t, func() bool {
			m, err := s.client(t, "hospital-a").FederatedModel(t.Context())
			return err == nil && m.ModelVersion == "1.0.1"
		}, 20*time.Second, 20*time.Millisecond)
		m, err := s.client(t, "hospital-a").FederatedModel(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 3, m.OrganizationsContributed)
		hist, err := s.fed.Coordinator.History(t.Context())
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{server.AnonymousParticipant, "hospital-a", "hospital-b"}, hist[1].Contributors)
		require.Eventually(t, func() bool { return s.fed.Host.Hosted() == 0 }, 10*time.Second, 10*time.Millisecond)

		// Round 0 is closed now.
		_, err = s.client(t, "hospital-c").SubmitFederatedUpdate(t.Context(), sealCohort(t, s.kr, 2, 20), 0)
		e = requireStatus(t, err, 400)
		assert.Equal(t, "Federated learning submission failed: round_number 0 is not the open round; the current round is 1", e.Detail)
	})
}

func TestSubmitFederatedUpdateErrors(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	s := newFedServer(t, db, testFedConfig(), nil, nil, nil)
	otherKey, err := cipher.GenerateKey()
	require.NoError(t, err)
	otherRing, err := cipher.ParseKeyring(otherKey)
	require.NoError(t, err)
	good := sealCohort(t, s.kr, 0, 3)
	foreign := append(sealCohort(t, s.kr, 0, 2), sealCohort(t, otherRing, 1, 1)...)
	tooMany := make([]*healthagents.PatientData, server.MaxFederatedRecords+1)
	for i := range tooMany {
		tooMany[i] = good[0]
	}
	unlabelled := *synth.Records(synth.ThreeCohorts(1, 1)[0])[0]
	unlabelled.Diagnosis = ""
	tampered := *good[1]
	tampered.DataHash = strings.Repeat("0", 64)
	for _, tc := range []struct {
		name   string
		body   any
		status int
		detail string
	}{
		{"wrong round", map[string]any{"patient_data_list": good, "round_number": 4}, 400, "Federated learning submission failed: round_number 4 is not the open round; the current round is 0"},
		{"negative round", map[string]any{"patient_data_list": good, "round_number": -1}, 400, "Validation error: field 'round_number' must be at least 0"},
		{"decryption", map[string]any{"patient_data_list": foreign, "round_number": 0}, 400, "Federated learning submission failed: Decryption failed - check encryption key"},
		{"hash", map[string]any{"patient_data_list": []any{good[0], &tampered}, "round_number": 0}, 400, "Federated learning submission failed: Data hash mismatch"},
		{"too many", map[string]any{"patient_data_list": tooMany, "round_number": 0}, 413, "Federated learning submission failed: 5001 records; at most 5000 are accepted (1000 advised)"},
		{"empty", map[string]any{"patient_data_list": []any{}, "round_number": 0}, 400, "Validation error: field 'patient_data_list' must hold at least one record"},
		{"null record", map[string]any{"patient_data_list": []any{nil}, "round_number": 0}, 400, "Validation error: patient_data_list[0] is null"},
		{"no list", map[string]any{"round_number": 0}, 400, "Invalid request format: missing field 'patient_data_list'"},
		{"no round", map[string]any{"patient_data_list": good}, 400, "Invalid request format: missing field 'round_number'"},
		{"no labels", map[string]any{"patient_data_list": []any{sealRecord(t, s.kr, &unlabelled)}, "round_number": 0}, 400, "Federated learning submission failed: no record carries a diagnosis label of the task to train on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.ks.call(t, "POST", "/submit-federated-update", s.keys["hospital-a"], tc.body)
			assert.Equal(t, tc.status, res.status)
			assert.Equal(t, tc.detail, res.detail())
		})
	}
	st, err := s.fed.Coordinator.Status(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 0, st.Participants, "refused submissions changed nothing")

	// A submission whose work outlasts the deadline: the spec's Timeout.
	slow := newFedServer(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}), testFedConfig(), s.kr, nil,
		func(f *server.FederatedAPI) { f.SubmitTimeout = time.Nanosecond })
	res := slow.ks.call(t, "POST", "/submit-federated-update", "", map[string]any{"patient_data_list": good, "round_number": 0})
	assert.Equal(t, http.StatusInternalServerError, res.status, "spec 4.1: a training error is a 500; the spec has no 504")
	assert.Equal(t, "Federated learning submission failed: Timeout", res.detail())
}

func TestFederatedOrganizationsAndAuth(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	s := newFedServer(t, db, testFedConfig(), nil, nil, nil)
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(200 - i)
	}
	valid := map[string]any{"organization_name": "Hospital A", "endpoint": "https://a.example.org/fl", "encryption_key": base64.StdEncoding.EncodeToString(key)}
	res := s.ks.call(t, "POST", "/api/v1/federated/organizations", s.keys["hospital-a"], valid)
	require.Equal(t, 201, res.status, res.body)
	assert.Equal(t, "hospital-a", res.body["organization_id"])
	assert.Equal(t, hex.EncodeToString(key), res.body["encryption_key"], "Base64 keys are kept as hex")
	valid["organization_name"] = "Hospital A (renamed)"
	res = s.ks.call(t, "POST", "/api/v1/federated/organizations", s.keys["hospital-a"], valid)
	require.Equal(t, 200, res.status)
	assert.Equal(t, "Hospital A (renamed)", res.body["organization_name"])

	with := func(k, v string) map[string]any {
		m := map[string]any{"organization_name": "H", "endpoint": "https://h.example.org", "encryption_key": hex.EncodeToString(key)}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name, token, method, path string
		body                      any
		status                    int
		detail                    string
	}{
		{"no key", "", "POST", "/api/v1/federated/organizations", valid, 401, "Unauthorized: Invalid API key"},
		{"no scope", s.keys["no-scope"], "POST", "/api/v1/federated/organizations", valid, 403, "Forbidden: Insufficient permissions"},
		{"no organization", s.keys[""], "POST", "/api/v1/federated/organizations", valid, 403, "Forbidden: Insufficient permissions - the API key is not bound to an organization"},
		{"bad endpoint", s.keys["hospital-b"], "POST", "/api/v1/federated/organizations", with("endpoint", "ftp://x"), 400, "Validation error: field 'endpoint' must be an http(s) URL with a host and no user info"},
		{"short key", s.keys["hospital-b"], "POST", "/api/v1/federated/organizations", with("encryption_key", strings.Repeat("ab", 31)), 400, "Validation error: field 'encryption_key' must be an X25519 public key: 32 bytes as 64 hex digits or Base64"},
		{"zero key", s.keys["hospital-b"], "POST", "/api/v1/federated/organizations", with("encryption_key", strings.Repeat("00", 32)), 400, "Validation error: field 'encryption_key' must be an X25519 public key: 32 bytes as 64 hex digits or Base64"},
		{"no name", s.keys["hospital-b"], "POST", "/api/v1/federated/organizations", with("organization_name", " "), 400, "Validation error: field 'organization_name' must be 1-200 printable characters"},
		{"missing key", s.keys["hospital-b"], "POST", "/api/v1/federated/organizations", map[string]any{"organization_name": "H", "endpoint": "https://h.example.org"}, 400, "Invalid request format: missing field 'encryption_key'"},
		{"unregistered", s.keys["hospital-b"], "GET", "/api/v1/federated/rounds/current", nil, 403, "Forbidden: Insufficient permissions - the organization is not registered (POST /api/v1/federated/organizations)"},
		{"model needs a key", "", "GET", "/api/v1/federated/model", nil, 401, "Unauthorized: Invalid API key"},
		{"bad round path", s.keys["hospital-a"], "POST", "/api/v1/federated/rounds/x/keys", map[string]any{"cipher_public_key": "00", "mask_public_key": "00"}, 400, "Validation error: round must be an integer of at least 0"},
		{"low-order round key", s.keys["hospital-a"], "POST", "/api/v1/federated/rounds/0/keys", map[string]any{"cipher_public_key": strings.Repeat("00", 32), "mask_public_key": hex.EncodeToString(key)}, 400, "Validation error: X25519 public key of low order"},
		{"short round key", s.keys["hospital-a"], "POST", "/api/v1/federated/rounds/0/keys", map[string]any{"cipher_public_key": "0102", "mask_public_key": hex.EncodeToString(key)}, 400, "INVALID_SUBMISSION: "},
		{"shares in wrong phase", s.keys["hospital-a"], "POST", "/api/v1/federated/rounds/0/shares", map[string]any{"commitment": strings.Repeat("11", 32), "shares": []any{}}, 409, "WRONG_PHASE: "},
		{"reveal bad share", s.keys["hospital-a"], "POST", "/api/v1/federated/rounds/0/reveals", map[string]any{"reveals": []any{map[string]any{"of": "x", "kind": "self_mask", "share": "0001"}}}, 400, "Validation error: field 'reveals.share' is not a Shamir share"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.ks.call(t, tc.method, tc.path, tc.token, tc.body)
			assert.Equal(t, tc.status, res.status, res.body)
			assert.True(t, strings.HasPrefix(res.detail(), tc.detail), "%q", res.detail())
		})
	}
	st, err := s.fed.Coordinator.Status(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 0, st.Participants)
	// Without the federated dependencies the routes exist and answer 503.
	bare := setup(t)
	code, _, body := bare.do(t, "POST", "/submit-federated-update", map[string]any{"patient_data_list": oneEnvelope(t, s), "round_number": 0})
	assert.Equal(t, 503, code)
	assert.Equal(t, "Service temporarily unavailable", body["detail"])
}

func oneEnvelope(t *testing.T, s *fedServer) []*healthagents.PatientData {
	return sealCohort(t, s.kr, 0, 1)
}

// requireStatus asserts err is a *client.Error with status and returns it.
func requireStatus(t testing.TB, err error, status int) *client.Error {
	t.Helper()
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, status, e.StatusCode, e.Detail)
	return e
}

// BenchmarkSubmitFederatedUpdate1000 measures POST /submit-federated-update
// with 1000 sealed records end to end over HTTP: JSON decoding, decryption
// and hash/CID checks of every envelope, record parsing, local data
// preparation and key advertisement into the round.
func BenchmarkSubmitFederatedUpdate1000(b *testing.B) {
	db := storetest.Open(b, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(b)})
	cfg := testFedConfig()
	cfg.TargetParticipants, cfg.MaxParticipants = 100, 100
	s := newFedServer(b, db, cfg, nil, nil, nil)
	envs := sealCohort(b, s.kr, 1, 1000)
	ks, err := store.NewKeyStore(db)
	require.NoError(b, err)
	keySvc, err := apikey.New(ks)
	require.NoError(b, err)
	defer keySvc.Close(context.Background())
	clients := make([]*client.Client, 0, 90)
	for i := range 90 {
		raw, _, err := keySvc.Create(context.Background(), apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeFederated}, Organization: fmt.Sprintf("bench-%d", i)})
		require.NoError(b, err)
		c, err := client.New(s.url, client.WithAPIKey(raw), client.WithMaxAttempts(1))
		require.NoError(b, err)
		clients = append(clients, c)
	}
	if b.N > len(clients) {
		b.Skipf("run with -benchtime=%dx or fewer: each iteration is a new organization in one round", len(clients))
	}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		res, err := clients[i].SubmitFederatedUpdate(context.Background(), envs, 0)
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		if res.Participants != i+1 {
			b.Fatalf("participants %d, want %d", res.Participants, i+1)
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}

// FuzzParseX25519PublicKey: any string either fails or gives 32 bytes of a
// usable key whose hex form parses to the same key.
func FuzzParseX25519PublicKey(f *testing.F) {
	f.Add(strings.Repeat("ab", 32))
	f.Add(strings.Repeat("00", 32))
	f.Add(base64.StdEncoding.EncodeToString(make([]byte, 32)))
	f.Add("not a key")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := server.ParseX25519PublicKey(s)
		if err != nil {
			return
		}
		require.Len(t, k, 32)
		again, err := server.ParseX25519PublicKey(hex.EncodeToString(k))
		require.NoError(t, err)
		require.Equal(t, k, again)
	})
}
