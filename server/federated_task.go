package server

import (
	"encoding/base64"
	"net/http"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/federated"
)

// privacyReporter is implemented by *federated.Coordinator.
type privacyReporter interface {
	Privacy() federated.PrivacyStatus
}

// federatedProofKeys serves GET /api/v1/federated/proof-keys/{shape}.
func (s *srv) federatedProofKeys(w http.ResponseWriter, r *http.Request) {
	_, f := s.fedTask(w, r)
	if f == nil {
		return
	}
	if f.ProofKeys == nil {
		writeDetail(w, http.StatusNotFound, "Not found: this run takes no proofs (FEDERATED_PROOFS is off)")
		return
	}
	name := r.PathValue("shape")
	pk, vk, err := f.ProofKeys(r.Context(), name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.ProofKeys{Shape: name, ProvingKey: base64.StdEncoding.EncodeToString(pk), VerifyingKey: base64.StdEncoding.EncodeToString(vk)})
}

// taskDefinition is the wire form of a task file.
func taskDefinition(tf *federated.TaskFile) *api.TaskDefinition {
	if tf == nil {
		return nil
	}
	d := &api.TaskDefinition{
		ID: tf.ID, Model: api.TaskModel{Type: tf.Model.Type, L2: tf.Model.L2},
		Label:        api.TaskLabel{Column: tf.Label.Column, Positive: tf.Label.Positive, Negative: tf.Label.Negative, Classes: tf.Label.Classes},
		LearningRate: tf.LearningRate, LocalEpochs: tf.LocalEpochs, BatchSize: tf.BatchSize,
		HeldOut: tf.HeldOut, ReferenceDate: tf.ReferenceDate, ClampZ: tf.ClampZ, Missing: tf.Missing,
	}
	for _, f := range tf.Features {
		d.Features = append(d.Features, api.TaskFeature{Name: f.Name, Column: f.Column, Scaling: f.Scaling, Mean: f.Mean, Scale: f.Scale, Range: f.Range})
	}
	return d
}
