#!/usr/bin/python3
"""An awa_bgw worker with psycopg 3 (Debian: python3-psycopg). What it shows:

- Waiting claims: awa.claim(queue, n, deadline, wait => ...) sleeps in the server until
  a job of the queue commits, or AWA_WAIT passes; no polling, no LISTEN.
- Heartbeats: while the jobs of a claim are worked on, a thread sends awa.heartbeat for
  every one of them every AWA_HEARTBEAT seconds (one statement for all), so a long job
  is not rescued (awa_bgw.job_heartbeat_timeout) while it runs.
- Batched completions: the jobs of one claim that succeeded are completed by one
  statement that calls awa.complete_batch and writes the application's receipts of
  exactly the jobs it completed: both commit or neither (an attempt rescued meanwhile
  is not completed and gets no receipt; its retry writes one).
- Retries: a handler that raises fails its attempt with awa.fail and the error text;
  the job is retried with backoff until max_attempts.
- Graceful shutdown: SIGTERM (or SIGINT) stops claiming; the jobs already claimed are
  finished and completed, then the worker exits 0. A claim waiting at that moment ends
  within AWA_WAIT. Held jobs are not handed back with awa.fail(..., retry_in => '0 s'):
  awa_bgw has no un-claim, and that would spend an attempt (and fail a job on its last).

One connection, in autocommit: every statement is a transaction of its own, so a claim
may wait, and a pooler in transaction mode lends a server connection per statement.
The heartbeat thread shares it (psycopg runs one statement at a time); it has work only
while the main thread runs handlers, never during a claim. Connection settings: the
libpq environment (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD), to PostgreSQL or a
PgBouncer. Prepared statements stay on (psycopg prepares a statement on its 5th
execution); AWA_PREPARE_THRESHOLD=none turns them off, as PgBouncer in transaction mode
needs unless it is 1.22 or later with max_prepared_statements set (with psycopg 3.2 and
libpq 17: psycopg's documentation), e.g. Debian 12's 1.18. Other settings: AWA_QUEUE
(orders), AWA_BATCH (10), AWA_WAIT (10 s), AWA_HEARTBEAT (5), AWA_WORKER (a name for the
receipts). Tables: examples/schema.sql.
"""
import os
import signal
import sys
import threading
import time

import psycopg
from psycopg.rows import namedtuple_row
from psycopg.types.json import Jsonb

QUEUE = os.environ.get("AWA_QUEUE", "orders")
BATCH = int(os.environ.get("AWA_BATCH", "10"))
WAIT = os.environ.get("AWA_WAIT", "10 s")
HEARTBEAT = float(os.environ.get("AWA_HEARTBEAT", "5"))
NAME = os.environ.get("AWA_WORKER", f"py-{os.getpid()}")
THRESHOLD = os.environ.get("AWA_PREPARE_THRESHOLD", "5")
DEADLINE = "1 hour"  # the longest one attempt may run, heartbeats or not

stopping = threading.Event()


def handle(job):
    """The application's work for one job; raise to fail the attempt."""
    args = job.args
    time.sleep(float(args.get("sleep_s", 0)))  # a long job: the heartbeats keep it alive
    if args.get("fail_first") and job.attempt == 1:
        raise RuntimeError(f"order {args['order_id']}: payment service timed out")


class Heartbeats(threading.Thread):
    """Heartbeats the attempts the worker holds, every HEARTBEAT seconds."""

    def __init__(self, conn):
        super().__init__(daemon=True)
        self.conn, self.held, self.lock = conn, {}, threading.Lock()  # held: job_id -> job
        self.done = threading.Event()  # set once the worker holds nothing more

    def hold(self, jobs):
        with self.lock:
            self.held.update((j.job_id, j) for j in jobs)

    def drop(self, jobs):
        with self.lock:
            for j in jobs:
                self.held.pop(j.job_id, None)

    def run(self):
        while not self.done.wait(HEARTBEAT):
            with self.lock:
                held = list(self.held.values())
            if not held:
                continue
            try:  # the attempts no longer ours: rescued or cancelled; complete_batch skips them
                lost = self.conn.execute(
                    "SELECT h.job_id FROM unnest(%s::bigint[], %s::bigint[]) AS h(job_id, run_lease)"
                    " WHERE NOT awa.heartbeat(h.job_id, h.run_lease, %s)",
                    ([j.job_id for j in held], [j.run_lease for j in held],
                     Jsonb({"worker": NAME}))).fetchall()
            except psycopg.Error as e:  # the next beat tries again
                print(f"{NAME}: heartbeat: {e}", file=sys.stderr)
                continue
            with self.lock:  # (not those completed or failed meanwhile)
                lost = [r.job_id for r in lost if r.job_id in self.held]
            if lost:
                print(f"{NAME}: jobs {lost}: the attempts are no longer ours", file=sys.stderr)


def complete(conn, jobs):
    """One awa.complete_batch for the jobs, and a receipt for each job it completed."""
    if not jobs:
        return 0
    return len(conn.execute(
        "WITH done AS MATERIALIZED ("
        "    SELECT job_id FROM awa.complete_batch(%(ids)s::bigint[], %(leases)s::bigint[]))"
        " INSERT INTO app_receipts (job_id, order_id, attempt, worker)"
        " SELECT r.job_id, r.order_id, r.attempt, %(worker)s"
        "   FROM unnest(%(ids)s::bigint[], %(orders)s::bigint[], %(attempts)s::int[])"
        "        AS r(job_id, order_id, attempt) JOIN done USING (job_id)"
        " RETURNING job_id",
        {"ids": [j.job_id for j in jobs], "leases": [j.run_lease for j in jobs],
         "orders": [j.args["order_id"] for j in jobs], "attempts": [j.attempt for j in jobs],
         "worker": NAME}).fetchall())


def main():
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    completed = failed = 0
    # "": every setting from the environment
    with psycopg.connect("", autocommit=True, row_factory=namedtuple_row) as conn:
        conn.prepare_threshold = None if THRESHOLD.lower() == "none" else int(THRESHOLD)
        beats = Heartbeats(conn)
        beats.start()
        while not stopping.is_set():
            jobs = conn.execute(
                "SELECT job_id, run_lease, kind, args, attempt"
                "  FROM awa.claim(%s, %s, %s::interval, wait => %s::interval)",
                (QUEUE, BATCH, DEADLINE, WAIT)).fetchall()
            beats.hold(jobs)
            succeeded = []
            for job in jobs:  # every job claimed is finished, SIGTERM or not
                try:
                    handle(job)
                    succeeded.append(job)
                except Exception as e:
                    conn.execute("SELECT awa.fail(%s, %s, %s)", (job.job_id, job.run_lease, str(e)))
                    beats.drop([job])
                    failed += 1
            completed += complete(conn, succeeded)
            beats.drop(succeeded)
        beats.done.set()
        beats.join()
    print(f"{NAME}: stopped; {completed} completed, {failed} failed attempts", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
