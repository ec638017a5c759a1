package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/healthagents/healthagents/chain/internal/contracts"
)

// The StatementRegistry path, kept while the first circuits (whose public
// inputs are not [issuerKeyHash, digest, circuitId]: 8 for eligibility, 4
// for prescriptions) are still proven. Their statement kinds are recorded in
// a StatementRegistry owned by the submitting key, as before governance; a
// verifying key with exactly three public inputs goes to the GovernedRegistry
// instead (governed.go). Removed once no circuit of the old shape is left.

// isGovernedShape reports whether a verifying key for n public inputs is
// bound in the GovernedRegistry (Register); Submit and Check then follow
// where the kind is bound.
func isGovernedShape(n int) bool { return n == 3 }

// legacyRegistry returns the StatementRegistry, deploying it on the embedded
// chain when there is none (NewSimulated deploys it first, so that it is the
// deployer's first contract: see discoverLegacy).
func (l *Ledger) legacyRegistry(ctx context.Context, deploy bool) (common.Address, error) {
	l.mu.RLock()
	addr := l.legacy
	l.mu.RUnlock()
	if addr != (common.Address{}) {
		return addr, nil
	}
	if !deploy || l.blocks == nil {
		return common.Address{}, fmt.Errorf("%w: no verifier is bound to its circuit id in registry %s, and there is no "+
			"StatementRegistry for the first circuits' kinds (CHAIN_LEGACY_REGISTRY, printed by `healthagents chain deploy`)", ErrUnknownKind, l.Registry().Hex())
	}
	addr, err := l.deploy(ctx, common.FromHex(contracts.StatementRegistryMetaData.Bin))
	if err != nil {
		return common.Address{}, fmt.Errorf("chain: deploy statement registry: %w", err)
	}
	l.mu.Lock()
	l.legacy = addr
	l.mu.Unlock()
	if l.saveState != nil {
		if err := l.saveState(); err != nil {
			return common.Address{}, err
		}
	}
	return addr, nil
}

// OpenLegacyRegistry returns the StatementRegistry of the first circuits'
// kinds, deploying one (owned by the submitting key) on the embedded chain
// when there is none; on a JSON-RPC node it is CHAIN_LEGACY_REGISTRY's.
func (l *Ledger) OpenLegacyRegistry(ctx context.Context) (common.Address, error) {
	return l.legacyRegistry(ctx, true)
}

func (l *Ledger) verifierLegacy(ctx context.Context, kind Kind) (common.Address, error) {
	k, err := kind.bytes32()
	if err != nil {
		return common.Address{}, err
	}
	l.mu.RLock()
	reg := l.legacy
	l.mu.RUnlock()
	if reg == (common.Address{}) {
		return common.Address{}, nil
	}
	out, err := l.call(ctx, reg, l.registryABI.PackVerifierOf(k))
	if err != nil {
		return common.Address{}, err
	}
	return l.registryABI.UnpackVerifierOf(out)
}

// registerLegacy deploys a verifier holding vk and registers it for kind in
// the StatementRegistry when none is registered; a verifier holding another
// key is refused with ErrVerifierMismatch (there is no replacing).
func (l *Ledger) registerLegacy(ctx context.Context, kind Kind, vk VerifyingKey) error {
	k, err := kind.bytes32()
	if err != nil {
		return err
	}
	want, err := vk.Hash()
	if err != nil {
		return err
	}
	args, err := vk.constructorArgs()
	if err != nil {
		return err
	}
	reg, err := l.legacyRegistry(ctx, true)
	if err != nil {
		return err
	}
	out, err := l.call(ctx, reg, l.registryABI.PackOwner())
	if err != nil {
		return fmt.Errorf("chain: read statement registry owner: %w", err)
	}
	if owner, err := l.registryABI.UnpackOwner(out); err != nil || owner != l.from {
		return fmt.Errorf("%w: %s does not own the statement registry", ErrNotOwner, l.from.Hex())
	}
	current, err := l.verifierLegacy(ctx, kind)
	if err != nil {
		return err
	}
	if current != (common.Address{}) {
		held, same, err := l.holdsKey(ctx, current, want)
		if err != nil {
			return err
		}
		if same {
			l.markLegacy(kind)
			return nil
		}
		return fmt.Errorf("%w: %q is registered to verifier %s holding %s, not %s",
			ErrVerifierMismatch, string(kind), current.Hex(), held, want.Hex())
	}
	bin := common.FromHex(contracts.Groth16VerifierMetaData.Bin)
	addr, err := l.deploy(ctx, append(bin, args...))
	if err != nil {
		return fmt.Errorf("chain: deploy verifier for %q: %w", string(kind), err)
	}
	if _, err := l.transact(ctx, reg, l.registryABI.PackRegister(k, addr), 0); err != nil {
		return fmt.Errorf("chain: register verifier for %q: %w", string(kind), err)
	}
	l.opts.logger.InfoContext(ctx, "chain: verifier registered", "kind", string(kind), "verifier", addr, "vk_hash", want)
	l.markLegacy(kind)
	return nil
}

