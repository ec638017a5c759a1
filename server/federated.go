package server

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/secagg"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/record"
)

// Limits of POST /submit-federated-update. The spec advises at most 1000
// records per submission; 5000 is the hard limit (413 beyond it), and the
// body limit leaves 8 KiB per record.
const (
	MaxFederatedRecords   = 5000
	MaxFederatedBodyBytes = MaxFederatedRecords * 8 << 10
	// DefaultMaxGradientBytes bounds the body of POST
	// /api/v1/federated/gradients: a hex masked vector of about a million
	// words.
	DefaultMaxGradientBytes = 16 << 20
	// DefaultFederatedSubmitTimeout bounds the work of one
	// /submit-federated-update (decryption, local data preparation, key
	// advertisement); past it the answer is 500 with the spec's Timeout detail.
	DefaultFederatedSubmitTimeout = 25 * time.Second
)

// AnonymousParticipant is the participant identifier of every root-family
// submitter without an organization-bound key: together they count as one
// participant, so anonymous callers alone never complete a round. A key
// bound to an organization of this name is refused on the v1 federated
// endpoints.
const AnonymousParticipant = "anonymous"

// The spec's details of POST /submit-federated-update.
const (
	federatedPrefix       = "Federated learning submission failed"
	detailFedDecryption   = federatedPrefix + ": Decryption failed - check encryption key"
	detailFedTimeout      = federatedPrefix + ": Timeout"
	detailNotOrganization = detailForbidden + " - the API key is not bound to an organization"
	detailNotRegistered   = api.NotRegisteredDetail
)

// FederatedCoordinator is the coordinator behind the federated endpoints;
// *federated.Coordinator implements it.
type FederatedCoordinator interface {
	View(ctx context.Context, org string) (*federated.RoundView, error)
	Submit(ctx context.Context, org string, s federated.Submission) error
	History(ctx context.Context) ([]federated.ModelVersion, error)
	Status(ctx context.Context) (federated.Status, error)
	// RefuseInput refuses org for the rest of the round when the round is
	// in phase and awaits its message: it sent that phase's route a body
	// that cannot be one (over the route's limit, not the encoding).
	RefuseInput(ctx context.Context, org string, phase federated.Phase) error
}

var _ FederatedCoordinator = (*federated.Coordinator)(nil)

// FederatedAPI is what the federated endpoints need. Set it as
// Deps.FederatedAPI, and as Deps.Federated for GET /status.
type FederatedAPI struct {
	Coordinator   FederatedCoordinator           // required
	Organizations federated.OrganizationRegistry // required for the v1 endpoints
	// Host trains the local updates of root-family submitters; without it
	// POST /submit-federated-update answers 503.
	Host *federated.ParticipantHost
	// SubmitTimeout bounds one /submit-federated-update (default
	// DefaultFederatedSubmitTimeout).
	SubmitTimeout time.Duration
	// MaxGradientBytes bounds gradient bodies (default DefaultMaxGradientBytes).
	MaxGradientBytes int64
	// Now is the clock of registration times (default time.Now).
	Now func() time.Time
	// TaskFile is the task the coordinator trains, as configured
	// (FEDERATED_TASK); nil for the built-in diagnosis task. Run are the
	// run's settings. Both feed GET /api/v1/federated/task.
	TaskFile *federated.TaskFile
	Run      federated.RunSettings
	// ProofKeys returns the encoded proving and verifying key of the named
	// shape (normproof.Shape.Name) in a proved run, setting them up on
	// first use; nil when the run takes no proofs. A shape the run cannot
	// have is a CodeInvalid error.
	ProofKeys func(ctx context.Context, shape string) (pk, vk []byte, err error)
	// Tasks are the tasks run beside this default one, reached at
	// /api/v1/federated/tasks/{task}/...; nil: the default task only (and
	// POST /api/v1/federated/tasks answers 503).
	Tasks FederatedTasks
}

