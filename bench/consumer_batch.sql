CALL bench.consume(32);
