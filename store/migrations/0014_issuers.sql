-- Payers (credential issuers) registered through POST /api/v1/issuers. The
-- chain's GovernedRegistry is the authority on whether an issuer is active;
-- this table keeps what the chain does not: the name and when the service
-- was asked. A retired issuer's row stays (retired_at set): its earlier
-- decisions still name it, and it cannot be registered again.
-- Portable SQL: runs on SQLite and PostgreSQL. Times are Unix microseconds (UTC).
CREATE TABLE issuers (
    issuer_id   TEXT PRIMARY KEY,
    key_hash    TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    admin       TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    retired_at  BIGINT
);
