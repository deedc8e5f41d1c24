SELECT awa.enqueue('pinned', 'job', jsonb_build_object('d', repeat('x', 200)));