// FederatedStatus implements FederatedInfo from the coordinator's state: the
// round now open and how many organizations have joined it; trained once a
// round has produced a model version.
func (f *FederatedAPI) FederatedStatus(ctx context.Context) (healthagents.FederatedStatus, bool, error) {
	st, err := f.Coordinator.Status(ctx)
	if err != nil {
		return healthagents.FederatedStatus{}, false, err
	}
	return healthagents.FederatedStatus{CurrentRound: st.Round, Participants: st.Participants}, st.Version != "1.0.0", nil
}

var _ FederatedInfo = (*FederatedAPI)(nil)

// FederatedUpdateRequest is the body of POST /submit-federated-update.
type FederatedUpdateRequest struct {
	PatientDataList []*healthagents.PatientData `json:"patient_data_list" doc:"Encrypted records of the submitting organization: at most 1000 advised, 5000 accepted (413 beyond)."`
	RoundNumber     int                         `json:"round_number" doc:"The round now open (0-indexed); see GET /status."`
}

var roundParam = []openapi.Param{{Name: "round", Description: "The round number (0-indexed).", Example: 0, Schema: &openapi.Schema{Type: openapi.Types{"integer"}, Minimum: ptrFloat(0)}}}

func (s *srv) federatedRoutes() []route {
	fedErrs := []int{400, 401, 403, 409, 429, 503}
	// The round protocol of the default task; federatedTaskRoutes serves
	// it again for every task under /api/v1/federated/tasks/{task}.
	rounds := []route{
		{Method: "GET", Path: "/api/v1/federated/model", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.globalModel), Doc: openapi.Operation{
				OperationID: "getFederatedModel", Tags: []string{"federated"}, Summary: "The current global model",
				Description: "The latest model version: its weights (hex of the canonical encoding, and as numbers), the features' standardization, the classes and the held-out accuracy. " +
					"With ?format=onnx the answer is instead a self-contained ONNX model (application/onnx, opset 13, float64): input features [N, F], the raw feature values in features order (NaN: missing); " +
					"outputs probabilities [N, C] in classes order and class [N], the most probable class index. The standardization is inside the graph, so it predicts what the service predicts. " +
					"409 for a task with learned features before its statistics round closed.",
				QueryParams: []openapi.Param{{Name: "format", Description: "json (default) or onnx.", Value: "json", Schema: &openapi.Schema{Type: openapi.Types{"string"}, Enum: []any{"json", "onnx"}}}},
				Responses: map[int]openapi.Response{http.StatusOK: {Description: "The latest model version.", Body: api.GlobalModel{},
					Alternates: map[string]*openapi.Schema{federated.ONNXMediaType: {Type: openapi.Types{"string"}, Format: "binary", Description: "With ?format=onnx: the model as an ONNX ModelProto (binary protocol buffer).", Examples: []any{"(binary: an ONNX ModelProto, opset 13)"}}}}},
				Errors: []int{400, 401, 403, 409, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/federated/rounds/current", Leader: true, Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.currentRound), Doc: openapi.Operation{
				OperationID: "getFederatedRound", Tags: []string{"federated"}, Summary: "The open round as the caller sees it",
				Description: "Phase, parameters, starting model, the advertised keys (from share_keys on), the shares addressed to the caller (masked_input) and the survivors (unmasking). 409 when no round can open (maximum rounds or privacy budget reached). " +
					"With ?wait=N (1-25 seconds) this is a long poll: while the caller has answered the current phase (done) the answer waits up to N seconds for the round to move on, so a participant need not poll within its rate class.",
				QueryParams: []openapi.Param{{Name: "wait", Description: "Long poll: seconds (1-25) to wait while the caller has nothing to do.", Value: 0}},
				Responses:   ok("The round.", api.FederatedRound{}), Errors: fedErrs, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/v1/federated/rounds/{round}/keys", Leader: true, Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.advertiseKeys), Doc: openapi.Operation{
				OperationID: "advertiseFederatedKeys", Tags: []string{"federated"}, Summary: "Secure aggregation, phase 1: advertise two X25519 public keys",
				PathParams: roundParam, Request: api.KeysSubmission{}, Responses: accepted(), Errors: fedErrs, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/v1/federated/rounds/{round}/shares", Leader: true, Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral, Body: RoundBodyBytes,
			Handler: http.HandlerFunc(s.shareKeys), Doc: openapi.Operation{
				OperationID: "shareFederatedKeys", Tags: []string{"federated"}, Summary: "Secure aggregation, phase 2: sealed Shamir shares for every other participant",
				PathParams: roundParam, Request: api.SharesSubmission{}, Responses: accepted(), Errors: fedErrs, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/v1/federated/gradients", Leader: true, Scope: apikey.ScopeFederated, Class: ratelimit.ClassFederated, Gate: classFederated, Body: bodyGradient,
			Handler: http.HandlerFunc(s.submitGradients), Doc: openapi.Operation{
				OperationID: "submitFederatedGradients", Tags: []string{"federated"}, Summary: "Secure aggregation, phase 3: the masked update",
				Description: "gradients_encrypted is the masked vector. A stale model_version or a closed or wrong round is 400 and changes nothing. A body that is no masked input of the round (over the limit: 413; not JSON, invalid hex, not a masked vector, a wrong length, words not below the field modulus, a failed proof: 400) refuses the organization for the rest of the round, as a failed proof does: 409 on a second try, the round closes without it once the others are in, and it may join the next. The coordinator never receives an unmasked update.",
				Request:     api.GradientSubmission{}, Responses: accepted(), Errors: []int{400, 401, 403, 409, 413, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/v1/federated/rounds/{round}/reveals", Leader: true, Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral, Body: RoundBodyBytes,
			Handler: http.HandlerFunc(s.revealShares), Doc: openapi.Operation{
				OperationID: "revealFederatedShares", Tags: []string{"federated"}, Summary: "Secure aggregation, phase 4: the shares that unmask the sum",
				Description: "For every organization that shared keys: its self_mask share if it is a survivor, its mask_key share if it dropped out.",
				PathParams:  roundParam, Request: api.RevealsSubmission{}, Responses: accepted(), Errors: fedErrs, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/federated/proof-keys/{shape}", Scope: apikey.ScopeFederated, Class: ratelimit.ClassFederated, Gate: classFederated,
			Handler: http.HandlerFunc(s.federatedProofKeys), Doc: openapi.Operation{
				OperationID: "getFederatedProofKeys", Tags: []string{"federated"}, Summary: "The Groth16 keys of a proved round's shape",
				Description: "In a proved run (FEDERATED_PROOFS=on) a participant proves its masked update with the proving key of its round's shape " +
					"(weights, evaluation words, peers, bits: w5-e5-p2-b25). The coordinator sets each shape's keys up once (seconds) and keeps them under DATA_DIR. " +
					"404 when the run takes no proofs; 400 for a shape this run cannot have.",
				PathParams: []openapi.Param{{Name: "shape", Description: "wW-eE-pP-bB: W weights, E evaluation words, P peers, B bits (e.g. w5-e5-p2-b25)", Value: "w5-e5-p2-b25"}},
				Responses:  ok("The keys.", api.ProofKeys{}), Errors: []int{400, 401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
	}
	rs := []route{
		{Method: "POST", Path: "/submit-federated-update", Leader: true, Scope: apikey.ScopeFederated, Class: ratelimit.ClassFederated, Gate: classFederated, Body: MaxFederatedBodyBytes, Audit: &auditSpec{action: audit.ActionFederatedSubmitUpdate},
			Handler: http.HandlerFunc(s.submitFederatedUpdate), Doc: openapi.Operation{
				OperationID: "submitFederatedUpdate", Tags: []string{"federated"}, Summary: "Train a local update on encrypted records and enter it into the round",
				Description: "Decrypts and checks every envelope, then the service trains the caller's local update inside a participant it hosts for the caller's organization " +
					"(the organization of the API key; all callers without one count together as one participant) and enters it into the round's secure aggregation. " +
					"The response reports the round entered and the participants so far; the new model appears at GET /api/v1/federated/model once the round closes. " +
					"round_number must be the open round (400 otherwise, naming it); a round past key advertisement, or a second submission of the same organization in a round, is 409. " +
					"More than 5000 records is 413. An undecryptable record gives 400 `Federated learning submission failed: Decryption failed - check encryption key`; work beyond the timeout 500 `Federated learning submission failed: Timeout`.",
				Request: FederatedUpdateRequest{}, Responses: ok("The update entered the round.", api.FederatedUpdateResult{}),
				Errors: []int{400, 403, 409, 413, 429, 500, 503}, RateLimited: true, Auth: openapi.AuthOptional,
			}},
		{Method: "POST", Path: "/api/v1/federated/organizations", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.registerOrganization), Doc: openapi.Operation{
				OperationID: "registerFederatedOrganization", Tags: []string{"federated"}, Summary: "Register the caller's organization",
				Description: "Needs a key with the federated scope bound to an organization: organization_id is that organization. 201 on first registration, 200 when it replaces an earlier one. Registration is required before the v1 round endpoints (403 `" + api.NotRegisteredDetail + "` until then). " +
					"encryption_key is the public half of the organization's long-term X25519 key pair. `healthagents participant` makes the pair and registers it by itself when its organization is not registered, keeping the private half in its state file (0600); `healthagents participant init` does only that. " +
					"By hand: `openssl genpkey -algorithm X25519 -out org.pem`, then `openssl pkey -in org.pem -pubout -outform DER | tail -c 32 | base64` is the key. The example's key is RFC 7748's published test vector (section 6.1): never register it.",
				Request: api.OrganizationRequest{},
				Responses: map[int]openapi.Response{
					http.StatusCreated: {Description: "Registered.", Body: Organization{}},
					http.StatusOK:      {Description: "Registration replaced.", Body: Organization{}},
				},
				Errors: []int{400, 401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/federated/task", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.federatedTask), Doc: openapi.Operation{
				OperationID: "getFederatedTask", Tags: []string{"federated"}, Summary: "The task being trained, the run's settings and its privacy budget",
				Description: "The task definition (the FEDERATED_TASK file; a participant may load it as its task file), its hash, the run's rounds, clip norm and participants, " +
					"and the differential-privacy budget with epsilon spent and remaining.",
				Responses: ok("The task.", api.FederatedTask{}), Errors: []int{401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
	}
	rs = append(rs, rounds...)
	return append(rs, s.federatedTaskRoutes(rounds)...)
}

func accepted() map[int]openapi.Response {
	return map[int]openapi.Response{http.StatusAccepted: {Description: "Accepted and stored.", Body: api.FederatedAccepted{}}}
}

// fed returns the federated dependencies, or writes 503.
func (s *srv) fed(w http.ResponseWriter) *FederatedAPI {
	f := s.deps.FederatedAPI
	if f == nil || f.Coordinator == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return nil
	}
	return f
}

// participantOf returns the participant identifier of the caller on the
// root family: the key's organization, or AnonymousParticipant.
func participantOf(r *http.Request) string {
	if k := requestKey(r); k != nil && k.Organization != "" {
		return k.Organization
	}
	return AnonymousParticipant
}

// organizationOf returns the caller's organization on the v1 endpoints,
// writing 403 when the key has none.
func (s *srv) organizationOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	k := requestKey(r)
	if k == nil || k.Organization == "" || k.Organization == AnonymousParticipant || len(k.Organization) > secagg.MaxIDLen {
		writeDetail(w, http.StatusForbidden, detailNotOrganization)
		return "", false
	}
	return k.Organization, true
}

// registered returns the caller's organization if it is registered.
func (s *srv) registered(w http.ResponseWriter, r *http.Request, f *FederatedAPI) (string, bool) {
	org, ok := s.organizationOf(w, r)
	if !ok {
		return "", false
	}
	if f.Organizations == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return "", false
	}
	if _, err := f.Organizations.Organization(r.Context(), org); err != nil {
		if errors.Is(err, federated.ErrOrganizationNotFound) {
			writeDetail(w, http.StatusForbidden, detailNotRegistered)
		} else {
			s.writeError(w, r, fedError(err))
		}
		return "", false
	}
	return org, true
}

// Codes at the front of the details of federated protocol errors (the v1
// convention: "CODE: text"), so that a remote participant can tell them
// apart; the SDK maps them back to the federated package's errors.
const (
	FedCodeWrongRound        = "WRONG_ROUND"
	FedCodeStaleModel        = "STALE_MODEL"
	FedCodeInvalidSubmission = "INVALID_SUBMISSION"
	FedCodeWrongPhase        = "WRONG_PHASE"
	FedCodeDuplicate         = "DUPLICATE"
	FedCodeNotParticipant    = "NOT_PARTICIPANT"
	FedCodeRoundFull         = "ROUND_FULL"
	FedCodeNoOpenRound       = "NO_OPEN_ROUND"
)

// fedError maps coordinator errors onto the service's codes. Their texts are
// structural (rounds, phases, lengths) and never hold data.
func fedError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "federated: ")
	var re *federated.RoundError
	coded := func(code healthagents.Code, prefix, text string) error {
		return healthagents.WrapError(code, err, prefix+": "+text)
	}
	switch {
	case errors.As(err, &re):
		return coded(healthagents.CodeInvalid, FedCodeWrongRound, fmt.Sprintf("round %d requested, the current round is %d", re.Got, re.Current))
	case errors.Is(err, federated.ErrStaleModel):
		return coded(healthagents.CodeInvalid, FedCodeStaleModel, msg)
	case errors.Is(err, federated.ErrInvalidSubmission):
		return coded(healthagents.CodeInvalid, FedCodeInvalidSubmission, msg)
	case errors.Is(err, federated.ErrWrongPhase):
		return coded(healthagents.CodeConflict, FedCodeWrongPhase, msg)
	case errors.Is(err, federated.ErrRoundOver):
		return coded(healthagents.CodeConflict, FedCodeWrongPhase, "the round moved on before the organization joined it")
	case errors.Is(err, federated.ErrDuplicate), errors.Is(err, federated.ErrAlreadyHosted):
		return coded(healthagents.CodeConflict, FedCodeDuplicate, msg)
	case errors.Is(err, federated.ErrNotParticipant):
		return coded(healthagents.CodeConflict, FedCodeNotParticipant, msg)
	case errors.Is(err, federated.ErrRoundFull):
		return coded(healthagents.CodeConflict, FedCodeRoundFull, msg)
	case errors.Is(err, federated.ErrNoOpenRound):
		return coded(healthagents.CodeConflict, FedCodeNoOpenRound, msg)
	case errors.Is(err, federated.ErrHostClosed), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return healthagents.WrapError(healthagents.CodeUnavailable, err, detailUnavailable)
	}
	var he *healthagents.Error
	if errors.As(err, &he) {
		return err
	}
	return healthagents.WrapError(healthagents.CodeInternal, err, "Internal server error")
}

func (s *srv) submitFederatedUpdate(w http.ResponseWriter, r *http.Request) {
	f := s.fed(w)
	if f == nil {
		return
	}
	if f.Host == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return
	}
	var req FederatedUpdateRequest
	if err := read(w, r, MaxFederatedBodyBytes, &req, "patient_data_list", "round_number"); err != nil {
		s.writeError(w, r, err)
		return
	}
	switch n := len(req.PatientDataList); {
	case n == 0:
		writeDetail(w, http.StatusBadRequest, "Validation error: field 'patient_data_list' must hold at least one record")
		return
	case n > MaxFederatedRecords:
		writeDetail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s: %d records; at most %d are accepted (1000 advised)", federatedPrefix, n, MaxFederatedRecords))
		return
	}
	noteRecords(r, len(req.PatientDataList))
	timeout := f.SubmitTimeout
	if timeout <= 0 {
		timeout = DefaultFederatedSubmitTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	org := participantOf(r)
	// Refuse a wrong round before the decryption work.
	v, err := f.Coordinator.View(ctx, org)
	if err != nil {
		s.writeFederated(w, r, ctx, err)
		return
	}
	if err := checkJoinable(v, req.RoundNumber); err != nil {
		s.writeError(w, r, err)
		return
	}
	recs, err := s.openRecords(ctx, req.PatientDataList)
	if err != nil {
		s.writeFederated(w, r, ctx, err)
		return
	}
	j, err := f.Host.Join(ctx, org, req.RoundNumber, recs)
	if errors.Is(err, federated.ErrTask) {
		err = healthagents.WrapError(healthagents.CodeInvalid, err, federatedPrefix+": no record carries a diagnosis label of the task to train on")
	}
	if err != nil {
		s.writeFederated(w, r, ctx, err)
		return
	}
	writeJSON(w, http.StatusOK, api.FederatedUpdateResult{Round: j.Round, Participants: j.Participants, ModelHash: j.ModelHash,
		ModelVersion: j.ModelVersion, Phase: string(j.Phase), Records: j.Records})
}

// checkJoinable refuses a round_number that is not the open round, or an
// open round past key advertisement (nobody can join it any more).
func checkJoinable(v *federated.RoundView, round int) error {
	switch {
	case round < 0:
		return healthagents.Errorf(healthagents.CodeInvalid, "Validation error: field 'round_number' must be at least 0")
	case round != v.Round:
		return healthagents.Errorf(healthagents.CodeInvalid, "%s: round_number %d is not the open round; the current round is %d", federatedPrefix, round, v.Round)
	case v.Phase != federated.PhaseAdvertiseKeys:
		return healthagents.Errorf(healthagents.CodeConflict, "%s: round %d no longer accepts participants (phase %s); submit for round %d when it opens", federatedPrefix, v.Round, v.Phase, v.Round+1)
	case v.Done:
		return healthagents.Errorf(healthagents.CodeConflict, "%s: the organization already takes part in round %d", federatedPrefix, v.Round)
	}
	return nil
}

// writeFederated writes err, turning an expired submission deadline into
// the Timeout detail and a decryption failure into its detail. The timeout
// is a 500, the status of every federated training error; the API's error
// statuses have no 504 (docs/decisions.md, "Errors and statuses").
func (s *srv) writeFederated(w http.ResponseWriter, r *http.Request, ctx context.Context, err error) {
	switch {
	case errors.Is(err, cipher.ErrDecrypt):
		err = healthagents.WrapError(healthagents.CodeInvalid, err, detailFedDecryption)
	case ctx.Err() != nil && r.Context().Err() == nil:
		err = healthagents.WrapError(healthagents.CodeInternal, ctx.Err(), detailFedTimeout)
	default:
		err = fedError(err)
	}
	s.writeError(w, r, err)
}

// openRecords decrypts and checks every envelope on up to GOMAXPROCS
// goroutines; the first failure (in list order) is returned.
func (s *srv) openRecords(ctx context.Context, envs []*healthagents.PatientData) ([]*record.Record, error) {
	recs := make([]*record.Record, len(envs))
	errs := make([]error, len(envs))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(envs)/64))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(envs); i += workers {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					return
				}
				if envs[i] == nil {
					errs[i] = healthagents.Errorf(healthagents.CodeInvalid, "Validation error: patient_data_list[%d] is null", i)
					continue
				}
				recs[i], errs[i] = s.deps.Service.OpenTrainingRecord(ctx, envs[i])
			}
		})
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return recs, nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeHex decodes a hex field of a federated body, with a 400 naming it.
func decodeHex(field, s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: field '%s' must be hex", field)
	}
	return b, nil
}
