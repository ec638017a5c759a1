-- Webhook endpoints and the delivery outbox (package webhook). Portable SQL:
-- runs on SQLite and PostgreSQL. Times are Unix microseconds (UTC).

-- Subscriber endpoints. secret is the whsec_ signing secret (needed in
-- clear to sign); events is the space-separated subscription list as shown.
CREATE TABLE webhook_endpoints (
    id              TEXT PRIMARY KEY,
    owner           TEXT NOT NULL,
    url             TEXT NOT NULL,
    events          TEXT NOT NULL,
    secret          TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    disabled_at     BIGINT,
    disabled_reason TEXT NOT NULL DEFAULT '',
    failing_since   BIGINT
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner, created_at, id);

-- One row per (event, endpoint) subscription: the fan-out lookup.
CREATE TABLE webhook_subscriptions (
    event       TEXT NOT NULL,
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    PRIMARY KEY (event, endpoint_id)
);
CREATE INDEX webhook_subscriptions_endpoint ON webhook_subscriptions (endpoint_id);

-- The outbox: one row per message and endpoint, written when the event is
-- emitted. message_id is the webhook-id of every attempt. A row is leased to
-- one dispatcher (lease_holder until lease_until) while it is attempted.
-- state: pending, delivered or failed.
CREATE TABLE webhook_deliveries (
    message_id   TEXT NOT NULL,
    endpoint_id  TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event        TEXT NOT NULL,
    payload      TEXT NOT NULL,
    state        TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      BIGINT NOT NULL,
    lease_holder TEXT NOT NULL DEFAULT '',
    lease_until  BIGINT NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    finished_at  BIGINT,
    PRIMARY KEY (message_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_at);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id);

-- Every delivery attempt; response holds at most the first 256 bytes.
CREATE TABLE webhook_attempts (
    id           TEXT PRIMARY KEY,
    message_id   TEXT NOT NULL,
    endpoint_id  TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event        TEXT NOT NULL,
    attempt      INTEGER NOT NULL,
    attempted_at BIGINT NOT NULL,
    status_code  INTEGER NOT NULL,
    latency_ms   BIGINT NOT NULL,
    result       TEXT NOT NULL,
    error_class  TEXT NOT NULL DEFAULT '',
    response     TEXT NOT NULL DEFAULT '',
    next_at      BIGINT
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, attempted_at, id);

-- Deployment-wide webhook settings; pseudonym_key (hex) keys the hash that
-- replaces patient ids in payloads.
CREATE TABLE webhook_settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
