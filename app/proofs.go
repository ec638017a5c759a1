package app

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/iden3/go-iden3-crypto/babyjub"

	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/zkp"
)

// openProofs loads the Groth16 keys (openZK: ZK_KEYS_DIR, or set up once
// under DATA_DIR/zkp) and opens the chain: the embedded simulated chain (its registry owned by a
// key generated under DATA_DIR/chain, which the service holds), or the
// JSON-RPC node at CHAIN_ENDPOINT (its registry owned by CHAIN_OWNER, whose
// key the service holds only given CHAIN_OWNER_KEY_FILE). The verifiers of
// this deployment's keys are bound, the submitting key registered as a
// submitter and, under COVERAGE_TRUST=self, the service's own issuer key
// registered as an issuer — by the owner. When the owner's key is cold and
// any of that is missing, start is refused with one line naming the
// commands that prepare the owner's transactions. On CHAIN_ENDPOINT, the
// nonces of the keys the service signs with are allocated in db
// (store.NonceStore), so replicas sharing CHAIN_PRIVATE_KEY never collide.
func openProofs(ctx context.Context, cfg Config, db *store.DB, logger *slog.Logger) (*zkp.System, *chain.Ledger, error) {
	mode, size, window, err := cfg.anchor()
	if err != nil {
		return nil, nil, err
	}
	sys, err := openZK(ctx, cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	if cfg.CoverageTrust == trust.Registered && sys.Setup() == zkp.SetupDevelopment {
		return nil, nil, fmt.Errorf("COVERAGE_TRUST=registered refuses development ZK keys (a single-party setup on this machine: " +
			"whoever saw its memory can forge proofs); set ZK_KEYS_DIR to a ceremony's keys (healthagents ceremony, docs/ceremony.md)")
	}
	opts := []chain.Option{chain.WithLogger(logger), chain.WithAnchor(mode, size, window)}
	var ledger *chain.Ledger
	where := "embedded chain"
	if cfg.ChainEndpoint == "" {
		// The embedded chain keeps its blocks under DATA_DIR/chain: every
		// earlier blockchain_tx still resolves after a restart.
		opts = append(opts, chain.WithDataDir(filepath.Join(cfg.DataDir, "chain")))
		if ledger, err = chain.NewSimulated(ctx, opts...); err != nil {
			return nil, nil, fmt.Errorf("embedded chain: %w", err)
		}
		logger.Info("embedded chain started; its blocks are kept under DATA_DIR/chain (set CHAIN_ENDPOINT for an external node)",
			"registry", ledger.Registry(), "owner", ledger.Owner(), "submitter", ledger.Account())
	} else {
		if cfg.ChainKey == "" || cfg.ChainRegistry == "" {
			return nil, nil, fmt.Errorf("CHAIN_ENDPOINT needs CHAIN_PRIVATE_KEY and CHAIN_REGISTRY (deploy with `healthagents chain deploy`)")
		}
		where = "CHAIN_ENDPOINT"
		if cfg.ChainOwnerKeyFile != "" {
			key, err := readOwnerKey(cfg.ChainOwnerKeyFile)
			if err != nil {
				return nil, nil, err
			}
			opts = append(opts, chain.WithOwnerKey(key))
		}
		nonces, err := store.NewNonceStore(db)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, chain.WithConfirmations(max(cfg.ChainConfirmations, 1)), chain.WithNonceSource(nonces))
		ledger, err = chain.Dial(ctx, cfg.ChainEndpoint, chain.DialConfig{Key: cfg.ChainKey, Registry: cfg.ChainRegistry,
			Owner: cfg.ChainOwner, ChainID: cfg.ChainID}, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("CHAIN_ENDPOINT: %w", err)
		}
	}
	if mode == chain.AnchorBatch {
		ok, err := ledger.Governed().SupportsBatches(ctx)
		if err == nil && !ok {
			err = fmt.Errorf("CHAIN_ANCHOR=batch: registry %s predates batch anchoring (it has no recordBatch); "+
				"deploy a new one with `healthagents chain deploy`, or set CHAIN_ANCHOR=each", ledger.Registry().Hex())
		}
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("%s: %w", where, err), ledger.Close())
		}
		logger.Info("decisions are anchored in batches", "batch_size", size, "batch_window", window)
	}
	if err := prepareChain(ctx, cfg, ledger, sys); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("%s: %w", where, err), ledger.Close())
	}
	return sys, ledger, nil
}

