package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
)

// TxBackend is the part of a JSON-RPC client a Transactor uses; Backend,
// *ethclient.Client and the simulated backend's client satisfy it.
type TxBackend interface {
	ChainID(ctx context.Context) (*big.Int, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	SuggestGasPrice(ctx context.Context) (*big.Int, error)
	EstimateGas(ctx context.Context, call ethereum.CallMsg) (uint64, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
}

// Transactor is the one EVM transaction pipeline of the module: for one
// signing key it estimates gas, prices the fees, assigns the nonce, signs,
// sends, waits until the transaction is mined and checks its receipt. The
// Ledger sends through one, and so does a pharmacy.Oracle that signs with
// its own key. It is safe for concurrent use: only nonce assignment,
// signing and sending are serialized, never the wait for a block.
//
// Nonces are kept in memory after the first read, so one key should have
// one Transactor; a "nonce too low" answer (another sender moved the
// account's nonce) makes it read the nonce again and retry once. Processes
// that share a key share a NonceSource instead (SetNonceSource,
// WithNonceSource).
type Transactor struct {
	client       TxBackend
	key          *ecdsa.PrivateKey
	from         common.Address
	chainID      *big.Int
	signer       types.Signer
	pollInterval time.Duration

	// blocks returns the simulated chain's block producer, nil on a
	// JSON-RPC node. It is a function because NewSimulated attaches the
	// producer to its Ledger after creating it.
	blocks func() blockSource
	// closed reports that the owner (a Ledger) was closed: waiting stops
	// with ErrClosed.
	closed func() bool

	nonceMu    sync.Mutex
	nonce      uint64
	nonceKnown bool
	// nonces, when set, allocates nonces across processes (NonceSource);
	// nonce and nonceKnown are then unused.
	nonces NonceSource
}

// NewTransactor returns a Transactor signing with key on the chain client
// serves. pollInterval caps the interval at which it polls for a receipt
// (polling starts at 25 ms and doubles); 0 means 1 s. Given the Client of a
// simulated Ledger, it wakes on each sealed block instead of polling.
func NewTransactor(ctx context.Context, client TxBackend, key *ecdsa.PrivateKey, pollInterval time.Duration) (*Transactor, error) {
	if client == nil || key == nil {
		return nil, errors.New("chain: nil client or signing key")
	}
	if pollInterval <= 0 {
		pollInterval = time.Second
	}
	id, err := client.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("chain: read chain id: %w", unavailable(err))
	}
	var blocks blockSource
	if sc, ok := client.(sealingClient); ok {
		// Send through the plain client: sendOnce asks for the block itself.
		client, blocks = sc.Backend, sc.blocks
	}
	return newTransactor(client, key, id, pollInterval, func() blockSource { return blocks }, nil), nil
}

func newTransactor(client TxBackend, key *ecdsa.PrivateKey, chainID *big.Int, pollInterval time.Duration,
	blocks func() blockSource, closed func() bool) *Transactor {
	if closed == nil {
		closed = func() bool { return false }
	}
	return &Transactor{
		client:       client,
		key:          key,
		from:         crypto.PubkeyToAddress(key.PublicKey),
		chainID:      chainID,
		signer:       types.LatestSignerForChainID(chainID),
		pollInterval: pollInterval,
		blocks:       blocks,
		closed:       closed,
	}
}

// Account returns the address that signs the transactions.
func (t *Transactor) Account() common.Address { return t.from }

// Transact sends a transaction to a contract (a contract creation when to
// is nil) and waits until it is mined with status 1. A gas limit of 0 means
// estimate (adding a fifth). A transaction mined with status 0 returns its
// receipt with ErrReverted; a revert found while estimating returns
// ErrReverted without a receipt; an unreachable chain, or one that does not
// mine the transaction before ctx ends, returns an error wrapping
// ErrUnavailable. Transact sets no deadline of its own.
func (t *Transactor) Transact(ctx context.Context, to *common.Address, data []byte, gas uint64) (*types.Receipt, error) {
	if gas == 0 {
		est, err := t.estimate(ctx, to, data)
		if err != nil {
			return nil, err
		}
		gas = est + est/5
	}
	return t.transact(ctx, to, data, gas, nil)
}

// pay sends value wei to an account (a plain transfer) and waits until it
// is mined.
func (t *Transactor) pay(ctx context.Context, to common.Address, value *big.Int) (*types.Receipt, error) {
	return t.transact(ctx, &to, nil, 21_000, value)
}

func (t *Transactor) transact(ctx context.Context, to *common.Address, data []byte, gas uint64, value *big.Int) (*types.Receipt, error) {
	// On the simulated chain, the block being sealed now (if any) or else
	// the next one: taken before the send asks for a block, so the wait
	// cannot miss the block that send's request seals.
	var sealed <-chan struct{}
	if b := t.blocks(); b != nil {
		sealed = b.next()
	}
	tx, err := t.send(ctx, to, data, gas, value)
	if err != nil {
		return nil, err
	}
	r, err := t.waitMined(ctx, tx.Hash(), sealed)
	if err != nil {
		return nil, err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return r, fmt.Errorf("%w: tx %s", ErrReverted, r.TxHash.Hex())
	}
	return r, nil
}

// estimate asks the node for the gas of a call; a revert is ErrReverted.
func (t *Transactor) estimate(ctx context.Context, to *common.Address, data []byte) (uint64, error) {
	est, err := t.client.EstimateGas(ctx, ethereum.CallMsg{From: t.from, To: to, Data: data})
	if err != nil {
		var rpcErr rpc.Error
		if revertData(err) != nil || (errors.As(err, &rpcErr) && strings.Contains(err.Error(), "revert")) {
			return 0, fmt.Errorf("%w: %w", ErrReverted, err)
		}
		return 0, fmt.Errorf("chain: estimate gas: %w", unavailable(err))
	}
	return est, nil
}

// send signs and sends one transaction. Fees are read before taking the
// nonce lock; the lock covers only nonce assignment, signing and sending.
func (t *Transactor) send(ctx context.Context, to *common.Address, data []byte, gas uint64, value *big.Int) (*types.Transaction, error) {
	fees, err := t.fees(ctx)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		tx, err := t.sendOnce(ctx, to, data, gas, value, fees)
		if err == nil {
			return tx, nil
		}
		// Another sender using the same key, or a dropped transaction, moved
		// the account's nonce: read it again and retry once.
		if attempt == 0 && strings.Contains(strings.ToLower(err.Error()), "nonce too low") {
			continue
		}
		return nil, err
	}
}

