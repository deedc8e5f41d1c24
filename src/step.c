/*-------------------------------------------------------------------------
 *
 * step.c
 *	  The step runner: one maintenance operation = one transaction.
 *
 * Each step starts a READ COMMITTED transaction with a fresh statement
 * timestamp (so now() moves), checks that the extension is installed at a
 * version this library maintains, runs one SQL statement through SPI with a
 * hand-armed statement timeout, and commits. An ERROR inside the step is
 * caught here: the transaction is aborted, the error is logged, counted and
 * kept in the worker's status, and the worker goes on. FATAL (SIGTERM,
 * postmaster death) is not caught.
 *
 * src/step.c
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
#include "executor/spi.h"
#include "pgstat.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "src/step.h"

static void record_error(const char *label, ErrorData *edata);

/*
 * The installed extension version, or AWA_EXT_ABSENT; *windows is set when
 * it is 0.9. Must run inside a transaction. A direct catalog read: cheap
 * enough for every step.
 */
static AwaExtensionState
extension_state(bool *windows)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	AwaExtensionState result = AWA_EXT_ABSENT;

	*windows = false;
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

		*windows = (strcmp(version, AWA_BGW_SCHEMA_VERSION_WINDOWS) == 0);
		result = (strcmp(version, AWA_BGW_SCHEMA_VERSION) == 0 ||
				  strcmp(version, AWA_BGW_SCHEMA_VERSION_NEXT) == 0 ||
				  strcmp(version, AWA_BGW_SCHEMA_VERSION_WINDOWS) == 0)
			? AWA_EXT_READY : AWA_EXT_OTHER_VERSION;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

static void
copy_column(char *dst, size_t len, int col)
{
	char	   *v = NULL;

	if (SPI_processed > 0 && col <= SPI_tuptable->tupdesc->natts)
		v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col);
	strlcpy(dst, v ? v : "", len);
}

/* Runs inside the step's transaction; fills res. */
static void
step_body(const char *sql, bool needs_extension, AwaStepResult *res)
{
	int			rc;

	res->extension = extension_state(&res->windows);
	if (sql == NULL || (needs_extension && res->extension != AWA_EXT_READY))
		return;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, sql);
	debug_query_string = sql;
	if (awa_bgw_step_timeout > 0)
		enable_timeout_after(STATEMENT_TIMEOUT, awa_bgw_step_timeout);

	rc = SPI_execute(sql, false, 0);
	if (rc < 0)
		elog(ERROR, "SPI_execute failed (%s): %s", SPI_result_code_string(rc), sql);
	if (SPI_tuptable != NULL)
	{
		copy_column(res->col1, sizeof(res->col1), 1);
		copy_column(res->col2, sizeof(res->col2), 2);
		copy_column(res->col3, sizeof(res->col3), 3);
	}

	disable_timeout(STATEMENT_TIMEOUT, false);
	debug_query_string = NULL;
	PopActiveSnapshot();
	SPI_finish();
}

static bool
run_step(const char *label, const char *sql, bool needs_extension, AwaStepResult *res)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool ok = true;

	memset(res, 0, sizeof(*res));
	SetCurrentStatementStartTimestamp();
	DefaultXactIsoLevel = XACT_READ_COMMITTED;
	StartTransactionCommand();

	PG_TRY();
	{
		step_body(sql, needs_extension, res);
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
awa_run_step(const char *label, const char *sql, AwaStepResult *res)
{
	return run_step(label, sql, true, res);
}

bool
awa_run_session_step(const char *label, const char *sql, AwaStepResult *res)
{
	return run_step(label, sql, false, res);
}

/* Log the error of a step, count it, and keep it in the status. */
static void
record_error(const char *label, ErrorData *edata)
{
	char		error[AWA_ERROR_LEN];

	ereport(WARNING,
			(errmsg("awa_bgw: %s failed: %s", label, edata->message),
			 edata->detail ? errdetail_internal("%s", edata->detail) : 0,
			 errhint("The worker goes on; the step runs again on its next tick.")));

	snprintf(error, sizeof(error), "%s: %s (SQLSTATE %s)", label, edata->message,
			 unpack_sql_state(edata->sqlerrcode));
	awa_status_note_error(error);
	awa_stats_count(AWA_C_STEP_ERRORS, 1);
}
