package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/healthagents/healthagents/chain/internal/contracts"
)

var (
	// ErrOwnerAction reports that something only the GovernedRegistry's
	// owner can do (bind a circuit, register a submitter or an issuer) is
	// not done, and the Ledger does not hold the owner's key. The message
	// names the `healthagents chain` command that prepares it.
	ErrOwnerAction = errors.New("chain: an owner action is needed")

	// ErrNotSubmitter reports that the Ledger's key is not a registered
	// submitter of the GovernedRegistry.
	ErrNotSubmitter = errors.New("chain: the submitting key is not a registered submitter")

	// ErrIssuerNotActive reports a statement whose issuer key hash is not
	// registered, or was retired, in the GovernedRegistry.
	ErrIssuerNotActive = errors.New("chain: issuer not registered or retired")

	// ErrIssuerRetired reports registering an issuer that was retired: a
	// retired issuer cannot come back (its history stays exact).
	ErrIssuerRetired = errors.New("chain: issuer was retired and cannot be registered again")
)

// WithOwnerKey gives the Ledger the GovernedRegistry owner's key, so it
// sends owner actions itself (the embedded chain's generated owner, or an
// operator's key file). Without it, on a JSON-RPC node, owner actions are
// prepared as unsigned transactions (Govern) and the owner signs them. The
// key must not be the submitting key.
func WithOwnerKey(key *ecdsa.PrivateKey) Option {
	return func(o *options) error {
		if key == nil {
			return errors.New("chain: nil owner key")
		}
		o.ownerKey = key
		return nil
	}
}

// WithConfirmations makes Submit on a JSON-RPC node wait until the
// statement's block has n confirmations (the block itself counts as one;
// default 1) and re-read the receipt before reporting it verified. The
// embedded chain has no reorgs: there it is ignored.
func WithConfirmations(n uint64) Option {
	return func(o *options) error {
		if n < 1 {
			return errors.New("chain: confirmations must be at least 1")
		}
		o.confirmations = n
		return nil
	}
}

