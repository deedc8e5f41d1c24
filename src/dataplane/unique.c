/*-------------------------------------------------------------------------
 *
 * unique.c
 *	  The C side of unique jobs (docs/storage.md §A.14): awa.enqueue with a
 *	  unique_key asks awa_internal.unique_job (PL/pgSQL,
 *	  sql-src/api/unique.sql) whether a job of the same queue and key stands
 *	  in its way, before it writes anything. What is decided, and under which
 *	  lock, lives in SQL; this file passes the arguments, NULLs included. At
 *	  REPEATABLE READ and SERIALIZABLE it runs the same steps itself, each
 *	  read a fresh read (src/rel/scan.h) taken after the locks that protect
 *	  it (§A.18), since PL/pgSQL would read with the transaction's first
 *	  snapshot and, at SERIALIZABLE, take predicate locks: the key's rows by
 *	  a direct scan, the candidates' states by src/dataplane/jobstate.c.
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

#include "access/genam.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "src/dataplane/jobstate.h"
#include "src/dataplane/unique.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

/* the checks and the key's lock; %s: the internals' schema */
#define LOCK_SQL \
	"SELECT %s.check_unique($2, $3, $4), %s.private_xact_lock(%s.unique_lock_key($1, $2))"
/* the ring families held; %s: the internals' schema */
#define HOLD_SQL "SELECT %s.hold_ring_families()"

static int
by_id_desc(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? 1 : (x > y ? -1 : 0);
}

/* the states of unique_states (a text[]; NULL: unique_states_default()), *n */
static char **
unique_state_names(bool states_null, Datum states, int *n)
{
	Datum	   *elems;
	bool	   *enulls;
	char	  **names;
	int			i;

	if (states_null)
		states = OidFunctionCall0(awa_internal_function("unique_states_default", 0, NULL));
	deconstruct_array(DatumGetArrayTypeP(states), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &enulls, n);
	names = palloc0(Max(*n, 1) * sizeof(char *));
	for (i = 0; i < *n; i++)
		names[i] = enulls[i] ? NULL : TextDatumGetCString(elems[i]);
	return names;
}

/* whether state is one of the n names */
static bool
state_in(const char *state, char *const *names, int n)
{
	int			i;

	if (state == NULL)
		return false;
	for (i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(names[i], state) == 0)
			return true;
	return false;
}

/* runs sql (no result kept) with the arguments (queue, key, unique_for, unique_states) */
static void
run_sql(const char *sql, Datum *args, const char *nulls)
{
	Oid			types[4] = {TEXTOID, TEXTOID, INTERVALOID, TEXTARRAYOID};
	int			rc = SPI_execute_with_args(sql, 4, types, args, nulls, false, 1);

	if (rc < 0)
		elog(ERROR, "awa_bgw: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
}

/* an equality key on the index's text column att, in the index's collation */
static void
text_key(ScanKey key, Relation index, AttrNumber att, Datum value)
{
	ScanKeyEntryInitialize(key, 0, att, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[att - 1], F_TEXTEQ, value);
}

/*
 * The ids of the key's jobs enqueued within unique_for (every one when it is
 * NULL), newest first, as a fresh read of awa.unique_keys; *n of them.
 */
static int64 *
key_candidates(Datum queue, Datum key, bool for_null, Datum unique_for,
			   const AwaFreshRead *fresh, int *n)
{
	static const char *const cols[] = {"queue", "unique_key"};
	Relation	heap = awa_open_table(awa_namespace(), "unique_keys", -1);
	TimestampTz since = 0;
	ChildScan	cs;
	ScanKeyData keys[2];
	int64	   *ids = NULL;
	int			cap = 0;

	if (!for_null)
		since = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_mi_interval,
														TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()),
														unique_for));
	awa_child_scan_begin_fresh(&cs, heap, awa_open_index(heap, 2, cols), 2, fresh);
	text_key(&keys[0], cs.index, 1, queue);
	text_key(&keys[1], cs.index, 2, key);
	index_rescan(cs.scan, keys, 2, NULL, 0);
	*n = 0;
	while (awa_child_scan_next(&cs, ForwardScanDirection))
	{
		bool		isnull;
		Datum		at = slot_getattr(cs.slot, awa_column_number(heap, "created_at"), &isnull);

		if (!for_null && (isnull || DatumGetTimestampTz(at) <= since))
			continue;
		if (*n == cap)
		{
			cap = cap == 0 ? 8 : cap * 2;
			ids = ids == NULL ? palloc(cap * sizeof(int64)) : repalloc(ids, cap * sizeof(int64));
		}
		ids[(*n)++] = awa_get_int64(cs.slot, awa_column_number(heap, "job_id"), &isnull);
	}
	awa_child_scan_end(&cs);
	if (*n > 1)
		qsort(ids, *n, sizeof(int64), by_id_desc);
	return ids;
}

/*
 * The newest of the key's candidates whose state is one of unique_states, as
 * a fresh read taken after the ring families are held; 0 when none is.
 */
static int64
blocking_job(const int64 *ids, int n, bool states_null, Datum states)
{
	AwaFreshRead fresh;
	int64		found = 0;
	int			nnames;
	char	  **names = unique_state_names(states_null, states, &nnames);
	int			i;

	awa_fresh_read_begin(&fresh);
	for (i = 0; i < n && found == 0; i++)
		if (state_in(awa_job_state_fresh(awa_namespace(), ids[i], &fresh), names, nnames))
			found = ids[i];
	awa_fresh_read_end(&fresh);
	return found;
}

/*
 * unique_job at REPEATABLE READ and SERIALIZABLE: the checks and the key's
 * lock; the key's candidates read fresh after the lock; the ring families
 * held, and the candidates' states read fresh after them (jobstate.c); then
 * the new key recorded. The reads are direct scans, so at SERIALIZABLE they
 * take no predicate lock (docs/storage.md A.18); the INSERT is a plain one.
 */
static int64
unique_job_fresh(text *queue, const Datum *v, const bool *n, int64 job_id)
{
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	const char *nsp = awa_internal_schema_quoted();
	AwaFreshRead fresh;
	int64	   *ids;
	int			nids;
	int64		result = job_id;
	int			nest;
	int			i;

	args[0] = PointerGetDatum(queue);
	for (i = 0; i < 3; i++)
	{
		args[i + 1] = n[i] ? (Datum) 0 : v[i];
		nulls[i + 1] = n[i] ? 'n' : ' ';
	}
	nest = awa_spi_connect_pinned();
	run_sql(psprintf(LOCK_SQL, nsp, nsp, nsp), args, nulls);
	CommandCounterIncrement();
	awa_fresh_read_begin(&fresh);
	ids = key_candidates(args[0], args[1], n[1], args[2], &fresh, &nids);
	awa_fresh_read_end(&fresh);
	if (nids > 0)
	{
		run_sql(psprintf(HOLD_SQL, nsp), args, nulls);
		CommandCounterIncrement();
		result = blocking_job(ids, nids, n[2], args[3]);
		if (result == 0)
			result = job_id;
	}
	if (result == job_id)
		run_sql(psprintf("INSERT INTO awa.unique_keys (queue, unique_key, job_id, created_at) "
						 "SELECT $1, $2, " INT64_FORMAT ", now()", job_id), args, nulls);
	awa_spi_finish_unpinned(nest);
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

	if (IsolationUsesXactSnapshot())
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
