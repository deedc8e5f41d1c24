SELECT bench.skip_produce(1);
