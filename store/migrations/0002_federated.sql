-- Federated learning coordinator state (package federated). Portable SQL:
-- runs on SQLite and PostgreSQL. Times are Unix microseconds (UTC).
-- Nothing here is a plaintext update or a record: submissions hold public
-- keys, sealed shares, masked vectors and revealed shares only.

-- One row per round: the JSON of federated.RoundState, replaced at every
-- phase change (upsert by number).
CREATE TABLE federated_rounds (
    number     BIGINT PRIMARY KEY,
    phase      TEXT NOT NULL,
    state      TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Append-only log of accepted protocol messages (JSON of
-- federated.Submission), replayed when a coordinator restarts mid-round.
CREATE TABLE federated_submissions (
    round      BIGINT NOT NULL,
    seq        BIGINT NOT NULL,
    org        TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (round, seq)
);

-- Append-only model history (JSON of federated.ModelVersion).
CREATE TABLE federated_models (
    seq        BIGINT PRIMARY KEY,
    version    TEXT NOT NULL UNIQUE,
    round      BIGINT NOT NULL,
    hash       TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- The differential-privacy accountant's ledger (JSON of dp.Ledger); one row.
CREATE TABLE federated_ledger (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    body       TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
