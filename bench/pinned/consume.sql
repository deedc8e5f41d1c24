-- a polling consumer (every system: pinned.consume of its own schema file); an empty
-- call backs off :backoff ms in the client (pgbench -D backoff=...), holding nothing
CALL pinned.consume(0) \gset
\if :got = 0
\sleep :backoff ms
\endif
