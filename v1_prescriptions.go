package healthagents

// The v1 prescription validation: its steps, and stored validations.

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// StoredPrescription is a prescription validation as kept by a
// PrescriptionStore: Result is the JSON of the V1PrescriptionResult.
type StoredPrescription struct {
	ID        string
	Owner     string // who may read it back ("" for anyone)
	PatientID string
	Status    string
	CreatedAt time.Time
	Result    []byte
}

// PrescriptionStore keeps prescription validations. *store.PrescriptionStore
// is one.
type PrescriptionStore interface {
	SavePrescription(ctx context.Context, p StoredPrescription) error
	// Prescription returns one, or an error wrapping ErrPrescriptionNotFound.
	Prescription(ctx context.Context, id string) (StoredPrescription, error)
}

// PrescriptionEventStore is a PrescriptionStore that also writes the events
// reporting a validation in the transaction that stores it, so that no
// crash leaves a stored validation without its events, or events about a
// validation that was never stored. *store.PrescriptionOutbox is one.
//
// When the service has an EventSink (WithEvents) and V1's PrescriptionStore
// is a PrescriptionEventStore, V1 hands a validation's events to the store
// instead of the sink: build the store over the same outbox as the sink.
// Other stores get the validation first and the sink its events after, in
// separate writes.
type PrescriptionEventStore interface {
	PrescriptionStore
	// SavePrescriptionWithEvents stores p and records events for
	// delivery in one transaction: after nil both are durable, after an
	// error neither is.
	SavePrescriptionWithEvents(ctx context.Context, p StoredPrescription, events []Event) error
}

func newPrescriptionID() (string, error) {
	var b [15]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("healthagents: prescription id: %w", err)
	}
	return "rx_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])), nil
}

// ValidatePrescription is POST /api/v1/prescriptions/validate. owner names
// the registry's record to use (see PutPatient) and who may read the stored
// validation back ("" for anyone). Its steps: open (check the request,
// resolve its drugs, open the registered record) → check each drug → read
// the pharmacy oracle → prove coverage → record the validation with its
// events.
func (v *V1) ValidatePrescription(ctx context.Context, owner string, req V1PrescriptionRequest) (*V1PrescriptionResult, error) {
	lines, err := v.checkPrescription(&req)
	if err != nil {
		return nil, err
	}
	rec, err := v.registeredRecord(ctx, owner, req.PatientID, prescriptionPrefix)
	if err != nil {
		return nil, err
	}
	decisions, err := v.checkDrugs(ctx, rec, lines)
	if err != nil {
		return nil, err
	}
	now := v.svc.serviceTime()
	res := &V1PrescriptionResult{CreatedAt: now.Truncate(time.Microsecond)}
	res.Checks.DrugInteractions = drugChecks(lines, decisions)
	res.Checks.Eligibility = coverageCheck(rec, lines, now)
	res.Codes, res.ValidationStatus = verdict(decisions, res.Checks)
	if res.Checks.PharmacyConfirmation, err = v.pharmacy(ctx, req.PharmacyNPI, lines); err != nil {
		return nil, err
	}
	zkVerified := false
	if res.ValidationStatus != StatusRejected && rec.Coverage != nil {
		var att *Attestation
		if res.ZKProofs, att, zkVerified, err = v.proveCoverage(ctx, rec, decisions, now); err != nil {
			return nil, err
		}
		if len(res.ZKProofs) == 1 {
			p := res.ZKProofs[0]
			res.ZKProof = &p
			res.Statement, res.Issuer = att.Statement, att.Issuer
		} else {
			zkVerified = false
		}
	}
	if err := v.recordValidation(ctx, owner, req.PatientID, res, now, zkVerified); err != nil {
		return nil, err
	}
	return res, nil
}

// checkDrugs runs the prescription agent over every line against the
// record: interactions (with current medications and between the new
// ones) and contraindications. It returns one decision per line.
func (v *V1) checkDrugs(ctx context.Context, rec *record.Record, lines []medLine) ([]prescription.Decision, error) {
	codes := make([]string, len(lines))
	for i, l := range lines {
		codes[i] = l.drug.RxCUI
	}
	dctx, end := v.svc.step(ctx, "decide")
	batch, err := v.svc.Prescription().Check(dctx, nil, codes, rec)
	end(err)
	if err != nil {
		return nil, v.svc.internal(ctx, prescriptionPrefix, err)
	}
	return batch.Decisions, nil
}

