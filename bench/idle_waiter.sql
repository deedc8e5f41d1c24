-- idle cell: a claimer waiting for a queue no one enqueues into, :idle_wait seconds at
-- a time (pgbench -D idle_wait=...)
SELECT count(*) FROM awa.claim('idle', 1, wait => make_interval(secs => :idle_wait));
