package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/zkp"
)

// Embedded is the agents in a Go program with proofs: a
// healthagents.Service whose every decision is proven with Groth16 and
// recorded on an embedded chain, with none of the HTTP side (database, API
// keys, rate limits, webhooks, listeners). OpenEmbedded makes one; Close
// releases it.
type Embedded struct {
	*healthagents.Service
	// Keyring opens (and seals) the envelopes: the Fernet key kept in the
	// directory (fernet.key), the one `healthagents seal` uses on it.
	Keyring *cipher.Keyring
	// Ledger is the embedded chain, kept under the directory's chain/: a
	// decision's blockchain_tx is read back with Ledger.Statement, and
	// every earlier one still resolves after a restart.
	Ledger *chain.Ledger
	// ZK holds the Groth16 keys (set up once under the directory's zkp/).
	ZK *zkp.System
}

// OpenEmbedded opens the agents on dir with proofs: it keeps there what
// `healthagents serve` keeps in DATA_DIR (the Fernet key, the development
// ZK keys, the embedded chain and the service's issuer key), so dir may be
// a service's DATA_DIR while that service is stopped; the coverage a
// decision is proven from is vouched for by the service's own key
// (COVERAGE_TRUST=self). The first open of a directory sets up the ZK keys
// (a minute or more of CPU); later opens load them. opts are the Service's
// own (healthagents.WithLogger, WithEvents, …); the attestor is this one.
// Nothing is printed and dir's mode is left as it is (a new dir is 0700).
func OpenEmbedded(ctx context.Context, dir string, opts ...healthagents.Option) (e *Embedded, err error) {
	cfg, err := Config{DataDir: dir}.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("app: embedded dir: %w", err)
	}
	quiet := slog.New(slog.DiscardHandler)
	e = &Embedded{}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Close())
			e = nil
		}
	}()
	if e.Keyring, err = LoadKeyring(cfg, quiet); err != nil {
		return nil, err
	}
	if e.ZK, e.Ledger, err = openProofs(ctx, cfg, nil, quiet); err != nil {
		return nil, err
	}
	self, err := selfIssuerKey(cfg)
	if err != nil {
		return nil, err
	}
	policy, err := trust.New(trust.Self, self, e.Ledger.Governed(), nil)
	if err != nil {
		return nil, err
	}
	select { // the fast prover's tables, as Open waits for them
	case <-e.ZK.Warm():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	prover, err := zkp.NewProver(e.ZK, zkp.WithTimeout(proofTimeout))
	if err != nil {
		return nil, err
	}
	attestor, err := attest.New(prover, e.Ledger, attest.WithTrust(policy))
	if err != nil {
		return nil, err
	}
	if e.Service, err = healthagents.New(e.Keyring, append([]healthagents.Option{healthagents.WithAttestor(attestor)}, opts...)...); err != nil {
		return nil, err
	}
	return e, nil
}

// Close stops the embedded chain (its state is kept in the directory).
func (e *Embedded) Close() error {
	if e == nil || e.Ledger == nil {
		return nil
	}
	return e.Ledger.Close()
}
