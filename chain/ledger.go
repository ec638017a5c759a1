package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/healthagents/healthagents/chain/internal/contracts"
	"github.com/healthagents/healthagents/zkp/statement"
)

// Backend is the part of a JSON-RPC client the Ledger uses; both
// *ethclient.Client and the simulated backend's client satisfy it.
type Backend interface {
	ChainID(ctx context.Context) (*big.Int, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	CodeAt(ctx context.Context, account common.Address, blockNumber *big.Int) ([]byte, error)
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	SuggestGasPrice(ctx context.Context) (*big.Int, error)
	EstimateGas(ctx context.Context, call ethereum.CallMsg) (uint64, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
}

// blockSource is the simulated chain's block producer as the Ledger sees it.
type blockSource interface {
	// next returns a channel closed when the next block is sealed.
	next() <-chan struct{}
	// request asks for a block to be sealed soon.
	request()
	// settle returns once block (a receipt's) is sealed and flushed.
	settle(block uint64)
}

// Receipt is the outcome of a mined verification transaction.
type Receipt struct {
	TxHash      common.Hash
	BlockNumber uint64
	GasUsed     uint64
	// Verified is true when the registry accepted the proof and emitted
	// StatementRecorded in this transaction (AnchorEach), or when the Ledger
	// verified the proof by eth_call and this transaction recorded the root
	// of the batch holding the statement (AnchorBatch).
	Verified bool
	// Batch is where the statement sits in the batch this transaction
	// anchored (AnchorBatch; nil in AnchorEach mode). GasUsed is then the
	// whole batch's.
	Batch *statement.Batch
}

// Statement is a verified statement read back from its transaction.
type Statement struct {
	Kind        Kind
	InputsHash  common.Hash // keccak256 of the inputs as 32-byte words
	Submitter   common.Address
	Inputs      []*big.Int
	TxHash      common.Hash
	BlockNumber uint64
	// Verifier is the verifier contract that accepted the proof (the
	// GovernedRegistry's event names it).
	Verifier common.Address
}

// Addresses are the contracts a Ledger uses on a chain.
type Addresses struct {
	Registry  common.Address // the GovernedRegistry
	Owner     common.Address // the GovernedRegistry's owner
	Verifiers map[Kind]common.Address
	// Pending are the owner actions still to be signed when the owner's key
	// is cold (setSubmitter, addCircuit), in order.
	Pending []UnsignedTx
}

// Ledger verifies proofs and records them in transactions signed by one key
// (the hot, submitting key): statements of the shape [issuerKeyHash, digest,
// circuitId] in the GovernedRegistry, whose owner is another account. It is
// safe for concurrent use: only nonce assignment and sending are
// serialized, never the wait for a block.
type Ledger struct {
	client   Backend
	blocks   blockSource // nil unless simulated
	closeFn  func() error
	closed   atomic.Bool
	opts     options
	tx       *Transactor // signs and sends; shares its nonces with Transact's callers
	from     common.Address
	chainID  *big.Int
	endpoint string
	network  string

	verifierABI *contracts.Groth16Verifier

	mu       sync.RWMutex // guards the fields below
	registry common.Address
	kinds    map[string]Kind // circuit id (decimal) → kind, of the governed kinds seen
	// verifiers caches the verifier bound to a circuit id (decimal): a
	// binding is immutable, so a proof check reads it from the chain once.
	verifiers map[string]common.Address
	// owner sends the GovernedRegistry's owner actions; nil when the owner's
	// key is cold (only unsigned transactions can be prepared then).
	owner     *Transactor
	ownerAddr common.Address

	registerMu sync.Mutex // one Register at a time, so concurrent calls do not deploy twice

	batchMu sync.Mutex
	batcher *batcher // AnchorBatch: started by the first Submit, never after Close
}

func newLedger(ctx context.Context, client Backend, key *ecdsa.PrivateKey, o options) (*Ledger, error) {
	if key == nil {
		return nil, errors.New("chain: nil signing key")
	}
	id, err := client.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("chain: read chain id: %w", unavailable(err))
	}
	l := &Ledger{
		client:      client,
		opts:        o,
		from:        crypto.PubkeyToAddress(key.PublicKey),
		chainID:     id,
		network:     NetworkName(id.Uint64()),
		verifierABI: contracts.NewGroth16Verifier(),
		kinds:       map[string]Kind{},
		verifiers:   map[string]common.Address{},
	}
	// NewSimulated sets l.blocks after newLedger returns, before any send.
	l.tx = newTransactor(client, key, id, o.pollInterval, func() blockSource { return l.blocks }, l.closed.Load)
	l.tx.nonces = o.nonces
	return l, nil
}

// Network returns the endpoint (with any credentials in it redacted) and the
// network's name: "simulated" for the embedded chain, else NetworkName of the
// chain id.
func (l *Ledger) Network() (endpoint, name string) { return l.endpoint, l.network }

// ChainID returns the chain id.
func (l *Ledger) ChainID() *big.Int { return new(big.Int).Set(l.chainID) }

// Account returns the address that signs the Ledger's transactions.
func (l *Ledger) Account() common.Address { return l.from }

// Registry returns the GovernedRegistry address.
func (l *Ledger) Registry() common.Address {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.registry
}

// RegistryHex returns the GovernedRegistry address in its checksummed hex
// form, "" while there is none: what GET /status reports, for a caller (package
// server) that names no go-ethereum type.
func (l *Ledger) RegistryHex() string {
	if a := l.Registry(); a != (common.Address{}) {
		return a.Hex()
	}
	return ""
}

// Governed returns a handle on the GovernedRegistry, for its read calls
// (IsIssuerActive, IsRevoked, VerifierOf, IsSubmitter) and owner actions.
func (l *Ledger) Governed() *Governed {
	return NewGoverned(l.client, l.Registry())
}

// Client returns the Ledger's connection to the chain, for other contracts'
// callers on the same chain (the pharmacy oracle). On the simulated chain a
// transaction sent through it also asks for a block, so it is mined like the
// Ledger's own. The client is closed with the Ledger.
func (l *Ledger) Client() Backend {
	if l.blocks != nil {
		return sealingClient{Backend: l.client, blocks: l.blocks}
	}
	return l.client
}

// sealingClient requests a block of the simulated chain after each
// transaction it sends.
type sealingClient struct {
	Backend
	blocks blockSource
}

func (c sealingClient) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	if err := c.Backend.SendTransaction(ctx, tx); err != nil {
		return err
	}
	c.blocks.request()
	return nil
}

