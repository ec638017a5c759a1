package chain

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/healthagents/healthagents/chain/internal/contracts"
)

// NewSimulated starts go-ethereum's simulated chain in-process, funds a
// deployer key (WithKey, or a fresh one) and an owner key (WithOwnerKey, or
// one generated and kept as owner.key under WithDataDir, or a fresh one),
// deploys the GovernedRegistry owned by the owner, registers the deployer as
// its submitter and returns a Ledger on it that holds the owner's key. A
// block producer seals a block whenever transactions are pending, so
// concurrent Submits share blocks. Register the verifying keys with
// Register. Close stops the chain; its state is kept only WithDataDir.
func NewSimulated(ctx context.Context, opts ...Option) (*Ledger, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	key := o.key
	var kept embeddedState
	restart := false
	if o.dataDir != "" {
		var keptKey *ecdsa.PrivateKey
		if kept, keptKey, restart, err = loadState(o.dataDir); err != nil {
			return nil, err
		}
		if restart {
			if err := reconcile(kept, keptKey, o); err != nil {
				return nil, err
			}
			key, o.funded = keptKey, kept.Funded
		}
	}
	if key == nil {
		if key, err = crypto.GenerateKey(); err != nil {
			return nil, fmt.Errorf("chain: generate key: %w", err)
		}
	}
	ownerKey := o.ownerKey
	if ownerKey == nil && o.dataDir != "" {
		if ownerKey, err = LoadOrCreateKey(filepath.Join(o.dataDir, "owner.key")); err != nil {
			return nil, err
		}
	}
	if ownerKey == nil {
		if ownerKey, err = crypto.GenerateKey(); err != nil {
			return nil, fmt.Errorf("chain: generate owner key: %w", err)
		}
	}
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	if !restart && !slices.Contains(o.funded, owner) {
		o.funded = append(o.funded, owner)
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	funds := new(big.Int).Exp(big.NewInt(10), big.NewInt(27), nil) // 1e9 ether
	alloc := types.GenesisAlloc{from: {Balance: funds}}
	for _, a := range o.funded {
		alloc[a] = types.Account{Balance: funds}
	}
	simOpts := []func(*node.Config, *ethconfig.Config){}
	if o.dataDir != "" {
		dir := filepath.Join(o.dataDir, "geth")
		if restart {
			if err := adoptOldLayout(dir, kept.Head); err != nil {
				return nil, err
			}
		}
		simOpts = append(simOpts, func(nc *node.Config, _ *ethconfig.Config) { nc.DataDir = dir })
	}
	endpoint := "embedded"
	if o.httpAddr != "" {
		host, portStr, _ := net.SplitHostPort(o.httpAddr)
		port, perr := strconv.Atoi(portStr)
		if perr != nil {
			return nil, fmt.Errorf("chain: WithHTTP port: %w", perr)
		}
		simOpts = append(simOpts, func(nc *node.Config, _ *ethconfig.Config) {
			nc.HTTPHost = host
			nc.HTTPPort = port
			nc.HTTPModules = []string{"eth", "net", "web3", "txpool"}
		})
		endpoint = "http://" + o.httpAddr
	}
	var sim embeddedBackend
	if o.dataDir != "" {
		sim, err = newDevNode(alloc, simOpts)
	} else {
		sim, err = newBackend(alloc, simOpts)
	}
	if err != nil {
		return nil, err
	}
	var pending func() bool
	stopWatch := func() {}
	if o.httpAddr != "" {
		// Transactions may arrive over HTTP from other clients: watch the pool.
		pending, stopWatch, err = poolWatcher(ctx, endpoint)
		if err != nil {
			return nil, errors.Join(err, sim.Close())
		}
	}
	prod := newProducer(sim.Commit, o.blockDelay, pending)
	if d, ok := sim.(*devNode); ok {
		prod.flushed = d.flushed.Load
	}
	closeFn := func() error {
		prod.stop()
		stopWatch()
		if o.dataDir != "" {
			if err := keepHead(ctx, o.dataDir, sim.Client()); err != nil {
				return errors.Join(err, sim.Close())
			}
		}
		return sim.Close()
	}
	l, err := newLedger(ctx, sim.Client(), key, o)
	if err != nil {
		return nil, errors.Join(err, closeFn())
	}
	l.blocks = prod
	l.closeFn = closeFn
	l.endpoint = endpoint
	l.network = "simulated"
	if err := l.startGoverned(ctx, kept, restart, owner, ownerKey); err != nil {
		return nil, errors.Join(err, l.Close())
	}
	if o.dataDir != "" {
		st := embeddedState{Key: hex.EncodeToString(crypto.FromECDSA(key)), Funded: o.funded,
			Governed: l.Registry(), Head: kept.Head}
		if err := saveState(o.dataDir, st); err != nil {
			return nil, errors.Join(err, l.Close())
		}
	}
	return l, nil
}

// startGoverned finds the kept GovernedRegistry, or deploys one owned by
// owner (funding the owner first on a chain kept from before governance,
// whose genesis did not), and registers the deployer as its submitter.
func (l *Ledger) startGoverned(ctx context.Context, kept embeddedState, restart bool, owner common.Address, ownerKey *ecdsa.PrivateKey) error {
	if restart && kept.Governed != (common.Address{}) {
		l.mu.Lock()
		l.registry = kept.Governed
		l.mu.Unlock()
		out, err := l.call(ctx, kept.Governed, contracts.NewGovernedRegistry().PackOwner())
		if err != nil {
			return fmt.Errorf("chain: read registry owner: %w", err)
		}
		keptOwner, err := contracts.NewGovernedRegistry().UnpackOwner(out)
		if err != nil {
			return fmt.Errorf("chain: read registry owner: %w", err)
		}
		return l.setOwner(keptOwner, ownerKey)
	}
	if restart && !slices.Contains(kept.Funded, owner) {
		funds := new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil) // 1e6 ether
		if _, err := l.tx.pay(ctx, owner, funds); err != nil {
			return fmt.Errorf("chain: fund the registry owner: %w", err)
		}
	}
	g, err := DeployGoverned(ctx, l.tx, l.client, owner)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.registry = g.Address()
	l.mu.Unlock()
	if err := l.setOwner(owner, ownerKey); err != nil {
		return err
	}
	return l.EnsureSubmitter(ctx)
}

