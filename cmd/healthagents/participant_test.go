package main

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
)

// writeCohortCSV writes one synthetic cohort as a hospital's CSV export.
func writeCohortCSV(t *testing.T, path string, c synth.Cohort) {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	require.NoError(t, w.Write([]string{"patient_id", "glucose", "bmi", "age", "systolic_bp", "diagnosis"}))
	for _, r := range synth.Records(c) {
		birth, err := time.Parse("2006-01-02", r.BirthDate)
		require.NoError(t, err)
		age := 2025 - birth.Year() // whole years at the task's reference date 2026-01-01
		f := func(k string) string { return strconv.FormatFloat(r.Observations[k], 'f', -1, 64) }
		require.NoError(t, w.Write([]string{r.PatientID, f("glucose"), f("bmi"), strconv.Itoa(age), f("systolic_bp"), r.Diagnosis}))
	}
	w.Flush()
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
}

// spoilCSV adds 3 rows whose label the task does not know to the CSV at
// path and empties 2 cells (glucose on line 6, bmi on line 11).
func spoilCSV(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	rows[5][1], rows[10][2] = "", "NA"
	for i, label := range []string{"pending", "flu", "pending"} {
		rows = append(rows, []string{fmt.Sprintf("X-%d", i), "100", "25", "40", "120", label})
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	require.NoError(t, w.WriteAll(rows))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
}

// Three `healthagents participant` processes (in-process, over HTTP) train
// two rounds against a served coordinator, each from its own CSV.
func TestParticipantCommandOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	t.Parallel() // its rounds wait on polling: the package's other tests run meanwhile
	dir := zkkeys.DataDir(t)
	// The built-in task as a task file whose empty cells are imputed as the
	// mean (missing: mean); the same file saying missing: refuse is a
	// hospital's local copy (the task's hash is the same).
	tf, err := builtinTaskFile()
	require.NoError(t, err)
	taskPath, refusePath := filepath.Join(dir, "task.json"), filepath.Join(dir, "task-refuse.json")
	for path, missing := range map[string]string{taskPath: "mean", refusePath: "refuse"} {
		tf.Missing = missing
		b, err := json.Marshal(tf)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o600))
	}
	settings := env(map[string]string{"DATA_DIR": dir, "HOST": "127.0.0.1", "PORT": "0", "ADMIN_TOKEN": "participant-test-admin-token-0123456789",
		"FEDERATED_TASK": taskPath})
	cfg, err := app.ConfigFromEnv(settings)
	require.NoError(t, err)
	cfg.ProofTimeout = testProofTimeout
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var serveLogs bytes.Buffer
	go func() { done <- serve(ctx, cfg, newLogger(&serveLogs, cfg.LogLevel), ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("server did not start")
	}
	base := "http://" + addr
	admin, err := client.New(base, client.WithAPIKey("participant-test-admin-token-0123456789"))
	require.NoError(t, err)

	cohorts := synth.ThreeCohorts(150, 81)
	var reader *client.Client
	var lastKey string
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 3)
	errs := make([]error, 3)
	for i, c := range cohorts {
		org := fmt.Sprintf("hospital-%c", 'a'+i)
		k, err := admin.CreateKey(ctx, &client.CreateKeyRequest{Name: org, Scopes: []string{"federated"}, Organization: org})
		require.NoError(t, err)
		orgClient, err := client.New(base, client.WithAPIKey(k.APIKey))
		require.NoError(t, err)
		reader, lastKey = orgClient, k.APIKey
		path := filepath.Join(dir, org+".csv")
		writeCohortCSV(t, path, c)
		switch i {
		case 0:
			// Registered by hand with a key of its own: left as it is.
			pub, err := ecdh.X25519().GenerateKey(rand.Reader)
			require.NoError(t, err)
			_, err = orgClient.RegisterFederatedOrganization(ctx, client.OrganizationRequest{
				OrganizationName: org, Endpoint: "https://" + org + ".example", EncryptionKey: hex.EncodeToString(pub.PublicKey().Bytes()),
			})
			require.NoError(t, err)
		case 1:
			// Provisioned first with `participant init`, which only registers.
			var out bytes.Buffer
			require.NoError(t, run(ctx, []string{"participant", "init", "--server", base, "--api-key", k.APIKey, "--data", path}, settings, nil, &out, &bytes.Buffer{}))
			assert.Contains(t, out.String(), "organization hospital-b registered, X25519 public key ")
			out.Reset()
			require.NoError(t, run(ctx, []string{"participant", "init", "--server", base, "--api-key", k.APIKey, "--data", path}, settings, nil, &out, &bytes.Buffer{}))
			assert.Equal(t, "organization hospital-b is registered already; nothing to do\n", out.String())
		}
		// hospital-c registers itself when it starts.
		if i == 2 {
			// Hospital C's export has 3 rows with a label value the task
			// does not know and 2 empty cells (see the refusal below).
			spoilCSV(t, path)
		}
		args := []string{"participant", "--server", base, "--api-key", k.APIKey, "--org", org, "--data", path, "--poll", "1s", "--rounds", "2"}
		wg.Go(func() { errs[i] = run(ctx, args, settings, nil, &outs[i], &bytes.Buffer{}) })
	}
	wg.Wait()
	// A task the server does not run: one clear line before anything else.
	var noOut bytes.Buffer
	err = run(ctx, []string{"participant", "--server", base, "--api-key", lastKey, "--org", "hospital-c",
		"--data", filepath.Join(dir, "hospital-c.csv"), "--task", "no-such/v1"}, settings, nil, &noOut, &bytes.Buffer{})
	require.Error(t, err)
	assert.Equal(t, `participant: the server runs no task "no-such/v1" (GET /api/v1/federated/tasks lists them)`, err.Error())
	// With a local copy of the task file saying missing: refuse, hospital
	// C refuses before any round, with the counts and the values.
	var refusedOut bytes.Buffer
	err = run(ctx, []string{"participant", "--server", base, "--api-key", lastKey, "--data", filepath.Join(dir, "hospital-c.csv"),
		"--task-file", refusePath, "--state", filepath.Join(dir, "refused.state")}, settings, nil, &refusedOut, &bytes.Buffer{})
	require.Error(t, err)
	assert.Equal(t, "participant: "+filepath.Join(dir, "hospital-c.csv")+`: data: 153 rows read, 148 used, 5 skipped (3 with a label value the task does not know ("flu", "pending"; the task's: "positive", "negative"); `+
		`2 with an empty cell (line 6 column "glucose", line 11 column "bmi") while the task file says missing: refuse): `+
		"refused: the task file says missing: refuse (say mean or zero to impute, or complete the data)", err.Error())
	assert.NotContains(t, refusedOut.String(), "round 0")
	// Under the server's missing: mean, hospital C trains on the rows it
	// can use and said so before its first round.
	assert.Contains(t, outs[2].String(), `data: 153 rows read, 150 used, 3 skipped (3 with a label value the task does not know ("flu", "pending"; the task's: "positive", "negative")); 2 empty cells imputed as the feature's mean (missing: mean)`+"\n")
	assert.Less(t, strings.Index(outs[2].String(), "data: 153 rows read"), strings.Index(outs[2].String(), "round 0 closed"))
	for i := range outs {
		require.NoError(t, errs[i], outs[i].String())
		out := outs[i].String()
		st, err := loadParticipantState(filepath.Join(dir, fmt.Sprintf("hospital-%c.csv.participant.json", 'a'+i)))
		require.NoError(t, err)
		fi, err := os.Stat(filepath.Join(dir, fmt.Sprintf("hospital-%c.csv.participant.json", 'a'+i)))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the state file may hold the organization's private key")
		if i == 0 {
			assert.Empty(t, st.PrivateKey, "registered by hand: no key made")
			assert.NotContains(t, out, "registered, X25519")
		} else {
			priv, err := hex.DecodeString(st.PrivateKey)
			require.NoError(t, err)
			k, err := ecdh.X25519().NewPrivateKey(priv)
			require.NoError(t, err)
			pub := hex.EncodeToString(k.PublicKey().Bytes())
			if i == 2 {
				assert.Contains(t, out, "organization hospital-c registered, X25519 public key "+pub)
			}
		}
		assert.NotEmpty(t, st.TaskHash, "a state written by init learns its task")
		assert.Contains(t, out, "round 0 closed: model 1.0.1 from 3 organizations")
		assert.Contains(t, out, "round 1 closed: model 1.0.2 from 3 organizations")
		assert.Contains(t, out, "local held-out accuracy")
	}
	m, err := reader.FederatedModel(ctx)
	require.NoError(t, err)
	assert.Equal(t, "1.0.2", m.ModelVersion)
	assert.NotContains(t, serveLogs.String(), `"status":429`, "the polling fits the key's rate class")

	// The trained model leaves the service: as ONNX (the bytes the API
	// gives) and as its JSON answer.
	want, err := reader.FederatedModelONNX(ctx)
	require.NoError(t, err)
	var exported bytes.Buffer
	require.NoError(t, run(ctx, []string{"model", "export", "--server", base, "--api-key", lastKey, "--out", "-"}, settings, nil, &exported, &bytes.Buffer{}))
	assert.Equal(t, want, exported.Bytes())
	jsonPath := filepath.Join(dir, "model.json")
	var said bytes.Buffer
	require.NoError(t, run(ctx, []string{"model", "export", "--server", base, "--api-key", lastKey, "--format", "json", "--out", jsonPath}, settings, nil, &said, &bytes.Buffer{}))
	assert.Contains(t, said.String(), "model 1.0.2 written to "+jsonPath)
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	var fromFile client.GlobalModel
	require.NoError(t, json.Unmarshal(b, &fromFile))
	assert.Equal(t, m.WeightValues, fromFile.WeightValues)
	assert.Equal(t, "1.0.2", fromFile.ModelVersion)
	cancel()
	require.NoError(t, <-done)
}

func TestParticipantFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"no server": {"participant", "--api-key", "k", "--org", "o", "--data", "d.csv"},
		"no key":    {"participant", "--server", "http://x", "--org", "o", "--data", "d.csv"},
		"long wait": {"participant", "--server", "http://x", "--api-key", "k", "--data", "d.csv", "--wait", "60s"},
		"no data":   {"participant", "--server", "http://x", "--api-key", "k", "--org", "o"},
		"fast poll": {"participant", "--server", "http://x", "--api-key", "k", "--org", "o", "--data", "d.csv", "--poll", "100ms"},
		"no file":   {"participant", "--server", "http://x", "--api-key", "k", "--org", "o", "--data", filepath.Join(t.TempDir(), "none.csv")},
	} {
		t.Run(name, func(t *testing.T) {
			err := run(t.Context(), args, env(nil), nil, &bytes.Buffer{}, &bytes.Buffer{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "participant")
		})
	}
}

func TestModelExportFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"model"}, "usage: healthagents model export"},
		{[]string{"model", "import"}, "usage: healthagents model export"},
		{[]string{"model", "export", "--api-key", "k"}, "model export: --server (or HEALTHAGENTS_URL) is required"},
		{[]string{"model", "export", "--server", "http://127.0.0.1:1"}, "model export: --api-key (or HEALTHAGENTS_API_KEY) is required"},
		{[]string{"model", "export", "--server", "http://127.0.0.1:1", "--api-key", "k", "--format", "pmml"}, `model export: --format must be onnx or json, not "pmml"`},
		{[]string{"model", "export", "--server", "http://127.0.0.1:1", "--api-key", "k", "extra"}, `model export: unexpected argument "extra"`},
	} {
		err := run(t.Context(), tc.args, env(nil), nil, &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.err)
	}
}

