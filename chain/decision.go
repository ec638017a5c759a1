package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"

	"github.com/healthagents/healthagents/chain/internal/contracts"
)

// What a third party reads back from a GovernedRegistry to check a decision
// without our service: the record call's arguments, the verifier's answer and
// the registry's state, all as of the block of the decision.

// RecordCall is a decoded record(circuitId, proof, publicInputs) call.
type RecordCall struct {
	CircuitID *big.Int
	Proof     [8]*big.Int
	Inputs    []*big.Int
}

// ErrNotRecordCall means a transaction's input is not a GovernedRegistry
// record call.
var ErrNotRecordCall = errors.New("chain: transaction input is not a registry record call")

// DecodeRecordCall decodes a transaction's input as a record call.
func DecodeRecordCall(data []byte) (RecordCall, error) {
	m, ok := contracts.NewGovernedRegistry().GetABI().Methods["record"]
	if !ok || len(data) < 4 || string(data[:4]) != string(m.ID) {
		return RecordCall{}, ErrNotRecordCall
	}
	vals, err := m.Inputs.Unpack(data[4:])
	if err != nil || len(vals) != 3 {
		return RecordCall{}, fmt.Errorf("%w: %v", ErrNotRecordCall, err)
	}
	id, ok1 := vals[0].(*big.Int)
	proof, ok2 := vals[1].([8]*big.Int)
	inputs, ok3 := vals[2].([]*big.Int)
	if !ok1 || !ok2 || !ok3 {
		return RecordCall{}, ErrNotRecordCall
	}
	return RecordCall{CircuitID: id, Proof: proof, Inputs: inputs}, nil
}

// Caller is the read-only part of a JSON-RPC client these checks use.
type Caller interface {
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
}

// VerifyProofAt asks the verifier contract, in an eth_call against the state
// of block (nil: latest), whether proof verifies for inputs. It records
// nothing and costs nothing.
func VerifyProofAt(ctx context.Context, c Caller, verifier common.Address, proof [8]*big.Int, inputs []*big.Int, block *big.Int) (bool, error) {
	v := contracts.NewGroth16Verifier()
	data, err := v.TryPackVerifyProof(proof, inputs)
	if err != nil {
		return false, fmt.Errorf("chain: pack verifyProof: %w", err)
	}
	out, err := c.CallContract(ctx, ethereum.CallMsg{To: &verifier, Data: data}, block)
	if err != nil {
		return false, fmt.Errorf("chain: call verifier %s: %w", verifier.Hex(), err)
	}
	return v.UnpackVerifyProof(out)
}

// RegistryView reads a GovernedRegistry's state at a given block.
type RegistryView struct {
	c    Caller
	addr common.Address
	abi  *contracts.GovernedRegistry
}

// NewRegistryView returns a read-only view of the GovernedRegistry at addr.
func NewRegistryView(c Caller, addr common.Address) *RegistryView {
	return &RegistryView{c: c, addr: addr, abi: contracts.NewGovernedRegistry()}
}

func (r *RegistryView) call(ctx context.Context, data []byte, block *big.Int) ([]byte, error) {
	to := r.addr
	out, err := r.c.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, block)
	if err != nil {
		return nil, fmt.Errorf("chain: call registry %s: %w", r.addr.Hex(), err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("chain: %s is not a GovernedRegistry (empty answer)", r.addr.Hex())
	}
	return out, nil
}

// Owner is the registry's governing account.
func (r *RegistryView) Owner(ctx context.Context) (common.Address, error) {
	out, err := r.call(ctx, r.abi.PackOwner(), nil)
	if err != nil {
		return common.Address{}, err
	}
	return r.abi.UnpackOwner(out)
}

// VerifierAt is the verifier bound to circuitID as of block (zero when none).
func (r *RegistryView) VerifierAt(ctx context.Context, circuitID, block *big.Int) (common.Address, error) {
	out, err := r.call(ctx, r.abi.PackVerifierOf(circuitID), block)
	if err != nil {
		return common.Address{}, err
	}
	return r.abi.UnpackVerifierOf(out)
}

// IssuerState is an issuer's registration record.
type IssuerState struct {
	RegisteredAt, RetiredAt uint64 // block numbers, 0 = never
	Admin                   common.Address
}

// ActiveAt reports whether the issuer was registered and not retired at block.
func (s IssuerState) ActiveAt(block uint64) bool {
	return s.RegisteredAt != 0 && s.RegisteredAt <= block && (s.RetiredAt == 0 || block < s.RetiredAt)
}

// Issuer reads an issuer's registration record (latest state: registration and
// retirement blocks are history, so one read answers for any block).
func (r *RegistryView) Issuer(ctx context.Context, keyHash *big.Int) (IssuerState, error) {
	out, err := r.call(ctx, r.abi.PackIssuers(keyHash), nil)
	if err != nil {
		return IssuerState{}, err
	}
	v, err := r.abi.UnpackIssuers(out)
	if err != nil {
		return IssuerState{}, err
	}
	return IssuerState{RegisteredAt: v.RegisteredAt, RetiredAt: v.RetiredAt, Admin: v.Admin}, nil
}

// RevokedIn is the block in which an issuer's credential nonce was revoked,
// 0 when it is not revoked (latest state).
func (r *RegistryView) RevokedIn(ctx context.Context, keyHash *big.Int, nonce uint64) (uint64, error) {
	out, err := r.call(ctx, r.abi.PackRevokedIn(keyHash, nonce), nil)
	if err != nil {
		return 0, err
	}
	b, err := r.abi.UnpackRevokedIn(out)
	if err != nil {
		return 0, err
	}
	if !b.IsUint64() {
		return 0, errors.New("chain: revocation block out of range")
	}
	return b.Uint64(), nil
}
