SELECT bench.produce(1);
