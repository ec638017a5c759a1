package server

import (
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/secagg"
)

// The v1 federated round protocol: the global model, the open round and
// the secure-aggregation phases (keys, shares, masked gradients, reveals).

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
	out := api.GlobalModel{
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

func roundOut(v *federated.RoundView) (*api.FederatedRound, error) {
	enc, err := federated.EncodeWeights(v.Base.Weights)
	if err != nil {
		return nil, err
	}
	out := &api.FederatedRound{
		Round: v.Round, Phase: string(v.Phase), TaskHash: v.TaskHash,
		ModelVersion: v.Base.Version, ModelHash: v.Base.Hash, Weights: hex.EncodeToString(enc),
		Session: hex.EncodeToString(v.Session), Dim: v.Dim, ClipNorm: v.ClipNorm, FracBits: v.FracBits,
		MaxParticipants: v.MaxParticipants, MaxEvalRecords: v.MaxEvalRecords, Threshold: v.Threshold,
		PhaseDeadline: v.PhaseDeadline, Deadline: v.Deadline, Participants: v.Participants,
		SharedKeys: v.U2, Survivors: v.U3, Done: v.Done,
	}
	for _, k := range v.Roster {
		out.Roster = append(out.Roster, api.AdvertisedKeys{OrganizationID: k.ID, CipherPublicKey: hex.EncodeToString(k.Cipher), MaskPublicKey: hex.EncodeToString(k.Mask)})
	}
	for _, es := range v.Inbox {
		out.Inbox = append(out.Inbox, api.SealedShare{From: es.From, To: es.To, Ciphertext: hex.EncodeToString(es.Ciphertext)})
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
	out := api.FederatedAccepted{Accepted: true, Round: sub.Round}
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
	var req api.KeysSubmission
	f, org, round, ok := s.roundRequest(w, r, &req, "cipher_public_key", "mask_public_key")
	if !ok {
		return
	}
	if err := req.Validate(); err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	c, _ := hex.DecodeString(req.CipherPublicKey) // checked by Validate
	m, _ := hex.DecodeString(req.MaskPublicKey)
	s.submit(w, r, f, org, federated.Submission{Round: round, Keys: &secagg.PublicKeys{ID: org, Cipher: c, Mask: m}})
}

func (s *srv) shareKeys(w http.ResponseWriter, r *http.Request) {
	var req api.SharesSubmission
	f, org, round, ok := s.roundRequest(w, r, &req, "commitment", "shares")
	if !ok {
		return
	}
	if err := req.Validate(); err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	commit, _ := hex.DecodeString(req.Commitment) // checked by Validate
	msg := &secagg.ShareKeysMessage{From: org, Commitment: commit, Shares: make([]secagg.EncryptedShare, 0, len(req.Shares))}
	for _, sh := range req.Shares {
		ct, _ := hex.DecodeString(sh.Ciphertext)
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
	var req api.GradientSubmission
	if err := read(w, r, limit, &req, "organization_id", "round", "gradients_encrypted", "model_version", "sample_count"); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.OrganizationID != org {
		writeDetail(w, http.StatusForbidden, detailForbidden+" - organization_id is not the API key's organization")
		return
	}
	if err := req.Validate(); err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	raw, _ := hex.DecodeString(req.GradientsEncrypted) // checked by Validate
	var masked secagg.MaskedInput
	if err := masked.UnmarshalBinary(raw); err != nil {
		writeDetail(w, http.StatusBadRequest, "Validation error: field 'gradients_encrypted' is not a masked vector (\"HASM\", version 1, length, words)")
		return
	}
	s.submit(w, r, f, org, federated.Submission{Round: req.Round, ModelVersion: req.ModelVersion, Masked: masked})
}

func (s *srv) revealShares(w http.ResponseWriter, r *http.Request) {
	var req api.RevealsSubmission
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
