package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// malformedAPI sends its organization's masked input spoilt by spoil, or
// instead of it whatever send does.
type malformedAPI struct {
	federated.RoundAPI
	spoil func(masked []uint64) []uint64
	send  func(ctx context.Context) error
}

func (a malformedAPI) Submit(ctx context.Context, org string, s federated.Submission) error {
	if s.Masked == nil {
		return a.RoundAPI.Submit(ctx, org, s)
	}
	if a.send != nil {
		return a.send(ctx)
	}
	s.Masked = a.spoil(slices.Clone(s.Masked))
	return a.RoundAPI.Submit(ctx, org, s)
}

// TestMalformedMaskedInputRefusesItsSender: a fourth hospital sends a
// masked input that is no valid one — words not below the field modulus,
// a vector of the wrong length, a body over the route's limit — and is
// refused for the round exactly as a failed proof is: the round closes
// with the honest three as soon as they are in, no phase deadline passing
// (the clock never moves), and the sender may not try again in the round.
func TestMalformedMaskedInputRefusesItsSender(t *testing.T) {
	t.Parallel()
	svc := normproof.NewService()
	pc, pp := svc.ProofGroup()
	const limit = 256 << 10
	for name, tc := range map[string]struct {
		spoil  func([]uint64) []uint64
		status int
		detail string
	}{
		"words not below the field modulus": {spoil: func(m []uint64) []uint64 { m[normproof.Limbs-1] = math.MaxUint64; return m }, status: 400, detail: "not a valid encoding"},
		"wrong length":                      {spoil: func(m []uint64) []uint64 { return m[:len(m)-normproof.Limbs] }, status: 400, detail: "masked vector of"},
		"oversized body":                    {status: 413, detail: fmt.Sprintf("the limit is %d bytes", limit)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
				start := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
				clock := &provedClock{t: start}
				cfg := testFedConfig()
				cfg.Proofs, cfg.TargetParticipants, cfg.Clock, cfg.FracBits = &pc, 4, clock.Now, 24
				s := newFedServer(t, db, cfg, nil, nil, func(f *server.FederatedAPI) { f.MaxGradientBytes = limit })
				orgs := []string{"hospital-a", "hospital-b", "hospital-c", "hospital-d"}
				s.register(t, orgs...)
				var ps []*federated.Participant
				apis := make([]federated.RoundAPI, len(orgs))
				for i, org := range orgs {
					p, err := federated.NewParticipant(federated.ParticipantConfig{Org: org, Proofs: &pp}, synth.Records(synth.ThreeCohorts(90, 23)[i%3]))
					require.NoError(t, err)
					ps = append(ps, p)
					apis[i] = s.client(t, org).FederatedRoundAPI(org)
				}
				bad := malformedAPI{RoundAPI: apis[3], spoil: tc.spoil}
				if tc.spoil == nil {
					bad.send = func(ctx context.Context) error {
						body := append([]byte(`{"organization_id":"hospital-d","round":0,"gradients_encrypted":"`), bytes.Repeat([]byte("ab"), limit)...)
						req, err := http.NewRequestWithContext(ctx, "POST", s.url+"/api/v1/federated/gradients", bytes.NewReader(body))
						require.NoError(t, err)
						req.Header.Set("Authorization", "Bearer "+s.keys["hospital-d"])
						req.Header.Set("Content-Type", "application/json")
						resp, err := http.DefaultClient.Do(req)
						require.NoError(t, err)
						defer resp.Body.Close()
						b, _ := io.ReadAll(resp.Body)
						return &client.Error{StatusCode: resp.StatusCode, Detail: string(b)}
					}
				}
				apis[3] = bad

				var refused error
				for range 12 {
					for i, p := range ps {
						if i == 3 && refused != nil {
							continue // the refused hospital stops
						}
						_, err := p.Step(t.Context(), apis[i])
						if i == 3 && err != nil {
							refused = err
							// Refused for the round (or the round moved on
							// at once): trying again is 409.
							again := bad.RoundAPI.Submit(t.Context(), "hospital-d", federated.Submission{Round: 0, Masked: make([]uint64, normproof.Limbs)})
							var ce *client.Error
							require.True(t, errors.As(again, &ce), "%v", again)
							assert.Equal(t, 409, ce.StatusCode, ce.Detail)
							continue
						}
						require.NoError(t, err, p.Org())
					}
					m, err := s.client(t, "hospital-a").FederatedModel(t.Context())
					require.NoError(t, err)
					if m.ModelVersion != "1.0.0" {
						assert.Equal(t, 3, m.OrganizationsContributed, "the round completed with the three others")
						var ce *client.Error
						require.True(t, errors.As(refused, &ce), "hospital-d was refused over HTTP: %v", refused)
						assert.Equal(t, tc.status, ce.StatusCode)
						assert.Contains(t, ce.Error()+ce.Detail, tc.detail)
						assert.Equal(t, start, clock.Now(), "no phase deadline had to pass")
						return
					}
				}
				t.Fatalf("the round did not complete before its phase deadline (hospital-d: %v)", refused)
			})
		})
	}
}
