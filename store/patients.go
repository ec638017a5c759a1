package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/healthagents/healthagents"
)

// PatientStore is the v1 patient registry (migrations
// 0005_v1_prescriptions.sql, 0008_v1_patient_owner.sql and
// 0012_at_rest.sql): envelopes exactly as received, still encrypted, each
// under (owner, the patient id's keyed pseudonym): the id itself is never
// stored. It implements healthagents.PatientRegistry.
type PatientStore struct {
	db   *DB
	rest *atRest
	now  func() time.Time
}

var _ healthagents.PatientRegistry = (*PatientStore)(nil)

// NewPatientStore returns the patient registry over db. Give it the
// WithKeySealer option of the deployment's other stores: patient ids are
// stored as pseudonyms under the pseudonym key they share.
func NewPatientStore(db *DB, opts ...KeyOption) (*PatientStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	return &PatientStore{db: db, rest: newAtRest(db, opts), now: time.Now}, nil
}

// PutPatient implements healthagents.PatientRegistry: it inserts or replaces
// the envelope under (owner, env.PatientID). Another owner's envelope of the
// same patient_id is a different row and is left alone.
func (s *PatientStore) PutPatient(ctx context.Context, owner string, env healthagents.PatientData) error {
	ref, err := s.rest.ref(ctx, env.PatientID)
	if err != nil {
		return err
	}
	_, err = s.db.db.ExecContext(ctx, s.db.Rebind(`INSERT INTO v1_patients (owner, patient_id, encrypted_data, ipfs_cid, data_hash, updated_at, at_rest)
		VALUES (?, ?, ?, ?, ?, ?, 1)
		ON CONFLICT (owner, patient_id) DO UPDATE SET encrypted_data = excluded.encrypted_data,
			ipfs_cid = excluded.ipfs_cid, data_hash = excluded.data_hash, updated_at = excluded.updated_at`),
		owner, ref, env.EncryptedData, env.IPFSCID, env.DataHash, Micros(s.now()))
	if err != nil {
		return fmt.Errorf("store: writing patient: %w", err)
	}
	return nil
}

// Patient implements healthagents.PatientRegistry.
func (s *PatientStore) Patient(ctx context.Context, owner, patientID string) (healthagents.PatientData, error) {
	ref, err := s.rest.ref(ctx, patientID)
	if err != nil {
		return healthagents.PatientData{}, err
	}
	env := healthagents.PatientData{PatientID: patientID}
	err = s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT encrypted_data, ipfs_cid, data_hash FROM v1_patients WHERE owner = ? AND patient_id = ? AND at_rest = 1`),
		owner, ref).Scan(&env.EncryptedData, &env.IPFSCID, &env.DataHash)
	if errors.Is(err, sql.ErrNoRows) {
		return healthagents.PatientData{}, fmt.Errorf("store: %w", healthagents.ErrPatientNotFound)
	}
	if err != nil {
		return healthagents.PatientData{}, fmt.Errorf("store: reading patient: %w", err)
	}
	return env, nil
}

// DeletePatient implements healthagents.PatientRegistry.
func (s *PatientStore) DeletePatient(ctx context.Context, owner, patientID string) error {
	ref, err := s.rest.ref(ctx, patientID)
	if err != nil {
		return err
	}
	var n int64
	err = s.db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM v1_patients WHERE owner = ? AND patient_id = ? AND at_rest = 1`), owner, ref)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		// Its member keys (members.go) go with it.
		_, err = tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM v1_member_keys WHERE owner = ? AND patient_ref = ?`), owner, ref)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: deleting patient: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("store: %w", healthagents.ErrPatientNotFound)
	}
	return nil
}

// CIDInUse reports whether any stored envelope, of any owner, names one of
// cids as its ipfs_cid. The IPFS registry asks it before unpinning, so an
// envelope registered by two organizations keeps its pin until the last
// one deletes or replaces it.
func (s *PatientStore) CIDInUse(ctx context.Context, cids ...string) (bool, error) {
	if len(cids) == 0 {
		return false, nil
	}
	args := make([]any, len(cids))
	for i, c := range cids {
		args[i] = c
	}
	q := `SELECT 1 FROM v1_patients WHERE ipfs_cid IN (?` + strings.Repeat(", ?", len(cids)-1) + `) LIMIT 1`
	var one int
	err := s.db.db.QueryRowContext(ctx, s.db.Rebind(q), args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: looking up a CID: %w", err)
	}
	return true, nil
}
