package chain

import (
	"errors"
	"fmt"
	"maps"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethdb"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
)

// embeddedBackend is the in-process chain as NewSimulated uses it.
type embeddedBackend interface {
	Client() Backend
	Commit() common.Hash
	Close() error
}

// devNode is go-ethereum's simulated chain assembled the way
// ethclient/simulated does it, but on a data directory and without that
// package's rewind to genesis at start, so a restart continues from the kept
// head. Same genesis (dev chain, every fork) as the in-memory backend.
type devNode struct {
	stack  *node.Node
	beacon *catalyst.SimulatedBeacon
	client *ethclient.Client
	db     ethdb.KeyValueSyncer // the chain database, flushed after every block
	chain  *core.BlockChain
	// flushed is the number of the last block Commit sealed and flushed.
	flushed atomic.Uint64
}

func newDevNode(alloc types.GenesisAlloc, opts []func(*node.Config, *ethconfig.Config)) (*devNode, error) {
	nodeConf := node.DefaultConfig
	nodeConf.Name = nodeName
	nodeConf.P2P = p2p.Config{NoDiscovery: true}
	genesisAlloc := core.SystemContractAllocs()
	maps.Copy(genesisAlloc, alloc)
	ethConf := ethconfig.Defaults
	ethConf.Genesis = &core.Genesis{Config: params.AllDevChainProtocolChanges, GasLimit: ethconfig.Defaults.Miner.GasCeil, Alloc: genesisAlloc}
	ethConf.SyncMode = ethconfig.FullSync
	ethConf.TxPool.NoLocals = true
	ethConf.LogNoHistory = true
	// Archive mode with the hash scheme writes every block's state as it is
	// made, so a process killed without Close restarts at its last block
	// instead of rewinding to the last flushed state (which could predate
	// the registry's deployment).
	ethConf.NoPruning = true
	ethConf.StateScheme = rawdb.HashScheme
	for _, o := range opts {
		o(&nodeConf, &ethConf)
	}
	if nodeConf.DataDir == "" {
		return nil, errors.New("chain: dev node needs a data dir")
	}
	stack, err := node.New(&nodeConf)
	if err != nil {
		return nil, fmt.Errorf("chain: embedded node: %w", err)
	}
	backend, err := eth.New(stack, &ethConf)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("chain: embedded node: %w", err), stack.Close())
	}
	fs := filters.NewFilterSystem(backend.APIBackend, filters.Config{})
	stack.RegisterAPIs([]rpc.API{{Namespace: "eth", Service: filters.NewFilterAPI(fs)}})
	if err := stack.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("chain: start embedded node: %w", err), stack.Close())
	}
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, backend)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("chain: embedded beacon: %w", err), stack.Close())
	}
	d := &devNode{stack: stack, beacon: beacon, client: ethclient.NewClient(stack.Attach()), db: backend.ChainDb(), chain: backend.BlockChain()}
	d.flushed.Store(d.chain.CurrentBlock().Number.Uint64()) // a restart's head was flushed by the last run (or by pebble's open)
	return d, nil
}

func (d *devNode) Client() Backend { return d.client }

// Commit seals a block and flushes the database's write-ahead log to disk
// before returning, so that a block whose transactions were answered
// survives a process killed right after (SIGKILL: pebble keeps the log's
// last partial block in memory until it fills or is synced, and a restart
// found answered decisions' transactions gone). The producer wakes the
// block's waiters after Commit returns; flushed holds the block's number
// from then on.
func (d *devNode) Commit() common.Hash {
	h := d.beacon.Commit()
	_ = d.db.SyncKeyValue() // a failed flush shows at the next restart as a shorter chain; nothing to answer here
	if hd := d.chain.GetHeaderByHash(h); hd != nil {
		d.flushed.Store(hd.Number.Uint64())
	}
	return h
}

func (d *devNode) Close() error {
	d.client.Close()
	return errors.Join(d.beacon.Stop(), d.stack.Close())
}