// Transact sends a transaction signed by the Ledger's account to a contract
// (a contract creation when to is nil) and waits until it is mined, sharing
// the Ledger's Transactor (its nonce management), so other contracts can be written with the
// same account without racing its nonces. A gas limit of 0 means estimate.
// A transaction mined with status 0 returns its receipt with ErrReverted (a
// revert found while estimating: no receipt); an unreachable chain, or one
// that does not mine it before the context's deadline or the submit timeout,
// returns ErrUnavailable.
func (l *Ledger) Transact(ctx context.Context, to *common.Address, data []byte, gas uint64) (*types.Receipt, error) {
	if l.closed.Load() {
		return nil, ErrClosed
	}
	if to != nil && *to == (common.Address{}) {
		return nil, errors.New("chain: Transact to the zero address")
	}
	ctx, cancel := context.WithTimeout(ctx, l.opts.submitTimeout)
	defer cancel()
	return l.tx.Transact(ctx, to, data, gas)
}

// Ping checks that the chain answers.
func (l *Ledger) Ping(ctx context.Context) error {
	if l.closed.Load() {
		return ErrClosed
	}
	if _, err := l.client.HeaderByNumber(ctx, nil); err != nil {
		return fmt.Errorf("chain: ping: %w", unavailable(err))
	}
	return nil
}

// Close stops the Ledger and, for the simulated chain, the chain itself.
func (l *Ledger) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	l.batchMu.Lock()
	b := l.batcher
	l.batchMu.Unlock()
	if b != nil {
		b.close() // queued statements fail; the batch in flight is cancelled
		<-b.stopped
	}
	if l.closeFn != nil {
		return l.closeFn()
	}
	return nil
}

// Verifier returns the verifier contract the GovernedRegistry binds to
// CircuitID(kind), else the zero address.
func (l *Ledger) Verifier(ctx context.Context, kind Kind) (common.Address, error) {
	if l.closed.Load() {
		return common.Address{}, ErrClosed
	}
	if _, err := kind.bytes32(); err != nil {
		return common.Address{}, err
	}
	v, err := l.Governed().VerifierOf(ctx, CircuitID(kind))
	if err != nil {
		return common.Address{}, unavailable(err)
	}
	return v, nil
}