type txFees struct {
	tipCap, feeCap, gasPrice *big.Int // gasPrice set only for pre-London chains
}

// fees prices a transaction: a tip and twice the head's base fee on a
// London chain, the suggested gas price before London.
func (t *Transactor) fees(ctx context.Context) (txFees, error) {
	head, err := t.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return txFees{}, fmt.Errorf("chain: read head: %w", unavailable(err))
	}
	if head.BaseFee == nil {
		price, err := t.client.SuggestGasPrice(ctx)
		if err != nil {
			return txFees{}, fmt.Errorf("chain: gas price: %w", unavailable(err))
		}
		return txFees{gasPrice: price}, nil
	}
	tip, err := t.client.SuggestGasTipCap(ctx)
	if err != nil {
		return txFees{}, fmt.Errorf("chain: gas tip: %w", unavailable(err))
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	return txFees{tipCap: tip, feeCap: feeCap}, nil
}

func (t *Transactor) sendOnce(ctx context.Context, to *common.Address, data []byte, gas uint64, value *big.Int, fees txFees) (*types.Transaction, error) {
	t.nonceMu.Lock()
	defer t.nonceMu.Unlock()
	if t.nonces != nil {
		var tx *types.Transaction
		pending := func(ctx context.Context) (uint64, error) {
			n, err := t.client.PendingNonceAt(ctx, t.from)
			if err != nil {
				return 0, fmt.Errorf("chain: read nonce: %w", unavailable(err))
			}
			return n, nil
		}
		err := t.nonces.WithNonce(ctx, t.chainID.Uint64(), t.from, pending, func(nonce uint64) error {
			var err error
			tx, err = t.signAndSend(ctx, nonce, to, data, gas, value, fees)
			return err
		})
		if err != nil {
			return nil, err
		}
		return tx, nil
	}
	if !t.nonceKnown {
		n, err := t.client.PendingNonceAt(ctx, t.from)
		if err != nil {
			return nil, fmt.Errorf("chain: read nonce: %w", unavailable(err))
		}
		t.nonce, t.nonceKnown = n, true
	}
	tx, err := t.signAndSend(ctx, t.nonce, to, data, gas, value, fees)
	if err != nil {
		// The node may or may not have taken it: learn the nonce again.
		t.nonceKnown = false
		return nil, err
	}
	t.nonce++
	return tx, nil
}

