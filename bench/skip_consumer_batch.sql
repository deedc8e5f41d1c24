CALL bench.skip_consume(32);