// Register makes sure kind's verifier holds vk. A key with three public
// inputs — [issuerKeyHash, digest, circuitId] — is bound in the
// GovernedRegistry: it does nothing when CircuitID(kind) is bound to a
// verifier holding vk, refuses with ErrVerifierMismatch when it is bound to
// another (verifiers are immutable per circuit id: a new circuit version is
// a new kind), and otherwise deploys a verifier and binds it with the owner's
// addCircuit — or, when the owner's key is cold, returns an error wrapping
// ErrOwnerAction naming the command to run. A key of another shape (the
// first circuits', whose StatementRegistry path is gone) is refused.
func (l *Ledger) Register(ctx context.Context, kind Kind, vk VerifyingKey) error {
	if l.closed.Load() {
		return ErrClosed
	}
	l.registerMu.Lock()
	defer l.registerMu.Unlock()
	if err := governedShape(kind, vk); err != nil {
		return err
	}
	return l.registerGoverned(ctx, kind, vk)
}

// Check verifies a proof with an eth_call, recording nothing. It returns
// false and no error when the verifier rejects the proof.
func (l *Ledger) Check(ctx context.Context, kind Kind, proof [8]*big.Int, inputs []*big.Int) (bool, error) {
	if l.closed.Load() {
		return false, ErrClosed
	}
	if _, err := kind.bytes32(); err != nil {
		return false, err
	}
	if !encodable(proof, inputs) {
		return false, nil
	}
	if err := l.bound(ctx, kind); err != nil {
		return false, err
	}
	return l.checkGoverned(ctx, kind, proof, inputs)
}

// Submit verifies and records a proof in a transaction and waits until it is
// mined. A statement of the registry's shape [issuerKeyHash, digest,
// circuitId] goes to the GovernedRegistry's record: a proof that fails
// reverts and records nothing (ErrRejected), an issuer that is not active
// gives ErrIssuerNotActive, a key that is not a registered submitter
// ErrNotSubmitter, an unbound circuit ErrUnknownKind; the receipt's log must
// be exactly the StatementRecorded event expected, and on a JSON-RPC node
// the block must have WithConfirmations confirmations, before the receipt is
// reported Verified. An unreachable chain, or one that does not mine the transaction before the
// context's deadline or the submit timeout (default 10 s), returns
// ErrUnavailable.
//
// In AnchorBatch mode (WithAnchor) Submit checks the proof by eth_call to
// the verifier bound to the circuit id (ErrRejected) and the issuer active
// (ErrIssuerNotActive) before queueing the statement's leaf, and returns
// once the recordBatch transaction of its batch is mined and confirmed and
// its BatchRecorded event holds the root, size and circuit ids sent; the
// Receipt's Batch is the statement's path to that root. A batch that fails
// fails each of its statements with ErrBatchFailed wrapping the cause. A
// caller whose ctx ends gets ctx's error; its statement stays in the batch.
// Close fails the statements still queued.
func (l *Ledger) Submit(ctx context.Context, kind Kind, proof [8]*big.Int, inputs []*big.Int) (Receipt, error) {
	if l.closed.Load() {
		return Receipt{}, ErrClosed
	}
	if _, err := kind.bytes32(); err != nil {
		return Receipt{}, err
	}
	if !encodable(proof, inputs) {
		return Receipt{}, fmt.Errorf("%w: proof or inputs not encodable as uint256", ErrRejected)
	}
	if err := l.bound(ctx, kind); err != nil {
		return Receipt{}, err
	}
	if l.opts.anchor == AnchorBatch {
		return l.submitBatched(ctx, kind, proof, inputs)
	}
	return l.submitGoverned(ctx, kind, proof, inputs)
}

