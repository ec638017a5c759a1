package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/normproof"
)

// federatedProofs turns on proved rounds (FEDERATED_PROOFS=on): the
// normproof keys of every shape are set up once and kept under
// DATA_DIR/federated-proofs, so a restarted coordinator verifies with the
// keys its participants fetched. It returns the ProofKeys function of
// GET /api/v1/federated/proof-keys/{shape}, which serves only the shapes
// this run's rounds can have. The keys of the shapes the run's rounds will
// most likely have (MinParticipants to TargetParticipants organizations)
// are set up (or read from the directory) here, before the coordinator
// opens round 0: a setup inside a round's masked-input phase, plus the
// participants' proving, could outlast the phase and lose the round.
func federatedProofs(dataDir string, cfg *federated.Config, opts ...normproof.Option) (func(context.Context, string) ([]byte, []byte, error), error) {
	svc, err := normproof.NewServiceDir(filepath.Join(dataDir, "federated-proofs"), opts...)
	if err != nil {
		return nil, err
	}
	pc, _ := svc.ProofGroup()
	cfg.Proofs = &pc
	m, err := cfg.Task.NewModel()
	if err != nil {
		return nil, err
	}
	frac := cfg.FracBits
	if frac == 0 {
		frac = federated.DefaultConfig().FracBits
	}
	bits, err := normproof.WeightBits(cfg.ClipNorm, frac)
	if err != nil {
		return nil, fmt.Errorf("FEDERATED_CLIP_NORM: %w", err)
	}
	maxPeers := cfg.MaxParticipants
	if maxPeers == 0 {
		maxPeers = federated.DefaultConfig().MaxParticipants
	}
	maxPeers--
	minOrgs := cfg.MinParticipants
	if minOrgs == 0 {
		minOrgs = federated.DefaultConfig().MinParticipants
	}
	target := max(cfg.TargetParticipants, minOrgs)
	for peers := max(2, minOrgs-1); peers <= min(target-1, maxPeers); peers++ {
		if _, err := svc.Keys(normproof.Shape{Weights: m.NumWeights(), Extra: federated.EvalWords, Peers: peers, Bits: bits}); err != nil {
			return nil, fmt.Errorf("FEDERATED_PROOFS: setting up the proof keys: %w", err)
		}
	}
	return func(_ context.Context, name string) ([]byte, []byte, error) {
		s, err := normproof.ParseShape(name)
		if err != nil || s.Weights != m.NumWeights() || s.Extra != federated.EvalWords || s.Bits != bits || s.Peers < 2 || s.Peers > maxPeers {
			return nil, nil, healthagents.Errorf(healthagents.CodeInvalid,
				"Validation error: shape %q is not one of this run's (w%d-e%d-p<2..%d>-b%d)", name, m.NumWeights(), federated.EvalWords, maxPeers, bits)
		}
		k, err := svc.Keys(s)
		if err != nil {
			return nil, nil, err
		}
		return k.EncodeKeys()
	}, nil
}

// federatedKnownKeys is normproof.WithKnownKeys over ZKTables when that
// store can hold keys too (the test cache can: a test's coordinator
// finds the federated proof keys the harness set up, and wrote under its
// DATA_DIR, decoded there instead of checking every point again at its
// start; keys it does not know are decoded with every check). Production
// ignores it, as it ignores ZKTables.
func (c *Config) federatedKnownKeys() []normproof.Option {
	known, ok := c.ZKTables.(normproof.KnownKeys)
	if !ok || c.Production {
		return nil
	}
	return []normproof.Option{normproof.WithKnownKeys(known)}
}
