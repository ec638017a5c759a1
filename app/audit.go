package app

import (
	"context"

	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/store"
)

// openAudit opens the access audit log in db. A read by prescription id
// finds its patient's reference in the stored validations (kept there as
// the same keyed pseudonym). opts must hold the WebhookStore's key sealer:
// they all share the pseudonym key.
func openAudit(db *store.DB, opts ...store.KeyOption) (*audit.Log, error) {
	st, err := store.NewAuditStore(db, opts...)
	if err != nil {
		return nil, err
	}
	rx, err := store.NewPrescriptionStore(db, opts...)
	if err != nil {
		return nil, err
	}
	return audit.New(st, audit.WithPrescriptionRef(func(ctx context.Context, id string) (string, error) {
		p, err := rx.Prescription(ctx, id)
		return p.PatientID, err
	}))
}
