package pharmacy

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/pharmacy/internal/contracts"
)

// Backend is the part of an Ethereum JSON-RPC client the Oracle uses;
// *ethclient.Client and the simulated backend's client satisfy it.
type Backend interface {
	ChainID(ctx context.Context) (*big.Int, error)
	CodeAt(ctx context.Context, account common.Address, blockNumber *big.Int) ([]byte, error)
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	SuggestGasPrice(ctx context.Context) (*big.Int, error)
	EstimateGas(ctx context.Context, call ethereum.CallMsg) (uint64, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
}

// Sender signs and sends an Oracle's transactions. An Oracle made with a
// key (Deploy, New) sends through a *chain.Transactor of its own; one that
// shares another component's account, so that the two never race on its
// nonces, sends through that component: *chain.Ledger is one.
type Sender interface {
	// Account is the signing address: the attester the contract sees.
	Account() common.Address
	// Transact sends a transaction to a contract (a contract creation when
	// to is nil) with the given gas limit and waits until it is mined. A
	// transaction mined with a failed status returns its receipt.
	Transact(ctx context.Context, to *common.Address, data []byte, gas uint64) (*types.Receipt, error)
}

// Errors. Failures to reach the chain also wrap
// healthagents.ErrChainUnavailable.
var (
	// ErrNoContract: no contract code at the oracle address.
	ErrNoContract = errors.New("pharmacy: no oracle contract at the address")
	// ErrReverted: the contract refused the attestation (not a writer, or
	// malformed input).
	ErrReverted = errors.New("pharmacy: attestation reverted")
	// ErrInvalid: the attestation is malformed (checked before sending):
	// an NPI or NDC of the wrong form, or a day not after 1970-01-01 (the
	// contract stores days as Unix seconds, 0 meaning "none"). It wraps
	// healthagents.ErrInvalidAttestation, which V1 answers with 400.
	ErrInvalid = fmt.Errorf("pharmacy: invalid attestation: %w", healthagents.ErrInvalidAttestation)
)

type options struct {
	submitTimeout time.Duration
	pollMax       time.Duration
}

// Option configures an Oracle.
type Option func(*options) error

// WithSubmitTimeout bounds how long Attest waits for its transaction to be
// mined (default 10 s, as chain.DefaultSubmitTimeout).
func WithSubmitTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("pharmacy: submit timeout must be positive")
		}
		o.submitTimeout = d
		return nil
	}
}

// WithPollInterval caps the receipt polling interval (default 1 s; polling
// starts at 25 ms and doubles; on the Client of a simulated chain.Ledger
// the Oracle wakes on each sealed block instead).
func WithPollInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("pharmacy: poll interval must be positive")
		}
		o.pollMax = d
		return nil
	}
}

// Oracle reads and writes attestations on one PharmacyOracle contract. It is
// safe for concurrent use; its Sender assigns nonces, so they never collide
// within one Oracle.
type Oracle struct {
	b      Backend
	sender Sender // a *chain.Transactor of the Oracle's key, or the caller's
	from   common.Address
	addr   common.Address
	abi    abi.ABI
	opts   options
}

var _ healthagents.PharmacyOracle = (*Oracle)(nil)

func newOracle(ctx context.Context, b Backend, key *ecdsa.PrivateKey, sender Sender, opts []Option) (*Oracle, error) {
	if b == nil || (key == nil && sender == nil) {
		return nil, errors.New("pharmacy: nil backend, key or sender")
	}
	o := options{submitTimeout: 10 * time.Second, pollMax: time.Second}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	a, err := contracts.PharmacyOracleABI()
	if err != nil {
		return nil, fmt.Errorf("pharmacy: abi: %w", err)
	}
	if sender == nil {
		t, err := chain.NewTransactor(ctx, b, key, o.pollMax)
		if err != nil {
			return nil, unavailable("chain id", err)
		}
		sender = t
	}
	return &Oracle{b: b, sender: sender, from: sender.Account(), abi: a, opts: o}, nil
}

// Deploy deploys a new PharmacyOracle signed by key (which becomes its owner
// and first writer) and returns an Oracle on it.
func Deploy(ctx context.Context, b Backend, key *ecdsa.PrivateKey, opts ...Option) (*Oracle, error) {
	o, err := newOracle(ctx, b, key, nil, opts)
	if err != nil {
		return nil, err
	}
	return o.deploy(ctx)
}

// DeployWith deploys a new PharmacyOracle sent by s (whose account becomes
// its owner and first writer) and returns an Oracle on it that writes
// through s. b reads the chain s sends to.
func DeployWith(ctx context.Context, b Backend, s Sender, opts ...Option) (*Oracle, error) {
	if s == nil {
		return nil, errors.New("pharmacy: nil sender")
	}
	o, err := newOracle(ctx, b, nil, s, opts)
	if err != nil {
		return nil, err
	}
	return o.deploy(ctx)
}

func (o *Oracle) deploy(ctx context.Context) (*Oracle, error) {
	code, err := contracts.PharmacyOracleBytecode()
	if err != nil {
		return nil, fmt.Errorf("pharmacy: bytecode: %w", err)
	}
	r, err := o.transact(ctx, nil, code)
	if err != nil {
		return nil, err
	}
	o.addr = r.ContractAddress
	return o, nil
}

// New returns an Oracle on the PharmacyOracle at addr; key signs
// attestations and must be a writer of that contract.
func New(ctx context.Context, b Backend, key *ecdsa.PrivateKey, addr common.Address, opts ...Option) (*Oracle, error) {
	o, err := newOracle(ctx, b, key, nil, opts)
	if err != nil {
		return nil, err
	}
	return o.at(ctx, addr)
}

