package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ethereum/go-ethereum/common"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/pharmacy"
)

// openPharmacy opens the pharmacy availability oracle on the ledger's chain.
// On the embedded chain it deploys a PharmacyOracle at start (the chain
// starts empty each time). With CHAIN_ENDPOINT it attaches to the contract
// at PHARMACY_ORACLE, if set; without it there is no oracle (nil, nil) and
// prescription validation answers an honest "unconfirmed". The oracle
// writes through the ledger: the ledger's account (CHAIN_PRIVATE_KEY) signs
// attestations with the ledger's nonces, so the two never race.
func openPharmacy(ctx context.Context, cfg Config, ledger *chain.Ledger, logger *slog.Logger) (*pharmacy.Oracle, error) {
	if cfg.ChainEndpoint == "" {
		o, err := pharmacy.DeployWith(ctx, ledger.Client(), ledger)
		if err != nil {
			return nil, fmt.Errorf("embedded chain: deploy pharmacy oracle: %w", err)
		}
		logger.Info("pharmacy oracle deployed on the embedded chain", "oracle", o.Address().Hex())
		return o, nil
	}
	if cfg.PharmacyOracle == "" {
		logger.Info("PHARMACY_ORACLE not set: pharmacy confirmations answer unconfirmed and attestations 503")
		return nil, nil
	}
	o, err := pharmacy.NewWith(ctx, ledger.Client(), ledger, common.HexToAddress(cfg.PharmacyOracle))
	if err != nil {
		return nil, fmt.Errorf("PHARMACY_ORACLE: %w", err)
	}
	can, err := o.CanWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("PHARMACY_ORACLE: %w", err)
	}
	if !can {
		// Reading still works: attestations may be written by pharmacies
		// directly. Writing through the service will answer PHARMACY_ERROR.
		logger.Warn("PHARMACY_ORACLE: the CHAIN_PRIVATE_KEY account is not a writer of the oracle; POST /api/v1/pharmacy/attestations will fail until the owner allows it",
			"oracle", o.Address().Hex(), "account", o.Account().Hex())
	}
	return o, nil
}

// v1Options are the V1 options of what Open assembled: the pharmacy oracle
// when there is one (a nil *pharmacy.Oracle must not become a non-nil
// interface).
func (a *App) v1Options() []healthagents.V1Option {
	if a.Pharmacy == nil {
		return nil
	}
	return []healthagents.V1Option{healthagents.WithPharmacyOracle(a.Pharmacy)}
}
