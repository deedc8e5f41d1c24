SELECT pgq.insert_event('pinned', 'job', repeat('x', 200));
