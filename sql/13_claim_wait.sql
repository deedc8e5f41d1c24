-- awa.claim(..., wait): bounds and the statements that may wait (docs/storage.md A.11).
-- A waiting claim gives its statement's snapshot back while it sleeps, so it must be
-- its statement's only reader, in READ COMMITTED, in a transaction without an xid and
-- without another snapshot; everything else is refused with 55000 before it waits.
\i sql/fresh.inc
SET statement_timeout = '20s';

-- wait NULL or 0: the plain claim; work there: returned at once, without sleeping
SELECT awa.enqueue('cw', 'k' || i) FROM generate_series(1, 3) i;
SELECT kind FROM awa.claim('cw', 1, wait => NULL);
SELECT kind FROM awa.claim('cw', 1, wait => '0');
SELECT kind, attempt, run_lease >= 2^62 AS token FROM awa.claim('cw', 5, wait => '1 min');
-- nothing there: returns nothing once wait has passed, and leaves no waiter behind
SELECT count(*) AS claimed FROM awa.claim('cw', 5, wait => '50 ms');
SELECT awa.claim('cw', 5, wait => '50 ms');
SELECT count(*) AS waiters FROM awa.claim_waiters();
-- the sleeping claim held no lock: nothing of this session but its own
SELECT count(*) AS locks_left FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype IN ('userlock', 'advisory');

-- bounds: 22023
SELECT sqlstate_of($$SELECT * FROM awa.claim('cw', 1, wait => '-1 s')$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('cw', 1, wait => '2 hours')$$);
-- not the statement's only reader: 55000
SELECT sqlstate_of($$SELECT * FROM awa.claim('cw', 1, wait => '10 ms') c, pg_class$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('cw', 1, wait => '10 ms')
                      WHERE EXISTS (SELECT 1 FROM pg_class)$$);
SELECT sqlstate_of($$SELECT count(*) FROM (SELECT awa.claim('cw', 5, wait => '10 ms')) c$$);
DO $$ BEGIN PERFORM * FROM awa.claim('cw', 1, wait => '10 ms'); END $$;
CREATE FUNCTION pg_temp.wrapped() RETURNS bigint LANGUAGE sql
AS $$ SELECT count(*) FROM awa.claim('cw', 1, wait => '10 ms') $$;
SELECT pg_temp.wrapped();
-- a transaction that has written: 55000
BEGIN;
SELECT awa.enqueue('cw', 'mine') > 0 AS enqueued;
SELECT * FROM awa.claim('cw', 1, wait => '10 ms');
ROLLBACK;
-- another snapshot held (an open cursor): 55000
BEGIN;
DECLARE c CURSOR FOR SELECT relname FROM pg_class;
SELECT * FROM awa.claim('cw', 1, wait => '10 ms');
ROLLBACK;
-- REPEATABLE READ: 0A000, as every queue function
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM awa.claim('cw', 1, wait => '10 ms');
ROLLBACK;
-- the same statement without wait is fine everywhere
SELECT count(*) AS claimed FROM awa.claim('cw', 1) c, pg_class WHERE false;
SELECT count(*) AS waiters FROM awa.claim_waiters();

-- an application role with the grant of the README waits; the internals stay closed
CREATE ROLE awa_test_waiter LOGIN;
GRANT USAGE ON SCHEMA awa TO awa_test_waiter;
GRANT EXECUTE ON FUNCTION awa.claim(text, int, interval, interval) TO awa_test_waiter;
SET ROLE awa_test_waiter;
SELECT count(*) AS claimed FROM awa.claim('cw', 1, wait => '20 ms');
SELECT sqlstate_of($$SELECT awa_internal.note_enqueued('cw', 1000, 1, 0)$$);
SELECT sqlstate_of($$SELECT awa_internal.lane_seen_empty(1, 0)$$);
SELECT sqlstate_of($$SELECT awa_internal.lane_look(1)$$);
SELECT sqlstate_of($$SELECT * FROM awa_internal.claim_now('cw', 1, NULL)$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim_waiters()$$);
RESET ROLE;
DROP OWNED BY awa_test_waiter;
DROP ROLE awa_test_waiter;
RESET statement_timeout;
