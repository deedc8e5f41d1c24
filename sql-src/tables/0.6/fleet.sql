-- 0.6: the fleet registers with a heartbeat; it has no binary_version (0.7 adds it).

CREATE TABLE awa.runtime_instances (
    instance_id uuid PRIMARY KEY,
    name text NOT NULL,
    version text,
    pid int,
    started_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now()
);
