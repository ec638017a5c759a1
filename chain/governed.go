package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/healthagents/healthagents/chain/internal/contracts"
)

// Governed is a handle on a deployed GovernedRegistry: the registry whose
// owner (a cold wallet) governs submitters, issuers and circuits, and whose
// record call verifies a proof with public inputs [issuerKeyHash, digest,
// circuitId] and reverts on any failure.
type Governed struct {
	client Backend
	addr   common.Address
	abi    *contracts.GovernedRegistry
}

// NewGoverned returns a handle on the GovernedRegistry at addr.
func NewGoverned(client Backend, addr common.Address) *Governed {
	return &Governed{client: client, addr: addr, abi: contracts.NewGovernedRegistry()}
}

// Address is the registry's address.
func (g *Governed) Address() common.Address { return g.addr }

// GovernedDeployData is the creation code of a GovernedRegistry owned by owner.
func GovernedDeployData(owner common.Address) ([]byte, error) {
	if owner == (common.Address{}) {
		return nil, errors.New("chain: governed registry owner is the zero address")
	}
	code := common.FromHex(contracts.GovernedRegistryMetaData.Bin)
	return append(code, contracts.NewGovernedRegistry().PackConstructor(owner)...), nil
}

// Sender sends one transaction and waits for its receipt (*Ledger is one).
type Sender interface {
	Transact(ctx context.Context, to *common.Address, data []byte, gas uint64) (*types.Receipt, error)
}

// DeployGoverned deploys a GovernedRegistry owned by owner, paid by s (the
// deployer need not be the owner).
func DeployGoverned(ctx context.Context, s Sender, client Backend, owner common.Address) (*Governed, error) {
	data, err := GovernedDeployData(owner)
	if err != nil {
		return nil, err
	}
	r, err := s.Transact(ctx, nil, data, 0)
	if err != nil {
		return nil, fmt.Errorf("chain: deploy governed registry: %w", err)
	}
	return NewGoverned(client, r.ContractAddress), nil
}

// OwnerAction is one owner call: its calldata and a human-readable summary.
type OwnerAction struct {
	Summary string
	Data    []byte
}

// RegisterIssuer registers an issuer key hash; admin (zero for none) may revoke its nonces.
func (g *Governed) RegisterIssuer(keyHash *big.Int, admin common.Address) OwnerAction {
	return OwnerAction{fmt.Sprintf("registerIssuer(%s, %s)", keyHash, admin.Hex()), g.abi.PackRegisterIssuer(keyHash, admin)}
}

// RetireIssuer retires an issuer from the next block on.
func (g *Governed) RetireIssuer(keyHash *big.Int) OwnerAction {
	return OwnerAction{fmt.Sprintf("retireIssuer(%s)", keyHash), g.abi.PackRetireIssuer(keyHash)}
}

// SetSubmitter registers (true) or retires (false) a submitting account.
func (g *Governed) SetSubmitter(submitter common.Address, registered bool) OwnerAction {
	return OwnerAction{fmt.Sprintf("setSubmitter(%s, %t)", submitter.Hex(), registered), g.abi.PackSetSubmitter(submitter, registered)}
}

// RevokeNonce revokes an issuer's credential nonce (owner or the issuer's admin).
func (g *Governed) RevokeNonce(keyHash *big.Int, nonce uint64) OwnerAction {
	return OwnerAction{fmt.Sprintf("revokeNonce(%s, %d)", keyHash, nonce), g.abi.PackRevokeNonce(keyHash, nonce)}
}

// AddCircuit binds a verifier to a new circuit id, once.
func (g *Governed) AddCircuit(circuitID *big.Int, verifier common.Address) OwnerAction {
	return OwnerAction{fmt.Sprintf("addCircuit(%s, %s)", circuitID, verifier.Hex()), g.abi.PackAddCircuit(circuitID, verifier)}
}

// Record is the submitter's call data for one statement.
func (g *Governed) Record(circuitID *big.Int, proof [8]*big.Int, inputs []*big.Int) ([]byte, error) {
	return g.abi.TryPackRecord(circuitID, proof, inputs)
}

// Apply sends an action with s (the owner's key, or a submitter for Record data).
func (g *Governed) Apply(ctx context.Context, s Sender, a OwnerAction) (*types.Receipt, error) {
	to := g.addr
	r, err := s.Transact(ctx, &to, a.Data, 0)
	if err != nil {
		return r, fmt.Errorf("chain: %s: %w", a.Summary, err)
	}
	return r, nil
}

