-- Several replicas on one database (issue 19).
--
-- chain_nonces: the next nonce of each signing account, per chain, for
-- replicas that sign with the same key (store.NonceStore, a
-- chain.NonceSource). A row is read and advanced under a lock every
-- replica takes (PostgreSQL advisory lock, SQLite's write lock), around the
-- sending of the transaction. next = 0 means "ask the node".
CREATE TABLE chain_nonces (
    chain_id BIGINT NOT NULL,
    account  TEXT NOT NULL,
    next     BIGINT NOT NULL,
    PRIMARY KEY (chain_id, account)
);

-- leader_leases: who runs a singleton job (the federated coordinator of a
-- task) among replicas (store.LeaseStore). holder is a random id per
-- process; the lease is theirs until expires_at (Unix microseconds), and is
-- renewed well before. A replica takes an expired lease over: a dead
-- leader's job moves on within one lease.
CREATE TABLE leader_leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    epoch      BIGINT NOT NULL
);
