package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/healthagents/healthagents"
)

// PrescriptionStore keeps v1 prescription validations (migrations
// 0005_v1_prescriptions.sql and 0012_at_rest.sql). It implements
// healthagents.PrescriptionStore. The patient is stored as the keyed
// pseudonym of its id and the result sealed with the WithKeySealer sealer,
// so a row names no patient, drug or service day to whoever reads the
// database without the keys.
type PrescriptionStore struct {
	db   *DB
	rest *atRest
}

var _ healthagents.PrescriptionStore = (*PrescriptionStore)(nil)

// NewPrescriptionStore returns the prescription store over db. Give it the
// WithKeySealer option of the deployment's other stores: it seals results
// with that sealer and pseudonymizes patient ids under the pseudonym key
// they share.
func NewPrescriptionStore(db *DB, opts ...KeyOption) (*PrescriptionStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	return &PrescriptionStore{db: db, rest: newAtRest(db, opts)}, nil
}

// SavePrescription implements healthagents.PrescriptionStore. Ids are
// unique: saving one twice is an error.
func (s *PrescriptionStore) SavePrescription(ctx context.Context, p healthagents.StoredPrescription) error {
	row, err := s.stored(ctx, p)
	if err != nil {
		return err
	}
	return s.insert(ctx, s.db.db, row)
}

// storedPrescription is a row as written: PatientID the pseudonym, result
// sealed.
type storedPrescription struct {
	p      healthagents.StoredPrescription
	result string
}

// stored computes p's row. It may read or create the pseudonym key, so it
// runs before any transaction that writes the row (SQLite has one writer).
func (s *PrescriptionStore) stored(ctx context.Context, p healthagents.StoredPrescription) (storedPrescription, error) {
	ref, err := s.rest.ref(ctx, p.PatientID)
	if err != nil {
		return storedPrescription{}, err
	}
	result, err := s.rest.seal(p.Result)
	if err != nil {
		return storedPrescription{}, err
	}
	p.PatientID = ref
	return storedPrescription{p: p, result: result}, nil
}

// insert writes a row through x: the pool, or a transaction that also
// writes the validation's events (PrescriptionOutbox).
func (s *PrescriptionStore) insert(ctx context.Context, x execer, r storedPrescription) error {
	p := r.p
	_, err := x.ExecContext(ctx, s.db.Rebind(`INSERT INTO v1_prescriptions (id, owner, patient_id, status, created_at, result, at_rest)
		VALUES (?, ?, ?, ?, ?, ?, 1)`),
		p.ID, p.Owner, p.PatientID, p.Status, Micros(p.CreatedAt), r.result)
	if err != nil {
		return fmt.Errorf("store: writing prescription: %w", err)
	}
	return nil
}

// Prescription implements healthagents.PrescriptionStore. The PatientID it
// returns is the patient's pseudonym as stored (the audit log's
// patient_ref), never the id.
func (s *PrescriptionStore) Prescription(ctx context.Context, id string) (healthagents.StoredPrescription, error) {
	var (
		p       healthagents.StoredPrescription
		created int64
		result  string
	)
	err := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT id, owner, patient_id, status, created_at, result FROM v1_prescriptions WHERE id = ? AND at_rest = 1`), id).
		Scan(&p.ID, &p.Owner, &p.PatientID, &p.Status, &created, &result)
	if errors.Is(err, sql.ErrNoRows) {
		return p, fmt.Errorf("store: %w", healthagents.ErrPrescriptionNotFound)
	}
	if err != nil {
		return p, fmt.Errorf("store: reading prescription: %w", err)
	}
	if p.Result, err = s.rest.open(result); err != nil {
		return healthagents.StoredPrescription{}, err
	}
	p.CreatedAt = FromMicros(created)
	return p, nil
}
