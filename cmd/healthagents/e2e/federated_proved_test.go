package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/internal/testcache"
	"github.com/healthagents/healthagents/internal/testcache/normkeys"
)

// cheatingRoundAPI is a hospital that proves its honest update and then
// changes what its masked vector hides on the way out: in round 0 it adds
// three clip norms to one weight, in round 1 a NaN's bit pattern to
// another (the word it hides is then far beyond any bound); from
// round 2 on it sends what it proved.
type cheatingRoundAPI struct {
	federated.RoundAPI
	mu       sync.Mutex
	view     *federated.RoundView // the last round it saw
	refusals map[int]error
}

func (a *cheatingRoundAPI) View(ctx context.Context, org string) (*federated.RoundView, error) {
	v, err := a.RoundAPI.View(ctx, org)
	if err == nil {
		a.mu.Lock()
		a.view = v
		a.mu.Unlock()
	}
	return v, err
}

func (a *cheatingRoundAPI) Submit(ctx context.Context, org string, s federated.Submission) error {
	if s.Masked == nil || s.Round > 1 {
		return a.RoundAPI.Submit(ctx, org, s)
	}
	a.mu.Lock()
	v := a.view
	a.mu.Unlock()
	delta := make([]uint64, v.Dim) // two's complement words of the hidden vector
	if s.Round == 0 {
		delta[0] = uint64(3 * v.ClipNorm * float64(uint64(1)<<v.FracBits))
	} else {
		delta[1] = math.Float64bits(math.NaN())
	}
	s.Masked = slices.Clone(s.Masked)
	normproof.Field{}.Add(s.Masked, normproof.Field{}.Encode(delta))
	err := a.RoundAPI.Submit(ctx, org, s)
	a.mu.Lock()
	if _, seen := a.refusals[s.Round]; !seen {
		a.refusals[s.Round] = err
	}
	a.mu.Unlock()
	return err
}

