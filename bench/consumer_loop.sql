-- a consumer that completes each job and claims the next in one call and one commit
-- (awa.complete_and_claim), up to 20 jobs per call
CALL bench.consume_loop(1, 20);
