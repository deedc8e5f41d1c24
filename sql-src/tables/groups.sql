-- 0.10: the key of a job's group (issue 34; docs/proposals/flow_control.md §5, §6.2), in
-- every table a job's body passes through. Run once, last of the tables, by a fresh
-- 0.10 install and by the 0.9 -> 0.10 upgrade alike (after upgrade/lock-tables.sql),
-- so that both end with the same catalog, columns in the same order.
--
-- A ready entry and a receipt keep the key as NOT NULL text, '' for a job of no group:
-- an empty text is one byte, where a NULL would give every row a null bitmap. The
-- default fills the rows already there (kept in the catalog: no rewrite) and is then
-- dropped, as windows.sql does for txid: every writer names the key, and one that
-- forgets it fails instead of filing a job in no group by accident. A scheduled or
-- failed job keeps its key in a nullable column, NULL for none.
ALTER TABLE awa.ready_entries ADD COLUMN group_key text NOT NULL DEFAULT '';
ALTER TABLE awa.ready_entries ALTER COLUMN group_key DROP DEFAULT;
ALTER TABLE awa.lease_claims ADD COLUMN group_key text NOT NULL DEFAULT '';
ALTER TABLE awa.lease_claims ALTER COLUMN group_key DROP DEFAULT;
ALTER TABLE awa.deferred_jobs ADD COLUMN group_key text;
ALTER TABLE awa.failed_jobs ADD COLUMN group_key text;
