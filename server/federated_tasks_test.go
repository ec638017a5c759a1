package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// diagnosisDefinition is the built-in diagnosis task as a task body under
// another id, so the synthetic cohorts train it.
func diagnosisDefinition(id string) client.TaskDefinition {
	t := federated.DefaultTask()
	d := client.TaskDefinition{ID: id, Label: api.TaskLabel{Positive: t.Labels.Positive, Negative: t.Labels.Negative},
		Model: api.TaskModel{Type: t.Model.Type, L2: t.Model.L2}, LearningRate: t.Training.LearningRate, LocalEpochs: t.Training.Epochs,
		ReferenceDate: t.ReferenceDate, ClampZ: t.ClampZ}
	for _, f := range t.Features {
		d.Features = append(d.Features, api.TaskFeature{Name: f.Name, Mean: f.Mean, Scale: f.Scale})
	}
	return d
}

// TestFederatedTasksOverHTTP: an admin creates a task beside the default
// one; bad bodies are 400 naming the field, a taken id 409, a non-admin
// 403. Three hospitals train a round of the created task through its
// scoped endpoints: its budget is spent, the default task's is not, and
// the task is back, round and budget, after a restart.
func TestFederatedTasksOverHTTP(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		base := federated.RunSettings{Privacy: true, Epsilon: 8, Delta: 1e-5, ClipNorm: 1, Rounds: 4, MinParticipants: 3, RoundTimeout: time.Hour}
		cfg := base.Config(federated.DefaultTask())
		s := newFedServerWith(t, db, cfg, nil, nil, func(f *server.FederatedAPI) { f.Run = base }, app.WithTasks(base))
		orgs := []string{"hospital-a", "hospital-b", "hospital-c"}
		s.register(t, orgs...)
		admin := s.client(t, "admin")

		eps, rounds := 5.0, 3
		created, err := admin.CreateFederatedTask(ctx, client.FederatedTaskRequest{
			Task: diagnosisDefinition("diagnosis/v2"), Settings: &client.FederatedRunSettings{Epsilon: &eps, Rounds: &rounds}})
		require.NoError(t, err)
		assert.Equal(t, "diagnosis/v2", created.ID)
		assert.Equal(t, "api", created.Source)
		assert.False(t, created.Default)
		assert.NotNil(t, created.CreatedAt)
		assert.Equal(t, 3, created.MaxRounds)
		assert.Equal(t, 5.0, created.Privacy.Epsilon)
		assert.Equal(t, 8, int(s.mustTask(t, "").Privacy.Epsilon), "the default task keeps its budget")

		for name, tc := range map[string]struct {
			org    string
			body   string
			status int
			detail string
		}{
			"fail/taken":     {"admin", `{"task": ` + mustJSON(t, diagnosisDefinition("diagnosis/v2")) + `}`, 409, `Conflict: the federated task "diagnosis/v2" runs already`},
			"fail/default":   {"admin", `{"task": ` + mustJSON(t, diagnosisDefinition("diagnosis/v1")) + `}`, 409, `Conflict: the federated task "diagnosis/v1" runs already (the default task)`},
			"fail/not-admin": {"hospital-a", `{"task": ` + mustJSON(t, diagnosisDefinition("x")) + `}`, 403, "Forbidden: Insufficient permissions"},
			"fail/no-task":   {"admin", `{}`, 400, "Invalid request format: missing field 'task'"},
			"fail/scale":     {"admin", `{"task": {"id": "y", "features": [{"name": "a", "mean": 0, "scale": 0}], "label": {"positive": "1", "negative": "0"}, "model": {"type": "logistic_regression"}, "learning_rate": 0.5, "local_epochs": 1}}`, 400, "Validation error: field 'task.features[0].scale' must be a positive number"},
			"fail/epsilon":   {"admin", `{"task": ` + mustJSON(t, diagnosisDefinition("z")) + `, "settings": {"epsilon": -1}}`, 400, "Validation error: field 'settings.epsilon' must be a number in (0, 100]"},
			"fail/min":       {"admin", `{"task": ` + mustJSON(t, diagnosisDefinition("z")) + `, "settings": {"min_participants": 2}}`, 400, "Validation error: field 'settings.min_participants' must be a whole number of at least 3"},
			"fail/delta":     {"admin", `{"task": ` + mustJSON(t, diagnosisDefinition("z")) + `, "settings": {"delta": 1}}`, 400, "Validation error: field 'settings.delta' must be a number in (0, 1)"},
			"fail/timeout":   {"admin", `{"task": ` + mustJSON(t, diagnosisDefinition("z")) + `, "settings": {"round_timeout_seconds": 0}}`, 400, "Validation error: field 'settings.round_timeout_seconds' must be from 1 to 604800"},
			"fail/noise":     {"admin", `{"task": ` + mustJSON(t, diagnosisDefinition("z")) + `, "settings": {"dp_noise": "local"}}`, 400, "Validation error: field 'settings.dp_noise' must be central or distributed"},
			"fail/typo":      {"admin", `{"task": ` + mustJSON(t, diagnosisDefinition("z")) + `, "setings": {}}`, 400, "Validation error: unknown field 'setings'"},
		} {
			status, detail := s.post(t, tc.org, "/api/v1/federated/tasks", tc.body)
			assert.Equal(t, tc.status, status, name)
			assert.Contains(t, detail, tc.detail, name)
		}

		noise := "distributed"
		d3, err := admin.CreateFederatedTask(ctx, client.FederatedTaskRequest{
			Task: diagnosisDefinition("diagnosis/v3"), Settings: &client.FederatedRunSettings{DPNoise: &noise}})
		require.NoError(t, err)
		assert.Equal(t, "distributed", d3.Privacy.Noise, "the participants add the noise of this task")
		assert.Equal(t, "central", created.Privacy.Noise)

		list, err := client.All(s.client(t, "hospital-a").ListFederatedTasks(ctx))
		require.NoError(t, err)
		require.Len(t, list, 3)
		second, err := s.client(t, "hospital-a").ListFederatedTasksPage(ctx, 1, 1)
		require.NoError(t, err)
		require.Len(t, second.Items, 1)
		assert.Equal(t, "diagnosis/v2", second.Items[0].ID, "a page of one, from the second")
		assert.Equal(t, 3, second.Total)
		assert.Equal(t, "diagnosis/v1", list[0].ID)
		assert.True(t, list[0].Default)
		assert.Equal(t, "diagnosis/v2", list[1].ID)
		_, err = s.client(t, "hospital-a").ForFederatedTask("none").FederatedTask(ctx)
		var ce *client.Error
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, http.StatusNotFound, ce.StatusCode)

		// A round of the created task, through its scoped endpoints.
		task, err := federated.ParseTaskFileBytes([]byte(mustJSON(t, created.Definition)))
		require.NoError(t, err)
		assert.Equal(t, created.TaskHash, task.Task().Hash())
		s.runRound(t, "diagnosis/v2", cohortParticipants(t, orgs, task.Task(), 200, 11))
		v2 := s.mustTask(t, "diagnosis/v2")
		assert.Equal(t, 1, v2.Privacy.RoundsReleased)
		assert.Greater(t, v2.Privacy.EpsilonSpent, 0.0)
		assert.InDelta(t, 5, v2.Privacy.EpsilonSpent+v2.Privacy.EpsilonRemaining, 1e-9)
		def := s.mustTask(t, "")
		assert.Zero(t, def.Privacy.EpsilonSpent, "the default task spent nothing")
		assert.Equal(t, 0, def.CurrentRound)
		m, err := s.client(t, "hospital-a").ForFederatedTask("diagnosis/v2").FederatedModel(ctx)
		require.NoError(t, err)
		assert.Equal(t, "1.0.1", m.ModelVersion)

		// A restart reopens the created task where it stopped.
		require.NoError(t, s.fed.Close())
		s2 := newFedServerWith(t, db, cfg, s.kr, s.keys, func(f *server.FederatedAPI) { f.Run = base }, app.WithTasks(base))
		again := s2.mustTask(t, "diagnosis/v2")
		assert.Equal(t, v2.Privacy.EpsilonSpent, again.Privacy.EpsilonSpent)
		assert.Equal(t, 1, again.CurrentRound)
		assert.Equal(t, "api", again.Source)
	})
}

// mustTask reads a task ("" : the default) as hospital-a.
func (s *fedServer) mustTask(t *testing.T, id string) *client.FederatedTask {
	t.Helper()
	task, err := s.client(t, "hospital-a").ForFederatedTask(id).FederatedTask(t.Context())
	require.NoError(t, err)
	return task
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// post sends body to path with org's key and returns the status and the
// detail of an error.
func (s *fedServer) post(t *testing.T, org, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.keys[org])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Detail string `json:"detail"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Detail
}
