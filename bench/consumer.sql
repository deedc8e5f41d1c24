CALL bench.consume(1);