// NewWith returns an Oracle on the PharmacyOracle at addr that writes
// through s, whose account must be a writer of that contract.
func NewWith(ctx context.Context, b Backend, s Sender, addr common.Address, opts ...Option) (*Oracle, error) {
	if s == nil {
		return nil, errors.New("pharmacy: nil sender")
	}
	o, err := newOracle(ctx, b, nil, s, opts)
	if err != nil {
		return nil, err
	}
	return o.at(ctx, addr)
}

func (o *Oracle) at(ctx context.Context, addr common.Address) (*Oracle, error) {
	code, err := o.b.CodeAt(ctx, addr, nil)
	if err != nil {
		return nil, unavailable("code", err)
	}
	if len(code) == 0 {
		return nil, ErrNoContract
	}
	o.addr = addr
	return o, nil
}

// Address returns the oracle contract's address.
func (o *Oracle) Address() common.Address { return o.addr }

// Account returns the address attestations are written from.
func (o *Oracle) Account() common.Address { return o.from }

// CanWrite reports whether the contract lets Account write attestations
// (the owner allows writers with setWriter). An Oracle that cannot write
// still reads.
func (o *Oracle) CanWrite(ctx context.Context) (bool, error) {
	data, err := o.abi.Pack("writers", o.from)
	if err != nil {
		return false, fmt.Errorf("pharmacy: encoding the call: %w", err)
	}
	out, err := o.b.CallContract(ctx, ethereum.CallMsg{From: o.from, To: &o.addr, Data: data}, nil)
	if err != nil {
		return false, unavailable("reading writers", err)
	}
	vals, err := o.abi.Unpack("writers", out)
	if err != nil || len(vals) != 1 {
		return false, fmt.Errorf("pharmacy: decoding writers: %w", errors.Join(err, ErrNoContract))
	}
	ok, _ := vals[0].(bool)
	return ok, nil
}

func unavailable(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("pharmacy: %s: %w", what, err)
	}
	return fmt.Errorf("pharmacy: %s: %w: %w", what, healthagents.ErrChainUnavailable, err)
}

func validNPI(s string) bool { return len(s) == 10 && allDigits(s) }
func validNDC(s string) bool { return len(s) == 11 && allDigits(s) }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Availability implements healthagents.PharmacyOracle: it reads the
// attestation of (pharmacyNPI, ndc) from the contract at the latest block.
// ndc is the 11-digit form.
func (o *Oracle) Availability(ctx context.Context, pharmacyNPI, ndc string) (healthagents.Availability, bool, error) {
	var none healthagents.Availability
	if !validNPI(pharmacyNPI) || !validNDC(ndc) {
		return none, false, ErrInvalid
	}
	data, err := o.abi.Pack("availability", pharmacyNPI, ndc)
	if err != nil {
		return none, false, fmt.Errorf("pharmacy: encoding the call: %w", err)
	}
	out, err := o.b.CallContract(ctx, ethereum.CallMsg{From: o.from, To: &o.addr, Data: data}, nil)
	if err != nil {
		return none, false, unavailable("reading availability", err)
	}
	vals, err := o.abi.Unpack("availability", out)
	if err != nil || len(vals) != 3 {
		return none, false, fmt.Errorf("pharmacy: decoding availability: %w", errors.Join(err, ErrNoContract))
	}
	on, _ := vals[0].(uint64)
	at, _ := vals[1].(uint64)
	by, _ := vals[2].(common.Address)
	if on == 0 {
		return none, false, nil
	}
	return healthagents.Availability{
		PharmacyNPI: pharmacyNPI, NDC: ndc,
		AvailableOn: time.Unix(int64(on), 0).UTC(), AttestedAt: time.Unix(int64(at), 0).UTC(), Attester: by.Hex(),
	}, true, nil
}

// Attest implements healthagents.PharmacyOracle: it writes the attestation
// in a transaction and waits until it is mined.
func (o *Oracle) Attest(ctx context.Context, a healthagents.Availability) (healthagents.AttestationReceipt, error) {
	day := a.AvailableOn.UTC()
	day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	if !validNPI(a.PharmacyNPI) || !validNDC(a.NDC) || day.Unix() <= 0 {
		return healthagents.AttestationReceipt{}, ErrInvalid
	}
	data, err := o.abi.Pack("attest", a.PharmacyNPI, a.NDC, uint64(day.Unix()))
	if err != nil {
		return healthagents.AttestationReceipt{}, fmt.Errorf("pharmacy: encoding the call: %w", err)
	}
	to := o.addr
	r, err := o.transact(ctx, &to, data)
	if err != nil {
		return healthagents.AttestationReceipt{}, err
	}
	return healthagents.AttestationReceipt{TxHash: r.TxHash.Hex(), BlockNumber: r.BlockNumber.Uint64()}, nil
}

// transact estimates the gas of a transaction (a revert shows up here: the
// contract refuses the call), sends it through the Sender and waits until
// it is mined, within the submit timeout. A receipt with a failed status is
// ErrReverted; any other failure to send or mine is the chain's
// unavailability.
func (o *Oracle) transact(ctx context.Context, to *common.Address, data []byte) (*types.Receipt, error) {
	ctx, cancel := context.WithTimeout(ctx, o.opts.submitTimeout)
	defer cancel()
	gas, err := o.b.EstimateGas(ctx, ethereum.CallMsg{From: o.from, To: to, Data: data})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReverted, err)
	}
	r, err := o.sender.Transact(ctx, to, data, gas+gas/5)
	if r != nil && r.Status != types.ReceiptStatusSuccessful {
		return r, fmt.Errorf("%w: tx %s", ErrReverted, r.TxHash.Hex())
	}
	if err != nil {
		return nil, unavailable("send", err)
	}
	if r == nil {
		return nil, errors.New("pharmacy: sender returned no receipt")
	}
	return r, nil
}
