#!/usr/bin/env node
// An awa_bgw worker with node-postgres (npm install in examples/node: "pg": "^8").
// What it shows:
//
// - Waiting claims: awa.claim(queue, n, deadline, wait => ...) sleeps in the server until
//   a job of the queue commits, or AWA_WAIT passes; no polling, no LISTEN.
// - Heartbeats: while the jobs of a claim are worked on, a timer sends awa.heartbeat
//   for every one of them every AWA_HEARTBEAT seconds (one statement for all), so a long
//   job is not rescued (awa_bgw.job_heartbeat_timeout) while it runs. The timer fires
//   while a handler awaits; CPU-bound work would block it: run that in a worker thread.
// - Batched completions: the jobs of one claim that succeeded are completed by one
//   statement that calls awa.complete_batch and writes the application's receipts of
//   exactly the jobs it completed: both commit or neither (an attempt rescued meanwhile
//   is not completed and gets no receipt; its retry writes one).
// - Retries: a handler that throws fails its attempt with awa.fail and the error
//   message; the job is retried with backoff until max_attempts.
// - Graceful shutdown: SIGTERM (or SIGINT) stops claiming; the jobs already claimed are
//   finished and completed, then the worker exits 0. A claim waiting at that moment ends
//   within AWA_WAIT. Held jobs are not handed back with awa.fail(..., retry_in => '0 s'):
//   awa_bgw has no un-claim, and that would spend an attempt (and fail a job on its last).
//
// One connection, outside any transaction block: every statement is a transaction of its
// own, so a claim may wait, and a pooler in transaction mode lends a server connection
// per statement. The heartbeat timer shares it (node-postgres queues the statements of a
// client); it has work only while handlers run, never during a claim. Connection
// settings: the libpq environment (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD), which
// node-postgres reads too, to PostgreSQL or a PgBouncer. node-postgres prepares a named
// statement only for a query given a `name`; these have none (each is parsed as the
// unnamed statement), which works through PgBouncer in transaction mode at any version.
// Other settings: AWA_QUEUE (orders), AWA_BATCH (10), AWA_WAIT (10 s), AWA_HEARTBEAT (5),
// AWA_WORKER (a name for the receipts). Tables: examples/schema.sql. bigint columns
// arrive as strings and go back as they came.
'use strict';
const { Client } = require('pg');

const QUEUE = process.env.AWA_QUEUE || 'orders';
const BATCH = Number(process.env.AWA_BATCH || 10);
const WAIT = process.env.AWA_WAIT || '10 s';
const HEARTBEAT_MS = 1000 * Number(process.env.AWA_HEARTBEAT || 5);
const NAME = process.env.AWA_WORKER || `node-${process.pid}`;
const DEADLINE = '1 hour'; // the longest one attempt may run, heartbeats or not

let stopping = false;
const held = new Map(); // job_id -> job, for every attempt the worker holds

// The application's work for one job; throw to fail the attempt.
async function handle(job) {
  const args = job.args;
  if (args.sleep_s) await new Promise((resolve) => setTimeout(resolve, 1000 * args.sleep_s));
  if (args.fail_first && job.attempt === 1) {
    throw new Error(`order ${args.order_id}: payment service timed out`);
  }
}

// Heartbeats every attempt the worker holds, every AWA_HEARTBEAT seconds.
function startHeartbeats(conn) {
  let busy = false;
  return setInterval(async () => {
    if (busy || held.size === 0) return; // the previous round is still going, or nothing held
    busy = true;
    const jobs = [...held.values()];
    try { // the attempts no longer ours: rescued or cancelled; complete_batch skips them
      const { rows } = await conn.query(
        `SELECT h.job_id FROM unnest($1::bigint[], $2::bigint[]) AS h(job_id, run_lease)
          WHERE NOT awa.heartbeat(h.job_id, h.run_lease, $3)`,
        [jobs.map((j) => j.job_id), jobs.map((j) => j.run_lease), JSON.stringify({ worker: NAME })]);
      const lost = rows.map((r) => r.job_id).filter((id) => held.has(id)); // (not if finished meanwhile)
      if (lost.length > 0) console.error(`${NAME}: jobs ${lost}: the attempts are no longer ours`);
    } catch (e) { // the next round tries again
      console.error(`${NAME}: heartbeat: ${e.message}`);
    }
    busy = false;
  }, HEARTBEAT_MS);
}

// One awa.complete_batch for the jobs, and a receipt for each job it completed.
async function complete(conn, jobs) {
  if (jobs.length === 0) return 0;
  const { rows } = await conn.query(
    `WITH done AS MATERIALIZED (
         SELECT job_id FROM awa.complete_batch($1::bigint[], $2::bigint[]))
     INSERT INTO app_receipts (job_id, order_id, attempt, worker)
     SELECT r.job_id, r.order_id, r.attempt, $5
       FROM unnest($1::bigint[], $3::bigint[], $4::int[]) AS r(job_id, order_id, attempt)
       JOIN done USING (job_id)
     RETURNING job_id`,
    [jobs.map((j) => j.job_id), jobs.map((j) => j.run_lease), jobs.map((j) => j.args.order_id),
      jobs.map((j) => j.attempt), NAME]);
  return rows.length;
}

async function main() {
  const conn = new Client(); // settings from PGHOST, PGPORT, PGDATABASE, PGUSER, ...
  await conn.connect();
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => { stopping = true; });
  const timer = startHeartbeats(conn);
  let completed = 0;
  let failed = 0;
  while (!stopping) {
    const { rows: jobs } = await conn.query(
      `SELECT job_id, run_lease, kind, args, attempt
         FROM awa.claim($1, $2, $3::interval, wait => $4::interval)`,
      [QUEUE, BATCH, DEADLINE, WAIT]);
    for (const job of jobs) held.set(job.job_id, job);
    const succeeded = [];
    for (const job of jobs) { // every job claimed is finished, SIGTERM or not
      try {
        await handle(job);
        succeeded.push(job);
      } catch (e) {
        await conn.query('SELECT awa.fail($1, $2, $3)', [job.job_id, job.run_lease, String(e.message)]);
        held.delete(job.job_id);
        failed += 1;
      }
    }
    completed += await complete(conn, succeeded);
    for (const job of succeeded) held.delete(job.job_id);
  }
  clearInterval(timer);
  await conn.end();
  console.log(`${NAME}: stopped; ${completed} completed, ${failed} failed attempts`);
}

main().then(() => process.exit(0), (e) => {
  console.error(`${NAME}: ${e.stack || e}`);
  process.exit(1);
});
