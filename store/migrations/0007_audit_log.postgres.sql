-- The access audit log (package audit, HIPAA 164.312(b)). PostgreSQL
-- version; 0007_audit_log.sqlite.sql is the same table. Times are Unix
-- microseconds (UTC). No medical data: patient_ref is a keyed hash of the
-- patient id, never the id.
--
-- Append-only: the triggers refuse UPDATE, DELETE and TRUNCATE. Each row's
-- hash is SHA-256(prev_hash || canonical encoding of the row), computed by
-- the writer under a transaction-scoped advisory lock, so seq has no gaps.
CREATE TABLE audit_log (
    seq          BIGINT PRIMARY KEY,
    at           BIGINT NOT NULL,
    actor_type   TEXT NOT NULL,
    key_id       TEXT NOT NULL DEFAULT '',
    organization TEXT NOT NULL DEFAULT '',
    client_ip    TEXT NOT NULL DEFAULT '',
    action       TEXT NOT NULL,
    patient_ref  TEXT NOT NULL DEFAULT '',
    resource     TEXT NOT NULL DEFAULT '',
    records      INTEGER NOT NULL DEFAULT 0,
    outcome      TEXT NOT NULL,
    status       INTEGER NOT NULL,
    request_id   TEXT NOT NULL DEFAULT '',
    prev_hash    TEXT NOT NULL,
    hash         TEXT NOT NULL
);
CREATE INDEX audit_log_patient ON audit_log (patient_ref, seq);
CREATE INDEX audit_log_key ON audit_log (key_id, seq);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
