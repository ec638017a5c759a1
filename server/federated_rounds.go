package server

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/secagg"
)

// The v1 federated round protocol: the global model, the open round and
// the secure-aggregation phases (keys, shares, masked gradients, reveals).

func (s *srv) globalModel(w http.ResponseWriter, r *http.Request) {
	_, f := s.fedTask(w, r)
	if f == nil {
		return
	}
	var onnx bool
	switch r.URL.Query().Get("format") {
	case "", "json":
	case "onnx":
		onnx = true
	default:
		s.writeError(w, r, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: format must be json or onnx"))
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
	task, columns := federated.DefaultTask(), []string(nil)
	if f.TaskFile != nil {
		task, columns = f.TaskFile.Task(), f.TaskFile.Columns()
	}
	if onnx {
		s.writeONNX(w, r, task, columns, m)
		return
	}
	enc, err := federated.EncodeWeights(m.Weights)
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	out := api.GlobalModel{
		ModelVersion: m.Version, ModelHash: m.Hash, Weights: hex.EncodeToString(enc),
		OrganizationsContributed: len(m.Contributors), TrainingRound: m.Round,
		CurrentRound: st.Round, EpsilonSpent: m.EpsilonSpent, Scaling: scalingOut(m.Scaling),
		ModelType: task.Model.Type, WeightValues: m.Weights, Features: modelFeatures(task, columns, m.Scaling),
		ClampZ: task.ClampZ, Classes: task.ONNXClasses(),
	}
	if met := federated.LatestMetrics(h); met != nil {
		acc := met.Accuracy
		out.Accuracy, out.AccuracyModelVersion, out.EvalSamples = &acc, met.EvaluatedVersion, met.EvalSamples
		if met.Participants > 0 {
			mean, sd := met.MeanAccuracy, met.AccuracyStdDev
			out.EvalParticipants, out.MeanAccuracy, out.AccuracyStdDev = met.Participants, &mean, &sd
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *srv) currentRound(w http.ResponseWriter, r *http.Request) {
	fa, f := s.fedTask(w, r)
	if f == nil {
		return
	}
	org, ok := s.registered(w, r, fa)
	if !ok {
		return
	}
	wait, err := longPollWait(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := viewWhenChanged(r.Context(), f.Coordinator, org, wait)
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
		SharedKeys: v.U2, Survivors: v.U3, Done: v.Done, Proved: v.Proved, EvalBound: v.EvalBound,
		NoiseShare: v.NoiseShare, Kind: string(v.Kind), Scaling: scalingOut(v.Base.Scaling), Previous: v.Previous,
	}
	for _, k := range v.Roster {
		out.Roster = append(out.Roster, api.AdvertisedKeys{OrganizationID: k.ID, CipherPublicKey: hex.EncodeToString(k.Cipher), MaskPublicKey: hex.EncodeToString(k.Mask)})
	}
	for _, es := range v.Inbox {
		out.Inbox = append(out.Inbox, api.SealedShare{From: es.From, To: es.To, Ciphertext: hex.EncodeToString(es.Ciphertext)})
	}
	return out, nil
}

// writeONNX answers the model version m as an ONNX model file.
func (s *srv) writeONNX(w http.ResponseWriter, r *http.Request, task federated.Task, columns []string, m federated.ModelVersion) {
	b, err := federated.ExportONNX(task, columns, m)
	if errors.Is(err, federated.ErrTask) && task.Learns() && m.Scaling == nil {
		err = healthagents.Errorf(healthagents.CodeConflict, "Conflict: model version %s has no learned scaling yet (the statistics round learns it); the ONNX export needs it", m.Version)
	}
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	w.Header().Set("Content-Type", federated.ONNXMediaType)
	w.Header().Set("Content-Disposition", `attachment; filename="`+federated.ModelFileName(task.Name, m.Version, "onnx")+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// modelFeatures are the model's inputs and their standardization, with
// the learned features' scaling once known.
func modelFeatures(task federated.Task, columns []string, sc []federated.LearnedScaling) []api.ModelFeature {
	if scaled, err := task.WithScaling(sc); err == nil {
		task = scaled
	}
	out := make([]api.ModelFeature, len(task.Features))
	for i, f := range task.Features {
		out[i] = api.ModelFeature{Name: f.Name, Mean: f.Mean, Scale: f.Scale}
		if i < len(columns) {
			out[i].Column = columns[i]
		}
		if f.Learned {
			out[i].Range = []float64{f.Min, f.Max}
		}
	}
	return out
}

// scalingOut is the wire form of a learned scaling.
func scalingOut(sc []federated.LearnedScaling) []api.LearnedScaling {
	if sc == nil {
		return nil
	}
	out := make([]api.LearnedScaling, len(sc))
	for i, f := range sc {
		out[i] = api.LearnedScaling{Name: f.Name, Mean: f.Mean, Scale: f.Scale, Count: f.Count}
	}
	return out
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
func (s *srv) submit(w http.ResponseWriter, r *http.Request, f *FederatedTaskRun, org string, sub federated.Submission) {
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
func (s *srv) roundRequest(w http.ResponseWriter, r *http.Request, req any, required ...string) (f *FederatedTaskRun, org string, round int, ok bool) {
	return s.roundMessage(w, r, req, "", required...)
}

// refuseSender refuses org for the rest of the round (Coordinator.RefuseInput)
// after it sent a round route a body that cannot be its message: the phase
// then closes once the others are in, as after a failed proof, rather than
// at its deadline. A failure to record it is logged; the sender's answer is
// the body's error all the same.
func (s *srv) refuseSender(r *http.Request, f *FederatedTaskRun, org string, phase federated.Phase) {
	if err := f.Coordinator.RefuseInput(context.WithoutCancel(r.Context()), org, phase); err != nil {
		s.logger.WarnContext(r.Context(), "refusing a malformed round message failed", "organization", org, "err", err)
	}
}

// roundMessage is roundRequest; with a refuse phase, a body that cannot be
// read as the message (over the limit, not JSON) refuses its sender for the
// round if the round is in that phase.
func (s *srv) roundMessage(w http.ResponseWriter, r *http.Request, req any, refuse federated.Phase, required ...string) (f *FederatedTaskRun, org string, round int, ok bool) {
	var fa *FederatedAPI
	if fa, f = s.fedTask(w, r); f == nil {
		return nil, "", 0, false
	}
	if org, ok = s.registered(w, r, fa); !ok {
		return nil, "", 0, false
	}
	round, err := pathRound(r)
	if err != nil {
		s.writeError(w, r, err)
		return nil, "", 0, false
	}
	if err := read(w, r, s.opts.maxBody, req, required...); err != nil {
		if refuse != "" {
			s.refuseSender(r, f, org, refuse)
		}
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
	f, org, round, ok := s.roundMessage(w, r, &req, federated.PhaseShareKeys, "commitment", "shares")
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
	var seeds map[string][]byte
	if req.SeedCommitments != nil {
		seeds = make(map[string][]byte, len(req.SeedCommitments))
		for peer, c := range req.SeedCommitments {
			seeds[peer], _ = hex.DecodeString(c) // checked by Validate
		}
	}
	s.submit(w, r, f, org, federated.Submission{Round: round, Shares: msg, SeedCommitments: seeds})
}

func (s *srv) submitGradients(w http.ResponseWriter, r *http.Request) {
	fa, f := s.fedTask(w, r)
	if f == nil {
		return
	}
	org, ok := s.registered(w, r, fa)
	if !ok {
		return
	}
	limit := fa.MaxGradientBytes
	if limit <= 0 {
		limit = DefaultMaxGradientBytes
	}
	// A body that is no masked input (over the limit, not JSON, not the
	// encoding) refuses its sender for the round, as a malformed vector
	// (the coordinator's check) or a failed proof does.
	var req api.GradientSubmission
	if err := read(w, r, limit, &req, "organization_id", "round", "gradients_encrypted", "model_version", "sample_count"); err != nil {
		s.refuseSender(r, f, org, federated.PhaseMaskedInput)
		s.writeError(w, r, err)
		return
	}
	if req.OrganizationID != org {
		writeDetail(w, http.StatusForbidden, detailForbidden+" - organization_id is not the API key's organization")
		return
	}
	if err := req.Validate(); err != nil {
		s.refuseSender(r, f, org, federated.PhaseMaskedInput)
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	raw, _ := hex.DecodeString(req.GradientsEncrypted) // checked by Validate
	var masked secagg.MaskedInput
	if err := masked.UnmarshalBinary(raw); err != nil {
		s.refuseSender(r, f, org, federated.PhaseMaskedInput)
		writeDetail(w, http.StatusBadRequest, "Validation error: field 'gradients_encrypted' is not a masked vector (\"HASM\", version 1, length, words)")
		return
	}
	var proof []byte
	if req.Proof != "" {
		proof, _ = hex.DecodeString(req.Proof) // checked by Validate
	}
	s.submit(w, r, f, org, federated.Submission{Round: req.Round, ModelVersion: req.ModelVersion, Masked: masked, Proof: proof, SampleCount: req.SampleCount})
}

func (s *srv) revealShares(w http.ResponseWriter, r *http.Request) {
	var req api.RevealsSubmission
	f, org, round, ok := s.roundMessage(w, r, &req, federated.PhaseUnmasking, "reveals")
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

// MaxLongPoll bounds ?wait= of GET /api/v1/federated/rounds/current, well
// within the server's write timeout and the client's call timeout.
const MaxLongPoll = 25 * time.Second

// longPollWait reads ?wait= (whole seconds, 1-25; absent: 0).
func longPollWait(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("wait")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || time.Duration(n)*time.Second > MaxLongPoll {
		return 0, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: wait must be a whole number of seconds from 1 to 25")
	}
	return time.Duration(n) * time.Second, nil
}

// changeNotifier is implemented by *federated.Coordinator.
type changeNotifier interface {
	Changed() <-chan struct{}
}

// viewWhenChanged is the round as org sees it. With wait > 0, while org has
// answered the current phase it waits (at most wait) for the round to move
// on: a long poll, so a participant learns of the next phase at once
// without polling.
func viewWhenChanged(ctx context.Context, c FederatedCoordinator, org string, wait time.Duration) (*federated.RoundView, error) {
	n, ok := c.(changeNotifier)
	if wait <= 0 || !ok {
		return c.View(ctx, org)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		changed := n.Changed() // before View, so no change is missed
		v, err := c.View(ctx, org)
		if err != nil || !v.Done {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, nil
		case <-deadline.C:
			return v, nil
		case <-changed:
		}
	}
}
