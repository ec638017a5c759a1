package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/healthagents/healthagents"
)

// PrescriptionStore keeps v1 prescription validations (migration
// 0005_v1_prescriptions.sql). It implements healthagents.PrescriptionStore.
type PrescriptionStore struct{ db *DB }

var _ healthagents.PrescriptionStore = (*PrescriptionStore)(nil)

// NewPrescriptionStore returns the prescription store over db.
func NewPrescriptionStore(db *DB) (*PrescriptionStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	return &PrescriptionStore{db: db}, nil
}

// SavePrescription implements healthagents.PrescriptionStore. Ids are
// unique: saving one twice is an error.
func (s *PrescriptionStore) SavePrescription(ctx context.Context, p healthagents.StoredPrescription) error {
	return s.insert(ctx, s.db.db, p)
}

// insert writes p through x: the pool, or a transaction that also writes
// p's events (PrescriptionOutbox).
func (s *PrescriptionStore) insert(ctx context.Context, x execer, p healthagents.StoredPrescription) error {
	_, err := x.ExecContext(ctx, s.db.Rebind(`INSERT INTO v1_prescriptions (id, owner, patient_id, status, created_at, result)
		VALUES (?, ?, ?, ?, ?, ?)`),
		p.ID, p.Owner, p.PatientID, p.Status, Micros(p.CreatedAt), string(p.Result))
	if err != nil {
		return fmt.Errorf("store: writing prescription: %w", err)
	}
	return nil
}

// Prescription implements healthagents.PrescriptionStore.
func (s *PrescriptionStore) Prescription(ctx context.Context, id string) (healthagents.StoredPrescription, error) {
	var (
		p       healthagents.StoredPrescription
		created int64
		result  string
	)
	err := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT id, owner, patient_id, status, created_at, result FROM v1_prescriptions WHERE id = ?`), id).
		Scan(&p.ID, &p.Owner, &p.PatientID, &p.Status, &created, &result)
	if errors.Is(err, sql.ErrNoRows) {
		return p, fmt.Errorf("store: %w", healthagents.ErrPrescriptionNotFound)
	}
	if err != nil {
		return p, fmt.Errorf("store: reading prescription: %w", err)
	}
	p.CreatedAt, p.Result = FromMicros(created), []byte(result)
	return p, nil
}
