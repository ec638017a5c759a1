package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/webhook"
)

// EventPreparer turns the service's events into webhook outbox messages
// without writing them, and is told afterwards how many outbox rows were
// committed. *webhook.Registry is one.
type EventPreparer interface {
	// Prepare returns e's message; ok is false when e goes to no endpoint.
	Prepare(ctx context.Context, e healthagents.Event) (m webhook.Message, ok bool, err error)
	// Enqueued is called after the commit with the number of rows written.
	Enqueued(n int)
}

// PrescriptionOutbox is a PrescriptionStore that writes each validation and
// the webhook outbox rows of its events (tables v1_prescriptions and
// webhook_deliveries) in one transaction: both are committed or neither is.
// It implements healthagents.PrescriptionEventStore.
type PrescriptionOutbox struct {
	*PrescriptionStore
	events EventPreparer
}

var _ healthagents.PrescriptionEventStore = (*PrescriptionOutbox)(nil)

// NewPrescriptionOutbox returns the prescription store over db whose
// validations carry their events into the outbox; events prepares them
// (pass the webhook.Registry that is the service's EventSink, whose store
// is a WebhookStore over the same db).
func NewPrescriptionOutbox(db *DB, events EventPreparer, opts ...KeyOption) (*PrescriptionOutbox, error) {
	if events == nil {
		return nil, errors.New("store: nil EventPreparer")
	}
	ps, err := NewPrescriptionStore(db, opts...)
	if err != nil {
		return nil, err
	}
	return &PrescriptionOutbox{PrescriptionStore: ps, events: events}, nil
}

// SavePrescriptionWithEvents implements healthagents.PrescriptionEventStore.
// The messages are prepared first (that may read or create the pseudonym
// key, outside the transaction); then one transaction inserts p and, for
// each message, one row per active endpoint subscribed to it. The
// EventPreparer hears of the rows only after the commit.
func (s *PrescriptionOutbox) SavePrescriptionWithEvents(ctx context.Context, p healthagents.StoredPrescription, events []healthagents.Event) error {
	msgs := make([]webhook.Message, 0, len(events))
	for _, e := range events {
		m, ok, err := s.events.Prepare(ctx, e)
		if err != nil {
			return fmt.Errorf("store: preparing the %s event: %w", e.Type, err)
		}
		if ok {
			msgs = append(msgs, m)
		}
	}
	row, err := s.stored(ctx, p)
	if err != nil {
		return err
	}
	rows := 0
	err = s.db.inTx(ctx, func(tx *sql.Tx) error {
		rows = 0
		if err := s.insert(ctx, tx, row); err != nil {
			return err
		}
		for _, m := range msgs {
			n, err := enqueue(ctx, s.db, tx, m)
			if err != nil {
				return err
			}
			rows += n
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: saving prescription with its events: %w", err)
	}
	s.events.Enqueued(rows)
	return nil
}
