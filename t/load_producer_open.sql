-- t/004_load.pl: a producer whose transaction stays open a little after its enqueue
BEGIN;
SELECT bench.produce(1);
SELECT pg_sleep(0.005);
COMMIT;
