/*-------------------------------------------------------------------------
 *
 * enqueue_batch.c
 *	  awa.enqueue_batch(queue, jobs jsonb) in C for 0.9 (docs/storage.md
 *	  §A.13): many jobs in one round trip.
 *
 * What the PL/pgSQL function of api/jobs.sql (kept by 0.7 and 0.8) does, in
 * the same order and with the same errors: the isolation level, the queue's
 * name, the array's shape and size; then each element read as the SQL did
 * (e->>'kind', coalesce(e->'args', '{}'), (e->>'priority')::int and so
 * on: a key that is missing or JSON null takes its default, a value is cast
 * from its text, an element that is not an object has no keys) and given
 * the next job id, in input order; then awa.check_job on each, in input
 * order; then awa_enqueue_jobs (enqueue.c). The job ids come back in input
 * order.
 *
 * src/dataplane/enqueue_batch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "src/dataplane/checks.h"
#include "src/dataplane/enqueue.h"
#include "src/dataplane/queuepolicy.h"

PG_FUNCTION_INFO_V1(awa_enqueue_batch);

#define MAX_BATCH 10000

/* e->'key' of an element: NULL when the element is not an object or has no key */
static JsonbValue *
element_key(JsonbValue *e, const char *key, JsonbValue *buf)
{
	if (e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data))
		return NULL;
	return getKeyJsonValueFromContainer(e->val.binary.data, key, strlen(key), buf);
}

/* e->>'key': its text, NULL when missing or JSON null */
static char *
element_text(JsonbValue *e, const char *key)
{
	JsonbValue	buf;
	JsonbValue *v = element_key(e, key, &buf);

	if (v == NULL || v->type == jbvNull)
		return NULL;
	switch (v->type)
	{
		case jbvString:
			return pnstrdup(v->val.string.val, v->val.string.len);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(v->val.numeric)));
		case jbvBool:
			return pstrdup(v->val.boolean ? "true" : "false");
		default:
			return JsonbToCString(NULL, v->val.binary.data, v->val.binary.len);
	}
}

/* coalesce(e->'args', '{}') */
static Datum
element_args(JsonbValue *e)
{
	JsonbValue	buf;
	JsonbValue *v = element_key(e, "args", &buf);

	if (v == NULL)
		return DirectFunctionCall1(jsonb_in, CStringGetDatum("{}"));
	return JsonbPGetDatum(JsonbValueToJsonb(v));
}

/* one element, as the SQL read it, with its job id */
static void
read_element(JsonbValue *e, int32 ord, int64 job_id, AwaNewJob *j, bool *kind_null)
{
	char	   *kind = element_text(e, "kind");
	char	   *prio = element_text(e, "priority");
	char	   *run_at = element_text(e, "run_at");
	char	   *max = element_text(e, "max_attempts");
	JsonbValue	ubuf;

	if (element_key(e, "unique_key", &ubuf) || element_key(e, "unique_for", &ubuf) ||
		element_key(e, "unique_states", &ubuf))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("enqueue_batch does not take unique jobs (job %d)", ord),
				 errhint("Enqueue a unique job with awa.enqueue(..., unique_key => ...).")));
	j->ord = ord;
	j->job_id = job_id;
	*kind_null = kind == NULL;
	j->kind = kind ? CStringGetTextDatum(kind) : (Datum) 0;
	j->args = element_args(e);
	j->priority = prio ? DatumGetInt32(DirectFunctionCall1(int4in, CStringGetDatum(prio))) : 0;
	j->run_at = run_at
		? DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in, CStringGetDatum(run_at),
												  ObjectIdGetDatum(InvalidOid),
												  Int32GetDatum(-1)))
		: GetCurrentTransactionStartTimestamp();
	j->attempt = 1;
	j->max_attempts = max ? DatumGetInt32(DirectFunctionCall1(int4in, CStringGetDatum(max))) : 25;
	j->created_at = GetCurrentTransactionStartTimestamp();
	j->error = (Datum) 0;
}

/* the array's elements, each read and given its job id, in input order */
static AwaNewJob *
read_batch(Jsonb *jobs, int *njobs, bool **kind_nulls)
{
	JsonbIterator *it = JsonbIteratorInit(&jobs->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	AwaNewJob  *out = palloc(Max(JB_ROOT_COUNT(jobs), 1) * sizeof(AwaNewJob));
	int			n = 0;

	*kind_nulls = palloc(Max(JB_ROOT_COUNT(jobs), 1) * sizeof(bool));
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		read_element(&v, n + 1, awa_next_job_id(), &out[n], &(*kind_nulls)[n]);
		n++;
	}
	*njobs = n;
	return out;
}

/* awa.check_job on one job */
static void
check_one(text *queue, AwaNewJob *j, bool kind_null)
{
	Datum		v[6];
	bool		n[6] = {0};

	v[0] = PointerGetDatum(queue);
	v[1] = j->kind;
	n[1] = kind_null;
	v[2] = j->args;
	v[3] = Int32GetDatum(j->priority);
	v[4] = TimestampTzGetDatum(j->run_at);
	v[5] = Int32GetDatum(j->max_attempts);
	awa_check_job_datums(v, n);
}

/* awa.enqueue_batch(queue text, jobs jsonb) RETURNS SETOF bigint */
Datum
awa_enqueue_batch(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	text	   *queue;
	Jsonb	   *jobs;
	AwaNewJob  *batch;
	bool	   *kind_nulls;
	int			n;
	int			i;

	awa_check_name("queue", PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0));
	queue = PG_GETARG_TEXT_PP(0);
	awa_queue_require(queue, AWA_QUEUE_ENQUEUE);
	jobs = PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1);
	if (jobs == NULL || !JB_ROOT_IS_ARRAY(jobs) || JB_ROOT_IS_SCALAR(jobs) ||
		JB_ROOT_COUNT(jobs) > MAX_BATCH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("jobs must be a JSON array of at most 10000 job objects"),
				 errhint("For example '[{\"kind\": \"mail\", \"args\": {\"to\": 1}}, {\"kind\": \"mail\"}]'.")));
	batch = read_batch(jobs, &n, &kind_nulls);
	for (i = 0; i < n; i++)
		check_one(queue, &batch[i], kind_nulls[i]);
	awa_enqueue_jobs(queue, batch, n);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (i = 0; i < n; i++)
	{
		Datum		id = Int64GetDatum(batch[i].job_id);
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &id, &isnull);
	}
	return (Datum) 0;
}
