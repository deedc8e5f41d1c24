/*-------------------------------------------------------------------------
 *
 * checks.c
 *	  The validation of a job, in C for 0.9 (docs/storage.md §A.13):
 *	  awa.check_job(queue, kind, args, priority, run_at, max_attempts), which
 *	  enqueue, enqueue_batch (once per job) and register_queue call; and the
 *	  checks the C hot paths make of their calls before anything else (READ
 *	  COMMITTED, a name, a payload's size), and an interval argument's
 *	  microseconds.
 *
 * The rules, messages, SQLSTATEs and hints are those of the PL/pgSQL
 * check_name, check_payload and check_job of api/jobs.sql (which 0.7 and 0.8
 * keep), in the same order; sql/06_api.sql and sql/10_hostile.sql check them
 * on every version.
 *
 * src/dataplane/checks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"

#include "src/compat.h"
#include "src/dataplane/checks.h"
#include "src/guc.h"

PG_FUNCTION_INFO_V1(awa_check_job);

/* the transaction's isolation level, as SET TRANSACTION spells it */
const char *
awa_isolation_name(void)
{
	switch (XactIsoLevel)
	{
		case XACT_SERIALIZABLE:
			return "SERIALIZABLE";
		case XACT_REPEATABLE_READ:
			return "REPEATABLE READ";
		case XACT_READ_UNCOMMITTED:
			return "READ UNCOMMITTED";
		default:
			return "READ COMMITTED";
	}
}

/*
 * The refusal of a function that needs READ COMMITTED (fn, as a caller
 * writes it): a claim decides what it takes with a snapshot taken after its
 * lane's lock, which at REPEATABLE READ and SERIALIZABLE is the
 * transaction's first.
 */
void
awa_require_read_committed(const char *fn)
{
	if (XactIsoLevel != XACT_READ_COMMITTED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s needs READ COMMITTED, not %s", fn, awa_isolation_name()),
				 errdetail("It decides with a snapshot taken after its locks; this "
						   "transaction keeps the snapshot it took first."),
				 errhint("Run it in a READ COMMITTED transaction of its own and commit "
						 "before the work; enqueue, complete, fail and heartbeat also run "
						 "inside REPEATABLE READ and SERIALIZABLE transactions.")));
}

/* awa.check_name(what, value): a text of 1 to 200 characters */
void
awa_check_name(const char *what, text *value)
{
	int			len;

	if (value == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("invalid %s NULL", what),
				 errhint("A %s is a text of 1 to 200 characters.", what)));
	len = pg_mbstrlen_with_len(VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value));
	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid %s ''", what),
				 errhint("A %s is a text of 1 to 200 characters.", what)));
	if (len > 200)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid %s (%d characters)", what, len),
				 errhint("A %s is a text of 1 to 200 characters.", what)));
}

/* awa.check_payload(what, bytes): at most awa_bgw.max_payload_size */
static void
check_payload(const char *what, int64 bytes)
{
	int64		max = (int64) awa_bgw_max_payload_size * 1024;

	if (bytes > max)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s of " INT64_FORMAT " bytes is larger than "
						"awa_bgw.max_payload_size (" INT64_FORMAT " bytes)",
						what, bytes, max),
				 errhint("Keep large data in a table of your own and pass its key; "
						 "a superuser can raise awa_bgw.max_payload_size.")));
}

/* awa.check_payload(what, bytes): at most awa_bgw.max_payload_size */
void
awa_check_payload(const char *what, int64 bytes)
{
	check_payload(what, bytes);
}

static void
check_args(Datum args, bool isnull)
{
	char	   *type;

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("job args must be a JSON object, not NULL"),
				 errhint("Pass a jsonb object, for example '{\"id\": 42}'.")));
	type = TextDatumGetCString(DirectFunctionCall1(jsonb_typeof, args));
	if (strcmp(type, "object") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("job args must be a JSON object, not %s", type),
				 errhint("Pass a jsonb object, for example '{\"id\": 42}'.")));
	check_payload("job args", (int64) toast_datum_size(args));
}

/*
 * check_job on (queue, kind, args, priority, run_at, max_attempts) given as
 * datums, the priority an int4 (awa_priority_arg): what awa.check_job checks,
 * for the C callers (enqueue, enqueue_batch).
 */
void
awa_check_job_datums(const Datum *v, const bool *n)
{
	awa_check_name("queue", n[0] ? NULL : DatumGetTextPP(v[0]));
	awa_check_name("kind", n[1] ? NULL : DatumGetTextPP(v[1]));
	check_args(v[2], n[2]);
	if (n[3] || DatumGetInt32(v[3]) < 0 || DatumGetInt32(v[3]) > 9)
	{
		char		num[16];

		if (!n[3])
			snprintf(num, sizeof(num), "%d", DatumGetInt32(v[3]));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("priority %s is out of range", n[3] ? "NULL" : num),
				 errhint("Priorities run from 0 (most urgent) to 9.")));
	}
	if (n[4] || TIMESTAMP_NOT_FINITE(DatumGetTimestampTz(v[4])))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("run_at must be a finite timestamp")));
	if (n[5] || DatumGetInt32(v[5]) < 1 || DatumGetInt32(v[5]) > 1000)
	{
		char		num[16];

		if (!n[5])
			snprintf(num, sizeof(num), "%d", DatumGetInt32(v[5]));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_attempts %s is out of range", n[5] ? "NULL" : num),
				 errhint("max_attempts runs from 1 to 1000.")));
	}
}

/* an interval in microseconds, a month counted as 30 days (a wait, a rate_per) */
int64
awa_interval_us(const Interval *iv)
{
	return iv->time + (int64) iv->day * USECS_PER_DAY +
		(int64) iv->month * DAYS_PER_MONTH * USECS_PER_DAY;
}

/*
 * The priority argument argno of a C API function as an int4 datum: 0.10
 * declares it int (so a caller's priority => 5 resolves), 0.9 smallint, and
 * the library serves both. NULL stays NULL (the caller reads the null flag).
 */
Datum
awa_priority_arg(FunctionCallInfo fcinfo, int argno)
{
	if (argno >= PG_NARGS() || PG_ARGISNULL(argno))
		return (Datum) 0;
	if (get_fn_expr_argtype(fcinfo->flinfo, argno) == INT2OID)
		return Int32GetDatum((int32) PG_GETARG_INT16(argno));
	return Int32GetDatum(PG_GETARG_INT32(argno));
}

/*
 * awa.check_job(queue text, kind text, args jsonb, priority int,
 *				 run_at timestamptz, max_attempts int) RETURNS void
 */
Datum
awa_check_job(PG_FUNCTION_ARGS)
{
	Datum		v[6];
	bool		n[6];
	int			i;

	for (i = 0; i < 6; i++)
	{
		v[i] = PG_GETARG_DATUM(i);
		n[i] = PG_ARGISNULL(i);
	}
	v[3] = awa_priority_arg(fcinfo, 3);
	awa_check_job_datums(v, n);
	PG_RETURN_VOID();
}
