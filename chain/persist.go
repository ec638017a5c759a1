package chain

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// WithDataDir keeps the embedded chain's database under dir, so a restart
// finds every earlier block, receipt and event and continues from the old
// head. The genesis (deployer key and funded accounts) and the registry
// address are kept in dir/embedded.json (0600: it holds the deployer key).
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
	Key      string           `json:"deployer_key"`
	Funded   []common.Address `json:"funded"`
	Registry common.Address   `json:"registry"`
	Head     common.Hash      `json:"head"` // the head block at the last close
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
