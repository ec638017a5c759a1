package store

import (
	"context"
	"fmt"
)

// PendingDeliveries counts the webhook deliveries not yet delivered nor
// failed, across every replica: the outbox depth a metric reports.
func (s *WebhookStore) PendingDeliveries(ctx context.Context) (int, error) {
	var n int
	if err := s.db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: counting pending webhook deliveries: %w", err)
	}
	return n, nil
}
