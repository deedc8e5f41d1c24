#!/usr/bin/python3
"""An awa_bgw producer with psycopg 3 (Debian: python3-psycopg). What it shows:

- The outbox pattern: each order is one application transaction,
      BEGIN; INSERT INTO app_orders ...; SELECT awa.enqueue(...); COMMIT;
  so the job exists if and only if the order does. An enqueue takes no lock, so open
  application transactions never wait on each other or on the workers.
- A rolled-back transaction leaves no job: every --rollback-every'th order raises
  psycopg.Rollback after its enqueue, and its job id is never claimable nor found by
  awa.job.
- Jobs for the worker's demo handler (examples/python/worker.py, examples/node/worker.js):
  every --slow-every'th job sleeps --slow-seconds (heartbeats keep it alive), every
  --flaky-every'th fails its first attempt (retried through awa.fail).

Connection: the libpq environment (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD), to
PostgreSQL or a PgBouncer; AWA_QUEUE (orders), AWA_PREPARE_THRESHOLD as for the worker.
Prints one JSON line: the job ids committed, rolled back, slow and flaky.

    /usr/bin/python3 examples/python/producer.py 300 --rollback-every 10
"""
import argparse
import json
import os

import psycopg
from psycopg.types.json import Jsonb

QUEUE = os.environ.get("AWA_QUEUE", "orders")
THRESHOLD = os.environ.get("AWA_PREPARE_THRESHOLD", "5")


def every(n, i):
    return n > 0 and i % n == n - 1


def main():
    p = argparse.ArgumentParser(description="enqueue one job per order, in the order's transaction")
    p.add_argument("count", type=int)
    p.add_argument("--rollback-every", type=int, default=0)
    p.add_argument("--slow-every", type=int, default=0)
    p.add_argument("--slow-seconds", type=float, default=5)
    p.add_argument("--flaky-every", type=int, default=0)
    p.add_argument("--customer", default="py")
    opts = p.parse_args()
    out = {"committed": [], "rolled_back": [], "slow": [], "flaky": []}
    with psycopg.connect("", autocommit=True) as conn:
        conn.prepare_threshold = None if THRESHOLD.lower() == "none" else int(THRESHOLD)
        for i in range(opts.count):
            args = {}
            if every(opts.slow_every, i):
                args["sleep_s"] = opts.slow_seconds
            if every(opts.flaky_every, i):
                args["fail_first"] = True
            rollback = every(opts.rollback_every, i)
            with conn.transaction():  # BEGIN ... COMMIT (ROLLBACK on an exception)
                order_id = conn.execute(
                    "INSERT INTO app_orders (customer) VALUES (%s) RETURNING order_id",
                    (f"{opts.customer}-{i}",)).fetchone()[0]
                args["order_id"] = order_id
                job_id = conn.execute("SELECT awa.enqueue(%s, 'send_receipt', %s)",
                                      (QUEUE, Jsonb(args))).fetchone()[0]
                if rollback:  # the application changes its mind: order and job go
                    raise psycopg.Rollback()
            if rollback:
                out["rolled_back"].append(job_id)
                continue
            out["committed"].append(job_id)
            if "sleep_s" in args:
                out["slow"].append(job_id)
            if "fail_first" in args:
                out["flaky"].append(job_id)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
