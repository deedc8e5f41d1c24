/*-------------------------------------------------------------------------
 *
 * step.c
 *	  The step runner: one maintenance operation = one transaction.
 *
 * Each step starts a READ COMMITTED transaction with a fresh statement
 * timestamp (so now() moves), checks that the extension is installed at a
 * version this library maintains (and picks the step's SQL for that version
 * when it differs by version), runs one SQL statement (its parameters
 * bound, not spliced in) through SPI with a hand-armed statement timeout, reads the columns the caller asked for from
 * the first row of its result, and commits. Columns are looked up by name
 * (SPI_fnumber) and read as the type the SQL function declares (SPI_getbinval:
 * text, bigint, boolean, int[]); a missing column or another type is an error
 * of the step, so a change of the SQL cannot be misread. Text is copied whole
 * into the caller's memory context: nothing is cut. An ERROR inside the step is
 * caught here: the transaction is aborted, the error is logged, counted and
 * kept in the worker's status, and the worker goes on. FATAL (SIGTERM,
 * postmaster death) is not caught.
 *
 * src/worker/step.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "pgstat.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "src/guc.h"
#include "src/status/shmem.h"
#include "src/status/stats.h"
#include "src/worker/schema_version.h"
#include "src/worker/step.h"

static void record_error(const char *label, ErrorData *edata);

/*
 * Whether the extension is installed, and at a version this library
 * maintains: then res->schema is that version's row of the table
 * (src/worker/schema_version.c), which says what it has. Must run inside a
 * transaction. A direct catalog read: cheap enough for every step.
 */
static AwaExtensionState
extension_state(AwaStepResult *res)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	AwaExtensionState result = AWA_EXT_ABSENT;

	res->schema = NULL;
	res->extension_oid = InvalidOid;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("awa_bgw"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);
		char	   *version = isnull ? "" : TextDatumGetCString(d);

		res->extension_oid = ((Form_pg_extension) GETSTRUCT(tup))->oid;
		res->schema = awa_schema_version(version);
		result = res->schema != NULL ? AWA_EXT_READY : AWA_EXT_OTHER_VERSION;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

static const char *
column_type_name(AwaColumnType type)
{
	switch (type)
	{
		case AWA_COL_TEXT:
			return "text";
		case AWA_COL_INT8:
			return "bigint";
		case AWA_COL_BOOL:
			return "boolean";
		case AWA_COL_INT4_ARRAY:
			return "integer[]";
	}
	return "?";
}

static Oid
column_type_oid(AwaColumnType type)
{
	switch (type)
	{
		case AWA_COL_TEXT:
			return TEXTOID;
		case AWA_COL_INT8:
			return INT8OID;
		case AWA_COL_BOOL:
			return BOOLOID;
		case AWA_COL_INT4_ARRAY:
			return INT4ARRAYOID;
	}
	return InvalidOid;
}

/*
 * Read one column of the first row by name, checking that it has the type the
 * step expects; text and arrays are copied into cxt, whole.
 */
static void
read_column(const AwaStepColumn *col, AwaStepValue *val, MemoryContext cxt)
{
	TupleDesc	tupdesc = SPI_tuptable->tupdesc;
	int			fnum = SPI_fnumber(tupdesc, col->name);
	Oid			typid;
	Datum		d;

	if (fnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the result of the step has no column \"%s\"", col->name)));
	typid = SPI_gettypeid(tupdesc, fnum);
	if (typid != column_type_oid(col->type))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of the result of the step is of type %s, not %s",
						col->name, format_type_be(typid), column_type_name(col->type))));

	d = SPI_getbinval(SPI_tuptable->vals[0], tupdesc, fnum, &val->isnull);
	if (val->isnull)
		return;
	switch (col->type)
	{
		case AWA_COL_TEXT:
			val->text = MemoryContextStrdup(cxt, TextDatumGetCString(d));
			break;
		case AWA_COL_INT8:
			val->int8 = DatumGetInt64(d);
			break;
		case AWA_COL_BOOL:
			val->boolean = DatumGetBool(d);
			break;
		case AWA_COL_INT4_ARRAY:
			{
				ArrayType  *arr = DatumGetArrayTypeP(d);
				Datum	   *elems;
				bool	   *nulls;
				int			n;
				int			i;

				deconstruct_array(arr, INT4OID, sizeof(int32), true, TYPALIGN_INT,
								  &elems, &nulls, &n);
				val->ints = MemoryContextAlloc(cxt, Max(n, 1) * sizeof(int));
				for (i = 0; i < n; i++)
				{
					if (nulls[i])
						ereport(ERROR,
								(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
								 errmsg("column \"%s\" of the result of the step holds a NULL",
										col->name)));
					val->ints[i] = DatumGetInt32(elems[i]);
				}
				val->nints = n;
				break;
			}
	}
}

