// Package audit keeps the service's access log (HIPAA 164.312(b)): one
// entry per operation that decrypts, stores, reads or deletes a patient's
// data, saying who (the API key and its organization, or a public caller's
// address), what (the action and its outcome), when (UTC) and which patient
// — as a keyed hash, never the patient id itself. No medical data is ever
// part of an entry.
//
// The log is append-only and tamper-evident: entries are numbered from 1
// without gaps, and each carries hash = SHA-256(prev_hash || canonical
// encoding of the entry), prev_hash being the previous entry's hash (32 zero
// bytes for the first). Changing, removing or reordering a stored entry
// breaks the chain from that entry on, which [Log.Verify] reports. The
// [Store] numbers and chains entries while holding the database's write
// lock, so concurrent appends form one valid chain; the store offers no
// update or delete and the database refuses them with triggers.
package audit

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Actor types.
const (
	ActorKey    = "key"    // an authenticated API key
	ActorPublic = "public" // an unauthenticated caller, known by address
)

// Outcomes.
const (
	OutcomeSuccess = "success" // status below 400
	OutcomeDenied  = "denied"  // 401 or 403
	OutcomeError   = "error"   // any other status of 400 or above
)

// Actions recorded by the server.
const (
	ActionEligibilityVerify     = "eligibility.verify"       // POST /verify-eligibility
	ActionPrescriptionValidate  = "prescription.validate"    // POST /validate-prescription
	ActionPatientPut            = "patient.put"              // PUT /api/v1/patients/{id}
	ActionPatientDelete         = "patient.delete"           // DELETE /api/v1/patients/{id}
	ActionEligibilityVerifyV1   = "v1.eligibility.verify"    // POST /api/v1/eligibility/verify
	ActionPrescriptionV1        = "v1.prescription.validate" // POST /api/v1/prescriptions/validate and each batch item
	ActionPrescriptionRead      = "v1.prescription.read"     // GET /api/v1/prescriptions/{id}
	ActionFederatedSubmitUpdate = "federated.submit"         // POST /submit-federated-update
)

// GenesisHash is the prev_hash of the first entry: 32 zero bytes, in hex.
var GenesisHash = hex.EncodeToString(make([]byte, sha256.Size))

// Entry is one stored access.
type Entry struct {
	Seq          int64     // 1, 2, 3, … without gaps
	Time         time.Time // UTC, microsecond precision
	ActorType    string    // ActorKey or ActorPublic
	KeyID        string    // the API key's public id (never its secret); "" for public
	Organization string    // the key's organization, if any
	ClientIP     string    // the caller's address as the server saw it
	Action       string
	PatientRef   string // hex HMAC-SHA256 of the patient id; "" when no single patient is named
	Resource     string // another object named, e.g. "prescription:rx_…"
	Records      int    // records carried (federated submissions), else 0
	Outcome      string
	Status       int    // the HTTP status answered for this access
	RequestID    string // X-Request-ID of the request
	PrevHash     string // hex
	Hash         string // hex SHA-256(prev_hash || Canonical(entry))
}

// Canonical is the encoding of e that its hash covers: a JSON array of every
// field but the hashes, in a fixed order, the time as Unix microseconds.
func Canonical(e Entry) []byte {
	b, err := json.Marshal([]any{
		e.Seq, e.Time.UnixMicro(), e.ActorType, e.KeyID, e.Organization, e.ClientIP, e.Action,
		e.PatientRef, e.Resource, e.Records, e.Outcome, e.Status, e.RequestID,
	})
	if err != nil { // strings and integers always encode
		panic("audit: encoding an entry: " + err.Error())
	}
	return b
}