// prepareChain makes sure the registry lets this deployment record: its
// submitting key registered, its verifiers bound, its own issuer key
// registered (COVERAGE_TRUST=self). Owner actions the Ledger cannot send are
// gathered into one error.
func prepareChain(ctx context.Context, cfg Config, ledger *chain.Ledger, sys *zkp.System) error {
	var pending []string
	owner := func(err error) error {
		if errors.Is(err, chain.ErrOwnerAction) {
			pending = append(pending, strings.TrimPrefix(err.Error(), chain.ErrOwnerAction.Error()+": "))
			return nil
		}
		return err
	}
	if err := owner(ledger.EnsureSubmitter(ctx)); err != nil {
		return err
	}
	// Verifiers are immutable per circuit id: one holding another key is
	// another deployment's (a separate DATA_DIR makes its own keys), and
	// there is no replacing it.
	err := attest.Register(ctx, gathering{ledger, owner}, sys)
	if errors.Is(err, chain.ErrVerifierMismatch) && cfg.ZKKeysDir != "" {
		return fmt.Errorf("registry %s: %w", ledger.Registry().Hex(), zkKeysMismatch(cfg, err))
	}
	if errors.Is(err, chain.ErrVerifierMismatch) {
		return fmt.Errorf("registry %s: %w. Every replica must use the same verifying keys: copy DATA_DIR/zkp from the deployment "+
			"that bound them (or install the same ceremony keys); new keys need a new circuit version", ledger.Registry().Hex(), err)
	}
	if err != nil {
		return err
	}
	if selfTrust(cfg) {
		key, err := selfIssuerKey(cfg)
		if err != nil {
			return err
		}
		if err := owner(registerSelf(ctx, ledger, key)); err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("%w: %s", chain.ErrOwnerAction, strings.Join(pending, "; "))
	}
	return nil
}

// gathering is a Registrar that notes owner actions instead of stopping, so
// every missing circuit is named at once.
type gathering struct {
	l     *chain.Ledger
	owner func(error) error
}

func (g gathering) Register(ctx context.Context, kind chain.Kind, vk chain.VerifyingKey) error {
	return g.owner(g.l.Register(ctx, kind, vk))
}

func selfTrust(cfg Config) bool { return cfg.CoverageTrust == "" || cfg.CoverageTrust == trust.Self }

// selfIssuerKey is the service's own issuer key, kept in DATA_DIR/issuer.key (0600).
func selfIssuerKey(cfg Config) (babyjub.PrivateKey, error) {
	k, err := credential.LoadOrCreateKey(filepath.Join(cfg.DataDir, "issuer.key"))
	if err != nil {
		return k, fmt.Errorf("issuer key: %w", err)
	}
	return k, nil
}

// registerSelf registers the service's issuer key with the owner (or names
// the command when the owner's key is cold).
func registerSelf(ctx context.Context, ledger *chain.Ledger, key babyjub.PrivateKey) error {
	pub := credential.PublicKeyHex(key)
	pk, err := credential.ParsePublicKey(pub)
	if err != nil {
		return err
	}
	h, err := credential.IssuerKeyHash(pk)
	if err != nil {
		return err
	}
	st, err := ledger.Issuer(ctx, h)
	if err != nil {
		return err
	}
	switch {
	case st.Retired:
		return fmt.Errorf("the service's issuer key (DATA_DIR/issuer.key) was retired on chain; move that file away to make a new one")
	case st.Registered:
		return nil
	case !ledger.HoldsOwnerKey():
		return fmt.Errorf("%w: the service's issuer key is not registered (COVERAGE_TRUST=self); run `healthagents chain register-issuer %s`",
			chain.ErrOwnerAction, pub)
	}
	_, err = ledger.RegisterIssuer(ctx, h, common.Address{})
	return err
}

// readOwnerKey reads CHAIN_OWNER_KEY_FILE: a hex secp256k1 key.
func readOwnerKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CHAIN_OWNER_KEY_FILE: %w", err)
	}
	key, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"))
	if err != nil {
		return nil, errors.New("CHAIN_OWNER_KEY_FILE does not hold a hex secp256k1 private key")
	}
	return key, nil
}