// An abandoned round gets its own line, with why, and is not counted.
func TestReportRoundAbandoned(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	next := &federated.RoundView{Round: 3, Phase: federated.PhaseAdvertiseKeys,
		Previous: &federated.RoundEnd{Round: 2, Outcome: "abandoned", Reason: "2 organizations advertised keys, 3 needed"}}
	m, counted := reportRound(t.Context(), nil, nil, next, client.FederatedPrivacy{}, &out)
	assert.Nil(t, m)
	assert.False(t, counted)
	assert.Equal(t, "round 2 abandoned: 2 organizations advertised keys, 3 needed; not counted; next round 3, phase advertise_keys\n", out.String())
}

// TestParticipantHarnessKnownKeys: with the test cache's variable a
// participant looks the proving keys it fetches up in the cache
// (normproof.WithKnownKeys); without it, or in production, it does not.
func TestParticipantHarnessKnownKeys(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	given := map[string]string{}
	getenv := func(k string) string { return given[k] }
	known, err := harnessedKnownKeys(getenv, logger)
	require.NoError(t, err)
	assert.Nil(t, known, "no harness")
	given[testCacheEnv] = t.TempDir()
	known, err = harnessedKnownKeys(getenv, logger)
	require.NoError(t, err)
	assert.NotNil(t, known)
	given["HEALTHAGENTS_ENV"] = "production"
	known, err = harnessedKnownKeys(getenv, logger)
	require.NoError(t, err)
	assert.Nil(t, known, "production ignores the test cache")
	given["HEALTHAGENTS_ENV"] = "staging"
	_, err = harnessedKnownKeys(getenv, logger)
	assert.ErrorContains(t, err, "HEALTHAGENTS_ENV", "a value it cannot read is refused, not taken for development")
}
