BEGIN;
SELECT awa.enqueue('bench_tx', 'k', '{"n": 1}');
SELECT pg_sleep(0.01);
COMMIT;
