package client

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/secagg"
)

// DecodeWeights returns the model's weights, checked against its
// model_hash.
func DecodeWeights(m *GlobalModel) ([]float64, error) {
	return decodeModel(m.Weights, m.ModelHash)
}

func decodeModel(hexWeights, hash string) ([]float64, error) {
	b, err := hex.DecodeString(hexWeights)
	if err != nil {
		return nil, fmt.Errorf("healthagents: model weights are not hex: %w", err)
	}
	w, err := federated.DecodeWeights(b)
	if err != nil {
		return nil, fmt.Errorf("healthagents: model weights: %w", err)
	}
	if h, err := federated.ModelHash(w); err != nil || h != hash {
		return nil, errors.New("healthagents: model weights do not match model_hash")
	}
	return w, nil
}

// SubmitFederatedUpdate calls POST /submit-federated-update: the service
// decrypts envs, trains the caller organization's local update on them and
// enters it into round (the open round, see Status). Errors: 400 for a
// wrong round (the detail names the current one) or an envelope that does
// not check out, 409 when the round no longer takes participants or the
// organization already takes part, 413 beyond 5000 records, 500 with the
// detail "Federated learning submission failed: Timeout" on timeout.
func (c *Client) SubmitFederatedUpdate(ctx context.Context, envs []*healthagents.PatientData, round int) (*FederatedUpdateResult, error) {
	var out FederatedUpdateResult
	body := struct {
		PatientDataList []*healthagents.PatientData `json:"patient_data_list"`
		RoundNumber     int                         `json:"round_number"`
	}{envs, round}
	if err := c.do(ctx, call{method: http.MethodPost, path: "/submit-federated-update", body: body, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// RegisterFederatedOrganization calls POST /api/v1/federated/organizations for the
// organization of the client's API key.
func (c *Client) RegisterFederatedOrganization(ctx context.Context, req OrganizationRequest) (*Organization, error) {
	var out Organization
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/federated/organizations", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// FederatedModel calls GET /api/v1/federated/model.
func (c *Client) FederatedModel(ctx context.Context) (*GlobalModel, error) {
	var out GlobalModel
	if err := c.do(ctx, call{method: http.MethodGet, path: c.fedPath("/model"), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// FederatedModelONNX calls GET /api/v1/federated/model?format=onnx: the
// latest model version as a self-contained ONNX model file (raw feature
// values in, class probabilities out).
func (c *Client) FederatedModelONNX(ctx context.Context) ([]byte, error) {
	var out []byte
	if err := c.do(ctx, call{method: http.MethodGet, path: c.fedPath("/model"), query: url.Values{"format": {"onnx"}},
		accept: federated.ONNXMediaType, rawOut: &out, rawType: federated.ONNXMediaType}); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, fmt.Errorf("healthagents: GET %s: the answer is not %s", c.fedPath("/model"), federated.ONNXMediaType)
	}
	return out, nil
}

// FederatedRound calls GET /api/v1/federated/rounds/current.
func (c *Client) FederatedRound(ctx context.Context) (*FederatedRound, error) {
	return c.federatedRound(ctx, 0)
}

// federatedRound is GET /api/v1/federated/rounds/current, a long poll of
// wait (whole seconds, at most 25) when wait is at least a second.
func (c *Client) federatedRound(ctx context.Context, wait time.Duration) (*FederatedRound, error) {
	var out FederatedRound
	cl := call{method: http.MethodGet, path: c.fedPath("/rounds/current"), out: &out}
	if s := int(min(wait, 25*time.Second) / time.Second); s >= 1 {
		cl.query = url.Values{"wait": {strconv.Itoa(s)}}
	}
	if err := c.do(ctx, cl); err != nil {
		return nil, fedErr(err)
	}
	return &out, nil
}

// AdvertiseFederatedKeys calls POST /api/v1/federated/rounds/{round}/keys.
func (c *Client) AdvertiseFederatedKeys(ctx context.Context, round int, req KeysSubmission) (*FederatedAccepted, error) {
	return c.fedPost(ctx, c.fedPath("/rounds/"+strconv.Itoa(round)+"/keys"), req)
}

// ShareFederatedKeys calls POST /api/v1/federated/rounds/{round}/shares.
func (c *Client) ShareFederatedKeys(ctx context.Context, round int, req SharesSubmission) (*FederatedAccepted, error) {
	return c.fedPost(ctx, c.fedPath("/rounds/"+strconv.Itoa(round)+"/shares"), req)
}

// SubmitFederatedGradients calls POST /api/v1/federated/gradients with a masked
// vector.
func (c *Client) SubmitFederatedGradients(ctx context.Context, req GradientSubmission) (*FederatedAccepted, error) {
	return c.fedPost(ctx, c.fedPath("/gradients"), req)
}

// RevealFederatedShares calls POST /api/v1/federated/rounds/{round}/reveals.
func (c *Client) RevealFederatedShares(ctx context.Context, round int, req RevealsSubmission) (*FederatedAccepted, error) {
	return c.fedPost(ctx, c.fedPath("/rounds/"+strconv.Itoa(round)+"/reveals"), req)
}

func (c *Client) fedPost(ctx context.Context, path string, body any) (*FederatedAccepted, error) {
	var out FederatedAccepted
	if err := c.do(ctx, call{method: http.MethodPost, path: path, body: body, out: &out}); err != nil {
		return nil, fedErr(err)
	}
	return &out, nil
}

// fedCodes maps the codes the server puts in front of federated protocol
// details back to the federated package's errors.
var fedCodes = map[string]error{
	"WRONG_ROUND":        federated.ErrWrongRound,
	"STALE_MODEL":        federated.ErrStaleModel,
	"INVALID_SUBMISSION": federated.ErrInvalidSubmission,
	"WRONG_PHASE":        federated.ErrWrongPhase,
	"DUPLICATE":          federated.ErrDuplicate,
	"NOT_PARTICIPANT":    federated.ErrNotParticipant,
	"ROUND_FULL":         federated.ErrRoundFull,
	"NO_OPEN_ROUND":      federated.ErrNoOpenRound,
}

// fedErr makes errors.Is(err, federated.ErrDuplicate) and the like hold for
// a coded federated error, keeping the *Error in the chain.
func fedErr(err error) error {
	var e *Error
	if errors.As(err, &e) {
		if sentinel, ok := fedCodes[e.V1Code]; ok {
			return fmt.Errorf("%w: %w", sentinel, err)
		}
	}
	return err
}

// FederatedRoundAPI returns a federated.RoundAPI over HTTP, so that a
// hospital's federated.Participant runs against a remote coordinator:
//
//	p, _ := federated.NewParticipant(federated.ParticipantConfig{Org: "hospital-a"}, records)
//	api := c.FederatedRoundAPI("hospital-a")
//	view, err := p.RunRound(ctx, api, 2*time.Second)
//
// org must be the organization of the client's API key (the server checks
// it), registered with RegisterFederatedOrganization. Records never leave the
// process: the API carries public keys, sealed shares, the masked vector
// and revealed shares only.
func (c *Client) FederatedRoundAPI(org string) federated.RoundAPI {
	return &roundAPI{c: c, org: org}
}

// FederatedRoundAPILongPoll is FederatedRoundAPI whose View long-polls:
// while the organization has answered the current phase, the server holds
// the call up to wait (1-25 s) for the round to move on, so a participant
// follows the round at once and well within its key's rate class.
func (c *Client) FederatedRoundAPILongPoll(org string, wait time.Duration) federated.RoundAPI {
	return &roundAPI{c: c, org: org, wait: wait}
}

type roundAPI struct {
	c    *Client
	org  string
	wait time.Duration
}

// View implements federated.RoundAPI.
func (a *roundAPI) View(ctx context.Context, org string) (*federated.RoundView, error) {
	if org != a.org {
		return nil, fmt.Errorf("healthagents: round API of %q asked for %q", a.org, org)
	}
	r, err := a.c.federatedRound(ctx, a.wait)
	if err != nil {
		return nil, err
	}
	return RoundView(r)
}

// RoundView converts the wire form of a round into the federated package's
// view, checking every encoding and the starting model against its hash.
func RoundView(r *FederatedRound) (*federated.RoundView, error) {
	w, err := decodeModel(r.Weights, r.ModelHash)
	if err != nil {
		return nil, err
	}
	session, err := hex.DecodeString(r.Session)
	if err != nil {
		return nil, errors.New("healthagents: round session is not hex")
	}
	v := &federated.RoundView{
		Round: r.Round, Phase: federated.Phase(r.Phase), TaskHash: r.TaskHash,
		Base:    federated.ModelVersion{Version: r.ModelVersion, Hash: r.ModelHash, Weights: w},
		Session: session, Dim: r.Dim, ClipNorm: r.ClipNorm, FracBits: r.FracBits,
		MaxParticipants: r.MaxParticipants, MaxEvalRecords: r.MaxEvalRecords, Threshold: r.Threshold,
		PhaseDeadline: r.PhaseDeadline, Deadline: r.Deadline, Participants: r.Participants,
		U2: r.SharedKeys, U3: r.Survivors, Done: r.Done, Proved: r.Proved, EvalBound: r.EvalBound,
		NoiseShare: r.NoiseShare, Kind: federated.RoundKind(r.Kind), Previous: r.Previous,
	}
	for _, f := range r.Scaling {
		v.Base.Scaling = append(v.Base.Scaling, federated.LearnedScaling{Name: f.Name, Mean: f.Mean, Scale: f.Scale, Count: f.Count})
	}
	for _, k := range r.Roster {
		ck, err1 := hex.DecodeString(k.CipherPublicKey)
		mk, err2 := hex.DecodeString(k.MaskPublicKey)
		if err1 != nil || err2 != nil {
			return nil, errors.New("healthagents: roster key is not hex")
		}
		v.Roster = append(v.Roster, secagg.PublicKeys{ID: k.OrganizationID, Cipher: ck, Mask: mk})
	}
	for _, s := range r.Inbox {
		ct, err := hex.DecodeString(s.Ciphertext)
		if err != nil {
			return nil, errors.New("healthagents: inbox share is not hex")
		}
		v.Inbox = append(v.Inbox, secagg.EncryptedShare{From: s.From, To: s.To, Ciphertext: ct})
	}
	return v, nil
}

// Submit implements federated.RoundAPI: each message goes to its endpoint.
func (a *roundAPI) Submit(ctx context.Context, org string, s federated.Submission) error {
	if org != a.org {
		return fmt.Errorf("healthagents: round API of %q asked to submit for %q", a.org, org)
	}
	var err error
	switch {
	case s.Keys != nil:
		_, err = a.c.AdvertiseFederatedKeys(ctx, s.Round, KeysSubmission{
			CipherPublicKey: hex.EncodeToString(s.Keys.Cipher), MaskPublicKey: hex.EncodeToString(s.Keys.Mask)})
	case s.Shares != nil:
		req := SharesSubmission{Commitment: hex.EncodeToString(s.Shares.Commitment), Shares: make([]SealedShare, 0, len(s.Shares.Shares))}
		for _, es := range s.Shares.Shares {
			req.Shares = append(req.Shares, SealedShare{From: es.From, To: es.To, Ciphertext: hex.EncodeToString(es.Ciphertext)})
		}
		if s.SeedCommitments != nil {
			req.SeedCommitments = make(map[string]string, len(s.SeedCommitments))
			for peer, c := range s.SeedCommitments {
				req.SeedCommitments[peer] = hex.EncodeToString(c)
			}
		}
		_, err = a.c.ShareFederatedKeys(ctx, s.Round, req)
	case s.Masked != nil:
		b, merr := s.Masked.MarshalBinary()
		if merr != nil {
			return merr
		}
		_, err = a.c.SubmitFederatedGradients(ctx, GradientSubmission{
			OrganizationID: a.org, Round: s.Round, GradientsEncrypted: hex.EncodeToString(b), ModelVersion: s.ModelVersion,
			SampleCount: s.SampleCount, Proof: hexOrEmpty(s.Proof)})
	case s.Reveals != nil:
		req := RevealsSubmission{Reveals: make([]RevealedShare, 0, len(s.Reveals))}
		for _, rs := range s.Reveals {
			b, merr := rs.Share.MarshalBinary()
			if merr != nil {
				return merr
			}
			req.Reveals = append(req.Reveals, RevealedShare{Of: rs.Of, Kind: string(rs.Kind), Share: hex.EncodeToString(b)})
		}
		_, err = a.c.RevealFederatedShares(ctx, s.Round, req)
	default:
		return fmt.Errorf("%w: empty submission", federated.ErrInvalidSubmission)
	}
	return err
}

// FederatedTask calls GET /api/v1/federated/task: the task being trained,
// the run's settings and its privacy budget (epsilon spent and remaining).
// On a client of ForFederatedTask it is GET /api/v1/federated/tasks/{task}.
func (c *Client) FederatedTask(ctx context.Context) (*FederatedTask, error) {
	var out FederatedTask
	path := "/api/v1/federated/task"
	if c.fedTask != "" {
		path = c.fedPath("")
	}
	if err := c.do(ctx, call{method: http.MethodGet, path: path, out: &out}); err != nil {
		return nil, fedErr(err)
	}
	return &out, nil
}

// maxProofKeysBytes bounds the proof-keys response: 1 GiB holds the keys
// of a model of a few thousand weights (the keys grow linearly with it).
const maxProofKeysBytes = 1 << 30

// ForFederatedTask returns a client like c whose federated round calls
// (FederatedRound, the four phases, FederatedModel, FederatedProofKeys,
// FederatedTask and the round APIs) address task id, under
// /api/v1/federated/tasks/{id}/; "" is the default task of the unscoped
// endpoints. Several tasks run side by side, each with its rounds and
// privacy budget; c is unchanged.
func (c *Client) ForFederatedTask(id string) *Client {
	cp := *c
	cp.fedTask = id
	return &cp
}

// fedPath is the path of a federated endpoint (suffix after
// /api/v1/federated) for the client's task.
func (c *Client) fedPath(suffix string) string {
	if c.fedTask == "" {
		return "/api/v1/federated" + suffix
	}
	return "/api/v1/federated/tasks/" + escape(c.fedTask) + suffix
}

// CreateFederatedTask calls POST /api/v1/federated/tasks: a new task that
// runs beside the others with its own rounds and privacy budget (the key
// needs the federated and keys:admin scopes and no organization). A bad
// task or setting is a 400 naming the field; an id that runs already 409.
func (c *Client) CreateFederatedTask(ctx context.Context, req FederatedTaskRequest) (*FederatedTask, error) {
	var out FederatedTask
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/federated/tasks", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListFederatedTasks walks GET /api/v1/federated/tasks page by page (100 a
// page): every task, the default one first (marked) and the others ordered
// by id.
func (c *Client) ListFederatedTasks(ctx context.Context) iter.Seq2[FederatedTask, error] {
	return Paginate(ctx, MaxPageSize, c.ListFederatedTasksPage)
}

// ListFederatedTasksPage calls GET /api/v1/federated/tasks for one page of
// the tasks (offset from 0, limit 1..100).
func (c *Client) ListFederatedTasksPage(ctx context.Context, offset, limit int) (Page[FederatedTask], error) {
	var out api.FederatedTaskList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/federated/tasks", query: offsetLimit(offset, limit), out: &out}); err != nil {
		return Page[FederatedTask]{}, err
	}
	return Page[FederatedTask]{Items: out.Tasks, Total: out.Total}, nil
}

func hexOrEmpty(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return hex.EncodeToString(b)
}

// FederatedProofKeys calls GET /api/v1/federated/proof-keys/{shape}: the
// encoded Groth16 proving and verifying keys of one shape of a proved run
// (normproof.DecodeKeys reads them). The proving key grows with the model
// (about 16 MiB of Base64 at 90 weights), so this response may be up to
// maxProofKeysBytes, not the usual maxResponseBytes.
func (c *Client) FederatedProofKeys(ctx context.Context, shape string) (pk, vk []byte, err error) {
	var out ProofKeys
	if err := c.do(ctx, call{method: http.MethodGet, path: c.fedPath("/proof-keys/" + escape(shape)), out: &out, limit: maxProofKeysBytes}); err != nil {
		return nil, nil, fedErr(err)
	}
	if pk, err = base64.StdEncoding.DecodeString(out.ProvingKey); err != nil {
		return nil, nil, errors.New("healthagents: proving key is not base64")
	}
	if vk, err = base64.StdEncoding.DecodeString(out.VerifyingKey); err != nil {
		return nil, nil, errors.New("healthagents: verifying key is not base64")
	}
	return pk, vk, nil
}
