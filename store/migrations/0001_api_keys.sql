-- API keys (package apikey). Portable SQL: runs on SQLite and PostgreSQL.
-- Times are Unix microseconds (UTC). Secrets are never stored: hash is the
-- hex SHA-256 of the whole key string.
CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    env          TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL DEFAULT '',
    tier         TEXT NOT NULL,
    scopes       TEXT NOT NULL DEFAULT '',
    organization TEXT NOT NULL DEFAULT '',
    allowed_ips  TEXT NOT NULL DEFAULT '',
    restricted   BOOLEAN NOT NULL DEFAULT FALSE,
    rate_limit   INTEGER NOT NULL DEFAULT 0,
    daily_quota  INTEGER NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT,
    revoked_at   BIGINT,
    rotated_to   TEXT NOT NULL DEFAULT '',
    created_by   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX api_keys_org_created ON api_keys (organization, created_at);
CREATE INDEX api_keys_created ON api_keys (created_at, id);

-- Per-minute latency histograms of authenticated requests, aggregated in
-- memory and flushed in batches. bucket is apikey's log-linear latency bucket.
CREATE TABLE api_key_usage (
    key_id   TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    minute   BIGINT NOT NULL,
    bucket   INTEGER NOT NULL,
    requests BIGINT NOT NULL,
    errors   BIGINT NOT NULL,
    PRIMARY KEY (key_id, minute, bucket)
);

-- One-time bootstrap tokens printed at first start (hash only).
CREATE TABLE admin_bootstrap_tokens (
    hash        TEXT PRIMARY KEY,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    consumed_at BIGINT
);
