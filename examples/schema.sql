-- The application tables of the examples (examples/README.md). A producer writes an
-- order and enqueues its job in one transaction (the outbox pattern: both commit or
-- neither); a worker writes a receipt for each job it completes, in the transaction
-- that completes it, so that there is one receipt per completed job. Run once, in the
-- database that has the extension:  psql -f examples/schema.sql
CREATE TABLE IF NOT EXISTS app_orders (
    order_id   bigserial PRIMARY KEY,
    customer   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS app_receipts (
    job_id   bigint NOT NULL,      -- no unique key on purpose: t/033_clients.pl counts
    order_id bigint NOT NULL,      -- duplicates instead of having them refused
    attempt  int NOT NULL,
    worker   text NOT NULL,
    sent_at  timestamptz NOT NULL DEFAULT now()
);
