-- A new install records this cluster's mark, unless it runs inside a restore: pg_dump's
-- output (every format, and pg_dumpall's) turns row_security off before anything else,
-- which an application's session leaves on (CREATE EXTENSION itself turns
-- check_function_bodies off for every script, so that setting tells nothing). A
-- restore's CREATE EXTENSION thus leaves the database without a mark ('fresh'), its
-- data makes it 'unmarked', and the source's mark, when it is loaded, 'moved'
-- (docs/storage.md §A.17).
INSERT INTO awa.xid_space (system_identifier)
SELECT s.system_identifier FROM pg_control_system() s
 WHERE current_setting('row_security')::boolean;
