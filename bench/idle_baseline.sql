-- idle cell's floor: a client that sleeps :idle_wait seconds, then runs one statement
-- (pgbench -D idle_wait=...); what any backend woken that often costs on this machine
\sleep :idle_wait s
SELECT 1;
