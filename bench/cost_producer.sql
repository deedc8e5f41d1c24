-- cost cell: one enqueue of a 100-byte payload (the args' JSON text), pgbench -R
SELECT awa.enqueue('bench', 'noop', '{"p": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}');