/*
 * Runs inside the step's transaction; fills res, its values in cxt. The SQL
 * is sql where the version installed has sql_needs, else sql_without.
 */
static void
step_body(const char *sql, AwaSchemaFeature sql_needs, const char *sql_without,
		  const AwaStepParams *params, bool needs_extension,
		  AwaStepResult *res, MemoryContext cxt)
{
	int			rc;

	res->extension = extension_state(res);
	if (!awa_schema_has(res->schema, sql_needs))
		sql = sql_without;
	if (sql == NULL || (needs_extension && res->extension != AWA_EXT_READY))
		return;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, sql);
	debug_query_string = sql;
	if (awa_bgw_step_timeout > 0)
		enable_timeout_after(STATEMENT_TIMEOUT, awa_bgw_step_timeout);

	if (params != NULL && params->nparams > 0)
		rc = SPI_execute_with_args(sql, params->nparams, (Oid *) params->types,
								   (Datum *) params->values, NULL, false, 0);
	else
		rc = SPI_execute(sql, false, 0);
	if (rc < 0)
		elog(ERROR, "SPI_execute failed (%s): %s", SPI_result_code_string(rc), sql);
	if (SPI_tuptable != NULL && SPI_processed > 0 && res->columns != NULL)
	{
		int			i;

		res->has_row = true;
		for (i = 0; res->columns[i].name != NULL; i++)
			read_column(&res->columns[i], &res->values[i], cxt);
	}

	disable_timeout(STATEMENT_TIMEOUT, false);
	debug_query_string = NULL;
	PopActiveSnapshot();
	SPI_finish();
}

static bool
run_step(const char *label, const char *sql, AwaSchemaFeature sql_needs,
		 const char *sql_without, const AwaStepParams *params,
		 const AwaStepColumn *columns, bool needs_extension, AwaStepResult *res)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool ok = true;
	int			i;

	memset(res, 0, sizeof(*res));
	res->columns = columns;
	for (i = 0; columns != NULL && columns[i].name != NULL; i++)
	{
		if (i >= AWA_STEP_MAX_COLUMNS)
			elog(ERROR, "step \"%s\" reads more than %d columns", label,
				 AWA_STEP_MAX_COLUMNS);
		res->values[i].isnull = true;
	}
	SetCurrentStatementStartTimestamp();
	DefaultXactIsoLevel = XACT_READ_COMMITTED;
	StartTransactionCommand();

	PG_TRY();
	{
		step_body(sql, sql_needs, sql_without, params, needs_extension, res, oldcxt);
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		disable_timeout(STATEMENT_TIMEOUT, false);
		debug_query_string = NULL;
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		ok = false;
		record_error(label, edata);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	/* the transaction's end left TopMemoryContext current: give the caller its own back */
	MemoryContextSwitchTo(oldcxt);

	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, NULL);
	return ok;
}

bool
awa_run_step(const char *label, const char *sql, const AwaStepParams *params,
			 const AwaStepColumn *columns, AwaStepResult *res)
{
	return run_step(label, sql, AWA_FEATURE_NONE, NULL, params, columns, true, res);
}

