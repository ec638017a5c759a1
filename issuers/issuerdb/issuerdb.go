// Package issuerdb is what the issuer registry (package issuers) keeps in
// the service's database: the Record and the Store that keeps it. It is
// apart from issuers, which talks to the chain, so that package store
// implements Store without linking the chain (go-ethereum, gnark); issuers
// re-exports both as issuers.Record and issuers.Store.
package issuerdb

import (
	"context"
	"time"

	"github.com/healthagents/healthagents/api"
)

// ErrNotFound: no issuer has the id (api.ErrIssuerNotFound).
var ErrNotFound = api.ErrIssuerNotFound

// Record is an issuer as the store keeps it.
type Record struct {
	ID        string // the public key, iden3 compressed hex (lower case)
	KeyHash   string // decimal Poseidon(Ax, Ay)
	Name      string
	Admin     string // hex address or ""
	CreatedAt time.Time
	RetiredAt *time.Time
}

// Store keeps the issuers; *store.IssuerStore is one.
type Store interface {
	AddIssuer(ctx context.Context, r Record) (Record, bool, error)
	Issuer(ctx context.Context, id string) (Record, error)
	IssuerByKeyHash(ctx context.Context, keyHash string) (Record, error)
	ListIssuers(ctx context.Context) ([]Record, error)
	RetireIssuer(ctx context.Context, id string, at time.Time) error
}