// newBackend wraps simulated.NewBackend, which panics when the node cannot
// start (for example when the HTTP port is taken).
func newBackend(alloc types.GenesisAlloc, opts []func(*node.Config, *ethconfig.Config)) (b embeddedBackend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chain: start simulated chain: %v", r)
		}
	}()
	return memBackend{simulated.NewBackend(alloc, opts...)}, nil
}

// memBackend is the in-memory simulated backend as an embeddedBackend.
type memBackend struct{ *simulated.Backend }

func (m memBackend) Client() Backend { return m.Backend.Client() }

// producer seals a block of the simulated chain whenever one is requested.
// Requests made while a block is being sealed are folded into one more block,
// so transactions sent concurrently share blocks (group commit).
type producer struct {
	commit  func() common.Hash
	pending func() bool // nil unless transactions can arrive from outside
	delay   time.Duration

	kick chan struct{}
	quit chan struct{}
	done chan struct{}

	commitMu sync.Mutex // held while a block is sealed and flushed (settle)
	// flushed, when set, is the number of the last block whose commit
	// flushed the database (devNode); settle need not wait for a later one.
	flushed func() uint64

	mu      sync.Mutex
	sealed  chan struct{} // closed when the next block is sealed
	stopped bool          // after stop, next returns a closed channel

	stopOnce sync.Once
}

// externalPoll is how often the producer looks for transactions that reached
// the simulated chain from outside the Ledger (over WithHTTP).
const externalPoll = 20 * time.Millisecond

// poolWatcher reports whether the simulated chain's transaction pool holds
// pending transactions, asking txpool_status over the chain's own HTTP
// endpoint (the simulated backend does not expose its in-process client).
func poolWatcher(ctx context.Context, endpoint string) (func() bool, func(), error) {
	client, err := rpc.DialContext(ctx, endpoint)
	if err != nil {
		return nil, nil, fmt.Errorf("chain: dial own endpoint: %w", err)
	}
	return func() bool {
		var status struct {
			Pending hexutil.Uint `json:"pending"`
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := client.CallContext(ctx, &status, "txpool_status"); err != nil {
			return false
		}
		return status.Pending > 0
	}, client.Close, nil
}

func newProducer(commit func() common.Hash, delay time.Duration, pending func() bool) *producer {
	p := &producer{
		commit:  commit,
		pending: pending,
		delay:   delay,
		kick:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		sealed:  make(chan struct{}),
	}
	go p.run()
	return p
}

func (p *producer) run() {
	defer close(p.done)
	defer func() {
		// Wake every waiter: no block will come any more.
		p.mu.Lock()
		p.stopped = true
		close(p.sealed)
		p.mu.Unlock()
	}()
	var poll <-chan time.Time
	if p.pending != nil {
		t := time.NewTicker(externalPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-p.quit:
			return
		case <-p.kick:
		case <-poll:
			if !p.pending() {
				continue
			}
		}
		if p.delay > 0 {
			t := time.NewTimer(p.delay)
			select {
			case <-p.quit:
				t.Stop()
				return
			case <-t.C:
			}
		}
		p.commitMu.Lock()
		p.commit()
		p.commitMu.Unlock()
		p.mu.Lock()
		close(p.sealed)
		p.sealed = make(chan struct{})
		p.mu.Unlock()
	}
}

// settle returns once block is sealed and flushed: a receipt seen while its
// block's commit still flushes the database (devNode.Commit) is only
// reported after the flush, so nothing is answered from a block a kill
// could still take back. A block known flushed (p.flushed) returns at once,
// without waiting for a later block being sealed meanwhile (under load,
// the next block's commit starts as soon as this one's ends); otherwise it
// waits until no block is being sealed.
func (p *producer) settle(block uint64) {
	if p.flushed != nil && p.flushed() >= block {
		return
	}
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
}

func (p *producer) next() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sealed
}

func (p *producer) request() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *producer) stop() {
	p.stopOnce.Do(func() {
		close(p.quit)
		<-p.done
	})
}
