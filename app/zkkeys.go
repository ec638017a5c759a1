package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/ceremony"
)

// developmentKeysWarning is logged at every start on development keys.
const developmentKeysWarning = "zk_setup=development: the ZK proving keys come from a single-party setup on this machine " +
	"(DATA_DIR/zkp); whoever saw that process's memory can forge proofs. " +
	"Set ZK_KEYS_DIR to the keys of a ceremony (healthagents ceremony, docs/ceremony.md)."

// openZK loads the Groth16 keys: from ZK_KEYS_DIR when it is set (a
// ceremony's, checked against the compiled circuits; any mismatch refuses
// the start with an error naming ZK_KEYS_DIR), else the development keys
// under DATA_DIR/zkp (set up once at the first start).
func openZK(ctx context.Context, cfg Config, logger *slog.Logger) (*zkp.System, error) {
	var opts []zkp.SystemOption
	if cfg.ZKTables != nil && !cfg.Production {
		opts = append(opts, zkp.WithTableStore(cfg.ZKTables))
	}
	if cfg.ZKKeysDir == "" {
		sys, err := zkp.LoadOrSetup(ctx, filepath.Join(cfg.DataDir, "zkp"), opts...)
		if err != nil {
			return nil, fmt.Errorf("zk keys: %w", err)
		}
		if sys.Setup() == zkp.SetupDevelopment {
			logger.Warn(developmentKeysWarning, "zk_setup", sys.Setup())
		} else {
			logger.Info("zk keys loaded from DATA_DIR/zkp", "zk_setup", sys.Setup())
		}
		return sys, nil
	}
	sys, m, err := ceremony.LoadKeys(ctx, cfg.ZKKeysDir, opts...)
	if err != nil {
		return nil, fmt.Errorf("ZK_KEYS_DIR %s: %w", cfg.ZKKeysDir, err)
	}
	logger.Info("zk keys loaded from ZK_KEYS_DIR", "zk_setup", sys.Setup(), "dir", cfg.ZKKeysDir,
		"phase1_contributions", len(m.Phase1)-1, "phase2_contributions", len(m.Phase2)-1,
		"phase1_last", m.Phase1[len(m.Phase1)-1], "phase2_last", m.Phase2[len(m.Phase2)-1])
	return sys, nil
}

// zkKeysMismatch makes a verifier-mismatch error of the chain name the
// keys it compared: with ZK_KEYS_DIR, the verifier registered on chain holds
// another verifying key than the ceremony's.
func zkKeysMismatch(cfg Config, err error) error {
	if !errors.Is(err, chain.ErrVerifierMismatch) {
		return err
	}
	if cfg.ZKKeysDir == "" {
		return err
	}
	where := "the registry"
	if cfg.ChainEndpoint == "" {
		where = "the embedded chain under DATA_DIR/chain (it registered other keys at an earlier start: give new keys a new DATA_DIR)"
	}
	return fmt.Errorf("the verifier registered on chain does not hold the verifying key of ZK_KEYS_DIR %s (compare chain_vk_hash in its %s with the verifier's verifyingKeyHash()); the verifier was registered by %s: %w",
		cfg.ZKKeysDir, ceremony.ManifestFile, where, err)
}

// ZKSetup reports the kind of trusted setup behind the service's ZK keys:
// zkp.SetupDevelopment ("development") or zkp.SetupCeremony ("ceremony"),
// as GET /status reports it. A policy that must refuse development keys
// (COVERAGE_TRUST=registered) checks it (or a.ZK.Setup()).
func (a *App) ZKSetup() string {
	if a == nil || a.ZK == nil {
		return zkp.SetupDevelopment
	}
	return a.ZK.Setup()
}
