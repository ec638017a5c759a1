package app

import (
	"fmt"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/issuers"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/trust"
)

// openIssuers builds the payer registry over the database and the chain's
// issuer registry, and the COVERAGE_TRUST policy: the service's own issuer
// key (DATA_DIR/issuer.key, registered on chain by openProofs under self)
// signs coverage that arrives without a credential, or, under registered,
// only registered payers' credentials are accepted.
func openIssuers(cfg Config, db *store.DB, ledger *chain.Ledger) (*issuers.Registry, *trust.Policy, error) {
	st, err := store.NewIssuerStore(db)
	if err != nil {
		return nil, nil, err
	}
	reg, err := issuers.New(st, ledger)
	if err != nil {
		return nil, nil, err
	}
	self, err := selfIssuerKey(cfg)
	if err != nil {
		return nil, nil, err
	}
	mode := cfg.CoverageTrust
	if mode == "" {
		mode = trust.Self
	}
	policy, err := trust.New(mode, self, ledger.Governed(), reg)
	if err != nil {
		return nil, nil, fmt.Errorf("COVERAGE_TRUST: %w", err)
	}
	return reg, policy, nil
}
