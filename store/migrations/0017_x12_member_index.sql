-- The X12 270 route (issue 29) finds a registered patient from what a 270
-- names: payer, member id, and name or birth date. Nothing of these is
-- stored in clear: each key is the hex HMAC-SHA256, under a key derived
-- from the deployment's pseudonym key, of the owner and the key's text
-- (payer, member id, and the folded name or the birth date); owners'
-- rows for the same member never share a lookup value.
--
-- patient_ref is the patient's pseudonym (v1_patients.patient_id) and
-- data_hash the data_hash of the envelope the key was read from: a lookup
-- joins v1_patients on both, so a key of a replaced or deleted envelope
-- finds nothing. patient holds the patient id sealed with the keyring
-- ("sealed:<token>"), which the decision needs. kind is 'name' or 'birth'.
-- Patients registered before this migration have no keys until their next
-- PUT (docs/x12.md).
CREATE TABLE v1_member_keys (
    owner       TEXT NOT NULL,
    lookup      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    patient_ref TEXT NOT NULL,
    data_hash   TEXT NOT NULL,
    patient     TEXT NOT NULL,
    CONSTRAINT v1_member_keys_pkey PRIMARY KEY (owner, lookup, patient_ref)
);
CREATE INDEX v1_member_keys_patient ON v1_member_keys (owner, patient_ref);

-- The control numbers of the X12 answers (ISA13, GS06): one counter that
-- every replica draws from, 1 to 999999999 and round again.
CREATE TABLE x12_controls (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO x12_controls (name, value) VALUES ('interchange', 0);
