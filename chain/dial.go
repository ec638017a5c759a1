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

	"github.com/healthagents/healthagents/chain/internal/contracts"
)

// ErrNoContract reports that no contract code is at the configured registry
// address on the chain dialled.
var ErrNoContract = errors.New("chain: no contract at the registry address")

// DialConfig is what Dial needs besides the endpoint.
type DialConfig struct {
	// Key is the hex secp256k1 private key that signs verification
	// transactions (with or without 0x). Its account pays their gas.
	Key string
	// Registry is the hex address of the StatementRegistry (see Deploy).
	Registry string
	// ChainID, when not zero, must equal the node's chain id.
	ChainID uint64
}

// Dial connects to an Ethereum JSON-RPC endpoint (http(s)://, ws(s):// or an
// IPC path) and returns a Ledger on the registry at cfg.Registry. It checks
// that the node answers before ctx ends (else ErrUnavailable) and that code is
// deployed at the registry address (else ErrNoContract).
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
	registry := common.HexToAddress(cfg.Registry)
	l, err := dial(ctx, endpoint, key, o)
	if err != nil {
		return nil, err
	}
	if cfg.ChainID != 0 && l.chainID.Uint64() != cfg.ChainID {
		return nil, errors.Join(fmt.Errorf("chain: endpoint serves chain id %s, configured %d", l.chainID, cfg.ChainID), l.Close())
	}
	code, err := l.client.CodeAt(ctx, registry, nil)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("chain: read registry code: %w", unavailable(err)), l.Close())
	}
	if len(code) == 0 {
		return nil, errors.Join(fmt.Errorf("%w %s on %s", ErrNoContract, registry.Hex(), l.network), l.Close())
	}
	l.registry = registry
	return l, nil
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

// Deploy deploys a StatementRegistry owned by key's account on the chain at
// endpoint, then a verifier per kind, registered in it. It is what
// `healthagents chain deploy` runs; the addresses go into the settings Dial
// reads.
func Deploy(ctx context.Context, endpoint string, key *ecdsa.PrivateKey, verifiers map[Kind]VerifyingKey, opts ...Option) (Addresses, error) {
	if key == nil {
		return Addresses{}, errors.New("chain: nil signing key")
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
	return l.deployAll(ctx, verifiers)
}

// deployAll deploys a registry on l's chain, switches l to it and registers
// the verifiers in kind order.
func (l *Ledger) deployAll(ctx context.Context, verifiers map[Kind]VerifyingKey) (Addresses, error) {
	reg, err := l.deploy(ctx, common.FromHex(contracts.StatementRegistryMetaData.Bin))
	if err != nil {
		return Addresses{}, fmt.Errorf("chain: deploy registry: %w", err)
	}
	l.mu.Lock()
	l.registry = reg
	l.mu.Unlock()
	out := Addresses{Registry: reg, Verifiers: make(map[Kind]common.Address, len(verifiers))}
	for _, kind := range slices.Sorted(maps.Keys(verifiers)) {
		if err := l.Register(ctx, kind, verifiers[kind]); err != nil {
			return out, err
		}
		addr, err := l.Verifier(ctx, kind)
		if err != nil {
			return out, err
		}
		out.Verifiers[kind] = addr
	}
	return out, nil
}
