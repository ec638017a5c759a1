package client_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/healthagents/healthagents/record"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/server"
)

// TestFederatedErrorsMapToSentinels: a coded detail becomes the federated
// package's error, so a Participant treats a remote coordinator like a
// local one (a duplicate after a retried POST is not a failure).
func TestFederatedErrorsMapToSentinels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		detail string
		want   error
	}{
		{409, "DUPLICATE: already submitted in this phase", federated.ErrDuplicate},
		{409, "WRONG_PHASE: keys in phase share_keys", federated.ErrWrongPhase},
		{409, "NO_OPEN_ROUND: no round is open", federated.ErrNoOpenRound},
		{409, "NOT_PARTICIPANT: organization is not a participant of this phase", federated.ErrNotParticipant},
		{409, "ROUND_FULL: round has its maximum number of participants", federated.ErrRoundFull},
		{400, "WRONG_ROUND: round 0 requested, the current round is 1", federated.ErrWrongRound},
		{400, "STALE_MODEL: round 1 trains from 1.0.1, not 1.0.0", federated.ErrStaleModel},
		{400, "INVALID_SUBMISSION: masked vector of 3 words, round expects 7", federated.ErrInvalidSubmission},
	} {
		t.Run(tc.detail, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, `{"detail":%q}`, tc.detail)
			}))
			t.Cleanup(ts.Close)
			c, err := client.New(ts.URL, client.WithMaxAttempts(1))
			require.NoError(t, err)
			_, err = c.AdvertiseFederatedKeys(t.Context(), 0, client.KeysSubmission{})
			require.ErrorIs(t, err, tc.want)
			var ce *client.Error
			require.ErrorAs(t, err, &ce, "the HTTP error stays in the chain")
			assert.Equal(t, tc.status, ce.StatusCode)
			assert.Equal(t, tc.status, server.StatusOf(healthagents.ErrorCode(err)))
		})
	}
}

// TestFederatedRoundViewRefusesBadEncodings: what the server sends is
// checked before a participant acts on it.
func TestFederatedRoundViewRefusesBadEncodings(t *testing.T) {
	t.Parallel()
	w := []float64{0.5, -1, 0, 2, 0.25}
	enc, err := federated.EncodeWeights(w)
	require.NoError(t, err)
	hash, err := federated.ModelHash(w)
	require.NoError(t, err)
	good := client.FederatedRound{Round: 2, Phase: "masked_input", ModelVersion: "1.0.2", ModelHash: hash, Weights: hex.EncodeToString(enc),
		Session: hex.EncodeToString(make([]byte, 32)), Dim: 7,
		Roster: []client.AdvertisedKeys{{OrganizationID: "a", CipherPublicKey: "0102", MaskPublicKey: "0304"}},
		Inbox:  []client.SealedShare{{From: "b", To: "a", Ciphertext: "abcd"}}, SharedKeys: []string{"a", "b", "c"}}
	v, err := client.RoundView(&good)
	require.NoError(t, err)
	assert.Equal(t, w, v.Base.Weights)
	assert.Equal(t, federated.PhaseMaskedInput, v.Phase)
	assert.Equal(t, []byte{1, 2}, v.Roster[0].Cipher)
	assert.Equal(t, []byte{0xab, 0xcd}, v.Inbox[0].Ciphertext)
	for name, mutate := range map[string]func(r *client.FederatedRound){
		"weights not hex":   func(r *client.FederatedRound) { r.Weights = "zz" },
		"weights malformed": func(r *client.FederatedRound) { r.Weights = "00" },
		"hash mismatch":     func(r *client.FederatedRound) { r.ModelHash = hash[:63] + "0" },
		"session not hex":   func(r *client.FederatedRound) { r.Session = "xyz" },
		"roster not hex":    func(r *client.FederatedRound) { r.Roster[0].MaskPublicKey = "q" },
		"inbox not hex":     func(r *client.FederatedRound) { r.Inbox[0].Ciphertext = "q" },
	} {
		r := good
		r.Roster = append([]client.AdvertisedKeys(nil), good.Roster...)
		r.Inbox = append([]client.SealedShare(nil), good.Inbox...)
		mutate(&r)
		if r.ModelHash == hash && name == "hash mismatch" {
			r.ModelHash = "f" + hash[1:]
		}
		_, err := client.RoundView(&r)
		assert.Error(t, err, name)
	}
}

// TestFederatedRoundAPIRefusesOtherOrganization: one RoundAPI speaks for
// the organization of its key only.
func TestFederatedRoundAPIRefusesOtherOrganization(t *testing.T) {
	t.Parallel()
	c, err := client.New("http://127.0.0.1:1")
	require.NoError(t, err)
	api := c.FederatedRoundAPI("hospital-a")
	_, err = api.View(t.Context(), "hospital-b")
	require.Error(t, err)
	err = api.Submit(t.Context(), "hospital-b", federated.Submission{})
	require.Error(t, err)
	err = api.Submit(t.Context(), "hospital-a", federated.Submission{})
	require.True(t, errors.Is(err, federated.ErrInvalidSubmission))
}

// A hospital runs its own federated.Participant against a remote
// coordinator: its records stay in the process, the SDK carries the
// secure-aggregation messages.
func ExampleClient_FederatedRoundAPI() {
	ctx := context.Background()
	c, err := client.New("http://localhost:8000", client.WithAPIKey(os.Getenv("HEALTHAGENTS_API_KEY")))
	if err != nil {
		panic(err)
	}
	var records []*record.Record // the hospital's own labelled records
	p, err := federated.NewParticipant(federated.ParticipantConfig{Org: "hospital-a"}, records)
	if err != nil {
		fmt.Println("no records to train on:", err)
		return
	}
	if _, err := p.RunRound(ctx, c.FederatedRoundAPI("hospital-a"), 2*time.Second); err != nil {
		fmt.Println(err)
	}
}

// TestFederatedProofKeysBeyondTheUsualLimit: the proving key of a model of
// a few hundred weights is larger than the 16 MiB every other response may
// be; FederatedProofKeys reads it whole, and another call still refuses a
// response that large.
func TestFederatedProofKeysBeyondTheUsualLimit(t *testing.T) {
	pk := bytes.Repeat([]byte{7}, 20<<20) // 20 MiB, 26.7 MiB as Base64
	body, err := json.Marshal(client.ProofKeys{ProvingKey: base64.StdEncoding.EncodeToString(pk), VerifyingKey: base64.StdEncoding.EncodeToString([]byte("vk"))})
	require.NoError(t, err)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer ts.Close()
	c, err := client.New(ts.URL, client.WithMaxAttempts(1))
	require.NoError(t, err)
	gotPK, gotVK, err := c.FederatedProofKeys(t.Context(), "d31")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(pk, gotPK))
	assert.Equal(t, []byte("vk"), gotVK)

	_, err = c.FederatedTask(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "response larger than")
}