// ChainHash returns hex SHA-256(prev || Canonical(e)), prev being the
// previous entry's hash in hex. It fails on a prev that is not 32 bytes of
// hex.
func ChainHash(prev string, e Entry) (string, error) {
	p, err := hex.DecodeString(prev)
	if err != nil || len(p) != sha256.Size {
		return "", fmt.Errorf("audit: previous hash %q is not a SHA-256 in hex", prev)
	}
	h := sha256.New()
	h.Write(p)
	h.Write(Canonical(e))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Chainer links entries in sequence: Next gives each its number, previous
// hash and hash. Stores use it under their write lock.
type Chainer struct {
	seq  int64
	hash string
}

// NewChainer continues a chain whose last entry has seq and hash; seq 0 and
// hash "" start a new chain.
func NewChainer(seq int64, hash string) *Chainer {
	if seq == 0 {
		hash = GenesisHash
	}
	return &Chainer{seq: seq, hash: hash}
}

// Next numbers and hashes e as the entry after the last.
func (c *Chainer) Next(e Entry) (Entry, error) {
	e.Seq, e.PrevHash = c.seq+1, c.hash
	e.Time = e.Time.UTC().Truncate(time.Microsecond)
	h, err := ChainHash(e.PrevHash, e)
	if err != nil {
		return e, err
	}
	e.Hash = h
	c.seq, c.hash = e.Seq, h
	return e, nil
}

// Verifier checks entries fed to it in sequence order.
type Verifier struct {
	n        int64
	last     Entry
	brokenAt int64
}

// Add checks e against the entries before it. The first failure is kept.
func (v *Verifier) Add(e Entry) {
	v.n++
	if v.brokenAt != 0 {
		return
	}
	wantPrev := GenesisHash
	if v.n > 1 {
		wantPrev = v.last.Hash
	}
	h, err := ChainHash(e.PrevHash, e)
	if e.Seq != v.n || e.PrevHash != wantPrev || err != nil || h != e.Hash {
		v.brokenAt = v.n // the first position whose entry is not what the chain says
	}
	v.last = e
}

// Result reports the check.
func (v *Verifier) Result() Verification {
	r := Verification{Valid: v.brokenAt == 0, Entries: v.n, HeadHash: GenesisHash}
	if v.n > 0 {
		r.HeadHash = v.last.Hash
	}
	if v.brokenAt != 0 {
		b := v.brokenAt
		r.FirstBrokenSeq = &b
	}
	return r
}

// Verification is the outcome of recomputing the chain.
type Verification struct {
	Valid          bool
	Entries        int64
	FirstBrokenSeq *int64 // the first sequence number whose entry does not chain; nil when valid
	HeadHash       string // the hash of the last entry (GenesisHash for an empty log)
}

// Filter selects entries of a listing. Zero fields select everything.
type Filter struct {
	PatientRef   string
	KeyID        string
	Organization string
	From, To     time.Time // From inclusive, To exclusive
	Offset       int
	Limit        int
}

// Store persists the log. *store.AuditStore is one.
type Store interface {
	// Append numbers, chains and stores es atomically, in order, after
	// every entry already stored, under a lock that serializes appends;
	// it returns the entries as stored. Time, Seq, PrevHash and Hash are
	// set by Append (Time only when zero).
	Append(ctx context.Context, es []Entry) ([]Entry, error)
	// List returns a page of the entries f selects, in sequence order,
	// and how many it selects in all.
	List(ctx context.Context, f Filter) ([]Entry, int, error)
	// Scan calls fn with every entry in sequence order.
	Scan(ctx context.Context, fn func(Entry) error) error
	// PseudonymKey returns the deployment's key for hashing patient ids,
	// storing candidate if none is stored yet (the key webhook pseudonyms
	// are derived from).
	PseudonymKey(ctx context.Context, candidate []byte) ([]byte, error)
}

// Access is one access as the server saw it, before it is stored.
type Access struct {
	Time         time.Time // zero: now
	ActorType    string
	KeyID        string
	Organization string
	ClientIP     string
	Action       string
	PatientID    string // hashed into PatientRef; never stored
	Resource     string
	// PrescriptionID, when PatientID is empty, names a stored prescription
	// whose patient is looked up (WithPrescriptionPatient).
	PrescriptionID string
	Records        int
	Status         int
	RequestID      string
}

// Log records accesses and reads them back.
type Log struct {
	store     Store
	patientOf func(ctx context.Context, prescriptionID string) (string, error)
	refOf     func(ctx context.Context, prescriptionID string) (string, error)
	now       func() time.Time
	rand      io.Reader

	keyMu sync.Mutex
	key   []byte
}

// Option configures a Log.
type Option func(*Log)

// WithPrescriptionPatient sets how the patient of a stored prescription is
// found, for reads by prescription id. An error or "" leaves the entry
// without a patient reference.
func WithPrescriptionPatient(fn func(ctx context.Context, prescriptionID string) (string, error)) Option {
	return func(l *Log) { l.patientOf = fn }
}

// WithPrescriptionRef sets how the patient reference of a stored
// prescription is found, for reads by prescription id, where the store
// keeps the patient's reference (its PatientRef) instead of its id, as
// package store does. It takes precedence over WithPrescriptionPatient. An
// error or "" leaves the entry without a patient reference.
func WithPrescriptionRef(fn func(ctx context.Context, prescriptionID string) (string, error)) Option {
	return func(l *Log) { l.refOf = fn }
}

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(l *Log) { l.now = now } }

