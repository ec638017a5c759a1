-- The v1 patient registry is scoped to its owner (issue 6, security fix):
-- the same owner string as v1_prescriptions.owner ("org:<organization>",
-- else "key:<rotation chain>"; '' for in-process callers without a key).
-- A patient_id names a record only within its owner: (owner, patient_id)
-- is the key, so one organization can neither read, replace nor delete
-- another's record, and learns nothing about which ids others use.
--
-- Existing rows were stored without an owner and cannot be attributed
-- (the audit log holds keyed hashes only), so they get owner '': they stay
-- intact and readable by in-process callers that pass no owner, but no API
-- key reaches them. Their owner re-registers them with PUT; an operator
-- removes the leftovers (docs/decisions/v1.md, "Registry").
--
-- SQLite cannot change a primary key in place: the table is rebuilt. The
-- whole migration runs in one transaction.
CREATE TABLE v1_patients_owned (
    owner          TEXT NOT NULL,
    patient_id     TEXT NOT NULL,
    encrypted_data TEXT NOT NULL,
    ipfs_cid       TEXT NOT NULL,
    data_hash      TEXT NOT NULL,
    updated_at     BIGINT NOT NULL,
    CONSTRAINT v1_patients_owner_pkey PRIMARY KEY (owner, patient_id)
);
INSERT INTO v1_patients_owned (owner, patient_id, encrypted_data, ipfs_cid, data_hash, updated_at)
    SELECT '', patient_id, encrypted_data, ipfs_cid, data_hash, updated_at FROM v1_patients;
DROP TABLE v1_patients;
ALTER TABLE v1_patients_owned RENAME TO v1_patients;
