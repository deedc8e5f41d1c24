/*-------------------------------------------------------------------------
 *
 * unique.c
 *	  The C side of unique jobs (docs/storage.md §A.14): awa.enqueue with a
 *	  unique_key asks awa_internal.unique_job (PL/pgSQL,
 *	  sql-src/api/unique.sql) whether a job of the same queue and key stands
 *	  in its way, before it writes anything. What is decided, and under which
 *	  lock, lives in SQL; this file passes the arguments, NULLs included. At
 *	  REPEATABLE READ it runs the same steps through SPI with each read under
 *	  a snapshot of now, taken after the locks that protect it (§A.18), since
 *	  PL/pgSQL would read with the transaction's first.
 *
 * The internals are found in the schema src/rel/relcache.c resolves:
 * awa_internal when it is a member of the extension (0.10), else awa (0.9);
 * the SPI text names it quoted, never a schema a user could have created.
 *
 * src/dataplane/unique.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

#include "src/dataplane/unique.h"
#include "src/rel/relcache.h"

/* the candidates' statement: the key's jobs within unique_for, newest first */
#define CANDIDATES_SQL \
	"SELECT coalesce(array_agg(k.job_id ORDER BY k.job_id DESC), '{}') " \
	"FROM awa.unique_keys k WHERE k.queue = $1 AND k.unique_key = $2 " \
	"AND ($3 IS NULL OR k.created_at > now() - $3)"
/* the newest candidate ($5) in one of unique_states ($4); %s: the internals' schema */
#define BLOCKER_SQL \
	"SELECT c FROM unnest($5) c WHERE %s.job_state(c) = " \
	"ANY (coalesce($4, %s.unique_states_default())) ORDER BY c DESC LIMIT 1"
/* the checks and the key's lock; %s: the internals' schema */
#define LOCK_SQL \
	"SELECT %s.check_unique($2, $3, $4), %s.private_xact_lock(%s.unique_lock_key($1, $2))"
/* the ring families held; %s: the internals' schema */
#define HOLD_SQL "SELECT %s.hold_ring_families()"

/*
 * Runs sql with the five arguments (queue, key, unique_for, unique_states,
 * candidates) under a snapshot of now (read-only), or, with fresh false, as
 * a statement of its own; returns its one value (NULL: *isnull).
 */
static Datum
run_fresh(const char *sql, Datum *args, const char *nulls, bool fresh, bool *isnull)
{
	Oid			types[5] = {TEXTOID, TEXTOID, INTERVALOID, TEXTARRAYOID, INT8ARRAYOID};
	SPIPlanPtr	plan = SPI_prepare(sql, 5, types);
	Snapshot	snap = InvalidSnapshot;
	int			rc;

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (fresh)
	{
		CommandCounterIncrement();
		snap = RegisterSnapshot(GetLatestSnapshot());
	}
	rc = SPI_execute_snapshot(plan, args, nulls, snap, InvalidSnapshot, fresh, false, 1);
	if (fresh)
		UnregisterSnapshot(snap);
	if (rc < 0)
		elog(ERROR, "awa_bgw: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
	*isnull = true;
	if (SPI_processed == 0 || SPI_tuptable == NULL)
		return (Datum) 0;
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, isnull);
}

/*
 * unique_job at REPEATABLE READ: the checks and the key's lock, the
 * candidates read fresh after the lock, the ring families held and the
 * candidates' states read fresh after them, then the new key recorded.
 */
static int64
unique_job_fresh(text *queue, const Datum *v, const bool *n, int64 job_id)
{
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', 'n'};
	Datum		candidates;
	Datum		blocker;
	bool		isnull;
	int64		result = job_id;
	const char *nsp = awa_internal_schema_quoted();
	int			i;

	args[0] = PointerGetDatum(queue);
	for (i = 0; i < 3; i++)
	{
		args[i + 1] = n[i] ? (Datum) 0 : v[i];
		nulls[i + 1] = n[i] ? 'n' : ' ';
	}
	args[4] = (Datum) 0;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	(void) run_fresh(psprintf(LOCK_SQL, nsp, nsp, nsp), args, nulls, false, &isnull);
	candidates = run_fresh(CANDIDATES_SQL, args, nulls, true, &isnull);
	if (!isnull && ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(candidates)),
								  ARR_DIMS(DatumGetArrayTypeP(candidates))) > 0)
	{
		args[4] = candidates;
		nulls[4] = ' ';
		(void) run_fresh(psprintf(HOLD_SQL, nsp), args, nulls, false, &isnull);
		blocker = run_fresh(psprintf(BLOCKER_SQL, nsp, nsp), args, nulls, true, &isnull);
		if (!isnull)
			result = DatumGetInt64(blocker);
	}
	if (result == job_id)
	{
		Oid			key_types[3] = {TEXTOID, TEXTOID, INT8OID};
		Datum		key[3];

		key[0] = args[0];
		key[1] = args[1];
		key[2] = Int64GetDatum(job_id);
		if (SPI_execute_with_args("INSERT INTO awa.unique_keys (queue, unique_key, job_id, "
								  "created_at) VALUES ($1, $2, $3, now())",
								  3, key_types, key, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "awa_bgw: the unique key was not recorded");
	}
	SPI_finish();
	return result;
}

/*
 * unique_job(queue, key, unique_for, unique_states, job_id) of the internals'
 * schema: the id of the job that stands in the new one's way, or job_id once
 * the new job's key is recorded. A NULL in key, unique_for or unique_states
 * is passed as NULL.
 */
int64
awa_unique_job(text *queue, const Datum *v, const bool *n, int64 job_id)
{
	Oid			argtypes[5] = {TEXTOID, TEXTOID, INTERVALOID, TEXTARRAYOID, INT8OID};
	FmgrInfo	flinfo;
	LOCAL_FCINFO(fcinfo, 5);
	Datum		result;
	int			i;

	if (XactIsoLevel == XACT_REPEATABLE_READ)
		return unique_job_fresh(queue, v, n, job_id);
	fmgr_info(awa_internal_function("unique_job", 5, argtypes), &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, 5, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = PointerGetDatum(queue);
	fcinfo->args[0].isnull = false;
	for (i = 0; i < 3; i++)
	{
		fcinfo->args[i + 1].value = n[i] ? (Datum) 0 : v[i];
		fcinfo->args[i + 1].isnull = n[i];
	}
	fcinfo->args[4].value = Int64GetDatum(job_id);
	fcinfo->args[4].isnull = false;
	result = FunctionCallInvoke(fcinfo);
	if (fcinfo->isnull)
		elog(ERROR, "awa_bgw: unique_job returned NULL");
	return DatumGetInt64(result);
}
