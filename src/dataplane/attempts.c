/*-------------------------------------------------------------------------
 *
 * attempts.c
 *	  Failing an attempt and beating its heart in 0.9, in C (docs/storage.md
 *	  §A.13): awa.fail(job_id, run_lease, error, retry_in) and
 *	  awa.heartbeat(job_id, run_lease, progress); and (0.10)
 *	  awa.fail_and_claim, which fails as awa.fail, then claims as awa.claim
 *	  without wait, in one call (a consumer's loop of one commit per job, as
 *	  complete.c's complete_and_claim).
 *
 * What the PL/pgSQL functions of internal/attempts.sql do, step for step, with the
 * same checks, messages, SQLSTATEs and hints: READ COMMITTED; the argument
 * checks; the attempt's private lock; with a snapshot taken after it, the
 * attempt's open receipt (complete.c); then
 *	- fail: what awa.fail_attempt(receipt, 'failed', error, retry_in) does:
 *	  while attempts remain, a 'retried' closure and the next attempt
 *	  enqueued (deferred by retry_in or the backoff, through enqueue.c); on
 *	  the last one, a closure 'failed' with the state 'failed' and the
 *	  error (§A.15), and the job into awa.failed_jobs (SPI: a plain table
 *	  with its ON CONFLICT);
 *	- heartbeat: a row into the lease child of the current lease slot.
 * The worker's rescue keeps calling the SQL fail_attempt.
 *
 * src/dataplane/attempts.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "src/dataplane/checks.h"
#include "src/dataplane/complete.h"
#include "src/dataplane/enqueue.h"
#include "src/dataplane/heldargs.h"
#include "src/dataplane/probes.h"
#include "src/dataplane/queuepolicy.h"
#include "src/dataplane/wait.h"
#include "src/rel/relcache.h"

PG_FUNCTION_INFO_V1(awa_fail);
PG_FUNCTION_INFO_V1(awa_fail_and_claim);
PG_FUNCTION_INFO_V1(awa_heartbeat);

/* awa.retry_backoff(attempt): 2^attempt seconds, at most an hour */
static TimestampTz
retry_at(int32 attempt, Interval *retry_in)
{
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	int64		secs;

	if (retry_in != NULL)
		return DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
													   TimestampTzGetDatum(now),
													   IntervalPGetDatum(retry_in)));
	secs = Min((int64) 1 << Min(Max(attempt, 0), 12), 3600);
	return now + secs * USECS_PER_SEC;
}

/*
 * The args of r's attempt: the receipt's own when it has them (written
 * before 0.10), else the queue ring's (heldargs.c, docs/storage.md A.20),
 * its entry found by the claim-order key the receipt carries.
 */
static Datum
attempt_args(AwaReceipt *r)
{
	AwaEntryKey key;
	bool		has_key = !awa_receipt_col_is_null(r, "txid");

	if (!awa_receipt_col_is_null(r, "args"))
		return awa_receipt_col(r, "args");
	if (has_key)
	{
		key.lane_id = DatumGetInt32(awa_receipt_col(r, "lane_id"));
		key.txid = awa_receipt_col(r, "txid");
		key.lane_seq = DatumGetInt64(awa_receipt_col(r, "lane_seq"));
	}
	return awa_attempt_args(awa_namespace(), DatumGetInt64(awa_receipt_col(r, "job_id")),
							DatumGetInt32(awa_receipt_col(r, "attempt")),
							has_key ? &key : NULL);
}

