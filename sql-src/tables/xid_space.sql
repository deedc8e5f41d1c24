-- 0.10: the mark of the xid space the database's rows belong to (docs/storage.md
-- §A.17). The windows compare transaction ids, which mean something only in the cluster
-- that assigned them; a move that does not keep the cluster's xid counter (a restore
-- into another cluster) brings rows of another space. One row per cluster whose rows
-- the database holds, named by its system identifier; dumped whole, so that a dump
-- carries the mark of its source.
CREATE TABLE awa.xid_space (
    system_identifier bigint PRIMARY KEY,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    recorded_xid xid8 NOT NULL DEFAULT pg_current_xact_id()
);
SELECT pg_catalog.pg_extension_config_dump('awa.xid_space', '');