bool
awa_run_step_by_version(const char *label, const char *sql, AwaSchemaFeature sql_needs,
						const char *sql_without, const AwaStepParams *params,
						const AwaStepColumn *columns, AwaStepResult *res)
{
	return run_step(label, sql, sql_needs, sql_without, params, columns, true, res);
}

bool
awa_run_session_step(const char *label, const char *sql, const AwaStepParams *params,
					 const AwaStepColumn *columns, AwaStepResult *res)
{
	return run_step(label, sql, AWA_FEATURE_NONE, NULL, params, columns, false, res);
}

/* Add the next parameter ($1, $2, ...) of a step's SQL. */
void
awa_step_param(AwaStepParams *params, Oid type, Datum value)
{
	if (params->nparams >= AWA_STEP_MAX_PARAMS)
		elog(ERROR, "a step takes at most %d parameters", AWA_STEP_MAX_PARAMS);
	params->types[params->nparams] = type;
	params->values[params->nparams] = value;
	params->nparams++;
}

/* The value of a column the step read; a name it did not read is a bug. */
static const AwaStepValue *
step_value(const AwaStepResult *res, const char *column, AwaColumnType type)
{
	int			i;

	for (i = 0; res->columns != NULL && res->columns[i].name != NULL; i++)
	{
		if (strcmp(res->columns[i].name, column) == 0)
		{
			if (res->columns[i].type != type)
				elog(ERROR, "column \"%s\" of a step was read as %s, not %s", column,
					 column_type_name(res->columns[i].type), column_type_name(type));
			return &res->values[i];
		}
	}
	elog(ERROR, "a step did not read a column \"%s\"", column);
	return NULL;				/* keep compiler quiet */
}

/* A text column, whole; NULL when it is NULL or the step returned no row. */
const char *
awa_step_text(const AwaStepResult *res, const char *column)
{
	const AwaStepValue *v = step_value(res, column, AWA_COL_TEXT);

	return v->isnull ? NULL : v->text;
}

/* Whether a text column is value (a NULL is no value). */
bool
awa_step_text_is(const AwaStepResult *res, const char *column, const char *value)
{
	const char *v = awa_step_text(res, column);

	return v != NULL && strcmp(v, value) == 0;
}

/* A bigint column; 0 when NULL or no row. */
int64
awa_step_int8(const AwaStepResult *res, const char *column)
{
	const AwaStepValue *v = step_value(res, column, AWA_COL_INT8);

	return v->isnull ? 0 : v->int8;
}

/* A boolean column; false when NULL or no row. */
bool
awa_step_bool(const AwaStepResult *res, const char *column)
{
	const AwaStepValue *v = step_value(res, column, AWA_COL_BOOL);

	return !v->isnull && v->boolean;
}

/* An int[] column: sets *ints and returns how many (0 when NULL or no row). */
int
awa_step_ints(const AwaStepResult *res, const char *column, const int **ints)
{
	const AwaStepValue *v = step_value(res, column, AWA_COL_INT4_ARRAY);

	*ints = v->isnull ? NULL : v->ints;
	return v->isnull ? 0 : v->nints;
}

/* Log the error of a step, count it, and keep it in the status. */
static void
record_error(const char *label, ErrorData *edata)
{
	char	   *error;

	ereport(WARNING,
			(errmsg("awa_bgw: %s failed: %s", label, edata->message),
			 edata->detail ? errdetail_internal("%s", edata->detail) : 0,
			 errhint("The worker goes on; the step runs again on its next tick.")));

	/* whole here; the status keeps a bounded copy, marked when it is cut */
	error = psprintf("%s: %s (SQLSTATE %s)", label, edata->message,
					 unpack_sql_state(edata->sqlerrcode));
	awa_status_note_error(error);
	pfree(error);
	awa_stats_count(AWA_C_STEP_ERRORS, 1);
}
