#!/usr/bin/env node
// An awa_bgw producer with node-postgres (npm install in examples/node). What it shows:
//
// - The outbox pattern: each order is one application transaction,
//       BEGIN; INSERT INTO app_orders ...; SELECT awa.enqueue(...); COMMIT;
//   so the job exists if and only if the order does. An enqueue takes no lock, so open
//   application transactions never wait on each other or on the workers.
// - A rolled-back transaction leaves no job: every --rollback-every'th order is rolled
//   back after its enqueue, and its job id is never claimable nor found by awa.job.
// - Jobs for the workers' demo handler: every --slow-every'th job sleeps --slow-seconds
//   (heartbeats keep it alive), every --flaky-every'th fails its first attempt.
//
// Connection: the libpq environment (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD), to
// PostgreSQL or a PgBouncer; AWA_QUEUE (orders). Prints one JSON line: the job ids
// committed, rolled back, slow and flaky.
//
//     node examples/node/producer.js 300 --rollback-every 10
'use strict';
const { Client } = require('pg');

const QUEUE = process.env.AWA_QUEUE || 'orders';

function options(argv) {
  const opts = { count: 0, rollbackEvery: 0, slowEvery: 0, slowSeconds: 5, flakyEvery: 0, customer: 'node' };
  const names = {
    '--rollback-every': 'rollbackEvery', '--slow-every': 'slowEvery',
    '--slow-seconds': 'slowSeconds', '--flaky-every': 'flakyEvery', '--customer': 'customer',
  };
  for (let i = 0; i < argv.length; i++) {
    if (names[argv[i]]) opts[names[argv[i]]] = argv[++i];
    else opts.count = argv[i];
  }
  for (const k of ['count', 'rollbackEvery', 'slowEvery', 'slowSeconds', 'flakyEvery']) {
    opts[k] = Number(opts[k]);
    if (!Number.isFinite(opts[k])) throw new Error(`usage: producer.js COUNT [--rollback-every N] [--slow-every N] [--slow-seconds S] [--flaky-every N] [--customer NAME]`);
  }
  return opts;
}

const every = (n, i) => n > 0 && i % n === n - 1;

async function main() {
  const opts = options(process.argv.slice(2));
  const out = { committed: [], rolled_back: [], slow: [], flaky: [] };
  const client = new Client(); // settings from PGHOST, PGPORT, PGDATABASE, PGUSER, ...
  await client.connect();
  for (let i = 0; i < opts.count; i++) {
    const args = {};
    if (every(opts.slowEvery, i)) args.sleep_s = opts.slowSeconds;
    if (every(opts.flakyEvery, i)) args.fail_first = true;
    const rollback = every(opts.rollbackEvery, i);
    let jobId;
    await client.query('BEGIN');
    try {
      const { rows: [order] } = await client.query(
        'INSERT INTO app_orders (customer) VALUES ($1) RETURNING order_id', [`${opts.customer}-${i}`]);
      args.order_id = Number(order.order_id); // bigint arrives as a string
      const { rows: [job] } = await client.query(
        "SELECT awa.enqueue($1, 'send_receipt', $2) AS job_id", [QUEUE, JSON.stringify(args)]);
      jobId = Number(job.job_id);
      // the application changes its mind: the order and its job go together
      await client.query(rollback ? 'ROLLBACK' : 'COMMIT');
    } catch (e) {
      await client.query('ROLLBACK');
      throw e;
    }
    if (rollback) {
      out.rolled_back.push(jobId);
      continue;
    }
    out.committed.push(jobId);
    if (args.sleep_s) out.slow.push(jobId);
    if (args.fail_first) out.flaky.push(jobId);
  }
  await client.end();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e.stack || e);
  process.exit(1);
});
