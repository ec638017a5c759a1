package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// atRest keeps the v1 tables free of anything that identifies a patient
// without a key (migration 0012_at_rest.sql): a patient id is stored as its
// keyed pseudonym, a validation's result sealed with the keyring.
//
// The pseudonym is the hex HMAC-SHA256 of the id under the deployment's
// pseudonym key (webhook_settings.pseudonym_key, sealed with the
// WithKeySealer sealer): the audit log's patient_ref of the same patient,
// so a read by prescription id is audited under the same reference as a
// read by patient id.
type atRest struct {
	db   *DB
	keys keyKeeper

	mu  sync.Mutex
	key []byte
}

func newAtRest(db *DB, opts []KeyOption) *atRest {
	a := &atRest{db: db}
	for _, o := range opts {
		o(&a.keys)
	}
	return a
}

// ref returns the pseudonym stored in place of patientID.
func (a *atRest) ref(ctx context.Context, patientID string) (string, error) {
	key, err := a.pseudonymKey(ctx)
	if err != nil {
		return "", err
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(patientID))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pseudonymKey loads (or creates, first caller wins) the deployment's key
// once; the webhook registry and the audit log use the same one.
func (a *atRest) pseudonymKey(ctx context.Context) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.key != nil {
		return a.key, nil
	}
	cand := make([]byte, 32)
	if _, err := rand.Read(cand); err != nil {
		return nil, fmt.Errorf("store: drawing the pseudonym key: %w", err)
	}
	key, err := (&WebhookStore{db: a.db, keys: a.keys}).PseudonymKey(ctx, cand)
	if err != nil {
		return nil, err
	}
	if len(key) < 32 {
		return nil, errors.New("store: the stored pseudonym key is too short")
	}
	a.key = key
	return key, nil
}

// sealedValuePrefix marks a value sealed with the keyring.
const sealedValuePrefix = "sealed:"

// seal returns the stored form of a result: sealed with the keyring, or as
// is for a store built without WithKeySealer (tests and tools; the service
// always gives one).
func (a *atRest) seal(b []byte) (string, error) {
	if a.keys.sealer == nil {
		return string(b), nil
	}
	tok, err := a.keys.sealer.Encrypt(b)
	if err != nil {
		return "", fmt.Errorf("store: sealing a stored result: %w", err)
	}
	return sealedValuePrefix + string(tok), nil
}

// open returns the result of a stored form: sealed, or kept in clear by a
// store without a sealer.
func (a *atRest) open(v string) ([]byte, error) {
	tok, sealed := strings.CutPrefix(v, sealedValuePrefix)
	if !sealed {
		return []byte(v), nil
	}
	if a.keys.sealer == nil {
		return nil, errors.New("store: the result is sealed and this store has no sealer (store.WithKeySealer)")
	}
	b, err := a.keys.sealer.Decrypt([]byte(tok), 0)
	if err != nil {
		return nil, fmt.Errorf("store: opening a sealed result: %w", err)
	}
	return b, nil
}

// ProtectAtRest rewrites the v1 rows written before migration 0012 (at_rest
// = 0): each patient id becomes its keyed pseudonym and each stored result
// is sealed with the WithKeySealer sealer. It returns how many rows it
// rewrote. The service runs it at every start, before it serves; replicas
// starting together agree (every rewrite is conditional on at_rest = 0).
// Give it the same options as the stores.
func ProtectAtRest(ctx context.Context, db *DB, opts ...KeyOption) (int, error) {
	if db == nil {
		return 0, errors.New("store: nil DB")
	}
	a := newAtRest(db, opts)
	n, err := a.protectPatients(ctx)
	if err != nil {
		return n, err
	}
	m, err := a.protectPrescriptions(ctx)
	return n + m, err
}

// legacyRow is an unprotected row: key is its owner (v1_patients) or
// its id (v1_prescriptions).
type legacyRow struct{ key, patientID, result string }

// legacy lists the (at most 1000) unprotected rows of a query.
func (a *atRest) legacy(ctx context.Context, q string, scan func(*sql.Rows, *legacyRow) error) ([]legacyRow, error) {
	rows, err := a.db.db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("store: listing rows to protect: %w", err)
	}
	defer rows.Close()
	var out []legacyRow
	for rows.Next() {
		var r legacyRow
		if err := scan(rows, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (a *atRest) protectPatients(ctx context.Context) (int, error) {
	total := 0
	for {
		rs, err := a.legacy(ctx, `SELECT owner, patient_id FROM v1_patients WHERE at_rest = 0 LIMIT 1000`,
			func(r *sql.Rows, l *legacyRow) error { return r.Scan(&l.key, &l.patientID) })
		if err != nil || len(rs) == 0 {
			return total, err
		}
		refs := make([]string, len(rs))
		for i, r := range rs {
			if refs[i], err = a.ref(ctx, r.patientID); err != nil {
				return total, err
			}
		}
		err = a.db.inTx(ctx, func(tx *sql.Tx) error {
			for i, r := range rs {
				// A row written under the pseudonym since (by a replica
				// already upgraded) is newer: it wins.
				if _, err := tx.ExecContext(ctx, a.db.Rebind(`INSERT INTO v1_patients (owner, patient_id, encrypted_data, ipfs_cid, data_hash, updated_at, at_rest)
					SELECT owner, ?, encrypted_data, ipfs_cid, data_hash, updated_at, 1 FROM v1_patients
					WHERE owner = ? AND patient_id = ? AND at_rest = 0
					ON CONFLICT (owner, patient_id) DO NOTHING`), refs[i], r.key, r.patientID); err != nil {
					return fmt.Errorf("store: protecting a patient row: %w", err)
				}
				if _, err := tx.ExecContext(ctx, a.db.Rebind(`DELETE FROM v1_patients WHERE owner = ? AND patient_id = ? AND at_rest = 0`),
					r.key, r.patientID); err != nil {
					return fmt.Errorf("store: protecting a patient row: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(rs)
	}
}

func (a *atRest) protectPrescriptions(ctx context.Context) (int, error) {
	total := 0
	for {
		rs, err := a.legacy(ctx, `SELECT id, patient_id, result FROM v1_prescriptions WHERE at_rest = 0 LIMIT 1000`,
			func(r *sql.Rows, l *legacyRow) error { return r.Scan(&l.key, &l.patientID, &l.result) })
		if err != nil || len(rs) == 0 {
			return total, err
		}
		type rewrite struct{ ref, result string }
		ws := make([]rewrite, len(rs))
		for i, r := range rs {
			if ws[i].ref, err = a.ref(ctx, r.patientID); err != nil {
				return total, err
			}
			if ws[i].result, err = a.seal([]byte(r.result)); err != nil {
				return total, err
			}
		}
		err = a.db.inTx(ctx, func(tx *sql.Tx) error {
			for i, r := range rs {
				if _, err := tx.ExecContext(ctx, a.db.Rebind(`UPDATE v1_prescriptions SET patient_id = ?, result = ?, at_rest = 1
					WHERE id = ? AND at_rest = 0`), ws[i].ref, ws[i].result, r.key); err != nil {
					return fmt.Errorf("store: protecting a prescription row: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(rs)
	}
}
