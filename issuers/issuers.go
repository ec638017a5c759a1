// Package issuers is the payer registry the service keeps: which payers'
// coverage credentials it accepts. An issuer is a row in the service's
// database (its name) and an entry in the chain's GovernedRegistry (whether
// it is active), which only the registry's owner writes: the service sends
// the owner's transaction when it holds the owner's key, and otherwise
// returns it unsigned for the owner's wallet.
package issuers

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/issuers/issuerdb"
)

var (
	// ErrNotFound: no issuer has the id (api.ErrIssuerNotFound).
	ErrNotFound = api.ErrIssuerNotFound
	// ErrRetired: the issuer was retired and cannot be registered again
	// (api.ErrIssuerRetired).
	ErrRetired = api.ErrIssuerRetired
)

// Record is an issuer as the store keeps it (issuerdb.Record).
type Record = issuerdb.Record

// Store keeps the issuers; *store.IssuerStore is one (issuerdb.Store).
type Store = issuerdb.Store

// Chain is the on-chain issuer registry; *chain.Ledger is one.
type Chain interface {
	Issuer(ctx context.Context, keyHash *big.Int) (chain.IssuerStatus, error)
	RegisterIssuer(ctx context.Context, keyHash *big.Int, admin common.Address) (chain.Governance, error)
	RetireIssuer(ctx context.Context, keyHash *big.Int) (chain.Governance, error)
	// RevokeNonce and RevokedIn: revocations.go.
	RevokeNonce(ctx context.Context, keyHash *big.Int, nonce uint64, wallet common.Address) (chain.Governance, error)
	RevokedIn(ctx context.Context, keyHash *big.Int, nonce uint64) (uint64, error)
	ChainID() *big.Int
	Registry() common.Address
	Owner() common.Address
}

// Registry registers, lists and retires issuers.
type Registry struct {
	store Store
	chain Chain
	now   func() time.Time
}

// New returns the registry over store and chain.
func New(store Store, ch Chain) (*Registry, error) {
	if store == nil || ch == nil {
		return nil, errors.New("issuers: store and chain are required")
	}
	return &Registry{store: store, chain: ch, now: time.Now}, nil
}

// Register keeps the issuer and registers it on chain (or prepares the
// owner's transaction). Registering a kept issuer again returns it
// (created false) and retries its on-chain registration if that is still
// awaiting the owner. req must be valid (api.IssuerRequest.Validate).
func (g *Registry) Register(ctx context.Context, req api.IssuerRequest) (api.Issuer, bool, error) {
	pk, err := credential.ParsePublicKey(req.PublicKey)
	if err != nil {
		return api.Issuer{}, false, err
	}
	h, err := credential.IssuerKeyHash(pk)
	if err != nil {
		return api.Issuer{}, false, err
	}
	c := pk.Compress()
	rec := Record{ID: fmt.Sprintf("%x", c[:]), KeyHash: h.String(), Name: req.Name, CreatedAt: g.now().UTC()}
	if req.Admin != "" {
		rec.Admin = common.HexToAddress(req.Admin).Hex()
	}
	kept, created, err := g.store.AddIssuer(ctx, rec)
	if err != nil {
		return api.Issuer{}, false, err
	}
	if kept.RetiredAt != nil {
		return api.Issuer{}, false, ErrRetired
	}
	gov, err := g.chain.RegisterIssuer(ctx, h, common.HexToAddress(kept.Admin))
	if errors.Is(err, chain.ErrIssuerRetired) {
		return api.Issuer{}, false, ErrRetired
	}
	if err != nil {
		return api.Issuer{}, false, fmt.Errorf("issuers: register on chain: %w", err)
	}
	out, err := g.view(ctx, kept)
	if err != nil {
		return api.Issuer{}, false, err
	}
	attach(&out, gov)
	return out, created, nil
}

// List returns every issuer, retired ones included, oldest first.
func (g *Registry) List(ctx context.Context) ([]api.Issuer, error) {
	recs, err := g.store.ListIssuers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Issuer, 0, len(recs))
	for _, r := range recs {
		v, err := g.view(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Get returns one issuer by id (its public key hex).
func (g *Registry) Get(ctx context.Context, id string) (api.Issuer, error) {
	r, err := g.store.Issuer(ctx, strings.ToLower(id))
	if err != nil {
		return api.Issuer{}, err
	}
	return g.view(ctx, r)
}

// Retire retires the issuer on chain (or prepares the owner's transaction)
// and marks it retired here: from then on its credentials are refused.
func (g *Registry) Retire(ctx context.Context, id string) (api.Issuer, error) {
	r, err := g.store.Issuer(ctx, strings.ToLower(id))
	if err != nil {
		return api.Issuer{}, err
	}
	h, ok := new(big.Int).SetString(r.KeyHash, 10)
	if !ok {
		return api.Issuer{}, fmt.Errorf("issuers: stored key hash of %s is not decimal", r.ID)
	}
	gov, err := g.chain.RetireIssuer(ctx, h)
	if err != nil {
		return api.Issuer{}, fmt.Errorf("issuers: retire on chain: %w", err)
	}
	if r.RetiredAt == nil {
		at := g.now().UTC()
		if err := g.store.RetireIssuer(ctx, r.ID, at); err != nil {
			return api.Issuer{}, err
		}
		r.RetiredAt = &at
	}
	out, err := g.view(ctx, r)
	if err != nil {
		return api.Issuer{}, err
	}
	attach(&out, gov)
	return out, nil
}

// IssuerName implements trust.Directory.
func (g *Registry) IssuerName(ctx context.Context, keyHash string) (string, bool, error) {
	r, err := g.store.IssuerByKeyHash(ctx, keyHash)
	if errors.Is(err, ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return r.Name, true, nil
}

// view is the wire form of r with its status read from the chain.
func (g *Registry) view(ctx context.Context, r Record) (api.Issuer, error) {
	h, ok := new(big.Int).SetString(r.KeyHash, 10)
	if !ok {
		return api.Issuer{}, fmt.Errorf("issuers: stored key hash of %s is not decimal", r.ID)
	}
	st, err := g.chain.Issuer(ctx, h)
	if err != nil {
		return api.Issuer{}, fmt.Errorf("issuers: read the chain: %w", err)
	}
	out := api.Issuer{IssuerID: r.ID, Name: r.Name, PublicKey: r.ID, KeyHash: r.KeyHash, Admin: r.Admin,
		CreatedAt: r.CreatedAt, RetiredAt: r.RetiredAt}
	switch {
	case st.Retired:
		out.Status = "retired"
	case r.RetiredAt != nil:
		out.Status = "retire_awaiting_owner"
	case st.Registered:
		out.Status = "active"
	default:
		out.Status = "awaiting_owner"
	}
	return out, nil
}

func attach(out *api.Issuer, gov chain.Governance) {
	if gov.Receipt != nil {
		out.TxHash = gov.Receipt.TxHash.Hex()
	}
	if u := gov.Unsigned; u != nil {
		out.OwnerAction = unsignedView(u)
	}
}

// unsignedView is the wire form of an unsigned transaction.
func unsignedView(u *chain.UnsignedTx) *api.UnsignedTransaction {
	return &api.UnsignedTransaction{Summary: u.Summary, ChainID: u.ChainID.String(), From: u.From.Hex(),
		To: u.To.Hex(), Nonce: u.Nonce, Gas: u.Gas, Data: u.Data, RLP: u.RLPHex}
}