// proveCoverage proves, in one proof for the whole request, whether the
// plan covers each medication on the service date, and has it verified on
// chain. It returns the verified proof (none without an Attestor), its
// attestation and whether it states coverage of every medication.
func (v *V1) proveCoverage(ctx context.Context, rec *record.Record, ds []prescription.Decision, now time.Time) ([]V1Proof, *Attestation, bool, error) {
	if !v.svc.Attests() {
		return nil, nil, false, nil
	}
	att, err := v.svc.provePrescription(ctx, rec, ds, now)
	if err != nil {
		return nil, nil, false, v.proofError(ctx, prescriptionPrefix, V1ProofFailed, V1ProofFailed, err)
	}
	p := v1Proof(att)
	if p == nil {
		return nil, nil, false, nil
	}
	return []V1Proof{*p}, att, att.Covered, nil
}

// recordValidation gives res its id and stores it for owner with the
// events that report it (dated now).
func (v *V1) recordValidation(ctx context.Context, owner, patientID string, res *V1PrescriptionResult, now time.Time, zkVerified bool) error {
	var err error
	if res.PrescriptionID, err = v.newID(); err != nil {
		return v.svc.internal(ctx, prescriptionPrefix, err)
	}
	body, err := json.Marshal(res)
	if err != nil {
		return v.svc.internal(ctx, prescriptionPrefix, err)
	}
	// As on the root family, zk_proof_verified means eligibility was
	// verified cryptographically: every medication's proof verified on chain
	// and states coverage. A proof of "not covered" verifies just the same.
	data := map[string]any{"valid": res.ValidationStatus != StatusRejected, "zk_proof_verified": zkVerified,
		"prescription_id": res.PrescriptionID, "validation_status": res.ValidationStatus}
	events := []Event{{Type: EventPrescriptionValidated, Time: now, PatientID: patientID, Data: data}}
	if res.ValidationStatus == StatusApproved {
		events = append(events, Event{Type: EventPrescriptionApproved, Time: now, PatientID: patientID, Data: data})
	}
	return v.save(ctx, StoredPrescription{
		ID: res.PrescriptionID, Owner: owner, PatientID: patientID, Status: res.ValidationStatus,
		CreatedAt: res.CreatedAt, Result: body,
	}, events)
}

// save stores a validation with the events that report it (none when the
// service has no EventSink): in one transaction when the store is a
// PrescriptionEventStore, else the validation and then each event through
// the sink.
func (v *V1) save(ctx context.Context, p StoredPrescription, events []Event) (err error) {
	ctx, end := v.svc.step(ctx, "store")
	defer func() { end(err) }()
	if !v.svc.emitsEvents() {
		events = nil
	}
	if es, ok := v.rx.(PrescriptionEventStore); ok && len(events) > 0 {
		if err := es.SavePrescriptionWithEvents(ctx, p, owned(ctx, events...)); err != nil {
			return v.unavailable(ctx, prescriptionPrefix, err)
		}
		return nil
	}
	if err := v.rx.SavePrescription(ctx, p); err != nil {
		return v.unavailable(ctx, prescriptionPrefix, err)
	}
	for _, e := range events {
		if err := v.svc.emit(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// Prescription returns a stored validation. A validation stored for another
// owner is not found.
func (v *V1) Prescription(ctx context.Context, owner, id string) (*V1PrescriptionResult, error) {
	if err := checkCode("prescription_id", id); err != nil {
		return nil, err
	}
	p, err := v.rx.Prescription(ctx, id)
	if errors.Is(err, ErrPrescriptionNotFound) || (err == nil && p.Owner != "" && p.Owner != owner) {
		return nil, Errorf(CodeNotFound, "Prescription %s not found", id)
	}
	if err != nil {
		return nil, v.unavailable(ctx, prescriptionPrefix, err)
	}
	var res V1PrescriptionResult
	if err := json.Unmarshal(p.Result, &res); err != nil {
		return nil, v.svc.internal(ctx, prescriptionPrefix, err)
	}
	return &res, nil
}