func (l *Ledger) markLegacy(kind Kind) {
	l.mu.Lock()
	l.legacyKinds[kind] = true
	l.mu.Unlock()
}

// holdsKey reports whether the verifier at addr holds the verifying key whose
// hash is want, and if not, what it holds (for the error message).
func (l *Ledger) holdsKey(ctx context.Context, addr common.Address, want common.Hash) (held string, same bool, err error) {
	held = "no verifying key it reports"
	out, err := l.call(ctx, addr, l.verifierABI.PackVerifyingKeyHash())
	if err == nil {
		if got, err := l.verifierABI.UnpackVerifyingKeyHash(out); err == nil {
			if common.Hash(got) == want {
				return "", true, nil
			}
			held = "verifying key hash " + common.Hash(got).Hex()
		}
	} else if errors.Is(err, ErrUnavailable) {
		return "", false, err
	}
	return held, false, nil
}

func (l *Ledger) checkLegacy(ctx context.Context, kind Kind, proof [8]*big.Int, inputs []*big.Int) (bool, error) {
	k, err := kind.bytes32()
	if err != nil {
		return false, err
	}
	reg, err := l.legacyRegistry(ctx, false)
	if err != nil {
		return false, err
	}
	data, err := l.registryABI.TryPackCheck(k, proof, inputs)
	if err != nil {
		return false, nil
	}
	out, err := l.call(ctx, reg, data)
	if err != nil {
		return false, err
	}
	return l.registryABI.UnpackCheck(out)
}

func (l *Ledger) submitLegacy(ctx context.Context, kind Kind, proof [8]*big.Int, inputs []*big.Int) (Receipt, error) {
	k, err := kind.bytes32()
	if err != nil {
		return Receipt{}, err
	}
	reg, err := l.legacyRegistry(ctx, false)
	if err != nil {
		return Receipt{}, err
	}
	data, err := l.registryABI.TryPackVerifyAndRecord(k, proof, inputs)
	if err != nil {
		return Receipt{}, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	ctx, cancel := context.WithTimeout(ctx, l.opts.submitTimeout)
	defer cancel()
	gas := l.opts.gasLimit
	if gas == 0 {
		gas = verifyGasLimit(len(inputs))
	}
	r, err := l.transact(ctx, reg, data, gas)
	if err != nil {
		if errors.Is(err, ErrReverted) {
			// The registry reverts only for an unknown kind (or out of gas):
			// ask it which.
			if _, cerr := l.checkLegacy(ctx, kind, proof, inputs); errors.Is(cerr, ErrUnknownKind) {
				return receiptOf(r, false), cerr
			}
		}
		return receiptOf(r, false), err
	}
	rc := receiptOf(r, l.findStatement(r, reg) != nil)
	if !rc.Verified {
		return rc, ErrRejected
	}
	return rc, nil
}

func (l *Ledger) findStatement(r *types.Receipt, registry common.Address) *contracts.StatementRegistryStatementVerified {
	if r == nil || r.Status != types.ReceiptStatusSuccessful || registry == (common.Address{}) {
		return nil
	}
	for _, lg := range r.Logs {
		if lg.Address != registry {
			continue
		}
		if ev, err := l.registryABI.UnpackStatementVerifiedEvent(lg); err == nil {
			return ev
		}
	}
	return nil
}

// discoverLegacy finds, for a Ledger dialled without a legacy registry, the
// StatementRegistry that the submitting key deployed as its first contract
// (nonce 0) and still owns: what the embedded chain does at a fresh start, so
// a client of an embedded chain served over JSON-RPC finds the first
// circuits' statements without another setting. Anything else at that
// address (nothing, a GovernedRegistry, another owner) is ignored.
// Transitional, like the rest of this file.
func (l *Ledger) discoverLegacy(ctx context.Context) {
	cand := crypto.CreateAddress(l.from, 0)
	code, err := l.client.CodeAt(ctx, cand, nil)
	if err != nil || len(code) == 0 {
		return
	}
	out, err := l.call(ctx, cand, l.registryABI.PackOwner())
	if err != nil {
		return
	}
	if owner, err := l.registryABI.UnpackOwner(out); err != nil || owner != l.from {
		return
	}
	// verifiedIn exists on the StatementRegistry only.
	if _, err := l.call(ctx, cand, l.registryABI.PackVerifiedIn([32]byte{}, [32]byte{})); err != nil {
		return
	}
	l.legacy = cand
}
