package chain

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// WithDataDir keeps the embedded chain's database under dir, so a restart
// finds every earlier block, receipt and event and continues from the old
// head. The genesis (deployer key and funded accounts) and the registry
// addresses are kept in dir/embedded.json (0600: it holds the deployer key);
// the GovernedRegistry owner's generated key, unless WithOwnerKey gives
// one, in dir/owner.key (0600, hex: usable as --owner-key).
func WithDataDir(dir string) Option {
	return func(o *options) error {
		if dir == "" {
			return errors.New("chain: WithDataDir needs a directory")
		}
		o.dataDir = dir
		return nil
	}
}

// embeddedState is what must survive a restart besides the chain database:
// genesis must be rebuilt identically, and the registry is not redeployed.
type embeddedState struct {
	Key    string           `json:"deployer_key"`
	Funded []common.Address `json:"funded"`
	// Governed is the GovernedRegistry (zero in a state kept before governance).
	Governed common.Address `json:"governed_registry"`
	Head     common.Hash    `json:"head"` // the head block at the last close
}

// headReader is what keepHead needs of the chain.
type headReader interface {
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
}

// keepHead records the current head in the kept state before the chain closes.
func keepHead(ctx context.Context, dir string, c headReader) error {
	st, _, ok, err := loadState(dir)
	if err != nil || !ok {
		return err
	}
	h, err := c.HeaderByNumber(context.WithoutCancel(ctx), nil)
	if err != nil {
		return fmt.Errorf("chain: read head before close: %w", err)
	}
	st.Head = h.Hash()
	return saveState(dir, st)
}

func statePath(dir string) string { return filepath.Join(dir, "embedded.json") }

// loadState reads the kept state; ok is false on a first start.
func loadState(dir string) (st embeddedState, key *ecdsa.PrivateKey, ok bool, err error) {
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil, false, nil
	}
	if err != nil {
		return st, nil, false, fmt.Errorf("chain: read embedded state: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, nil, false, fmt.Errorf("chain: embedded state %s: %w", statePath(dir), err)
	}
	key, err = crypto.HexToECDSA(st.Key)
	if err != nil {
		return st, nil, false, fmt.Errorf("chain: embedded state deployer key: %w", err)
	}
	return st, key, true, nil
}

func saveState(dir string, st embeddedState) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("chain: data dir: %w", err)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("chain: encode embedded state: %w", err)
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("chain: write embedded state: %w", err)
	}
	if err := os.Rename(tmp, statePath(dir)); err != nil {
		return fmt.Errorf("chain: write embedded state: %w", err)
	}
	return nil
}

// reconcile checks that the options of a restart agree with the kept genesis.
func reconcile(st embeddedState, kept *ecdsa.PrivateKey, o options) error {
	if o.key != nil && crypto.PubkeyToAddress(o.key.PublicKey) != crypto.PubkeyToAddress(kept.PublicKey) {
		return errors.New("chain: WithKey differs from the deployer key kept in the data dir")
	}
	for _, a := range o.funded {
		if !slices.Contains(st.Funded, a) {
			return fmt.Errorf("chain: %s was not funded at genesis of the kept chain", a.Hex())
		}
	}
	return nil
}

// LoadOrCreateKey reads a hex secp256k1 key from path, or creates one there
// (0600, in a 0700 directory) when the file does not exist.
func LoadOrCreateKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"))
		if err != nil {
			return nil, fmt.Errorf("chain: %s is not a hex secp256k1 key", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("chain: read key: %w", err)
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("chain: generate key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("chain: key dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("chain: write key: %w", err)
	}
	_, werr := f.WriteString(hex.EncodeToString(crypto.FromECDSA(key)) + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return nil, fmt.Errorf("chain: write key: %w", err)
	}
	return key, nil
}