// Proved rounds over real processes: with FEDERATED_PROOFS=on the binary
// holds the update-bound circuit's keys under DATA_DIR (here the test
// cache's, decoded and checked at its start), each
// `healthagents participant` fetches the proving key of its round's shape
// and proves every masked update. A fourth hospital (in this process)
// sends, under an honest proof, a vector hiding an update three clip norms
// long in round 0 and a NaN word in round 1: each is refused at submission
// with 400, and the round completes at once with the three others (the
// round timeout is six hours: no phase may wait for its deadline); in
// round 2 it sends what it proved and is counted. The coordinator is a
// federated-only one (HEALTHAGENTS_ROLE=federated): the clinical stack's
// start (the embedded chain, the decision circuits' keys) was a few
// CPU-seconds of a run about proofs; TestFederatedLearnedScalingEndToEnd
// runs federated rounds in a whole server, and the rounds and their proofs
// are the same code in both (app.openFederated).
func TestFederatedEndToEndProved(t *testing.T) {
	bin, root := setUp(t)
	dir := t.TempDir()
	csvs := clitest.SplitCSV(t, filepath.Join(root, "testdata", "wdbc", "wdbc.csv"), dir, 4)
	taskPath := filepath.Join(root, "testdata", "wdbc", "task.json")
	tf, err := federated.ParseTaskFile(strings.NewReader(clitest.MustRead(t, taskPath)))
	require.NoError(t, err)
	const rounds = 3
	const admin = "federated-proved-admin-token-0123456789abcdef"
	// The coordinator's keys of the shapes it prepares at start (two and
	// three peers) come from the test cache: its start decodes them, with
	// every check, instead of two set-ups.
	// app.TestProvedRunSetsUpItsKeysBeforeRoundZero checks that a
	// coordinator without keys sets them up before round 0.
	target := normproof.Shape{Weights: 31, Extra: 5, Peers: 3, Bits: 25}
	keysDir := filepath.Join(dir, "data", "federated-proofs")
	normkeys.Into(t, keysDir, normproof.Shape{Weights: 31, Extra: 5, Peers: 2, Bits: 25}, target)
	srv := startServer(t, bin, dir, admin, "HEALTHAGENTS_ROLE=federated", "FEDERATED_TASK="+taskPath, "FEDERATED_TARGET_PARTICIPANTS=4",
		"FEDERATED_DP=off", "FEDERATED_PROOFS=on", fmt.Sprintf("FEDERATED_ROUNDS=%d", rounds), "FEDERATED_ROUND_TIMEOUT=6h")
	base := srv.base
	ctx := t.Context()
	adm, err := client.New(base, client.WithAPIKey(admin))
	require.NoError(t, err)
	var parts []*clitest.Proc
	var reader *client.Client
	for i, path := range csvs[:3] {
		org := fmt.Sprintf("hospital-%c", 'a'+i)
		k := federatedOrg(t, adm, base, org)
		oc, err := client.New(base, client.WithAPIKey(k.APIKey))
		require.NoError(t, err)
		reader = oc
		parts = append(parts, clitest.StartProc(t, bin, os.Environ(), filepath.Join(dir, org+".out"),
			"participant", "--server", base, "--api-key", k.APIKey, "--data", path, "--rate", freeTierRate, "--burst", freeTierBurst))
	}
	task, err := reader.FederatedTask(ctx)
	require.NoError(t, err)
	assert.True(t, task.Proofs)
	// The coordinator serves the keys under its DATA_DIR.
	_, vk, err := reader.FederatedProofKeys(ctx, target.Name())
	require.NoError(t, err)
	assert.Equal(t, clitest.MustRead(t, filepath.Join(keysDir, target.Name()+".vk")), string(vk))

	// hospital-d, the cheater, proves with the same keys in this process.
	dKey := federatedOrg(t, adm, base, "hospital-d").APIKey
	dc, err := client.New(base, client.WithAPIKey(dKey))
	require.NoError(t, err)
	recs := clitest.ReadCSV(t, tf, csvs[3])
	// Like the participant processes (HEALTHAGENTS_TEST_CACHE), it finds
	// the keys the test cache set up decoded there.
	cache, err := testcache.Open()
	require.NoError(t, err)
	_, pp := normproof.NewServiceFetching(func(s normproof.Shape) ([]byte, []byte, error) {
		return dc.With(client.WithTimeout(5*time.Minute)).FederatedProofKeys(ctx, s.Name())
	}, normproof.WithKnownKeys(cache)).ProofGroup()
	cheater, err := federated.NewParticipant(federated.ParticipantConfig{Org: "hospital-d", Task: tf.Task(), HeldOut: tf.HeldOut, Proofs: &pp}, recs)
	require.NoError(t, err)
	capi := &cheatingRoundAPI{RoundAPI: dc.FederatedRoundAPILongPoll("hospital-d", 10*time.Second), refusals: map[int]error{}}
	cheatCtx, stopCheater := context.WithCancel(ctx)
	cheaterDone := make(chan struct{})
	go func() {
		defer close(cheaterDone)
		for cheatCtx.Err() == nil {
			var ce *client.Error
			if _, err := cheater.Step(cheatCtx, capi); errors.As(err, &ce) && ce.V1Code == "NO_OPEN_ROUND" {
				return
			}
			select {
			case <-cheatCtx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	defer func() { stopCheater(); <-cheaterDone }()
	_, _, err = reader.FederatedProofKeys(ctx, "w999-e5-p2-b25")
	var ce *client.Error
	require.ErrorAs(t, err, &ce, "a shape the run cannot have")
	assert.Equal(t, 400, ce.StatusCode)

	for _, out := range waitTaskEnded(t, parts, 8*time.Minute) {
		assert.Contains(t, out, "proved rounds true")
		assert.Contains(t, out, "fetching the proving key of shape w31-e5-p3-b25")
		assert.Less(t, strings.Index(out, "fetching the proving key"), strings.Index(out, "round 0 closed"), "fetched before round 0 needed it")
		assert.Contains(t, out, fmt.Sprintf("final model 1.0.%d (round %d, 4 organizations)", rounds, rounds-1), "hospital-d counted in round 2")
	}
	stopCheater()
	<-cheaterDone
	for round := range 2 {
		var ce *client.Error
		require.ErrorAs(t, capi.refusals[round], &ce, "hospital-d was refused in round %d", round)
		assert.Equal(t, 400, ce.StatusCode, "round %d", round)
		assert.Contains(t, ce.Error(), "not proved within its bounds", "round %d", round)
	}
	assert.NoError(t, capi.refusals[2], "the honest submission of round 2 is taken")
	logs := clitest.MustRead(t, srv.log)
	assert.Equal(t, 2, strings.Count(logs, `"msg":"federated masked input refused"`), "one refusal in each of rounds 0 and 1")
	closed := map[int]int{} // round: contributors
	for _, line := range strings.Split(logs, "\n") {
		var l struct {
			Msg          string `json:"msg"`
			Round        int    `json:"round"`
			Contributors int    `json:"contributors"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "federated round closed" {
			closed[l.Round] = l.Contributors
		}
	}
	assert.Equal(t, map[int]int{0: 3, 1: 3, 2: 4}, closed, "contributors of each round")

}
