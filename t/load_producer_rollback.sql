-- t/004_load.pl: a producer whose transaction enqueues, works a little and rolls back
BEGIN;
SELECT bench.produce(1);
SELECT pg_sleep(0.002);
ROLLBACK;
