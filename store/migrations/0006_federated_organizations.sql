-- Federated participants registered through POST /api/v1/federated/organizations.
-- Portable SQL: runs on SQLite and PostgreSQL. Times are Unix microseconds (UTC).
-- IF NOT EXISTS: databases from before this migration have the table already
-- (it used to be created by the app at start).
CREATE TABLE IF NOT EXISTS federated_organizations (
    organization_id TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    endpoint        TEXT NOT NULL,
    encryption_key  TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
