-- Per-queue policy (0.9): who may use a queue, and whether its claims are paused. Two
-- small plain tables (not ring families: a row per grant or pause, written by hand by
-- an administrator, never on the hot path). The hot paths read them through a
-- per-backend cache (src/dataplane/queuepolicy.c) that every change invalidates at commit.

-- Per-queue grants: a queue with no row here is open to every role with EXECUTE on the
-- API; once it has one, only superusers, roles with the privileges of the extension's
-- owner, and the grantees (and the roles that have their privileges) may use it.
-- privileges is a bit set: 1 enqueue, 2 claim, 4 manage.
CREATE TABLE awa.queue_privileges (
    queue text NOT NULL CHECK (length(queue) BETWEEN 1 AND 200),
    grantee oid NOT NULL,
    privileges smallint NOT NULL CHECK (privileges BETWEEN 1 AND 7),
    granted_by oid NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, grantee)
);

-- Paused queues: their claims take nothing until resumed; enqueues go on.
CREATE TABLE awa.queue_pauses (
    queue text PRIMARY KEY CHECK (length(queue) BETWEEN 1 AND 200),
    paused_at timestamptz NOT NULL DEFAULT now(),
    paused_by oid NOT NULL
);

-- Pauses name queues only and survive pg_dump; grants name roles by OID, which a
-- restore into another cluster would give to other roles: they are not dumped (re-run
-- awa.grant_queue after a restore, docs/operations.md).
SELECT pg_catalog.pg_extension_config_dump('awa.queue_pauses', '');
