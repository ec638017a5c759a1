package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/record"
)

// maxEnvelopeLine bounds one line of a --records file: an envelope's
// encrypted_data is at most cipher.MaxEncryptedSize, plus its other fields.
const maxEnvelopeLine = cipher.MaxEncryptedSize + 4096

// recordsReport counts what a --records file held, by outcome; it names
// no record and repeats no content.
type recordsReport struct {
	Opened  int
	Refused map[string]int // reason → envelopes
}

func (r recordsReport) refused() int {
	n := 0
	for _, c := range r.Refused {
		n += c
	}
	return n
}

// String is the one progress line of the report.
func (r recordsReport) String() string {
	s := fmt.Sprintf("records: %d envelopes opened", r.Opened)
	if n := r.refused(); n > 0 {
		reasons := make([]string, 0, len(r.Refused))
		for why := range r.Refused {
			reasons = append(reasons, why)
		}
		slices.Sort(reasons)
		for i, why := range reasons {
			reasons[i] = fmt.Sprintf("%d %s", r.Refused[why], why)
		}
		s += fmt.Sprintf(", %d refused (%s)", n, strings.Join(reasons, ", "))
	}
	return s
}

// loadKeyFile reads a Fernet keyring from path: FERNET_KEY's format (one or
// more keys, comma separated), surrounding whitespace ignored. Errors name
// the file, never the key.
func loadKeyFile(path string) (*cipher.Keyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("participant: --key-file: %w", err)
	}
	defer clear(b)
	kr, err := cipher.ParseKeyring(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("participant: --key-file %s: %w", path, err)
	}
	return kr, nil
}

// readParticipantRecords reads encrypted patient records: one PatientData
// envelope (the JSON the service accepts: patient_id, encrypted_data,
// ipfs_cid, data_hash) per line, sealed with a key of kr. Each envelope is
// checked and opened as the service opens it (cipher.Keyring.Open), its
// plaintext parsed as our record JSON or a FHIR R4 Bundle, and its
// patient_id checked against the record's. Plaintext exists only in this
// process's memory. An envelope that fails is counted by reason and left
// out; when none opens because the key opens none of them, that is the
// error.
func readParticipantRecords(ctx context.Context, path string, kr *cipher.Keyring) ([]*record.Record, recordsReport, error) {
	rep := recordsReport{Refused: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return nil, rep, fmt.Errorf("participant: records: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxEnvelopeLine)
	var out []*record.Record
	seen := map[string]bool{}
	undecryptable := 0
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		rec, why, err := openRecordLine(ctx, b, kr)
		if err != nil {
			return nil, rep, err // ctx ended
		}
		switch {
		case why == "":
		case why == reasonDecrypt:
			undecryptable++
			fallthrough
		default:
			rep.Refused[why]++
			continue
		}
		if seen[rec.PatientID] {
			rep.Refused["repeated patient_id"]++
			continue
		}
		seen[rec.PatientID] = true
		rep.Opened++
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, rep, fmt.Errorf("participant: %s: a line is longer than an envelope can be (%d bytes)", path, maxEnvelopeLine)
		}
		return nil, rep, fmt.Errorf("participant: %s: %w", path, err)
	}
	switch {
	case len(out) == 0 && undecryptable > 0 && undecryptable == rep.refused():
		return nil, rep, fmt.Errorf("participant: --key-file opens none of the %d envelopes in %s: wrong key?", undecryptable, path)
	case len(out) == 0:
		return nil, rep, fmt.Errorf("participant: %s has no record that opens (%s)", path, rep)
	}
	return out, rep, nil
}

const reasonDecrypt = "not decryptable with the key"

// openRecordLine opens one envelope line. It returns the record, or the
// reason it was refused (a short phrase naming the check, never content).
// The error is only ctx's.
func openRecordLine(ctx context.Context, line []byte, kr *cipher.Keyring) (*record.Record, string, error) {
	var env cipher.Envelope
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil || dec.More() {
		return nil, "not an envelope", nil
	}
	plaintext, err := kr.Open(ctx, env)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, envelopeReason(err), nil
	}
	defer clear(plaintext)
	rec, err := fhir.ParseRecord(plaintext)
	if err != nil {
		return nil, "invalid record", nil
	}
	if rec.PatientID != env.PatientID {
		return nil, "patient_id does not match the record", nil
	}
	return rec, "", nil
}

// envelopeReason words a cipher error by the check that failed.
func envelopeReason(err error) string {
	var fe *cipher.FieldError
	switch {
	case errors.As(err, &fe):
		return "missing " + fe.Field
	case errors.Is(err, cipher.ErrDecrypt):
		return reasonDecrypt
	case errors.Is(err, cipher.ErrHashMismatch), errors.Is(err, cipher.ErrInvalidHashFormat):
		return "data_hash mismatch"
	case errors.Is(err, cipher.ErrInvalidCID), errors.Is(err, cipher.ErrCIDUnchecked), errors.Is(err, cipher.ErrCIDMismatch):
		return "ipfs_cid does not address encrypted_data"
	case errors.Is(err, cipher.ErrEnvelopeExpired):
		return "expired"
	case errors.Is(err, cipher.ErrInvalidPatientID):
		return "invalid patient_id"
	}
	return "malformed envelope"
}
