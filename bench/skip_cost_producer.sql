-- cost cell, the baseline: one INSERT of the same 100-byte payload, pgbench -R
INSERT INTO bench.skip_jobs (queue, args) VALUES ('bench', '{"p": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}');