// signAndSend signs a transaction with nonce and sends it.
func (t *Transactor) signAndSend(ctx context.Context, nonce uint64, to *common.Address, data []byte, gas uint64, value *big.Int, fees txFees) (*types.Transaction, error) {
	var inner types.TxData
	if fees.gasPrice != nil {
		inner = &types.LegacyTx{Nonce: nonce, GasPrice: fees.gasPrice, Gas: gas, To: to, Value: value, Data: data}
	} else {
		inner = &types.DynamicFeeTx{
			ChainID: t.chainID, Nonce: nonce, GasTipCap: fees.tipCap, GasFeeCap: fees.feeCap,
			Gas: gas, To: to, Value: value, Data: data,
		}
	}
	tx, err := types.SignNewTx(t.key, t.signer, inner)
	if err != nil {
		return nil, fmt.Errorf("chain: sign: %w", err)
	}
	if err := t.client.SendTransaction(ctx, tx); err != nil {
		return nil, fmt.Errorf("chain: send: %w", unavailable(err))
	}
	if b := t.blocks(); b != nil {
		b.request()
	}
	return tx, nil
}

// waitMined waits for the receipt of hash. On the simulated chain it wakes
// on each sealed block, starting with first (blocks.next() taken before the
// transaction was sent); on a JSON-RPC node it polls with a doubling
// interval capped by the poll interval.
//
// On the simulated chain the send asked for a block already (signAndSend),
// so a block that includes the transaction is coming without asking again:
// the block being sealed when it was sent may predate it, the one after
// holds it. Only a wait that outlives both asks for another block, so one
// transaction costs one block, not a second, empty one sealed (and flushed)
// while its sender waits for the receipt.
func (t *Transactor) waitMined(ctx context.Context, hash common.Hash, first <-chan struct{}) (*types.Receipt, error) {
	delay := 25 * time.Millisecond
	blocks := t.blocks()
	for wakes := 0; ; wakes++ {
		var sealed <-chan struct{}
		if blocks != nil {
			sealed = blocks.next()
			if wakes == 0 && first != nil {
				sealed = first
			}
		}
		r, err := t.client.TransactionReceipt(ctx, hash)
		if err == nil && t.atHead(ctx, r) {
			if blocks != nil {
				n := uint64(math.MaxUint64) // unknown: wait for any block being sealed
				if r.BlockNumber != nil {
					n = r.BlockNumber.Uint64()
				}
				blocks.settle(n) // its block is on disk before anyone is answered from it
			}
			return r, nil
		}
		if err == nil {
			err = ethereum.NotFound // mined, but "latest" is not its block yet: wait
		}
		if t.closed() {
			return nil, ErrClosed
		}
		if !errors.Is(err, ethereum.NotFound) {
			var rpcErr rpc.Error
			if !errors.As(err, &rpcErr) { // a node error (e.g. indexing in progress) is retried
				t.forgetNonce()
				return nil, fmt.Errorf("chain: wait for tx %s: %w", hash.Hex(), unavailable(err))
			}
		}
		var timer *time.Timer
		var wake <-chan time.Time
		if sealed != nil {
			if wakes >= 2 {
				blocks.request()
			}
		} else {
			timer = time.NewTimer(delay)
			wake = timer.C
			delay = min(2*delay, t.pollInterval)
		}
		select {
		case <-ctx.Done():
			t.forgetNonce()
			return nil, fmt.Errorf("chain: tx %s not mined in time: %w", hash.Hex(), unavailable(ctx.Err()))
		case <-sealed:
		case <-wake:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// forgetNonce makes the next send read the account's pending nonce again,
// so that a transaction the node dropped does not block the ones after it.
func (t *Transactor) forgetNonce() {
	t.nonceMu.Lock()
	t.nonceKnown = false
	ns := t.nonces
	t.nonceMu.Unlock()
	if ns != nil {
		// Best effort, on a context of its own: the caller's has often
		// ended (that is why the wait gave up).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ns.Forget(ctx, t.chainID.Uint64(), t.from)
	}
}

// atHead reports whether the chain's latest block is at or above r's, so
// that calls against "latest" see r's effects (a receipt can be served a
// moment before its block becomes the head). A failing read counts as yes:
// the receipt is what was asked for.
func (t *Transactor) atHead(ctx context.Context, r *types.Receipt) bool {
	if r.BlockNumber == nil {
		return true
	}
	h, err := t.client.HeaderByNumber(ctx, nil)
	return err != nil || h.Number.Cmp(r.BlockNumber) >= 0
}
