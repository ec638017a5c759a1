package server_test

import (
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestFollowerForwardsTheRoundProtocol: two replicas on one database, each
// advertising its address (REPLICA_URL). Replica A holds the lease; three
// hospitals that only ever call replica B train a whole round, and a task
// an admin creates through A is trained through B too: B forwards the
// round protocol to the coordinating replica instead of answering 503. A
// request already forwarded once is not forwarded again, and once the
// coordinating replica is gone (its lease not yet run out) B answers 503
// with Retry-After.
func TestFollowerForwardsTheRoundProtocol(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		listen := func() (net.Listener, string) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			return ln, "http://" + ln.Addr().String()
		}
		lnA, urlA := listen()
		lnB, urlB := listen()
		dbA, err := store.Open(ctx, b.DSN)
		require.NoError(t, err)
		t.Cleanup(func() { dbA.Close() })
		cfg := testFedConfig()
		base := federated.RunSettings{Epsilon: 8, Delta: 1e-5, ClipNorm: 1, Rounds: 4, MinParticipants: 3, RoundTimeout: time.Hour}
		tune := func(f *server.FederatedAPI) { f.Run = base }
		a := newFedServerOn(t, lnA, dbA, cfg, nil, nil, tune,
			app.WithLeaderLease("replica-a", time.Hour), app.WithReplicaURL(urlA), app.WithTasks(base))
		rb := newFedServerOn(t, lnB, db, cfg, a.kr, a.keys, tune,
			app.WithLeaderLease("replica-b", time.Hour), app.WithReplicaURL(urlB), app.WithTasks(base))
		require.NotNil(t, a.fed.Coordinator, "replica A leads")
		require.Nil(t, rb.fed.Coordinator, "replica B follows")

		orgs := []string{"hospital-a", "hospital-b", "hospital-c"}
		rb.register(t, orgs...)
		rb.runRound(t, "", cohortParticipants(t, orgs, federated.DefaultTask(), 150, 17))
		m, err := rb.client(t, "hospital-a").FederatedModel(ctx)
		require.NoError(t, err)
		assert.Equal(t, "1.0.1", m.ModelVersion, "the round closed, every call made to the follower")
		assert.Equal(t, 3, m.OrganizationsContributed)

		// A task created through A runs under its own lease, taken by A;
		// B learns of it from the database and forwards its round
		// protocol (/api/v1/federated/tasks/{task}/...) to A.
		created, err := a.client(t, "admin").CreateFederatedTask(ctx, client.FederatedTaskRequest{Task: diagnosisDefinition("diagnosis/v2")})
		require.NoError(t, err)
		task, err := federated.ParseTaskFileBytes([]byte(mustJSON(t, created.Definition)))
		require.NoError(t, err)
		run, ok, err := rb.fed.API.Tasks.Task(ctx, "diagnosis/v2")
		require.NoError(t, err)
		require.True(t, ok, "B knows the task")
		leader, err := run.Coordinator.(server.FederatedLeader).LeaderAddress(ctx)
		require.NoError(t, err)
		assert.Equal(t, urlA, leader, "A coordinates the task")
		rb.runRound(t, "diagnosis/v2", cohortParticipants(t, orgs, task.Task(), 150, 17))
		m, err = rb.client(t, "hospital-b").ForFederatedTask("diagnosis/v2").FederatedModel(ctx)
		require.NoError(t, err)
		assert.Equal(t, "1.0.1", m.ModelVersion)

		// One hop only.
		get := func(header string) (*http.Response, string) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, urlB+"/api/v1/federated/rounds/current", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+a.keys["hospital-a"])
			if header != "" {
				req.Header.Set("Healthagents-Forwarded", header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var out struct{ Detail string }
			_ = json.NewDecoder(resp.Body).Decode(&out)
			return resp, out.Detail
		}
		resp, _ := get("")
		assert.Equal(t, http.StatusOK, resp.StatusCode, "forwarded")
		resp, detail := get("1")
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "already forwarded: served here")
		assert.Contains(t, detail, "runs on another replica")

		// The coordinating replica stops serving (its lease still runs).
		a.ts.Close()
		resp, detail = get("")
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		assert.Contains(t, detail, "runs on another replica; retry")
	})
}
