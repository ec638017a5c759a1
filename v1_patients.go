package healthagents

// The v1 patient registry: envelopes registered by owner and patient id.

import (
	"context"
	"errors"

	"github.com/healthagents/healthagents/record"
)

// PatientRegistry keeps patient envelopes exactly as received, still
// encrypted, each under an owner and a patient id. *store.PatientStore is
// one.
//
// A patient id names a record only within its owner (the same owner string
// as StoredPrescription.Owner): the key is (owner, patient id). Two owners
// may register the same id; each sees, replaces and deletes only its own.
type PatientRegistry interface {
	// PutPatient stores env under (owner, env.PatientID), replacing that
	// owner's previous one.
	PutPatient(ctx context.Context, owner string, env PatientData) error
	// Patient returns the owner's envelope, or an error wrapping
	// ErrPatientNotFound (also when only another owner has one).
	Patient(ctx context.Context, owner, patientID string) (PatientData, error)
	// DeletePatient removes the owner's envelope, or returns an error
	// wrapping ErrPatientNotFound.
	DeletePatient(ctx context.Context, owner, patientID string) error
}

const registryPrefix = "Patient registration failed"

// PutPatient registers env under (owner, patientID), replacing the owner's
// previous envelope; another owner's record of the same id is untouched.
// owner is the caller's owner string ("org:<organization>", "key:<rotation
// chain>" over HTTP; "" for in-process callers without keys). The envelope
// is opened and checked like any envelope (hash, CID, decryption, record,
// patient_id inside) and then stored exactly as received: the plaintext is
// not kept. The member index (MemberIndex) gets keyed hashes of the
// record's payer, member id, name and birth date, so an X12 270 finds the
// patient.
func (v *V1) PutPatient(ctx context.Context, owner, patientID string, env *PatientData) error {
	if err := checkCode("patient_id", patientID); err != nil {
		return err
	}
	if env == nil {
		return Errorf(CodeInvalid, "Invalid request format: missing field 'patient_data'")
	}
	if env.PatientID != patientID {
		return Errorf(CodeInvalid, "%s: patient_id in the path and in the envelope differ", registryPrefix)
	}
	rec, err := v.svc.openChecked(ctx, env, registryPrefix)
	if err != nil {
		return err
	}
	sctx, end := v.svc.step(ctx, "store")
	err = v.patients.PutPatient(sctx, owner, *env)
	if err == nil {
		// The keys an X12 270 finds the patient by, bound to this
		// envelope: if this fails, the envelope is stored but the old keys
		// no longer match it, and a retry of the PUT fills the index.
		err = v.indexPatient(sctx, owner, patientID, env.DataHash, rec)
	}
	end(err)
	if err != nil {
		// A registry that refuses the envelope itself (an IPFS node that
		// computes another CID) says so with a 400; anything else is ours.
		var he *Error
		if errors.As(err, &he) && he.Code == CodeInvalid {
			return err
		}
		return v.unavailable(ctx, registryPrefix, err)
	}
	return nil
}

// DeletePatient removes the owner's envelope of the patient. Another
// owner's record of the same id is PATIENT_NOT_FOUND.
func (v *V1) DeletePatient(ctx context.Context, owner, patientID string) error {
	if err := checkCode("patient_id", patientID); err != nil {
		return err
	}
	err := v.patients.DeletePatient(ctx, owner, patientID)
	if errors.Is(err, ErrPatientNotFound) {
		return patientNotFound(err)
	}
	if err != nil {
		return v.unavailable(ctx, registryPrefix, err)
	}
	return nil
}

func patientNotFound(err error) error {
	return v1Error(CodeNotFound, V1PatientNotFound, err, "no patient record is registered under this patient_id")
}

// registeredRecord returns the opened record the owner registered for the patient.
func (v *V1) registeredRecord(ctx context.Context, owner, patientID, prefix string) (*record.Record, error) {
	env, err := v.patients.Patient(ctx, owner, patientID)
	if errors.Is(err, ErrPatientNotFound) {
		return nil, patientNotFound(err)
	}
	if err != nil {
		return nil, v.unavailable(ctx, prefix, err)
	}
	rec, err := v.svc.openRecord(ctx, &env, prefix)
	if err != nil {
		return nil, err
	}
	if err := v.svc.credentialExpired(rec); err != nil {
		return nil, v.credentialRefusal(prefix, "", err)
	}
	return rec, nil
}
