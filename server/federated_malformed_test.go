package server_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/federated/secagg"
	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/internal/testcache/normkeys"
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
	svc := normkeys.Service()
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

				refused := closeWithoutD(t, s, ps, apis, func() {
					// Refused for the round (or the round moved on at
					// once): trying again is 409.
					again := bad.RoundAPI.Submit(t.Context(), "hospital-d", federated.Submission{Round: 0, Masked: make([]uint64, normproof.Limbs)})
					var ce *client.Error
					require.True(t, errors.As(again, &ce), "%v", again)
					assert.Equal(t, 409, ce.StatusCode, ce.Detail)
				})
				var ce *client.Error
				require.True(t, errors.As(refused, &ce), "hospital-d was refused over HTTP: %v", refused)
				assert.Equal(t, tc.status, ce.StatusCode)
				assert.Contains(t, ce.Error()+ce.Detail, tc.detail)
				assert.Equal(t, start, clock.Now(), "no phase deadline had to pass")
			})
		})
	}
}

// TestMalformedGradientsRefuseTheSender: in an unproved round, a masked
// input body that is not hex, not a masked vector, of the wrong length, with
// a negative sample_count or not JSON at all (NaN) is answered 400 with what
// is wrong, and refuses its sender for the round: a second, well-formed
// try is 409, and the round closes with the three others without waiting
// for the phase deadline (an hour here).
func TestMalformedGradientsRefuseTheSender(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		body   func(round, dim int) string
		detail string
	}{
		"not hex":       {func(r, _ int) string { return gradientBody(r, `"zz"`, 0) }, "Validation error: field 'gradients_encrypted' must be hex"},
		"not a vector":  {func(r, _ int) string { return gradientBody(r, `"00112233"`, 0) }, "is not a masked vector"},
		"wrong length":  {func(r, dim int) string { return gradientBody(r, maskedHex(dim-1), 0) }, "INVALID_SUBMISSION: "},
		"negative size": {func(r, dim int) string { return gradientBody(r, maskedHex(dim), -1) }, "sample_count"},
		"NaN":           {func(r, _ int) string { return gradientBody(r, `"00"`, math.NaN()) }, "Invalid request format"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
			cfg := testFedConfig()
			cfg.TargetParticipants = 4
			s := newFedServer(t, db, cfg, nil, nil, nil)
			orgs := []string{"hospital-a", "hospital-b", "hospital-c", "hospital-d"}
			s.register(t, orgs...)
			ps := hospitals(t, orgs[:3], 120)
			d, err := federated.NewParticipant(federated.ParticipantConfig{Org: "hospital-d"}, synth.Records(synth.ThreeCohorts(120, 5)[0]))
			require.NoError(t, err)
			all := append(ps, d)
			stepAll(t, s, all) // advertise
			stepAll(t, s, all) // share
			r, err := s.client(t, "hospital-d").FederatedRound(t.Context())
			require.NoError(t, err)
			require.Equal(t, "masked_input", r.Phase)

			status, detail := postBody(t, s.url+"/api/v1/federated/gradients", s.keys["hospital-d"], tc.body(r.Round, r.Dim))
			assert.Equal(t, 400, status, detail)
			assert.Contains(t, detail, tc.detail)
			status, detail = postBody(t, s.url+"/api/v1/federated/gradients", s.keys["hospital-d"], gradientBody(r.Round, maskedHex(r.Dim), 0))
			assert.Equal(t, 409, status, detail)
			assert.Contains(t, detail, "refused in this round")

			stepAll(t, s, ps) // the three masked inputs: the phase moves on at once
			r, err = s.client(t, "hospital-a").FederatedRound(t.Context())
			require.NoError(t, err)
			require.Equal(t, "unmasking", r.Phase, "the refused sender holds nothing up")
			stepAll(t, s, ps)
			m, err := s.client(t, "hospital-a").FederatedModel(t.Context())
			require.NoError(t, err)
			assert.Equal(t, "1.0.1", m.ModelVersion)
			assert.Equal(t, 3, m.OrganizationsContributed)
		})
	}
}

// gradientBody is hospital-d's masked input body for round with the given
// gradients_encrypted JSON value and sample_count (NaN is written as the
// bare word, which no JSON parser takes).
func gradientBody(round int, gradients string, size float64) string {
	n := strconv.FormatFloat(size, 'g', -1, 64)
	return fmt.Sprintf(`{"organization_id":"hospital-d","round":%d,"gradients_encrypted":%s,"model_version":"1.0.0","sample_count":%s}`, round, gradients, n)
}

// maskedHex is the JSON string of a zero masked vector of dim words.
func maskedHex(dim int) string {
	b, _ := secagg.MaskedInput(make([]uint64, dim)).MarshalBinary()
	return `"` + hex.EncodeToString(b) + `"`
}

// postBody posts body with token and returns the status and the detail.
func postBody(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var e struct {
		Detail string `json:"detail"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Detail
}
