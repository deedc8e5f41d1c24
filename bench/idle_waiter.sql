-- idle cell: a claimer waiting for a queue no one enqueues into
SELECT count(*) FROM awa.claim('idle', 1, wait => '10 s');
