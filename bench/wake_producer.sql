-- wake cell: one enqueue in its own transaction; the time before its commit (in the
-- transaction) and after it (the next statement) are recorded
SELECT awa.enqueue('wake', 'k') AS job_id,
       extract(epoch FROM clock_timestamp()) AS before_commit \gset
INSERT INTO bench.wake_sent VALUES (:job_id, to_timestamp(:before_commit), clock_timestamp());
