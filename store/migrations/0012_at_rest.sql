-- Nothing identifying at rest without a key (issue 19): v1_patients and
-- v1_prescriptions keep a patient's keyed pseudonym in patient_id (hex
-- HMAC-SHA256 of the id under the deployment's pseudonym key, the audit
-- log's patient_ref), never the id, and a stored validation's result is
-- sealed with the Fernet keyring ("sealed:<token>"), so the file alone
-- links no patient to a drug or a day.
--
-- SQL cannot compute a keyed hash, so this migration only marks the rows
-- written before it (at_rest = 0); store.ProtectAtRest, run by the service
-- at every start before it serves, rewrites each of them (pseudonym, sealed
-- result) and sets at_rest = 1. New rows are written with at_rest = 1, and
-- reads look only at those (docs/decisions/at-rest.md).
ALTER TABLE v1_patients ADD COLUMN at_rest INTEGER NOT NULL DEFAULT 0;
ALTER TABLE v1_prescriptions ADD COLUMN at_rest INTEGER NOT NULL DEFAULT 0;
