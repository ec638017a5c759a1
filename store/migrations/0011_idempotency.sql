-- Idempotency-Key answers kept across restarts and replicas
-- (IdempotencyStore): a retried POST on any replica replays the first
-- answer instead of running again. id is SHA-256 (hex) of the caller, the
-- route and the key; answer is the replayed status, headers and body,
-- sealed with the service's Fernet keyring (it may hold a new API key).
CREATE TABLE idempotency_answers (
	id TEXT PRIMARY KEY,
	state TEXT NOT NULL,
	body_hash TEXT NOT NULL DEFAULT '',
	answer TEXT NOT NULL DEFAULT '',
	expires_at BIGINT NOT NULL
);
CREATE INDEX idempotency_answers_expires ON idempotency_answers (expires_at);
