-- The fleet: every process that runs maintenance registers here with a heartbeat and
-- its binary_version (NULL = a pre-0.7 process that does not know the ledger; the
-- column comes last because 0.6 -> 0.7 adds it).

CREATE TABLE awa.runtime_instances (
    instance_id uuid PRIMARY KEY,
    name text NOT NULL,
    version text,
    pid int,
    started_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    binary_version text
);
