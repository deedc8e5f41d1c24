SELECT bench.skip_produce(32);
