package app

import (
	"context"
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
	sys, err := zkp.LoadOrSetup(ctx, filepath.Join(cfg.DataDir, "zkp"))
	if err != nil {
		return nil, nil, fmt.Errorf("zk keys: %w", err)
	}
	opts := []chain.Option{chain.WithLogger(logger)}
	var ledger *chain.Ledger
	if cfg.ChainEndpoint == "" {
		if ledger, err = chain.NewSimulated(ctx, opts...); err != nil {
			return nil, nil, fmt.Errorf("embedded chain: %w", err)
		}
		if err := attest.Register(ctx, ledger, sys); err != nil {
			return nil, nil, fmt.Errorf("embedded chain: %w", err)
		}
		logger.Info("embedded simulated chain started; its state is not kept across restarts (set CHAIN_ENDPOINT for a real node)")
		return sys, ledger, nil
	}
	if cfg.ChainKey == "" || cfg.ChainRegistry == "" {
		return nil, nil, fmt.Errorf("CHAIN_ENDPOINT needs CHAIN_PRIVATE_KEY and CHAIN_REGISTRY (deploy with `healthagents chain deploy`)")
	}
	ledger, err = chain.Dial(ctx, cfg.ChainEndpoint, chain.DialConfig{Key: cfg.ChainKey, Registry: cfg.ChainRegistry, ChainID: cfg.ChainID}, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("CHAIN_ENDPOINT: %w", err)
	}
	// The verifiers registered must hold this deployment's keys; Register
	// leaves a matching one alone and needs the registry owner's key to
	// replace one.
	if err := attest.Register(ctx, ledger, sys); err != nil {
		return nil, nil, fmt.Errorf("CHAIN_ENDPOINT: %w", err)
	}
	return sys, ledger, nil
}