/* the job into awa.failed_jobs, unless it is there */
static void
insert_failed(AwaReceipt *r, Datum error)
{
	Oid			types[9] = {INT8OID, TEXTOID, INT2OID, TEXTOID, JSONBOID, INT4OID,
	INT4OID, TEXTOID, TIMESTAMPTZOID};
	Datum		v[9];
	char		n[9];
	int			nest;
	int			i;

	v[0] = awa_receipt_col(r, "job_id");
	v[1] = awa_receipt_col(r, "queue");
	v[2] = awa_receipt_col(r, "priority");
	v[3] = awa_receipt_col(r, "kind");
	v[4] = attempt_args(r);
	v[5] = awa_receipt_col(r, "attempt");
	v[6] = awa_receipt_col(r, "max_attempts");
	v[7] = error;
	v[8] = awa_receipt_col(r, "created_at");
	for (i = 0; i < 9; i++)
		n[i] = ' ';
	if (error == (Datum) 0)
		n[7] = 'n';
	nest = awa_spi_connect_pinned();
	if (SPI_execute_with_args("INSERT INTO awa.failed_jobs (job_id, queue, priority, kind, "
							  "args, attempts, max_attempts, error, created_at) "
							  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
							  "ON CONFLICT (job_id) DO NOTHING",
							  9, types, v, n, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "awa_bgw: could not record a failed job");
	awa_spi_finish_unpinned(nest);
}

/* awa.fail_attempt(r, 'failed', error, retry_in) */
static void
fail_attempt(Oid nsp, AwaReceipt *r, Datum error, Interval *retry_in)
{
	int32		attempt = DatumGetInt32(awa_receipt_col(r, "attempt"));
	int32		max_attempts = DatumGetInt32(awa_receipt_col(r, "max_attempts"));
	AwaNewJob	job;

	if (attempt >= max_attempts)
	{
		awa_close_attempt(nsp, r, "failed", "failed", error);
		insert_failed(r, error);
		return;
	}
	awa_close_attempt(nsp, r, "retried", NULL, (Datum) 0);
	job.ord = 1;
	job.job_id = DatumGetInt64(awa_receipt_col(r, "job_id"));
	job.kind = awa_receipt_col(r, "kind");
	job.args = attempt_args(r);
	job.priority = DatumGetInt16(awa_receipt_col(r, "priority"));
	job.run_at = retry_at(attempt, retry_in);
	job.attempt = attempt + 1;
	job.max_attempts = max_attempts;
	job.created_at = DatumGetTimestampTz(awa_receipt_col(r, "created_at"));
	job.error = error;
	awa_enqueue_jobs(DatumGetTextPP(awa_receipt_col(r, "queue")), &job, 1);
}

/*
 * Fails the attempt named by the call's first four arguments (job_id,
 * run_lease, error, retry_in), as awa.fail does; whether it was open.
 */
static bool
fail_held(FunctionCallInfo fcinfo)
{
	Interval   *retry_in = PG_ARGISNULL(3) ? NULL : PG_GETARG_INTERVAL_P(3);
	Datum		error = PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2);
	Interval	zero = {0};
	AwaReceipt	r;
	bool		open;

	if (retry_in != NULL &&
		DatumGetInt32(DirectFunctionCall2(interval_cmp, IntervalPGetDatum(retry_in),
										  IntervalPGetDatum(&zero))) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retry_in must not be negative, not %s",
						DatumGetCString(DirectFunctionCall1(interval_out,
															IntervalPGetDatum(retry_in)))),
				 errhint("NULL means the default exponential backoff.")));
	if (error != (Datum) 0)
		awa_check_payload("error text", (int64) toast_raw_datum_size(error) - VARHDRSZ);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return false;
	open = awa_lock_open_receipt(PG_GETARG_INT64(0), PG_GETARG_INT64(1), &r);
	if (open)
		fail_attempt(awa_namespace(), &r, error, retry_in);
	awa_receipts_read_end();
	return open;
}

/*
 * awa.fail(job_id bigint, run_lease bigint, error text,
 *			retry_in interval DEFAULT NULL) RETURNS boolean
 */
Datum
awa_fail(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(fail_held(fcinfo));
}

/*
 * awa.fail_and_claim(job_id bigint, run_lease bigint, error text,
 *		retry_in interval, queue text, max_batch int, deadline interval)
 *		RETURNS SETOF awa.claimed_job
 *
 * Fails the attempt it holds (as awa.fail; NULL ids fail nothing), then
 * claims as awa.claim without wait. The queue and the caller's claim
 * privilege are checked before anything is written; READ COMMITTED only, as
 * the claim.
 */
Datum
awa_fail_and_claim(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	awa_require_read_committed("awa.fail_and_claim");
	if (!PG_ARGISNULL(4))
	{
		awa_check_name("queue", PG_GETARG_TEXT_PP(4));
		awa_queue_require(PG_GETARG_TEXT_PP(4), AWA_QUEUE_CLAIM);
	}
	if (fail_held(fcinfo))
		CommandCounterIncrement();	/* the claim's snapshots see the closure */
	awa_claim_now_args(fcinfo, 4, rsinfo);
	return (Datum) 0;
}

/*
 * awa.heartbeat(job_id bigint, run_lease bigint, progress jsonb DEFAULT NULL)
 *		RETURNS boolean
 */
Datum
awa_heartbeat(PG_FUNCTION_ARGS)
{
	static const char *const cols[] = {
		"lease_slot", "lease_generation", "job_id", "run_lease", "heartbeat_at", "progress"
	};
	Datum		v[lengthof(cols)];
	bool		n[lengthof(cols)] = {0};
	AwaReceipt	r;
	Oid			nsp;
	int32		slot;
	int64		gen;
	Relation	rel;

	if (!PG_ARGISNULL(2))
		awa_check_payload("heartbeat progress", (int64) toast_datum_size(PG_GETARG_DATUM(2)));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_BOOL(false);
	if (!awa_lock_open_receipt(PG_GETARG_INT64(0), PG_GETARG_INT64(1), &r))
	{
		awa_receipts_read_end();
		PG_RETURN_BOOL(false);
	}
	nsp = awa_namespace();
	if (!awa_ring_cursor_read_as(nsp, "lease", awa_receipts_fresh(), &slot, &gen))
		elog(ERROR, "the lease ring has no cursor");
	v[0] = Int32GetDatum(slot);
	v[1] = Int64GetDatum(gen);
	v[2] = PG_GETARG_DATUM(0);
	v[3] = PG_GETARG_DATUM(1);
	v[4] = TimestampTzGetDatum(GetCurrentTimestamp());
	v[5] = PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2);
	n[5] = PG_ARGISNULL(2);
	rel = awa_open_table_for(nsp, "leases", slot, RowExclusiveLock);
	awa_insert_named(rel, lengthof(cols), cols, v, n);
	table_close(rel, NoLock);
	awa_receipts_read_end();
	PG_RETURN_BOOL(true);
}