// Statement reads back the statement recorded by a transaction: the
// GovernedRegistry's StatementRecorded event (Inputs are [issuerKeyHash,
// digest, circuitId]). It returns ErrNotFound for an unknown (or not yet mined) transaction,
// ErrReverted for a reverted one and ErrRejected for one that recorded
// nothing.
func (l *Ledger) Statement(ctx context.Context, txHash common.Hash) (Statement, error) {
	if l.closed.Load() {
		return Statement{}, ErrClosed
	}
	r, err := l.client.TransactionReceipt(ctx, txHash)
	if errors.Is(err, ethereum.NotFound) {
		return Statement{}, ErrNotFound
	}
	if err != nil {
		return Statement{}, unavailable(err)
	}
	rec, err := l.Governed().DecodeRecorded(r)
	if err != nil {
		if r.Status != types.ReceiptStatusSuccessful {
			return Statement{}, ErrReverted
		}
		return Statement{}, ErrRejected
	}
	inputs := []*big.Int{rec.IssuerKeyHash, rec.Digest, rec.CircuitID}
	return Statement{
		Kind:        l.kindOf(rec.CircuitID),
		InputsHash:  inputsHash(inputs),
		Submitter:   rec.Submitter,
		Inputs:      inputs,
		TxHash:      r.TxHash,
		BlockNumber: r.BlockNumber.Uint64(),
		Verifier:    rec.Verifier,
	}, nil
}

// inputsHash is keccak256 of the inputs as 32-byte words (abi.encodePacked).
func inputsHash(inputs []*big.Int) common.Hash {
	var b []byte
	for _, v := range inputs {
		b = append(b, common.BigToHash(v).Bytes()...)
	}
	return crypto.Keccak256Hash(b)
}

func receiptOf(r *types.Receipt, verified bool) Receipt {
	if r == nil {
		return Receipt{}
	}
	out := Receipt{TxHash: r.TxHash, GasUsed: r.GasUsed, Verified: verified}
	if r.BlockNumber != nil {
		out.BlockNumber = r.BlockNumber.Uint64()
	}
	return out
}

// verifyGasLimit is the gas limit of a verification transaction with n public
// inputs. Measured on the simulated chain (docs/benchmarks.md): 425.6k gas
// for a new eligibility statement (8 inputs), 388.6k for a prescription one
// (4), each ~108k less when the statement was verified before (the new
// storage slot is priced by the dev chain's newest fork rules, ~22k under
// Prague's); each input costs ~9.3k. The limit leaves headroom for
// repricing, and is also what a proof with a G2 point off the subgroup burns
// (the pairing precompile consumes the gas forwarded to it).
func verifyGasLimit(n int) uint64 {
	return 500_000 + 20_000*uint64(n)
}

// encodable reports whether every number fits a uint256.
func encodable(proof [8]*big.Int, inputs []*big.Int) bool {
	for _, v := range proof {
		if v == nil || v.Sign() < 0 || v.BitLen() > 256 {
			return false
		}
	}
	for _, v := range inputs {
		if v == nil || v.Sign() < 0 || v.BitLen() > 256 {
			return false
		}
	}
	return true
}

// call runs an eth_call from the Ledger's account against the latest block.
func (l *Ledger) call(ctx context.Context, to common.Address, data []byte) ([]byte, error) {
	out, err := l.client.CallContract(ctx, ethereum.CallMsg{From: l.from, To: &to, Data: data}, nil)
	if err != nil {
		if revertData(err) != nil {
			return nil, fmt.Errorf("%w: %w", ErrReverted, err)
		}
		return nil, unavailable(err)
	}
	return out, nil
}

// revertData extracts the revert data of a failed eth_call, nil if err is not
// a revert.
func revertData(err error) []byte {
	var de rpc.DataError
	if !errors.As(err, &de) {
		return nil
	}
	s, ok := de.ErrorData().(string)
	if !ok {
		return nil
	}
	b, derr := hexutil.Decode(s)
	if derr != nil {
		return nil
	}
	return b
}

// deploy sends a contract creation and returns the new contract's address.
func (l *Ledger) deploy(ctx context.Context, code []byte) (common.Address, error) {
	r, err := l.transact(ctx, common.Address{}, code, 0)
	if err != nil {
		return common.Address{}, err
	}
	return r.ContractAddress, nil
}

// transact sends a transaction through the Ledger's Transactor (a contract
// creation when to is zero) and waits for it to be mined with status 1. A
// gas limit of 0 means estimate.
func (l *Ledger) transact(ctx context.Context, to common.Address, data []byte, gas uint64) (*types.Receipt, error) {
	var dst *common.Address
	if to != (common.Address{}) {
		dst = &to
	}
	return l.tx.Transact(ctx, dst, data, gas)
}
