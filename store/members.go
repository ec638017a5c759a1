package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/healthagents/healthagents"
)

// The member index of the X12 route (migration 0017_x12_member_index.sql):
// PatientStore implements healthagents.MemberIndex.
var _ healthagents.MemberIndex = (*PatientStore)(nil)

// memberIndexLabel derives the index's key from the pseudonym key, so a
// lookup value is never a patient pseudonym and the other way round.
const memberIndexLabel = "healthagents/x12-member-index/v1"

// memberLookup is the stored form of a key: hex HMAC-SHA256 of the owner
// and the key's text under the member-index key.
func (a *atRest) memberLookup(ctx context.Context, owner string, k healthagents.MemberKey) (string, error) {
	key, err := a.pseudonymKey(ctx)
	if err != nil {
		return "", err
	}
	sub := hmac.New(sha256.New, key)
	sub.Write([]byte(memberIndexLabel))
	h := hmac.New(sha256.New, sub.Sum(nil))
	h.Write([]byte(owner))
	h.Write([]byte{0})
	h.Write([]byte(k.Kind))
	h.Write([]byte{0})
	h.Write([]byte(k.Text))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// IndexMember implements healthagents.MemberIndex: the owner's patient's
// keys are replaced, in one transaction, by keys (none: the patient is no
// longer found). Only keyed hashes, the patient's pseudonym, the
// envelope's data_hash and the sealed patient id are stored.
func (s *PatientStore) IndexMember(ctx context.Context, owner, patientID, dataHash string, keys []healthagents.MemberKey) error {
	ref, err := s.rest.ref(ctx, patientID)
	if err != nil {
		return err
	}
	sealed, err := s.rest.seal([]byte(patientID))
	if err != nil {
		return err
	}
	lookups := make([]string, len(keys))
	for i, k := range keys {
		if lookups[i], err = s.rest.memberLookup(ctx, owner, k); err != nil {
			return err
		}
	}
	return s.db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM v1_member_keys WHERE owner = ? AND patient_ref = ?`), owner, ref); err != nil {
			return fmt.Errorf("store: replacing member keys: %w", err)
		}
		for i, k := range keys {
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO v1_member_keys (owner, lookup, kind, patient_ref, data_hash, patient)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner, lookup, patient_ref) DO NOTHING`),
				owner, lookups[i], k.Kind, ref, dataHash, sealed); err != nil {
				return fmt.Errorf("store: writing a member key: %w", err)
			}
		}
		return nil
	})
}

// FindMembers implements healthagents.MemberIndex: the owner's patients
// indexed under any of keys whose registered envelope is still the one
// the key was read from.
func (s *PatientStore) FindMembers(ctx context.Context, owner string, keys []healthagents.MemberKey) ([]healthagents.MemberMatch, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	args := []any{owner}
	for _, k := range keys {
		l, err := s.rest.memberLookup(ctx, owner, k)
		if err != nil {
			return nil, err
		}
		args = append(args, l)
	}
	const live = `FROM v1_member_keys k JOIN v1_patients p
		ON p.owner = k.owner AND p.patient_id = k.patient_ref AND p.data_hash = k.data_hash AND p.at_rest = 1
		WHERE k.owner = ?`
	rows, err := s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT k.patient_ref, k.kind, k.patient `+live+
		` AND k.lookup IN (?`+strings.Repeat(", ?", len(keys)-1)+`)`), args...)
	if err != nil {
		return nil, fmt.Errorf("store: looking members up: %w", err)
	}
	byRef := map[string]*healthagents.MemberMatch{}
	var order []string
	err = scanRows(rows, func(r *sql.Rows) error {
		var ref, kind, sealed string
		if err := r.Scan(&ref, &kind, &sealed); err != nil {
			return err
		}
		m := byRef[ref]
		if m == nil {
			id, err := s.rest.open(sealed)
			if err != nil {
				return err
			}
			m = &healthagents.MemberMatch{PatientID: string(id)}
			byRef[ref] = m
			order = append(order, ref)
		}
		m.Matched = appendOnce(m.Matched, kind)
		return nil
	})
	if err != nil || len(order) == 0 {
		return nil, err
	}
	// Which kinds of key each of them has at all.
	kargs := []any{owner}
	for _, ref := range order {
		kargs = append(kargs, ref)
	}
	rows, err = s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT DISTINCT k.patient_ref, k.kind `+live+
		` AND k.patient_ref IN (?`+strings.Repeat(", ?", len(order)-1)+`)`), kargs...)
	if err != nil {
		return nil, fmt.Errorf("store: looking members up: %w", err)
	}
	err = scanRows(rows, func(r *sql.Rows) error {
		var ref, kind string
		if err := r.Scan(&ref, &kind); err != nil {
			return err
		}
		byRef[ref].Indexed = appendOnce(byRef[ref].Indexed, kind)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]healthagents.MemberMatch, len(order))
	for i, ref := range order {
		out[i] = *byRef[ref]
	}
	return out, nil
}

func scanRows(rows *sql.Rows, each func(*sql.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return fmt.Errorf("store: reading members: %w", err)
		}
	}
	return rows.Err()
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// X12Controls hands out the X12 answers' control numbers from one counter
// in the database (migration 0017), so replicas never reuse one before the
// counter goes round (999999999 numbers). It implements
// healthagents.X12ControlNumbers.
type X12Controls struct{ db *DB }

var _ healthagents.X12ControlNumbers = (*X12Controls)(nil)

// NewX12Controls returns the control number counter of db.
func NewX12Controls(db *DB) (*X12Controls, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	return &X12Controls{db: db}, nil
}

// NextX12Control implements healthagents.X12ControlNumbers.
func (c *X12Controls) NextX12Control(ctx context.Context) (int, error) {
	var n int64
	err := c.db.db.QueryRowContext(ctx, `UPDATE x12_controls SET value = value % 999999999 + 1 WHERE name = 'interchange' RETURNING value`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: drawing an X12 control number: %w", err)
	}
	return int(n), nil
}
