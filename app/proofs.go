package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp"
)

// openProofs loads (or sets up once) the Groth16 keys under DATA_DIR/zkp and
// opens the chain: the embedded simulated chain with the verifiers deployed
// and registered, or the JSON-RPC node at CHAIN_ENDPOINT.
func openProofs(ctx context.Context, cfg Config, logger *slog.Logger) (*zkp.System, *chain.Ledger, error) {
	sys, err := openZK(ctx, cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	opts := []chain.Option{chain.WithLogger(logger)}
	var ledger *chain.Ledger
	if cfg.ChainEndpoint == "" {
		// The embedded chain keeps its blocks under DATA_DIR/chain: every
		// earlier blockchain_tx still resolves after a restart.
		opts = append(opts, chain.WithDataDir(filepath.Join(cfg.DataDir, "chain")))
		if ledger, err = chain.NewSimulated(ctx, opts...); err != nil {
			return nil, nil, fmt.Errorf("embedded chain: %w", err)
		}
		if err := attest.Register(ctx, ledger, sys); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("embedded chain: %w", zkKeysMismatch(cfg, err)), ledger.Close())
		}
		logger.Info("embedded chain started; its blocks are kept under DATA_DIR/chain (set CHAIN_ENDPOINT for an external node)")
		return sys, ledger, nil
	}
	if cfg.ChainKey == "" || cfg.ChainRegistry == "" {
		return nil, nil, fmt.Errorf("CHAIN_ENDPOINT needs CHAIN_PRIVATE_KEY and CHAIN_REGISTRY (deploy with `healthagents chain deploy`)")
	}
	ledger, err = chain.Dial(ctx, cfg.ChainEndpoint, chain.DialConfig{Key: cfg.ChainKey, Registry: cfg.ChainRegistry, ChainID: cfg.ChainID}, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("CHAIN_ENDPOINT: %w", err)
	}
	// The verifiers registered must hold this deployment's keys. Register
	// leaves a matching one alone and registers one where none is; it refuses
	// to replace a verifier holding another key, because that key is another
	// replica's (a separate DATA_DIR makes its own keys): replacing it would
	// break that replica's proofs, and its start would replace ours again.
	// Replacing needs CHAIN_REPLACE_VERIFIERS=1 (and the registry owner's key).
	if cfg.ChainReplaceVerifiers {
		logger.Warn("CHAIN_REPLACE_VERIFIERS=1: registered verifiers holding other verifying keys are replaced; proofs of replicas with other keys stop verifying")
		err = attest.Replace(ctx, ledger, sys)
	} else {
		err = attest.Register(ctx, ledger, sys)
	}
	if errors.Is(err, chain.ErrVerifierMismatch) && cfg.ZKKeysDir != "" {
		return nil, nil, errors.Join(fmt.Errorf("CHAIN_ENDPOINT: registry %s: %w", ledger.Registry().Hex(), zkKeysMismatch(cfg, err)), ledger.Close())
	}
	if errors.Is(err, chain.ErrVerifierMismatch) {
		return nil, nil, errors.Join(fmt.Errorf("CHAIN_ENDPOINT: registry %s: %w. "+
			"Every replica must use the same verifying keys: copy DATA_DIR/zkp from the deployment that registered them "+
			"(or install the same ceremony keys), or set CHAIN_REPLACE_VERIFIERS=1 to register this DATA_DIR's keys instead, "+
			"which makes the proofs of every replica with the old keys fail", ledger.Registry().Hex(), err), ledger.Close())
	}
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("CHAIN_ENDPOINT: %w", err), ledger.Close())
	}
	return sys, ledger, nil
}
