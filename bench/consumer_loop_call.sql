-- a consumer's loop as one CALL and one commit per job (bench.consume_next, the shape
-- of the baseline's CALL bench.skip_consume(1)): complete the job this client holds
-- (:j, :l, kept by pgbench from its last call; 0 at first, pgbench -D j=0 -D l=0) and
-- claim the next. A client left holding a job at the end of the run leaves it running
-- (the cell counts completions)
CALL bench.consume_next(:j, :l) \gset
