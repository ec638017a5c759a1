-- Followers forward the federated round protocol to the replica that
-- coordinates (REPLICA_URL): each lease keeps the address its holder
-- advertises, '' when it advertises none (the follower then answers 503).
-- Portable SQL: runs on SQLite and PostgreSQL.
ALTER TABLE leader_leases ADD COLUMN address TEXT NOT NULL DEFAULT '';
