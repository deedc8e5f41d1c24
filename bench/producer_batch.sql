SELECT bench.produce(32);
