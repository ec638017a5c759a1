package server

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/secagg"
)

// The v1 federated round protocol: the global model, the open round and
// the secure-aggregation phases (keys, shares, masked gradients, reveals).

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
	if federated.LowOrderX25519(c) || federated.LowOrderX25519(m) {
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
