package server

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/healthagents/healthagents"
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
	detailNotRegistered   = detailForbidden + " - the organization is not registered (POST /api/v1/federated/organizations)"
)

// FederatedCoordinator is the coordinator behind the federated endpoints;
// *federated.Coordinator implements it.
type FederatedCoordinator interface {
	View(ctx context.Context, org string) (*federated.RoundView, error)
	Submit(ctx context.Context, org string, s federated.Submission) error
	History(ctx context.Context) ([]federated.ModelVersion, error)
	Status(ctx context.Context) (federated.Status, error)
}

var _ FederatedCoordinator = (*federated.Coordinator)(nil)

// ErrOrganizationNotFound is returned by an OrganizationRegistry for an
// organization never registered.
var ErrOrganizationNotFound = errors.New("server: organization not registered")

// OrganizationRegistry keeps the organizations registered through POST
// /api/v1/federated/organizations.
type OrganizationRegistry interface {
	// RegisterOrganization inserts or replaces o (keyed by its ID) and
	// reports whether it was new. It keeps CreatedAt of an existing entry.
	RegisterOrganization(ctx context.Context, o Organization) (created bool, err error)
	// Organization returns the registration of id or ErrOrganizationNotFound.
	Organization(ctx context.Context, id string) (Organization, error)
}

