/*-------------------------------------------------------------------------
 *
 * unique.c
 *	  The C side of unique jobs (docs/storage.md §A.14): awa.enqueue with a
 *	  unique_key asks awa.unique_job (PL/pgSQL, sql-src/api/unique.sql)
 *	  whether a job of the same queue and key stands in its way, before it
 *	  writes anything. What is decided, and under which lock, lives in SQL;
 *	  this file only passes the arguments, NULLs included.
 *
 * src/dataplane/unique.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"

#include "src/dataplane/unique.h"

/*
 * awa.unique_job(queue, key, unique_for, unique_states, job_id): the id of the
 * job that stands in the new one's way, or job_id once the new job's key is
 * recorded. A NULL in key, unique_for or unique_states is passed as NULL.
 */
int64
awa_unique_job(text *queue, const Datum *v, const bool *n, int64 job_id)
{
	Oid			argtypes[5] = {TEXTOID, TEXTOID, INTERVALOID, TEXTARRAYOID, INT8OID};
	Oid			fn = LookupFuncName(list_make2(makeString("awa"), makeString("unique_job")),
									5, argtypes, false);
	FmgrInfo	flinfo;
	LOCAL_FCINFO(fcinfo, 5);
	Datum		result;
	int			i;

	fmgr_info(fn, &flinfo);
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
		elog(ERROR, "awa.unique_job returned NULL");
	return DatumGetInt64(result);
}
