-- The v1 family (issue 6): the patient envelope registry and stored
-- prescription validations. Portable SQL: runs on SQLite and PostgreSQL.
-- Times are Unix microseconds (UTC).

-- Patient envelopes exactly as received: still encrypted, never the
-- plaintext. A PUT replaces the row; a DELETE removes it.
CREATE TABLE v1_patients (
    patient_id     TEXT PRIMARY KEY,
    encrypted_data TEXT NOT NULL,
    ipfs_cid       TEXT NOT NULL,
    data_hash      TEXT NOT NULL,
    updated_at     BIGINT NOT NULL
);

-- Prescription validations, readable by id. result is the JSON result as
-- returned; owner is the API key owner allowed to read it ('' for anyone).
CREATE TABLE v1_prescriptions (
    id         TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    patient_id TEXT NOT NULL,
    status     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    result     TEXT NOT NULL
);
CREATE INDEX v1_prescriptions_patient ON v1_prescriptions (patient_id, created_at);