// UnsignedTx is an owner action prepared for a cold wallet.
type UnsignedTx struct {
	RLPHex  string // EIP-1559 transaction, RLP-encoded (typed envelope), unsigned
	Summary string
	ChainID *big.Int
	From    common.Address
	To      common.Address
	Nonce   uint64
	Gas     uint64
	TipCap  *big.Int
	FeeCap  *big.Int
	Data    string
}

// Unsigned prepares action a from the owner address as an unsigned EIP-1559
// transaction: nonce, gas and fees are read from the chain now.
func (g *Governed) Unsigned(ctx context.Context, owner common.Address, a OwnerAction) (UnsignedTx, error) {
	return g.unsigned(ctx, owner, a, 0)
}

// unsigned is Unsigned with the nonce after skip earlier pending actions.
func (g *Governed) unsigned(ctx context.Context, owner common.Address, a OwnerAction, skip uint64) (UnsignedTx, error) {
	id, err := g.client.ChainID(ctx)
	if err != nil {
		return UnsignedTx{}, fmt.Errorf("chain: chain id: %w: %w", ErrUnavailable, err)
	}
	nonce, err := g.client.PendingNonceAt(ctx, owner)
	if err != nil {
		return UnsignedTx{}, fmt.Errorf("chain: owner nonce: %w: %w", ErrUnavailable, err)
	}
	nonce += skip
	to := g.addr
	gas, err := g.client.EstimateGas(ctx, ethereum.CallMsg{From: owner, To: &to, Data: a.Data})
	if err != nil {
		return UnsignedTx{}, fmt.Errorf("chain: %s would revert: %w", a.Summary, err)
	}
	tip, err := g.client.SuggestGasTipCap(ctx)
	if err != nil {
		return UnsignedTx{}, fmt.Errorf("chain: tip: %w", err)
	}
	head, err := g.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return UnsignedTx{}, fmt.Errorf("chain: head: %w", err)
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	gas = gas * 6 / 5
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: id, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: &to, Data: a.Data})
	raw, err := tx.MarshalBinary()
	if err != nil {
		return UnsignedTx{}, fmt.Errorf("chain: encode: %w", err)
	}
	return UnsignedTx{RLPHex: hexutil.Encode(raw), Summary: a.Summary, ChainID: id, From: owner, To: to,
		Nonce: nonce, Gas: gas, TipCap: tip, FeeCap: feeCap, Data: hexutil.Encode(a.Data)}, nil
}

// SignUnsigned signs an UnsignedTx's RLP with key (what a cold wallet does);
// used by tests and by `--owner-key` sends.
func SignUnsigned(u UnsignedTx, key *ecdsa.PrivateKey) (*types.Transaction, error) {
	raw, err := hexutil.Decode(u.RLPHex)
	if err != nil {
		return nil, fmt.Errorf("chain: unsigned tx hex: %w", err)
	}
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, fmt.Errorf("chain: decode unsigned tx: %w", err)
	}
	if crypto.PubkeyToAddress(key.PublicKey) != u.From {
		return nil, errors.New("chain: key is not the transaction's from address")
	}
	return types.SignTx(&tx, types.LatestSignerForChainID(u.ChainID), key)
}

func (g *Governed) call(ctx context.Context, data []byte, block *big.Int) ([]byte, error) {
	to := g.addr
	out, err := g.client.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, block)
	if err != nil {
		return nil, fmt.Errorf("chain: call governed registry: %w", err)
	}
	return out, nil
}

// IsIssuerActive reports whether the issuer was registered and not retired at
// block (nil: the latest block).
func (g *Governed) IsIssuerActive(ctx context.Context, keyHash *big.Int, block *big.Int) (bool, error) {
	at := block
	if at == nil {
		h, err := g.client.HeaderByNumber(ctx, nil)
		if err != nil {
			return false, fmt.Errorf("chain: head: %w", err)
		}
		at = h.Number
	}
	out, err := g.call(ctx, g.abi.PackIsIssuerActiveAt(keyHash, at), nil)
	if err != nil {
		return false, err
	}
	return g.abi.UnpackIsIssuerActiveAt(out)
}

// IsRevoked reports whether an issuer's credential nonce is revoked now.
func (g *Governed) IsRevoked(ctx context.Context, keyHash *big.Int, nonce uint64) (bool, error) {
	out, err := g.call(ctx, g.abi.PackIsRevoked(keyHash, nonce), nil)
	if err != nil {
		return false, err
	}
	return g.abi.UnpackIsRevoked(out)
}

// VerifierOf is the verifier bound to a circuit id (zero when none).
func (g *Governed) VerifierOf(ctx context.Context, circuitID *big.Int) (common.Address, error) {
	out, err := g.call(ctx, g.abi.PackVerifierOf(circuitID), nil)
	if err != nil {
		return common.Address{}, err
	}
	return g.abi.UnpackVerifierOf(out)
}

