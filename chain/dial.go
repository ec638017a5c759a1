package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
)

// ErrNoContract reports that no contract code is at the configured registry
// address on the chain dialled.
var ErrNoContract = errors.New("chain: no contract at the registry address")

// DialConfig is what Dial needs besides the endpoint.
type DialConfig struct {
	// Key is the hex secp256k1 private key that signs verification
	// transactions (with or without 0x): the hot, submitting key. Its
	// account pays their gas and must be a registered submitter.
	Key string
	// Registry is the hex address of the GovernedRegistry (see Deploy).
	Registry string
	// Owner, optional, is the registry owner the operator expects: Dial
	// refuses a registry owned by another account.
	Owner string
	// ChainID, when not zero, must equal the node's chain id.
	ChainID uint64
}

// Dial connects to an Ethereum JSON-RPC endpoint (http(s)://, ws(s):// or an
// IPC path) and returns a Ledger on the GovernedRegistry at cfg.Registry. It
// checks that the node answers before ctx ends (else ErrUnavailable), that
// a GovernedRegistry is deployed there (else ErrNoContract) and, given
// cfg.Owner or WithOwnerKey, that it is owned by that account. Owner actions
// are sent with WithOwnerKey's key, else prepared unsigned (Govern).
func Dial(ctx context.Context, endpoint string, cfg DialConfig, opts ...Option) (*Ledger, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	key, err := parseKey(cfg.Key)
	if err != nil {
		return nil, err
	}
	if !common.IsHexAddress(cfg.Registry) {
		return nil, errors.New("chain: registry address is not a hex address")
	}
	var wantOwner common.Address
	if cfg.Owner != "" {
		if !common.IsHexAddress(cfg.Owner) {
			return nil, errors.New("chain: owner is not a hex address")
		}
		wantOwner = common.HexToAddress(cfg.Owner)
	}
	registry := common.HexToAddress(cfg.Registry)
	l, err := dial(ctx, endpoint, key, o)
	if err != nil {
		return nil, err
	}
	if err := l.attach(ctx, cfg.ChainID, registry, wantOwner); err != nil {
		return nil, errors.Join(err, l.Close())
	}
	return l, nil
}

// attach points a dialled Ledger at its registry and checks it.
func (l *Ledger) attach(ctx context.Context, chainID uint64, registry, wantOwner common.Address) error {
	if chainID != 0 && l.chainID.Uint64() != chainID {
		return fmt.Errorf("chain: endpoint serves chain id %s, configured %d", l.chainID, chainID)
	}
	code, err := l.client.CodeAt(ctx, registry, nil)
	if err != nil {
		return fmt.Errorf("chain: read registry code: %w", unavailable(err))
	}
	if len(code) == 0 {
		return fmt.Errorf("%w %s on %s", ErrNoContract, registry.Hex(), l.network)
	}
	l.registry = registry
	g := l.Governed()
	owner, err := g.Owner(ctx)
	if err == nil {
		_, err = g.IsSubmitter(ctx, l.from)
	}
	if err != nil {
		if errors.Is(unavailable(err), ErrUnavailable) {
			return unavailable(err)
		}
		return fmt.Errorf("chain: %s is not a GovernedRegistry (a StatementRegistry deployed before governance? "+
			"deploy one with `healthagents chain deploy`): %w", registry.Hex(), err)
	}
	if wantOwner != (common.Address{}) && owner != wantOwner {
		return fmt.Errorf("chain: registry %s is owned by %s, not CHAIN_OWNER %s", registry.Hex(), owner.Hex(), wantOwner.Hex())
	}
	return l.setOwner(owner, l.opts.ownerKey)
}

func dial(ctx context.Context, endpoint string, key *ecdsa.PrivateKey, o options) (*Ledger, error) {
	client, err := ethclient.DialContext(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("chain: dial %s: %w", redactEndpoint(endpoint), unavailable(err))
	}
	l, err := newLedger(ctx, client, key, o)
	if err != nil {
		client.Close()
		return nil, err
	}
	l.endpoint = redactEndpoint(endpoint)
	l.closeFn = func() error { client.Close(); return nil }
	return l, nil
}