// FederatedAPI is what the federated endpoints need. Set it as
// Deps.FederatedAPI, and as Deps.Federated for GET /status.
type FederatedAPI struct {
	Coordinator   FederatedCoordinator // required
	Organizations OrganizationRegistry // required for the v1 endpoints
	// Host trains the local updates of root-family submitters; without it
	// POST /submit-federated-update answers 503.
	Host *ParticipantHost
	// SubmitTimeout bounds one /submit-federated-update (default
	// DefaultFederatedSubmitTimeout).
	SubmitTimeout time.Duration
	// MaxGradientBytes bounds gradient bodies (default DefaultMaxGradientBytes).
	MaxGradientBytes int64
	// Now is the clock of registration times (default time.Now).
	Now func() time.Time
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

// FederatedUpdateResult answers POST /submit-federated-update (spec 2.5).
type FederatedUpdateResult struct {
	Round        int    `json:"round" doc:"The round the update entered."`
	Participants int    `json:"participants" doc:"Organizations in that round so far, this one included."`
	ModelHash    string `json:"model_hash" doc:"SHA-256 (64 hex) of the current global model: the round's starting model. The round's result appears at GET /api/v1/federated/model when it closes."`
	ModelVersion string `json:"model_version" doc:"Version of that model."`
	Phase        string `json:"phase" doc:"The round's phase after this submission."`
	Records      int    `json:"records" doc:"Records that carried a usable label for the task."`
}

// OrganizationRequest is the body of POST /api/v1/federated/organizations.
type OrganizationRequest struct {
	OrganizationName string `json:"organization_name" doc:"Display name, 1-200 characters."`
	Endpoint         string `json:"endpoint" doc:"The organization's https:// (or http://) URL, for the directory; the service never calls it."`
	EncryptionKey    string `json:"encryption_key" doc:"The organization's long-term X25519 public key: 32 bytes as 64 hex digits or standard/URL-safe Base64."`
}

// Organization is a registered federated participant. OrganizationID is the
// organization of the registering API key.
type Organization struct {
	OrganizationID   string    `json:"organization_id"`
	OrganizationName string    `json:"organization_name"`
	Endpoint         string    `json:"endpoint"`
	EncryptionKey    string    `json:"encryption_key" doc:"X25519 public key, 64 lowercase hex digits."`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// GradientSubmission is the body of POST /api/v1/federated/gradients: the
// masked-input step of secure aggregation.
type GradientSubmission struct {
	OrganizationID     string `json:"organization_id" doc:"Must be the organization of the API key."`
	Round              int    `json:"round"`
	GradientsEncrypted string `json:"gradients_encrypted" doc:"Hex of the masked vector (secagg.MaskedInput binary form: \"HASM\", version 1, uint32 LE length, uint64 LE words); its length must be the round's dim."`
	ModelVersion       string `json:"model_version" doc:"The round's starting model version the update was trained from."`
	SampleCount        int    `json:"sample_count" doc:"Training records used; informational (organizations weigh equally)."`
}

// FederatedAccepted answers an accepted protocol message.
type FederatedAccepted struct {
	Accepted     bool   `json:"accepted"`
	Round        int    `json:"round" doc:"The round the message was accepted for."`
	CurrentRound int    `json:"current_round" doc:"The round now open (the next one, if this message closed the round)."`
	Phase        string `json:"phase" doc:"Phase of the current round."`
	Participants int    `json:"participants"`
}

// GlobalModel answers GET /api/v1/federated/model.
type GlobalModel struct {
	ModelVersion             string   `json:"model_version" example:"1.0.3"`
	ModelHash                string   `json:"model_hash" doc:"SHA-256 hex of the canonical weight encoding."`
	Weights                  string   `json:"weights" doc:"Hex of the canonical weight encoding (\"HAFW\", version 1, uint32 LE count, float64 LE weights)."`
	Accuracy                 *float64 `json:"accuracy" doc:"Held-out accuracy (0-1) summed over the participants' held-out records, null before any round closed. It measures accuracy_model_version, the starting model of the latest round."`
	AccuracyModelVersion     string   `json:"accuracy_model_version,omitempty"`
	EvalSamples              int      `json:"eval_samples,omitempty"`
	OrganizationsContributed int      `json:"organizations_contributed" doc:"Organizations whose updates made this version."`
	TrainingRound            int      `json:"training_round" doc:"The round that produced this version; -1 for the initial model."`
	CurrentRound             int      `json:"current_round"`
	EpsilonSpent             float64  `json:"epsilon_spent" doc:"Differential-privacy epsilon spent by the whole run so far (0 without DP)."`
}

// AdvertisedKeys is one organization's public keys of a round.
type AdvertisedKeys struct {
	OrganizationID  string `json:"organization_id"`
	CipherPublicKey string `json:"cipher_public_key" doc:"X25519, 64 hex."`
	MaskPublicKey   string `json:"mask_public_key" doc:"X25519, 64 hex."`
}

// KeysSubmission is the body of POST /api/v1/federated/rounds/{round}/keys.
type KeysSubmission struct {
	CipherPublicKey string `json:"cipher_public_key" doc:"Fresh X25519 public key sealing shares, 64 hex."`
	MaskPublicKey   string `json:"mask_public_key" doc:"Fresh X25519 public key of the pairwise masks, 64 hex."`
}

// SealedShare carries shares from one organization to another.
type SealedShare struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Ciphertext string `json:"ciphertext" doc:"XChaCha20-Poly1305 ciphertext, hex."`
}

// SharesSubmission is the body of POST /api/v1/federated/rounds/{round}/shares.
type SharesSubmission struct {
	Commitment string        `json:"commitment" doc:"SHA-256 commitment to the self-mask seed, 64 hex."`
	Shares     []SealedShare `json:"shares" doc:"One per other roster member; from is the caller."`
}

// RevealedShare is one share handed over in the unmasking phase.
type RevealedShare struct {
	Of    string `json:"of" doc:"The organization whose secret this is a share of."`
	Kind  string `json:"kind" enum:"self_mask,mask_key"`
	Share string `json:"share" doc:"Shamir share, hex: x (uint16 BE) then y (66 bytes)."`
}

// RevealsSubmission is the body of POST /api/v1/federated/rounds/{round}/reveals.
type RevealsSubmission struct {
	Reveals []RevealedShare `json:"reveals"`
}

// FederatedRound is the current round as the calling organization sees it.
type FederatedRound struct {
	Round           int              `json:"round"`
	Phase           string           `json:"phase" enum:"advertise_keys,share_keys,masked_input,unmasking"`
	TaskHash        string           `json:"task_hash"`
	ModelVersion    string           `json:"model_version" doc:"The round's starting model."`
	ModelHash       string           `json:"model_hash"`
	Weights         string           `json:"weights" doc:"Hex canonical encoding of the starting model."`
	Session         string           `json:"session" doc:"32-byte session id, hex."`
	Dim             int              `json:"dim" doc:"Masked vector length: weights + 2 evaluation counters."`
	ClipNorm        float64          `json:"clip_norm"`
	FracBits        uint             `json:"frac_bits"`
	MaxParticipants int              `json:"max_participants"`
	MaxEvalRecords  int              `json:"max_eval_records"`
	Threshold       int              `json:"threshold,omitempty"`
	PhaseDeadline   time.Time        `json:"phase_deadline"`
	Deadline        time.Time        `json:"deadline"`
	Participants    int              `json:"participants"`
	Roster          []AdvertisedKeys `json:"roster,omitempty" doc:"Advertised keys, from share_keys on."`
	SharedKeys      []string         `json:"shared_keys,omitempty" doc:"Organizations that shared keys (U2), from masked_input on."`
	Inbox           []SealedShare    `json:"inbox,omitempty" doc:"Shares addressed to the caller, in masked_input."`
	Survivors       []string         `json:"survivors,omitempty" doc:"Organizations that sent masked input (U3), in unmasking."`
	Done            bool             `json:"done" doc:"The caller has answered the current phase."`
}

var roundParam = []openapi.Param{{Name: "round", Description: "The round number (0-indexed).", Example: 0, Schema: &openapi.Schema{Type: openapi.Types{"integer"}, Minimum: ptrFloat(0)}}}

func (s *srv) federatedRoutes() []route {
	fedErrs := []int{400, 401, 403, 409, 429, 503}
	return []route{
		{Method: "POST", Path: "/submit-federated-update", Scope: apikey.ScopeFederated, Class: ratelimit.ClassFederated, Gate: classFederated, Body: MaxFederatedBodyBytes, Audit: &auditSpec{action: audit.ActionFederatedSubmitUpdate},
			Handler: http.HandlerFunc(s.submitFederatedUpdate), Doc: openapi.Operation{
				OperationID: "submitFederatedUpdate", Tags: []string{"federated"}, Summary: "Train a local update on encrypted records and enter it into the round",
				Description: "Decrypts and checks every envelope, then the service trains the caller's local update inside a participant it hosts for the caller's organization " +
					"(the organization of the API key; all callers without one count together as one participant) and enters it into the round's secure aggregation. " +
					"The response reports the round entered and the participants so far; the new model appears at GET /api/v1/federated/model once the round closes. " +
					"round_number must be the open round (400 otherwise, naming it); a round past key advertisement, or a second submission of the same organization in a round, is 409. " +
					"More than 5000 records is 413. An undecryptable record gives 400 `Federated learning submission failed: Decryption failed - check encryption key`; work beyond the timeout 500 `Federated learning submission failed: Timeout`.",
				Request: FederatedUpdateRequest{}, Responses: ok("The update entered the round.", FederatedUpdateResult{}),
				Errors: []int{400, 403, 409, 413, 429, 500, 503}, RateLimited: true, Auth: openapi.AuthOptional,
			}},
		{Method: "POST", Path: "/api/v1/federated/organizations", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.registerOrganization), Doc: openapi.Operation{
				OperationID: "registerFederatedOrganization", Tags: []string{"federated"}, Summary: "Register the caller's organization",
				Description: "Needs a key with the federated scope bound to an organization: organization_id is that organization. 201 on first registration, 200 when it replaces an earlier one. Registration is required before the v1 round endpoints.",
				Request:     OrganizationRequest{},
				Responses: map[int]openapi.Response{
					http.StatusCreated: {Description: "Registered.", Body: Organization{}},
					http.StatusOK:      {Description: "Registration replaced.", Body: Organization{}},
				},
				Errors: []int{400, 401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/federated/model", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.globalModel), Doc: openapi.Operation{
				OperationID: "getFederatedModel", Tags: []string{"federated"}, Summary: "The current global model",
				Responses: ok("The latest model version.", GlobalModel{}), Errors: []int{401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/federated/rounds/current", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.currentRound), Doc: openapi.Operation{
				OperationID: "getFederatedRound", Tags: []string{"federated"}, Summary: "The open round as the caller sees it",
				Description: "Phase, parameters, starting model, the advertised keys (from share_keys on), the shares addressed to the caller (masked_input) and the survivors (unmasking). 409 when no round can open (maximum rounds or privacy budget reached).",
				Responses:   ok("The round.", FederatedRound{}), Errors: fedErrs, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/v1/federated/rounds/{round}/keys", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.advertiseKeys), Doc: openapi.Operation{
				OperationID: "advertiseFederatedKeys", Tags: []string{"federated"}, Summary: "Secure aggregation, phase 1: advertise two X25519 public keys",
				PathParams: roundParam, Request: KeysSubmission{}, Responses: accepted(), Errors: fedErrs, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/v1/federated/rounds/{round}/shares", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral, Body: RoundBodyBytes,
			Handler: http.HandlerFunc(s.shareKeys), Doc: openapi.Operation{
				OperationID: "shareFederatedKeys", Tags: []string{"federated"}, Summary: "Secure aggregation, phase 2: sealed Shamir shares for every other participant",
				PathParams: roundParam, Request: SharesSubmission{}, Responses: accepted(), Errors: fedErrs, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/v1/federated/gradients", Scope: apikey.ScopeFederated, Class: ratelimit.ClassFederated, Gate: classFederated, Body: bodyGradient,
			Handler: http.HandlerFunc(s.submitGradients), Doc: openapi.Operation{
				OperationID: "submitFederatedGradients", Tags: []string{"federated"}, Summary: "Secure aggregation, phase 3: the masked update",
				Description: "gradients_encrypted is the masked vector; invalid hex, a malformed vector, a wrong length, a stale model_version or a closed or wrong round is 400 and changes nothing. The coordinator never receives an unmasked update.",
				Request:     GradientSubmission{}, Responses: accepted(), Errors: []int{400, 401, 403, 409, 413, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/v1/federated/rounds/{round}/reveals", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral, Body: RoundBodyBytes,
			Handler: http.HandlerFunc(s.revealShares), Doc: openapi.Operation{
				OperationID: "revealFederatedShares", Tags: []string{"federated"}, Summary: "Secure aggregation, phase 4: the shares that unmask the sum",
				Description: "For every organization that shared keys: its self_mask share if it is a survivor, its mask_key share if it dropped out.",
				PathParams:  roundParam, Request: RevealsSubmission{}, Responses: accepted(), Errors: fedErrs, RateLimited: true, Auth: openapi.AuthRequired,
			}},
	}
}

func accepted() map[int]openapi.Response {
	return map[int]openapi.Response{http.StatusAccepted: {Description: "Accepted and stored.", Body: FederatedAccepted{}}}
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
		if errors.Is(err, ErrOrganizationNotFound) {
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
	case errors.Is(err, errRoundOver):
		return coded(healthagents.CodeConflict, FedCodeWrongPhase, "the round moved on before the organization joined it")
	case errors.Is(err, federated.ErrDuplicate), errors.Is(err, errAlreadyHosted):
		return coded(healthagents.CodeConflict, FedCodeDuplicate, msg)
	case errors.Is(err, federated.ErrNotParticipant):
		return coded(healthagents.CodeConflict, FedCodeNotParticipant, msg)
	case errors.Is(err, federated.ErrRoundFull):
		return coded(healthagents.CodeConflict, FedCodeRoundFull, msg)
	case errors.Is(err, federated.ErrNoOpenRound):
		return coded(healthagents.CodeConflict, FedCodeNoOpenRound, msg)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
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
	res, err := f.Host.Join(ctx, org, req.RoundNumber, recs)
	if err != nil {
		s.writeFederated(w, r, ctx, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
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
// the spec's Timeout and a decryption failure into its detail. The timeout
// is a 500, the status spec 4.1 gives training errors; section 7's table
// has no 504.
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
				recs[i], errs[i] = s.deps.Service.OpenRecord(ctx, envs[i], federatedPrefix)
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

func (s *srv) registerOrganization(w http.ResponseWriter, r *http.Request) {
	f := s.fed(w)
	if f == nil {
		return
	}
	org, ok := s.organizationOf(w, r)
	if !ok {
		return
	}
	if f.Organizations == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return
	}
	var req OrganizationRequest
	if err := read(w, r, s.opts.maxBody, &req, "organization_name", "endpoint", "encryption_key"); err != nil {
		s.writeError(w, r, err)
		return
	}
	o, err := validateOrganization(org, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	o.CreatedAt = now().UTC()
	o.UpdatedAt = o.CreatedAt
	created, err := f.Organizations.RegisterOrganization(r.Context(), o)
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	got, err := f.Organizations.Organization(r.Context(), org)
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, got)
}

// validateOrganization checks a registration and normalizes the key to hex.
func validateOrganization(id string, req OrganizationRequest) (Organization, error) {
	name := strings.TrimSpace(req.OrganizationName)
	if name == "" || len(name) > 200 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Organization{}, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: field 'organization_name' must be 1-200 printable characters")
	}
	u, err := url.Parse(strings.TrimSpace(req.Endpoint))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(req.Endpoint) > 2048 {
		return Organization{}, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: field 'endpoint' must be an http(s) URL with a host and no user info")
	}
	key, err := ParseX25519PublicKey(req.EncryptionKey)
	if err != nil {
		return Organization{}, healthagents.WrapError(healthagents.CodeInvalid, err, "Validation error: field 'encryption_key' must be an X25519 public key: 32 bytes as 64 hex digits or Base64")
	}
	return Organization{OrganizationID: id, OrganizationName: name, Endpoint: u.String(), EncryptionKey: hex.EncodeToString(key)}, nil
}

// ParseX25519PublicKey reads a 32-byte X25519 public key written as 64 hex
// digits or standard or URL-safe Base64 (padded or not). The all-zero key
// and the other low-order points are refused (they give a shared secret
// that does not depend on the private key).
func ParseX25519PublicKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	b, err := decodeKey(s)
	if err != nil {
		return nil, err
	}
	if len(b) != 32 {
		return nil, fmt.Errorf("X25519 public key of %d bytes, want 32", len(b))
	}
	if isLowOrder(b) {
		return nil, errors.New("X25519 public key of low order")
	}
	return b, nil
}

func decodeKey(s string) ([]byte, error) {
	if len(s) == 64 {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []func(string) ([]byte, error){b64Std, b64URL, b64RawStd, b64RawURL} {
		if b, err := enc(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("neither hex nor Base64")
}

// decodeHex decodes a hex field of a federated body, with a 400 naming it.
func decodeHex(field, s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: field '%s' must be hex", field)
	}
	return b, nil
}

func (s *srv) globalModel(w http.ResponseWriter, r *http.Request) {
	f := s.fed(w)
	if f == nil {
		return
	}
	h, err := f.Coordinator.History(r.Context())
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	st, err := f.Coordinator.Status(r.Context())
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	m := h[len(h)-1]
	enc, err := federated.EncodeWeights(m.Weights)
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	out := GlobalModel{
		ModelVersion: m.Version, ModelHash: m.Hash, Weights: hex.EncodeToString(enc),
		OrganizationsContributed: len(m.Contributors), TrainingRound: m.Round,
		CurrentRound: st.Round, EpsilonSpent: m.EpsilonSpent,
	}
	if met := federated.LatestMetrics(h); met != nil {
		acc := met.Accuracy
		out.Accuracy, out.AccuracyModelVersion, out.EvalSamples = &acc, met.EvaluatedVersion, met.EvalSamples
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *srv) currentRound(w http.ResponseWriter, r *http.Request) {
	f := s.fed(w)
	if f == nil {
		return
	}
	org, ok := s.registered(w, r, f)
	if !ok {
		return
	}
	v, err := f.Coordinator.View(r.Context(), org)
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	out, err := roundOut(v)
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func roundOut(v *federated.RoundView) (*FederatedRound, error) {
	enc, err := federated.EncodeWeights(v.Base.Weights)
	if err != nil {
		return nil, err
	}
	out := &FederatedRound{
		Round: v.Round, Phase: string(v.Phase), TaskHash: v.TaskHash,
		ModelVersion: v.Base.Version, ModelHash: v.Base.Hash, Weights: hex.EncodeToString(enc),
		Session: hex.EncodeToString(v.Session), Dim: v.Dim, ClipNorm: v.ClipNorm, FracBits: v.FracBits,
		MaxParticipants: v.MaxParticipants, MaxEvalRecords: v.MaxEvalRecords, Threshold: v.Threshold,
		PhaseDeadline: v.PhaseDeadline, Deadline: v.Deadline, Participants: v.Participants,
		SharedKeys: v.U2, Survivors: v.U3, Done: v.Done,
	}
	for _, k := range v.Roster {
		out.Roster = append(out.Roster, AdvertisedKeys{OrganizationID: k.ID, CipherPublicKey: hex.EncodeToString(k.Cipher), MaskPublicKey: hex.EncodeToString(k.Mask)})
	}
	for _, es := range v.Inbox {
		out.Inbox = append(out.Inbox, SealedShare{From: es.From, To: es.To, Ciphertext: hex.EncodeToString(es.Ciphertext)})
	}
	return out, nil
}

// pathRound reads the {round} path parameter.
func pathRound(r *http.Request) (int, error) {
	n, err := strconv.Atoi(r.PathValue("round"))
	if err != nil || n < 0 {
		return 0, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: round must be an integer of at least 0")
	}
	return n, nil
}

// submit runs one protocol message through the coordinator and answers 202.
func (s *srv) submit(w http.ResponseWriter, r *http.Request, f *FederatedAPI, org string, sub federated.Submission) {
	if err := f.Coordinator.Submit(r.Context(), org, sub); err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	out := FederatedAccepted{Accepted: true, Round: sub.Round}
	if st, err := f.Coordinator.Status(r.Context()); err == nil {
		out.CurrentRound, out.Phase, out.Participants = st.Round, string(st.Phase), st.Participants
	}
	writeJSON(w, http.StatusAccepted, out)
}

// roundRequest is the common start of the round-protocol endpoints: the
// coordinator is there, the caller's organization is registered, the path
// names a round, and the body decodes into req. On failure it has written
// the error and ok is false.
func (s *srv) roundRequest(w http.ResponseWriter, r *http.Request, req any, required ...string) (f *FederatedAPI, org string, round int, ok bool) {
	if f = s.fed(w); f == nil {
		return nil, "", 0, false
	}
	if org, ok = s.registered(w, r, f); !ok {
		return nil, "", 0, false
	}
	round, err := pathRound(r)
	if err != nil {
		s.writeError(w, r, err)
		return nil, "", 0, false
	}
	if err := read(w, r, s.opts.maxBody, req, required...); err != nil {
		s.writeError(w, r, err)
		return nil, "", 0, false
	}
	return f, org, round, true
}

func (s *srv) advertiseKeys(w http.ResponseWriter, r *http.Request) {
	var req KeysSubmission
	f, org, round, ok := s.roundRequest(w, r, &req, "cipher_public_key", "mask_public_key")
	if !ok {
		return
	}
	c, err := decodeHex("cipher_public_key", req.CipherPublicKey)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	m, err := decodeHex("mask_public_key", req.MaskPublicKey)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if isLowOrder(c) || isLowOrder(m) {
		writeDetail(w, http.StatusBadRequest, "Validation error: X25519 public key of low order")
		return
	}
	s.submit(w, r, f, org, federated.Submission{Round: round, Keys: &secagg.PublicKeys{ID: org, Cipher: c, Mask: m}})
}

func (s *srv) shareKeys(w http.ResponseWriter, r *http.Request) {
	var req SharesSubmission
	f, org, round, ok := s.roundRequest(w, r, &req, "commitment", "shares")
	if !ok {
		return
	}
	commit, err := decodeHex("commitment", req.Commitment)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	msg := &secagg.ShareKeysMessage{From: org, Commitment: commit, Shares: make([]secagg.EncryptedShare, 0, len(req.Shares))}
	for _, sh := range req.Shares {
		ct, err := decodeHex("shares.ciphertext", sh.Ciphertext)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		from := sh.From
		if from == "" {
			from = org
		}
		msg.Shares = append(msg.Shares, secagg.EncryptedShare{From: from, To: sh.To, Ciphertext: ct})
	}
	s.submit(w, r, f, org, federated.Submission{Round: round, Shares: msg})
}

func (s *srv) submitGradients(w http.ResponseWriter, r *http.Request) {
	f := s.fed(w)
	if f == nil {
		return
	}
	org, ok := s.registered(w, r, f)
	if !ok {
		return
	}
	limit := f.MaxGradientBytes
	if limit <= 0 {
		limit = DefaultMaxGradientBytes
	}
	var req GradientSubmission
	if err := read(w, r, limit, &req, "organization_id", "round", "gradients_encrypted", "model_version", "sample_count"); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.OrganizationID != org {
		writeDetail(w, http.StatusForbidden, detailForbidden+" - organization_id is not the API key's organization")
		return
	}
	if req.SampleCount < 0 {
		writeDetail(w, http.StatusBadRequest, "Validation error: field 'sample_count' must be at least 0")
		return
	}
	raw, err := decodeHex("gradients_encrypted", req.GradientsEncrypted)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var masked secagg.MaskedInput
	if err := masked.UnmarshalBinary(raw); err != nil {
		writeDetail(w, http.StatusBadRequest, "Validation error: field 'gradients_encrypted' is not a masked vector (\"HASM\", version 1, length, words)")
		return
	}
	s.submit(w, r, f, org, federated.Submission{Round: req.Round, ModelVersion: req.ModelVersion, Masked: masked})
}

func (s *srv) revealShares(w http.ResponseWriter, r *http.Request) {
	var req RevealsSubmission
	f, org, round, ok := s.roundRequest(w, r, &req, "reveals")
	if !ok {
		return
	}
	reveals := make([]secagg.RevealedShare, 0, len(req.Reveals))
	for _, rv := range req.Reveals {
		b, err := decodeHex("reveals.share", rv.Share)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		var sh secagg.Share
		if err := sh.UnmarshalBinary(b); err != nil {
			writeDetail(w, http.StatusBadRequest, "Validation error: field 'reveals.share' is not a Shamir share")
			return
		}
		kind := secagg.ShareKind(rv.Kind)
		if kind != secagg.SelfMask && kind != secagg.MaskKey {
			writeDetail(w, http.StatusBadRequest, "Validation error: field 'reveals.kind' must be self_mask or mask_key")
			return
		}
		reveals = append(reveals, secagg.RevealedShare{From: org, Of: rv.Of, Kind: kind, Share: sh})
	}
	s.submit(w, r, f, org, federated.Submission{Round: round, Reveals: reveals})
}

func b64Std(s string) ([]byte, error)    { return base64.StdEncoding.DecodeString(s) }
func b64URL(s string) ([]byte, error)    { return base64.URLEncoding.DecodeString(s) }
func b64RawStd(s string) ([]byte, error) { return base64.RawStdEncoding.DecodeString(s) }
func b64RawURL(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

// lowOrderProbe is a fixed X25519 private key. Every X25519 scalar is a
// multiple of the cofactor, so its shared secret with a low-order point is
// zero, which crypto/ecdh reports as an error: that identifies the point.
var lowOrderProbe = [32]byte{1: 0x5a, 7: 0x11, 31: 0x40}

// isLowOrder reports whether b is not a usable X25519 public key.
func isLowOrder(b []byte) bool {
	if len(b) != 32 {
		return false // the length is checked elsewhere, with its own message
	}
	curve := ecdh.X25519()
	pub, err := curve.NewPublicKey(b)
	if err != nil {
		return true
	}
	priv, err := curve.NewPrivateKey(lowOrderProbe[:])
	if err != nil {
		return true
	}
	_, err = priv.ECDH(pub)
	return err != nil
}

// Errors of ParticipantHost.
var (
	errAlreadyHosted = errors.New("federated: the organization already takes part in this round")
	errRoundOver     = errors.New("federated: the hosted participant's round is over")
	// ErrHostClosed is returned by Join after Close.
	ErrHostClosed = errors.New("server: participant host closed")
)

// ParticipantHost runs, inside the service, the federated.Participant of an
// organization that submitted encrypted records to POST
// /submit-federated-update: it trains on the decrypted records and walks the
// round's secure-aggregation phases against the coordinator. Records and
// the participant's secrets stay in memory only; a service restart makes
// the hosted participant a dropout of its round. Each hosted participant
// takes part in the one round it joined, then ends.
type ParticipantHost struct {
	api    federated.RoundAPI
	task   federated.Task
	poll   time.Duration
	logger *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	hosted map[string]int // organization → round
	closed bool
}

// HostOption configures a ParticipantHost.
type HostOption func(*ParticipantHost) error

// WithHostTask sets the diagnosis task (default federated.DefaultTask); it
// must be the coordinator's.
func WithHostTask(t federated.Task) HostOption {
	return func(h *ParticipantHost) error { h.task = t; return nil }
}

// WithHostPoll sets how often a hosted participant looks at the round when
// the coordinator cannot signal changes (default 1 s).
func WithHostPoll(d time.Duration) HostOption {
	return func(h *ParticipantHost) error {
		if d <= 0 {
			return errors.New("server: host poll interval must be positive")
		}
		h.poll = d
		return nil
	}
}

// WithHostLogger sets the logger of step failures (never record data).
func WithHostLogger(l *slog.Logger) HostOption {
	return func(h *ParticipantHost) error { h.logger = l; return nil }
}

// NewParticipantHost returns a host of participants against api (usually
// the *federated.Coordinator itself). It starts a goroutine per Join;
// Close stops them.
func NewParticipantHost(api federated.RoundAPI, opts ...HostOption) (*ParticipantHost, error) {
	if api == nil {
		return nil, errors.New("server: participant host needs a RoundAPI")
	}
	h := &ParticipantHost{api: api, task: federated.DefaultTask(), poll: time.Second, hosted: map[string]int{}}
	for _, o := range opts {
		if err := o(h); err != nil {
			return nil, err
		}
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h, nil
}

// Join prepares org's participant on recs, advertises its keys for round
// and leaves it running until that round ends. A second Join of org while
// its participant runs is refused.
func (h *ParticipantHost) Join(ctx context.Context, org string, round int, recs []*record.Record) (*FederatedUpdateResult, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, healthagents.WrapError(healthagents.CodeUnavailable, ErrHostClosed, detailUnavailable)
	}
	if _, ok := h.hosted[org]; ok {
		h.mu.Unlock()
		return nil, errAlreadyHosted
	}
	h.hosted[org] = round
	h.mu.Unlock()
	release := func() {
		h.mu.Lock()
		delete(h.hosted, org)
		h.mu.Unlock()
	}
	p, err := federated.NewParticipant(federated.ParticipantConfig{Org: org, Task: h.task, Logger: h.logger}, recs)
	if err != nil {
		release()
		if errors.Is(err, federated.ErrTask) {
			return nil, healthagents.WrapError(healthagents.CodeInvalid, err, federatedPrefix+": no record carries a diagnosis label of the task to train on")
		}
		return nil, err
	}
	g := &pinnedRound{api: h.api, round: round}
	v, err := p.Step(ctx, g)
	if err == nil && (v.Round != round || v.Phase != federated.PhaseAdvertiseKeys || v.Done) {
		err = fmt.Errorf("%w: round %d moved on before the keys were advertised", federated.ErrWrongPhase, round)
	}
	if err != nil {
		release()
		return nil, err
	}
	h.wg.Add(1)
	go h.run(p, g, release)
	labelled := len(recs)
	if _, skipped, err := h.task.Examples(recs); err == nil {
		labelled -= skipped
	}
	res := &FederatedUpdateResult{Round: round, Participants: v.Participants + 1, ModelHash: v.Base.Hash, ModelVersion: v.Base.Version, Phase: string(v.Phase), Records: labelled}
	if after, err := h.api.View(ctx, org); err == nil && after.Round == round {
		res.Participants, res.Phase = after.Participants, string(after.Phase)
	}
	return res, nil
}

// Hosted returns how many participants are running.
func (h *ParticipantHost) Hosted() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.hosted)
}

// changeNotifier is the optional capability of *federated.Coordinator to
// signal state changes, so hosted participants move on at once.
type changeNotifier interface {
	Changed() <-chan struct{}
}

func (h *ParticipantHost) run(p *federated.Participant, g *pinnedRound, release func()) {
	defer h.wg.Done()
	defer release()
	notifier, _ := h.api.(changeNotifier)
	for {
		var changed <-chan struct{}
		if notifier != nil {
			changed = notifier.Changed() // before Step, so no change is missed
		}
		v, err := p.Step(h.ctx, g)
		switch {
		case h.ctx.Err() != nil, errors.Is(err, errRoundOver), errors.Is(err, federated.ErrNoOpenRound):
			return
		case err == nil && v.Round != g.round:
			return
		case err != nil && !errors.Is(err, federated.ErrDuplicate):
			h.logger.Warn("hosted federated participant: step failed; retrying", "round", g.round, "err", err)
		}
		t := time.NewTimer(h.poll)
		select {
		case <-h.ctx.Done():
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// Close stops every hosted participant (each becomes a dropout of its
// round) and waits for them.
func (h *ParticipantHost) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	return nil
}

// pinnedRound lets a hosted participant act in one round only: a message
// for any later round is dropped before it reaches the coordinator.
type pinnedRound struct {
	api   federated.RoundAPI
	round int
}

func (p *pinnedRound) View(ctx context.Context, org string) (*federated.RoundView, error) {
	return p.api.View(ctx, org)
}

func (p *pinnedRound) Submit(ctx context.Context, org string, s federated.Submission) error {
	if s.Round != p.round {
		return errRoundOver
	}
	return p.api.Submit(ctx, org, s)
}