// setOwner attaches the owner's key (if held) once the registry's owner is known.
func (l *Ledger) setOwner(owner common.Address, key *ecdsa.PrivateKey) error {
	if key != nil {
		if crypto.PubkeyToAddress(key.PublicKey) != owner {
			return fmt.Errorf("chain: the owner key given is not the registry's owner %s", owner.Hex())
		}
		if owner == l.from {
			return errors.New("chain: the owner key must not be the submitting key")
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ownerAddr = owner
	if key != nil {
		l.owner = newTransactor(l.client, key, l.chainID, l.opts.pollInterval, func() blockSource { return l.blocks }, l.closed.Load)
		l.owner.nonces = l.opts.nonces
	}
	return nil
}

// Owner returns the GovernedRegistry's owner.
func (l *Ledger) Owner() common.Address {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.ownerAddr
}

// HoldsOwnerKey reports whether the Ledger sends owner actions itself.
func (l *Ledger) HoldsOwnerKey() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.owner != nil
}

// Governance is the outcome of an owner action: sent and mined (Receipt),
// or, with the owner's key cold, prepared for the owner's wallet (Unsigned).
// Both are nil when there was nothing to do.
type Governance struct {
	Receipt  *types.Receipt
	Unsigned *UnsignedTx
}

// Govern carries out an owner action: sent with the owner's key when the
// Ledger holds it, else returned as an unsigned transaction from the owner.
func (l *Ledger) Govern(ctx context.Context, a OwnerAction) (Governance, error) {
	if l.closed.Load() {
		return Governance{}, ErrClosed
	}
	l.mu.RLock()
	owner, addr := l.owner, l.ownerAddr
	l.mu.RUnlock()
	g := l.Governed()
	if owner == nil {
		u, err := g.Unsigned(ctx, addr, a)
		if err != nil {
			return Governance{}, err
		}
		return Governance{Unsigned: &u}, nil
	}
	r, err := g.Apply(ctx, owner, a)
	if err != nil {
		return Governance{}, err
	}
	return Governance{Receipt: r}, nil
}

// ownerNeeded is the error of an owner action the Ledger cannot send.
func ownerNeeded(what, command string) error {
	return fmt.Errorf("%w: %s; run `healthagents chain %s` and sign it with the owner's wallet (or add --owner-key FILE)",
		ErrOwnerAction, what, command)
}

// EnsureSubmitter registers the Ledger's key as a submitter when it is not
// one; with the owner's key cold it returns an error wrapping ErrOwnerAction.
func (l *Ledger) EnsureSubmitter(ctx context.Context) error {
	ok, err := l.Governed().IsSubmitter(ctx, l.from)
	if err != nil {
		return unavailable(err)
	}
	if ok {
		return nil
	}
	if !l.HoldsOwnerKey() {
		return ownerNeeded(fmt.Sprintf("%s (CHAIN_PRIVATE_KEY) is not a submitter of registry %s", l.from.Hex(), l.Registry().Hex()),
			"set-submitter "+l.from.Hex())
	}
	_, err = l.Govern(ctx, l.Governed().SetSubmitter(l.from, true))
	return err
}

// IssuerStatus is an issuer's entry in the GovernedRegistry.
type IssuerStatus struct {
	Registered, Retired bool
	RegisteredAt        uint64 // block
	RetiredAt           uint64 // block, 0 while active
	Admin               common.Address
}

// Issuer reads an issuer's entry.
func (l *Ledger) Issuer(ctx context.Context, keyHash *big.Int) (IssuerStatus, error) {
	g := l.Governed()
	out, err := g.call(ctx, g.abi.PackIssuers(keyHash), nil)
	if err != nil {
		return IssuerStatus{}, unavailable(err)
	}
	iss, err := g.abi.UnpackIssuers(out)
	if err != nil {
		return IssuerStatus{}, fmt.Errorf("chain: decode issuer: %w", err)
	}
	return IssuerStatus{Registered: iss.RegisteredAt != 0, Retired: iss.RetiredAt != 0,
		RegisteredAt: iss.RegisteredAt, RetiredAt: iss.RetiredAt, Admin: iss.Admin}, nil
}

// RegisterIssuer registers an issuer key hash (admin, if not zero, may
// revoke its nonces) unless it is registered already: nothing to do then.
// A retired issuer gives ErrIssuerRetired.
func (l *Ledger) RegisterIssuer(ctx context.Context, keyHash *big.Int, admin common.Address) (Governance, error) {
	st, err := l.Issuer(ctx, keyHash)
	if err != nil {
		return Governance{}, err
	}
	switch {
	case st.Retired:
		return Governance{}, ErrIssuerRetired
	case st.Registered:
		return Governance{}, nil
	}
	return l.Govern(ctx, l.Governed().RegisterIssuer(keyHash, admin))
}

// RetireIssuer retires an issuer from the next block on; nothing to do when
// it is not active.
func (l *Ledger) RetireIssuer(ctx context.Context, keyHash *big.Int) (Governance, error) {
	st, err := l.Issuer(ctx, keyHash)
	if err != nil {
		return Governance{}, err
	}
	if !st.Registered || st.Retired {
		return Governance{}, nil
	}
	return l.Govern(ctx, l.Governed().RetireIssuer(keyHash))
}

// bound returns ErrUnknownKind unless kind's circuit id is bound to a
// verifier in the GovernedRegistry. The answer is cached once known (the
// binding is immutable), which also names the kind in Statement.
func (l *Ledger) bound(ctx context.Context, kind Kind) error {
	id := CircuitID(kind)
	l.mu.RLock()
	_, known := l.kinds[id.String()]
	l.mu.RUnlock()
	if known {
		return nil
	}
	v, err := l.Governed().VerifierOf(ctx, id)
	if err != nil {
		return unavailable(err)
	}
	if v == (common.Address{}) {
		return fmt.Errorf("%w: circuit %q (id %s) has no verifier in registry %s", ErrUnknownKind, string(kind), id, l.Registry().Hex())
	}
	l.mu.Lock()
	l.kinds[id.String()] = kind
	l.mu.Unlock()
	return nil
}

// governedShape refuses a verifying key whose public inputs are not the
// registry's three [issuerKeyHash, digest, circuitId]: the first circuits'
// shape, whose StatementRegistry path is gone (docs/decisions.md).
func governedShape(kind Kind, vk VerifyingKey) error {
	if n := vk.PublicInputs(); n != 3 {
		return fmt.Errorf("chain: %q's verifying key has %d public inputs; the registry records statements of three "+
			"[issuerKeyHash, digest, circuitId] (a first-generation circuit is no longer recorded)", string(kind), n)
	}
	return nil
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

func (l *Ledger) kindOf(circuitID *big.Int) Kind {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.kinds[circuitID.String()]
}

func (l *Ledger) registerGoverned(ctx context.Context, kind Kind, vk VerifyingKey) error {
	if _, err := kind.bytes32(); err != nil {
		return err
	}
	id := CircuitID(kind)
	want, err := vk.Hash()
	if err != nil {
		return err
	}
	g := l.Governed()
	current, err := g.VerifierOf(ctx, id)
	if err != nil {
		return unavailable(err)
	}
	if current == (common.Address{}) {
		if !l.HoldsOwnerKey() {
			return ownerNeeded(fmt.Sprintf("circuit %q (id %s) has no verifier in registry %s", string(kind), id, g.Address().Hex()),
				"add-circuit "+string(kind))
		}
		addr, err := DeployVerifier(ctx, l.tx, vk)
		if err != nil {
			return fmt.Errorf("chain: deploy verifier for %q: %w", string(kind), err)
		}
		if _, err := l.Govern(ctx, g.AddCircuit(id, addr)); err != nil {
			// Another replica with the same keys may have bound it first.
			if again, rerr := g.VerifierOf(ctx, id); rerr == nil && again != (common.Address{}) {
				if _, same, herr := l.holdsKey(ctx, again, want); herr == nil && same {
					l.mu.Lock()
					l.kinds[id.String()] = kind
					l.mu.Unlock()
					return nil
				}
			}
			return fmt.Errorf("chain: bind verifier for %q: %w", string(kind), err)
		}
		l.opts.logger.InfoContext(ctx, "chain: circuit added", "kind", string(kind), "circuit_id", id, "verifier", addr, "vk_hash", want)
	} else {
		held, same, err := l.holdsKey(ctx, current, want)
		if err != nil {
			return err
		}
		if !same {
			return fmt.Errorf("%w: circuit %q (id %s) is bound to verifier %s holding %s, not %s; verifiers are immutable per circuit id",
				ErrVerifierMismatch, string(kind), id, current.Hex(), held, want.Hex())
		}
	}
	l.mu.Lock()
	l.kinds[id.String()] = kind
	l.mu.Unlock()
	return nil
}

// boundVerifier is the verifier bound to kind's circuit id, read from the
// chain once it is bound (bindings are immutable); ErrUnknownKind while none is.
func (l *Ledger) boundVerifier(ctx context.Context, kind Kind) (common.Address, error) {
	id := CircuitID(kind).String()
	l.mu.RLock()
	verifier, ok := l.verifiers[id]
	l.mu.RUnlock()
	if ok {
		return verifier, nil
	}
	verifier, err := l.Governed().VerifierOf(ctx, CircuitID(kind))
	if err != nil {
		return common.Address{}, unavailable(err)
	}
	if verifier == (common.Address{}) {
		return common.Address{}, ErrUnknownKind
	}
	l.mu.Lock()
	l.verifiers[id] = verifier
	l.mu.Unlock()
	return verifier, nil
}

func (l *Ledger) checkGoverned(ctx context.Context, kind Kind, proof [8]*big.Int, inputs []*big.Int) (bool, error) {
	verifier, err := l.boundVerifier(ctx, kind)
	if err != nil {
		return false, err
	}
	data, err := l.verifierABI.TryPackVerifyProof(proof, inputs)
	if err != nil {
		return false, nil
	}
	out, err := l.client.CallContract(ctx, ethereum.CallMsg{From: l.from, To: &verifier, Data: data}, nil)
	if err != nil {
		if revertData(err) != nil {
			return false, nil
		}
		return false, unavailable(err)
	}
	return l.verifierABI.UnpackVerifyProof(out)
}

// governedInputs refuses public inputs that are not the registry's three
// [issuerKeyHash, digest, circuitId] with kind's circuit id last: in each
// mode the registry's record reverts on them, in batch mode nothing queues them.
func governedInputs(kind Kind, inputs []*big.Int) error {
	if len(inputs) != 3 {
		return fmt.Errorf("%w: %d public inputs, not the registry's three [issuerKeyHash, digest, circuitId]", ErrRejected, len(inputs))
	}
	if inputs[2].Cmp(CircuitID(kind)) != 0 {
		return fmt.Errorf("%w: the proof's circuit id is not %q's", ErrRejected, string(kind))
	}
	return nil
}

func (l *Ledger) submitGoverned(ctx context.Context, kind Kind, proof [8]*big.Int, inputs []*big.Int) (Receipt, error) {
	id := CircuitID(kind)
	if err := governedInputs(kind, inputs); err != nil {
		return Receipt{}, err
	}
	g := l.Governed()
	data, err := g.Record(id, proof, inputs)
	if err != nil {
		return Receipt{}, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	sctx, cancel := context.WithTimeout(ctx, l.opts.submitTimeout)
	defer cancel()
	gas := l.opts.gasLimit
	if gas == 0 {
		gas = verifyGasLimit(len(inputs))
	}
	r, err := l.transact(sctx, g.Address(), data, gas)
	if errors.Is(err, ErrReverted) {
		return receiptOf(r, false), l.whyReverted(sctx, g, data, err)
	}
	if err != nil {
		return receiptOf(r, false), err
	}
	// The receipt must hold exactly the statement sent, from this registry.
	if _, err := g.CheckRecorded(r, inputs[1], inputs[0], id); err != nil {
		return receiptOf(r, false), fmt.Errorf("%w: %w", ErrRejected, err)
	}
	if n := l.opts.confirmations; n > 1 && l.blocks == nil {
		again, err := WaitConfirmations(ctx, l.client, r, n, l.opts.pollInterval)
		if err != nil {
			return receiptOf(r, false), unavailable(err)
		}
		if _, err := g.CheckRecorded(again, inputs[1], inputs[0], id); err != nil {
			return receiptOf(again, false), fmt.Errorf("%w: after %d confirmations: %w", ErrRejected, n, err)
		}
		r = again
	}
	return receiptOf(r, true), nil
}

// whyReverted replays a reverted record call to learn the registry's reason.
func (l *Ledger) whyReverted(ctx context.Context, g *Governed, data []byte, cause error) error {
	to := g.Address()
	_, err := l.client.CallContract(ctx, ethereum.CallMsg{From: l.from, To: &to, Data: data}, nil)
	raw := revertData(err)
	if raw == nil {
		return cause
	}
	reason, err := contracts.NewGovernedRegistry().UnpackError(raw)
	if err != nil {
		return cause
	}
	switch reason.(type) {
	case *contracts.GovernedRegistryNotSubmitter:
		return fmt.Errorf("%w: %s in registry %s", ErrNotSubmitter, l.from.Hex(), to.Hex())
	case *contracts.GovernedRegistryUnknownCircuit:
		return fmt.Errorf("%w: no verifier bound to the circuit id", ErrUnknownKind)
	case *contracts.GovernedRegistryIssuerNotActive:
		return ErrIssuerNotActive
	case *contracts.GovernedRegistryProofRejected, *contracts.GovernedRegistryBadPublicInputs:
		return fmt.Errorf("%w: the registry reverted: nothing recorded", ErrRejected)
	case *contracts.GovernedRegistryBatchExists:
		return fmt.Errorf("%w: the batch's root is recorded already (BatchExists)", cause)
	case *contracts.GovernedRegistryBadBatch:
		return fmt.Errorf("%w: the registry refused the batch's shape (BadBatch)", cause)
	}
	return cause
}
