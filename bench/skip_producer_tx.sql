BEGIN;
INSERT INTO bench.skip_jobs (queue, args) VALUES ('bench_tx', '{"n": 1}');
SELECT pg_sleep(0.01);
COMMIT;
