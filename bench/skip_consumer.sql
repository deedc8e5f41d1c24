CALL bench.skip_consume(1);
