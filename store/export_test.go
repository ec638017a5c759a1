package store

import "time"

// RebindDollar exposes the PostgreSQL placeholder rewrite to tests.
var RebindDollar = rebindDollar

// SetIdempotencyClock sets the store's clock.
func SetIdempotencyClock(s *IdempotencyStore, now func() time.Time) { s.now = now }