func parseKey(s string) (*ecdsa.PrivateKey, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "0x")
	if s == "" {
		return nil, errors.New("chain: no signing key")
	}
	key, err := crypto.HexToECDSA(s)
	if err != nil {
		// The parse error may quote the key: do not wrap it.
		return nil, errors.New("chain: signing key is not a hex secp256k1 private key")
	}
	return key, nil
}

// DeployConfig is what Deploy needs besides the endpoint and the paying key.
type DeployConfig struct {
	// Owner owns the GovernedRegistry. With OwnerKey nil, the owner actions
	// that follow the deployment (setSubmitter, addCircuit) are returned as
	// unsigned transactions (Addresses.Pending) for the owner's wallet.
	Owner common.Address
	// OwnerKey, optional, is the owner's key: the owner actions are sent.
	OwnerKey *ecdsa.PrivateKey
	// Verifiers are the verifying keys to bind, by statement kind, each of
	// the registry's three public inputs.
	Verifiers map[Kind]VerifyingKey
}

// Deploy deploys a GovernedRegistry owned by cfg.Owner on the chain at
// endpoint, paid by key (the submitting key, which it registers as a
// submitter), then a verifier per kind of cfg.Verifiers, bound by the
// owner. It is what `healthagents chain deploy` runs; the addresses go into
// the settings Dial reads.
func Deploy(ctx context.Context, endpoint string, key *ecdsa.PrivateKey, cfg DeployConfig, opts ...Option) (Addresses, error) {
	if key == nil {
		return Addresses{}, errors.New("chain: nil signing key")
	}
	owner := cfg.Owner
	if cfg.OwnerKey != nil {
		owner = crypto.PubkeyToAddress(cfg.OwnerKey.PublicKey)
		if cfg.Owner != (common.Address{}) && cfg.Owner != owner {
			return Addresses{}, errors.New("chain: the owner key is not the owner's")
		}
		opts = append(opts, WithOwnerKey(cfg.OwnerKey))
	}
	if owner == (common.Address{}) {
		return Addresses{}, errors.New("chain: deploy needs the registry owner's address (CHAIN_OWNER) or key")
	}
	if owner == crypto.PubkeyToAddress(key.PublicKey) {
		return Addresses{}, errors.New("chain: the registry owner must not be the submitting key")
	}
	o, err := applyOptions(opts)
	if err != nil {
		return Addresses{}, err
	}
	l, err := dial(ctx, endpoint, key, o)
	if err != nil {
		return Addresses{}, err
	}
	defer l.Close()
	g, err := DeployGoverned(ctx, l.tx, l.client, owner)
	if err != nil {
		return Addresses{}, err
	}
	l.registry = g.Address()
	if err := l.setOwner(owner, o.ownerKey); err != nil {
		return Addresses{}, err
	}
	out := Addresses{Registry: g.Address(), Owner: owner, Verifiers: map[Kind]common.Address{}}
	pend := func(a OwnerAction) error {
		if o.ownerKey != nil {
			_, err := l.Govern(ctx, a)
			return err
		}
		// Cold owner: consecutive nonces, signed in order by the wallet.
		u, err := g.unsigned(ctx, owner, a, uint64(len(out.Pending)))
		if err == nil {
			out.Pending = append(out.Pending, u)
		}
		return err
	}
	if err := pend(g.SetSubmitter(l.from, true)); err != nil {
		return out, err
	}
	for _, kind := range slices.Sorted(maps.Keys(cfg.Verifiers)) {
		vk := cfg.Verifiers[kind]
		if err := governedShape(kind, vk); err != nil {
			return out, err
		}
		addr, err := DeployVerifier(ctx, l.tx, vk)
		if err != nil {
			return out, fmt.Errorf("chain: deploy verifier for %q: %w", string(kind), err)
		}
		out.Verifiers[kind] = addr
		if err := pend(g.AddCircuit(CircuitID(kind), addr)); err != nil {
			return out, err
		}
	}
	return out, nil
}