// New returns the log over st.
func New(st Store, opts ...Option) (*Log, error) {
	if st == nil {
		return nil, errors.New("audit: nil store")
	}
	l := &Log{store: st, now: time.Now, rand: rand.Reader}
	for _, o := range opts {
		o(l)
	}
	return l, nil
}

// OutcomeOf classifies an HTTP status.
func OutcomeOf(status int) string {
	switch {
	case status < 400:
		return OutcomeSuccess
	case status == 401 || status == 403:
		return OutcomeDenied
	}
	return OutcomeError
}

// Record stores the accesses, in order, before it returns. A failure means
// nothing was stored.
func (l *Log) Record(ctx context.Context, as ...Access) error {
	if len(as) == 0 {
		return nil
	}
	es := make([]Entry, len(as))
	for i, a := range as {
		pid, ref := a.PatientID, ""
		if pid == "" && a.PrescriptionID != "" && l.refOf != nil {
			if r, err := l.refOf(ctx, a.PrescriptionID); err == nil {
				ref = r
			}
		} else if pid == "" && a.PrescriptionID != "" && l.patientOf != nil {
			if p, err := l.patientOf(ctx, a.PrescriptionID); err == nil {
				pid = p
			}
		}
		if pid != "" {
			r, err := l.PatientRef(ctx, pid)
			if err != nil {
				return err
			}
			ref = r
		}
		at := a.Time
		if at.IsZero() {
			at = l.now()
		}
		es[i] = Entry{
			Time: at.UTC(), ActorType: a.ActorType, KeyID: a.KeyID, Organization: a.Organization,
			ClientIP: a.ClientIP, Action: a.Action, PatientRef: ref, Resource: a.Resource,
			Records: a.Records, Outcome: OutcomeOf(a.Status), Status: a.Status, RequestID: a.RequestID,
		}
	}
	if _, err := l.store.Append(ctx, es); err != nil {
		return fmt.Errorf("audit: appending: %w", err)
	}
	return nil
}

// PatientRef returns the reference entries carry for a patient id: the hex
// HMAC-SHA256 of the id under the deployment's pseudonym key. Webhook
// payloads carry a per-owner pseudonym derived from it
// (webhook.OwnerPseudonym(ref, owner)), not this value.
func (l *Log) PatientRef(ctx context.Context, patientID string) (string, error) {
	key, err := l.pseudonymKey(ctx)
	if err != nil {
		return "", err
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(patientID))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (l *Log) pseudonymKey(ctx context.Context) ([]byte, error) {
	l.keyMu.Lock()
	defer l.keyMu.Unlock()
	if l.key != nil {
		return l.key, nil
	}
	cand := make([]byte, 32)
	if _, err := io.ReadFull(l.rand, cand); err != nil {
		return nil, fmt.Errorf("audit: drawing the pseudonym key: %w", err)
	}
	key, err := l.store.PseudonymKey(ctx, cand)
	if err != nil {
		return nil, fmt.Errorf("audit: loading the pseudonym key: %w", err)
	}
	if len(key) < 32 {
		return nil, errors.New("audit: stored pseudonym key is too short")
	}
	l.key = key
	return key, nil
}

// Query selects entries for List. PatientID is hashed before it is looked
// up; it is never stored or logged.
type Query struct {
	PatientID    string
	KeyID        string
	Organization string
	From, To     time.Time
	Offset       int
	Limit        int
}

// List returns a page of the entries q selects, oldest first, and their
// number.
func (l *Log) List(ctx context.Context, q Query) ([]Entry, int, error) {
	f := Filter{KeyID: q.KeyID, Organization: q.Organization, From: q.From, To: q.To, Offset: q.Offset, Limit: q.Limit}
	if q.PatientID != "" {
		ref, err := l.PatientRef(ctx, q.PatientID)
		if err != nil {
			return nil, 0, err
		}
		f.PatientRef = ref
	}
	es, total, err := l.store.List(ctx, f)
	if err != nil {
		return nil, 0, fmt.Errorf("audit: listing: %w", err)
	}
	return es, total, nil
}

// Verify recomputes the whole chain.
func (l *Log) Verify(ctx context.Context) (Verification, error) {
	var v Verifier
	if err := l.store.Scan(ctx, func(e Entry) error { v.Add(e); return nil }); err != nil {
		return Verification{}, fmt.Errorf("audit: reading the log: %w", err)
	}
	return v.Result(), nil
}