// IsSubmitter reports whether account may record.
func (g *Governed) IsSubmitter(ctx context.Context, account common.Address) (bool, error) {
	out, err := g.call(ctx, g.abi.PackIsSubmitter(account), nil)
	if err != nil {
		return false, err
	}
	return g.abi.UnpackIsSubmitter(out)
}

// Recorded is a decoded StatementRecorded event.
type Recorded struct {
	Digest, IssuerKeyHash, CircuitID *big.Int
	Verifier, Submitter              common.Address
	TxHash                           common.Hash
	Block                            uint64
}

// ErrNoRecord means a receipt holds no StatementRecorded event from the registry.
var ErrNoRecord = errors.New("chain: receipt has no StatementRecorded event from the registry")

// DecodeRecorded finds the StatementRecorded event emitted by this registry
// (logs from any other address are ignored) in a successful receipt.
func (g *Governed) DecodeRecorded(r *types.Receipt) (Recorded, error) {
	if r == nil || r.Status != types.ReceiptStatusSuccessful {
		return Recorded{}, fmt.Errorf("%w (transaction failed or missing)", ErrNoRecord)
	}
	for _, lg := range r.Logs {
		if lg.Address != g.addr || len(lg.Topics) == 0 || lg.Topics[0] != g.abi.GetABI().Events["StatementRecorded"].ID {
			continue
		}
		ev, err := g.abi.UnpackStatementRecordedEvent(lg)
		if err != nil {
			return Recorded{}, fmt.Errorf("chain: decode StatementRecorded: %w", err)
		}
		return Recorded{Digest: ev.Digest, IssuerKeyHash: ev.IssuerKeyHash, CircuitID: ev.CircuitId,
			Verifier: ev.Verifier, Submitter: ev.Submitter, TxHash: r.TxHash, Block: r.BlockNumber.Uint64()}, nil
	}
	return Recorded{}, ErrNoRecord
}

// CheckRecorded decodes the receipt's event and checks it is exactly the
// expected statement (digest, issuer, circuit) before anything is reported verified.
func (g *Governed) CheckRecorded(r *types.Receipt, digest, issuerKeyHash, circuitID *big.Int) (Recorded, error) {
	rec, err := g.DecodeRecorded(r)
	if err != nil {
		return Recorded{}, err
	}
	if rec.Digest.Cmp(digest) != 0 || rec.IssuerKeyHash.Cmp(issuerKeyHash) != 0 || rec.CircuitID.Cmp(circuitID) != 0 {
		return rec, errors.New("chain: recorded event does not match the submitted statement")
	}
	return rec, nil
}

// WaitConfirmations waits until the receipt's block has n confirmations (the
// block itself counts as 1) and re-reads the receipt, so a reorg that dropped
// or moved the transaction is noticed. n <= 1 returns at once.
func WaitConfirmations(ctx context.Context, client Backend, r *types.Receipt, n uint64, poll time.Duration) (*types.Receipt, error) {
	if n <= 1 {
		return r, nil
	}
	target := new(big.Int).Add(r.BlockNumber, new(big.Int).SetUint64(n-1))
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		h, err := client.HeaderByNumber(ctx, nil)
		if err == nil && h.Number.Cmp(target) >= 0 {
			again, err := client.TransactionReceipt(ctx, r.TxHash)
			if err != nil {
				return nil, fmt.Errorf("chain: receipt after %d confirmations: %w", n, err)
			}
			if again.BlockHash != r.BlockHash {
				return nil, errors.New("chain: transaction moved to another block (reorg)")
			}
			return again, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("chain: waiting for %d confirmations: %w", n, ctx.Err())
		case <-t.C:
		}
	}
}

// DeployVerifier deploys a Groth16Verifier holding vk, for AddCircuit.
func DeployVerifier(ctx context.Context, s Sender, vk VerifyingKey) (common.Address, error) {
	args, err := vk.constructorArgs()
	if err != nil {
		return common.Address{}, err
	}
	r, err := s.Transact(ctx, nil, append(common.FromHex(contracts.Groth16VerifierMetaData.Bin), args...), 0)
	if err != nil {
		return common.Address{}, fmt.Errorf("chain: deploy verifier: %w", err)
	}
	return r.ContractAddress, nil
}

// Owner reads the registry's owner.
func (g *Governed) Owner(ctx context.Context) (common.Address, error) {
	out, err := g.call(ctx, g.abi.PackOwner(), nil)
	if err != nil {
		return common.Address{}, err
	}
	return g.abi.UnpackOwner(out)
}
