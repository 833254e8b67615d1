-- kwatch's recording schema, version 1 (PostgreSQL). docs/user-guide.md, "Recording into
-- a database", shows queries over it. Applied by `kwatch --record postgres://…` under an
-- advisory lock, so that writers starting together apply it once.

-- One row per run of kwatch that recorded here: the writer of its records.
CREATE TABLE kwatch_runs (
    writer   text PRIMARY KEY,          -- the run's id (a UUID), on each of its records
    started  timestamptz NOT NULL,
    host     text NOT NULL,             -- the machine it ran on
    contexts text NOT NULL,             -- the kubeconfig contexts it watched, comma-separated
    kwatch   text NOT NULL              -- kwatch's version
);

-- One row per record: what `--record FILE` writes as a JSON line.
CREATE TABLE kwatch_records (
    writer           text NOT NULL,     -- kwatch_runs.writer
    seq              bigint NOT NULL,   -- the record's number in its run, from 1
    time             timestamptz NOT NULL,
    context          text NOT NULL,     -- the kubeconfig context it came from
    resource         text,              -- pods, deployments.apps, …
    namespace        text,              -- NULL for cluster-scoped objects and non-object records
    name             text,              -- NULL for records about no object (List, Watch, …)
    key              text,              -- namespace/name, or name; NULL as name is
    type             text NOT NULL,     -- Added, Updated, Deleted, Replaced, Sync, List, Relisted, …
    resource_version text,
    -- The record's JSON line, its `object` member cut out (in `object`, below): replay
    -- reads it back with the file's parser, byte for byte.
    record           text NOT NULL,
    -- The object as the server sent it; `json` keeps its exact text (jsonb would reorder).
    object           json,
    -- A record's identity: a batch written twice (a retry after a lost answer, a
    -- backlog written again after a crash) adds nothing the second time.
    PRIMARY KEY (writer, seq)
);

-- An object's history, and every object's last record at a time (`replay --at`).
CREATE INDEX kwatch_records_object ON kwatch_records (context, resource, key, time, writer, seq)
    WHERE key IS NOT NULL;
-- A context's records in a time range.
CREATE INDEX kwatch_records_context_time ON kwatch_records (context, time);
-- Every record in a time range, of any context.
CREATE INDEX kwatch_records_time ON kwatch_records (time);
-- Every record of a type: each relist (`List` with a reason other than initial, and its
-- `Relisted`), each tombstone (`Deleted`).
CREATE INDEX kwatch_records_type ON kwatch_records (type, time);

-- Every object ever recorded, once: the keys `replay --at` looks up in kwatch_records_object
-- (one index descent per object, not a scan of every row).
CREATE TABLE kwatch_objects (
    context  text NOT NULL,
    resource text NOT NULL,
    key      text NOT NULL,
    PRIMARY KEY (context, resource, key)
);
