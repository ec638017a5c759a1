package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/healthagents/healthagents/federated"
)

// OrganizationStore keeps federated organization registrations (table
// federated_organizations, migration 0006).
type OrganizationStore struct {
	db *DB
}

var _ federated.OrganizationRegistry = (*OrganizationStore)(nil)

// NewOrganizationStore returns the registry over db.
func NewOrganizationStore(db *DB) (*OrganizationStore, error) {
	if db == nil {
		return nil, errors.New("store: nil database")
	}
	return &OrganizationStore{db: db}, nil
}

// RegisterOrganization implements federated.OrganizationRegistry.
func (s *OrganizationStore) RegisterOrganization(ctx context.Context, o federated.Organization) (bool, error) {
	res, err := s.db.SQL().ExecContext(ctx, s.db.Rebind(`INSERT INTO federated_organizations
		(organization_id, name, endpoint, encryption_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id) DO NOTHING`),
		o.OrganizationID, o.OrganizationName, o.Endpoint, o.EncryptionKey, Micros(o.CreatedAt), Micros(o.UpdatedAt))
	if err != nil {
		return false, fmt.Errorf("registering organization: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return true, nil
	}
	if _, err := s.db.SQL().ExecContext(ctx, s.db.Rebind(`UPDATE federated_organizations
		SET name = ?, endpoint = ?, encryption_key = ?, updated_at = ? WHERE organization_id = ?`),
		o.OrganizationName, o.Endpoint, o.EncryptionKey, Micros(o.UpdatedAt), o.OrganizationID); err != nil {
		return false, fmt.Errorf("updating organization: %w", err)
	}
	return false, nil
}

// Organization implements federated.OrganizationRegistry.
func (s *OrganizationStore) Organization(ctx context.Context, id string) (federated.Organization, error) {
	o := federated.Organization{OrganizationID: id}
	var created, updated int64
	err := s.db.SQL().QueryRowContext(ctx, s.db.Rebind(`SELECT name, endpoint, encryption_key, created_at, updated_at
		FROM federated_organizations WHERE organization_id = ?`), id).
		Scan(&o.OrganizationName, &o.Endpoint, &o.EncryptionKey, &created, &updated)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return federated.Organization{}, federated.ErrOrganizationNotFound
	case err != nil:
		return federated.Organization{}, fmt.Errorf("reading organization: %w", err)
	}
	o.CreatedAt, o.UpdatedAt = FromMicros(created), FromMicros(updated)
	return o, nil
}
