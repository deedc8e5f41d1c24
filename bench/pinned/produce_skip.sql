INSERT INTO q_skip.jobs (queue, payload) VALUES ('default', repeat('x', 200));
