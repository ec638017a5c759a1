package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
)

// fedBench drives POST /submit-federated-update. A round takes each
// organization once and closes key advertisement once it has its target
// number of participants, so every request comes from an organization of
// its own (a key created for it before the run, with the admin bearer),
// names the round now open, and, when the previous answer said the round
// stopped taking participants, waits for the next one to open. That
// bookkeeping (a GET /status now and then) happens before the request's
// clock starts. Run it closed loop at -c 1: concurrent submissions race for
// a round's last places and the losers get 409.
type fedBench struct {
	api  *client.Client // the set-up calls (keys, round status), untimed
	list []byte         // the sealed records, JSON, shared by every request
	keys []string       // keys[i]: the organization of request i+1

	mu     sync.Mutex
	round  int  // the round to submit to
	closed bool // round stopped taking participants: wait for round+1
	failed error
}

// fedRoundWait bounds how long the bench waits for the next round to open.
const fedRoundWait = 30 * time.Second

// newFedBench seals records copies of rec (each its own patient, with
// varied observations and labels so the local training has both classes)
// and creates n organization keys with admin.
func newFedBench(ctx context.Context, hc *http.Client, base, admin string, rec *record.Record, records, n int, kr *cipher.Keyring) (*fedBench, error) {
	if admin == "" {
		return nil, errors.New("bench: submit-federated-update needs -admin-token (or ADMIN_TOKEN, or a keys:admin -key) to create an organization key per request")
	}
	envs := make([]cipher.Envelope, records)
	for i := range envs {
		r := *rec
		r.PatientID = fmt.Sprintf("PT-BENCH-%06d", i)
		r.Observations = map[string]float64{"glucose": float64(80 + i*37%120), "bmi": 19 + float64(i*13%20), "systolic_bp": float64(105 + i*7%50)}
		r.Diagnosis = "negative"
		if r.Observations["glucose"] > 140 {
			r.Diagnosis = "positive"
		}
		plain, err := r.Marshal()
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if envs[i], err = cipher.Seal(r.PatientID, plain, kr); err != nil {
			return nil, err
		}
	}
	list, err := json.Marshal(envs)
	if err != nil {
		return nil, err
	}
	api, err := client.New(base, client.WithHTTPClient(hc), client.WithMaxAttempts(1))
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	f := &fedBench{api: api, list: list, keys: make([]string, n)}
	run := time.Now().UnixNano()
	for i := range f.keys {
		k, err := api.With(client.WithAPIKey(admin)).CreateKey(ctx, &client.CreateKeyRequest{
			Name: "bench", Tier: "enterprise", Scopes: []string{"federated"},
			Organization: fmt.Sprintf("bench-%x-%d", run, i),
		})
		if err != nil {
			return nil, fmt.Errorf("bench: creating an organization key: %w", err)
		}
		f.keys[i] = k.APIKey
	}
	// Start from the round now open (an earlier run may have moved on).
	f.round = -1
	f.closed = true
	if err := f.awaitRound(ctx, f.keys[0]); err != nil {
		return nil, err
	}
	return f, nil
}

// awaitRound polls GET /status until a round after f.round is open and
// makes it f.round. f.mu is held (or f not yet shared).
func (f *fedBench) awaitRound(ctx context.Context, key string) error {
	deadline := time.Now().Add(fedRoundWait)
	for {
		st, err := f.api.With(client.WithAPIKey(key)).Status(ctx)
		if err == nil && st.FederatedLearning.CurrentRound > f.round {
			f.round, f.closed = st.FederatedLearning.CurrentRound, false
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: federated round %d did not open within %s (rounds or privacy budget exhausted? use a fresh DATA_DIR)", f.round+1, fedRoundWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// prepare gives request i (1-based) its body and bearer, first waiting for
// an open round if the last answer closed one.
func (f *fedBench) prepare(ctx context.Context, i int64) ([]byte, string, error) {
	key := f.keys[(i-1)%int64(len(f.keys))]
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed != nil {
		return nil, "", f.failed
	}
	if f.closed {
		if err := f.awaitRound(ctx, key); err != nil {
			f.failed = err
			return nil, "", err
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"patient_data_list":`)
	b.Write(f.list)
	fmt.Fprintf(&b, `,"round_number":%d}`, f.round)
	return b.Bytes(), key, nil
}

// observe learns from an answer whether the round still takes participants.
func (f *fedBench) observe(status int, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var res struct {
		Round  int    `json:"round"`
		Phase  string `json:"phase"`
		Detail string `json:"detail"`
	}
	_ = json.Unmarshal(body, &res)
	switch {
	case status == http.StatusOK && res.Round >= f.round:
		f.round = res.Round
		f.closed = res.Phase != "advertise_keys"
	case status == http.StatusConflict || strings.Contains(res.Detail, "not the open round"):
		f.closed = true // the round moved on under us: find the next
	}
}
