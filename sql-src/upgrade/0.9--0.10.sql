-- 0.9 -> 0.10: the rows of a database being upgraded are this cluster's (docs/storage.md
-- §A.17): its mark is recorded.
INSERT INTO awa.xid_space (system_identifier)
SELECT s.system_identifier FROM pg_control_system() s;
