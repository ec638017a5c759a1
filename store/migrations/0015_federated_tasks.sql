-- Several federated tasks side by side (package federated, Tasks). Every
-- coordinator table is scoped by its task; task '' is the default task
-- (the first FEDERATED_TASK file, or the built-in diagnosis task), so the
-- rows of a database from before this migration stay the default task's
-- and an upgraded DATA_DIR resumes where it stopped. Portable SQL: runs on
-- SQLite and PostgreSQL (tables are rebuilt, as SQLite cannot change a
-- primary key in place). Times are Unix microseconds (UTC).

CREATE TABLE federated_rounds_by_task (
    task       TEXT NOT NULL,
    number     BIGINT NOT NULL,
    phase      TEXT NOT NULL,
    state      TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (task, number)
);
INSERT INTO federated_rounds_by_task (task, number, phase, state, updated_at)
    SELECT '', number, phase, state, updated_at FROM federated_rounds;
DROP TABLE federated_rounds;
ALTER TABLE federated_rounds_by_task RENAME TO federated_rounds;

CREATE TABLE federated_submissions_by_task (
    task       TEXT NOT NULL,
    round      BIGINT NOT NULL,
    seq        BIGINT NOT NULL,
    org        TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (task, round, seq)
);
INSERT INTO federated_submissions_by_task (task, round, seq, org, body, created_at)
    SELECT '', round, seq, org, body, created_at FROM federated_submissions;
DROP TABLE federated_submissions;
ALTER TABLE federated_submissions_by_task RENAME TO federated_submissions;

CREATE TABLE federated_models_by_task (
    task       TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    version    TEXT NOT NULL,
    round      BIGINT NOT NULL,
    hash       TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (task, seq),
    UNIQUE (task, version)
);
INSERT INTO federated_models_by_task (task, seq, version, round, hash, body, created_at)
    SELECT '', seq, version, round, hash, body, created_at FROM federated_models;
DROP TABLE federated_models;
ALTER TABLE federated_models_by_task RENAME TO federated_models;

CREATE TABLE federated_ledger_by_task (
    task       TEXT PRIMARY KEY,
    body       TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
INSERT INTO federated_ledger_by_task (task, body, updated_at)
    SELECT '', body, updated_at FROM federated_ledger;
DROP TABLE federated_ledger;
ALTER TABLE federated_ledger_by_task RENAME TO federated_ledger;

-- Tasks admins created over the API (POST /api/v1/federated/tasks): the
-- task file (JSON of federated.TaskFile) and its run's settings (JSON of
-- federated.RunSettings), reopened at every start. Tasks named by
-- FEDERATED_TASK are configuration and are not kept here.
CREATE TABLE federated_tasks (
    id         TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    settings   TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
