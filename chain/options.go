package chain

import (
	"crypto/ecdsa"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// DefaultSubmitTimeout bounds Submit (sending and mining) when the caller's
// context has no earlier deadline: the service's bound on a blockchain
// submission (send and mine).
const DefaultSubmitTimeout = 10 * time.Second

// Option configures a Ledger made by NewSimulated or Dial.
type Option func(*options) error

type options struct {
	submitTimeout time.Duration
	gasLimit      uint64
	logger        *slog.Logger
	blockDelay    time.Duration
	key           *ecdsa.PrivateKey
	httpAddr      string
	pollInterval  time.Duration
	funded        []common.Address
	dataDir       string
	ownerKey      *ecdsa.PrivateKey
	confirmations uint64
	nonces        NonceSource
	anchor        AnchorMode
	batchSize     int
	batchWindow   time.Duration
}

func defaultOptions() options {
	return options{
		submitTimeout: DefaultSubmitTimeout,
		logger:        slog.New(slog.DiscardHandler),
		pollInterval:  time.Second,
		confirmations: 1,
		anchor:        AnchorEach,
	}
}

func applyOptions(opts []Option) (options, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// WithSubmitTimeout sets how long Submit may take to send and mine a
// transaction (default DefaultSubmitTimeout).
func WithSubmitTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("chain: submit timeout must be positive")
		}
		o.submitTimeout = d
		return nil
	}
}

// WithGasLimit fixes the gas limit of verification transactions. By default
// it is derived from the number of public inputs (see verifyGasLimit).
func WithGasLimit(gas uint64) Option {
	return func(o *options) error {
		if gas < 21_000 {
			return errors.New("chain: gas limit below 21000")
		}
		o.gasLimit = gas
		return nil
	}
}

// WithLogger sets the logger; the default discards. Nothing logged carries
// proof inputs or keys.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("chain: nil logger")
		}
		o.logger = l
		return nil
	}
}

// WithKey sets the signing key of the simulated chain's funded deployer
// account (NewSimulated only; the default is a fresh key).
func WithKey(key *ecdsa.PrivateKey) Option {
	return func(o *options) error {
		if key == nil {
			return errors.New("chain: nil key")
		}
		o.key = key
		return nil
	}
}

// WithFunded funds more accounts in the simulated chain's genesis (NewSimulated
// only), for other signers on the same chain, such as a pharmacy oracle
// writer with its own key; their transactions, sent through Ledger.Client,
// are mined like the Ledger's.
func WithFunded(accounts ...common.Address) Option {
	return func(o *options) error {
		o.funded = append(o.funded, accounts...)
		return nil
	}
}

// WithBlockDelay makes the simulated chain's block producer wait d after the
// first pending transaction before sealing a block, so that more concurrent
// transactions share it (NewSimulated only; default 0: seal at once, and
// transactions arriving meanwhile share the next block).
func WithBlockDelay(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return errors.New("chain: negative block delay")
		}
		o.blockDelay = d
		return nil
	}
}

// WithHTTP serves the simulated chain's JSON-RPC (eth, net, web3, txpool) over HTTP
// at addr, a host:port with an explicit port (NewSimulated only), so other
// tools, or Dial, can reach the embedded chain. Transactions sent there by
// other clients are mined too (the pool is polled every 20 ms).
func WithHTTP(addr string) Option {
	return func(o *options) error {
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host == "" || port == "" || port == "0" {
			return errors.New("chain: WithHTTP needs host:port with an explicit port")
		}
		o.httpAddr = addr
		return nil
	}
}

// WithPollInterval caps the interval at which Dial's Ledger polls for a
// receipt (default 1 s; polling starts at 25 ms and doubles).
func WithPollInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("chain: poll interval must be positive")
		}
		o.pollInterval = d
		return nil
	}
}
