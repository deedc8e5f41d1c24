-- 0.6 -> 0.7, expand (additive). Before the shared 0.7 pieces run: the 0.6-only
-- objects go (the status view is rebuilt with the authority and ledger columns; the
-- columns-only cursor reader gives way to awa.ring_cursor), and runtime_instances gets
-- binary_version, which pre-0.7 runtimes leave NULL.

DROP VIEW awa.ring_status;
DROP FUNCTION awa.ring_cursor_columns(text);
ALTER TABLE awa.runtime_instances ADD COLUMN binary_version text;
