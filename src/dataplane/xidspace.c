/*-------------------------------------------------------------------------
 *
 * xidspace.c
 *	  The xid space of a database's rows (docs/storage.md §A.17): whether the
 *	  transaction ids its ready entries and windows hold are this cluster's,
 *	  checked before an enqueue writes an entry or a reader reads a window.
 *
 * awa.xid_space (0.10) holds the system identifier of each cluster whose
 * rows the database holds; awa.xid_space_state() reads it as own, moved,
 * fresh or unmarked, and awa.adopt_xid_space() records the mark (fresh) or
 * rebases the rows (moved, unmarked). Writers (enqueues, the requeue of a
 * retry, claims) adopt; readers of windows refuse any state but own and
 * fresh. A backend's verdict "own" is kept until the mark changes: the
 * statement trigger awa.xid_space_changed sends a relcache invalidation of
 * the table at commit, and src/rel/relcache.c's callback passes it here
 * (awa_relcache_listen), so in the steady state a check is one test of a flag. A change to
 * pg_subscription_rel drops the verdict too: a database whose awa tables are
 * subscribed by logical replication is refused. Before 0.10 there is no
 * table and nothing to check.
 *
 *	awa.cluster_system_identifier()	this cluster's system identifier
 *	awa_internal.xid_space_changed()	the statement trigger of awa.xid_space
 *	awa_internal.xid_space_settle()	the worker's check: own, or what it waits for
 *
 * src/dataplane/xidspace.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "src/dataplane/checks.h"
#include "src/dataplane/xidspace.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_cluster_system_identifier);
PG_FUNCTION_INFO_V1(awa_xid_space_changed);
PG_FUNCTION_INFO_V1(awa_xid_space_settle);

/* the readers' question, asked after the refusal of a logical subscription */
#define STATE_SQL "SELECT awa.xid_space_state()"

/* the backend saw the state own (or the install has no mark to check) */
static bool space_own = false;
static Oid	space_relid = InvalidOid;
/* bumped by every invalidation, so that a check overlapping one is not kept */
static uint64 space_invals = 0;

/*
 * From src/rel/relcache.c's callback (awa_relcache_listen): a change to
 * awa.xid_space (or a reset) makes the verdict stale; the next check reads
 * the mark again.
 */
static void
xid_space_invalidate(Oid relid)
{
	if (!OidIsValid(relid) || relid == space_relid)
	{
		space_own = false;
		space_invals++;
	}
}

/*
 * A change to pg_subscription_rel (a table subscribed or dropped from a
 * subscription) makes the verdict stale too: logical replication of the
 * extension's tables is refused (docs/storage.md §A.17).
 */
static void
subscriptions_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	xid_space_invalidate(InvalidOid);
}

/*
 * The refusal of a logical subscription of the extension's tables:
 * awa_internal.refuse_subscribed_tables(), called by OID in the caller's
 * identity (PUBLIC may execute it; no USAGE on awa_internal is needed, as no
 * name is looked up in it).
 */
static void
refuse_subscribed_tables(void)
{
	FmgrInfo	flinfo;
	LOCAL_FCINFO(fcinfo, 0);

	fmgr_info(awa_internal_function("refuse_subscribed_tables", 0, NULL), &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, 0, InvalidOid, NULL, NULL);
	(void) FunctionCallInvoke(fcinfo);
}

/*
 * Run sql (one text column, one row) under the pinned path (awa_path_pin) and
 * return its value, palloc'd here.
 */
static char *
query_text(const char *sql)
{
	MemoryContext caller = CurrentMemoryContext;
	char	   *value;
	char	   *result;
	int			nest = awa_spi_connect_pinned();

	if (SPI_execute(sql, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "awa_bgw: \"%s\" returned no row", sql);
	value = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	result = MemoryContextStrdup(caller, value ? value : "");
	awa_spi_finish_unpinned(nest);
	return result;
}

/*
 * The state of the xid space as a fresh read of the marks sees it (own,
 * moved, or unmarked for no mark at all), after the refusal of a logical
 * subscription (which reads catalogs only): what awa.xid_space_state() says
 * but for telling fresh from unmarked, with no predicate lock at SERIALIZABLE
 * (src/rel/scan.h).
 */
static char *
fresh_state(void)
{
	Relation	rel = table_open(space_relid, AccessShareLock);
	AttrNumber	a_id = awa_column_number(rel, "system_identifier");
	int64		ours = (int64) GetSystemIdentifier();
	AwaFreshRead fresh;
	TableScanDesc scan;
	TupleTableSlot *slot;
	char	   *state = "unmarked";

	refuse_subscribed_tables();
	awa_fresh_read_begin(&fresh);
	scan = table_beginscan(rel, fresh.snapshot, 0, NULL);
	slot = table_slot_create(rel, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;

		if (!awa_fresh_row_visible(&fresh, rel, slot))
			continue;
		if (awa_get_int64(slot, a_id, &isnull) != ours)
		{
			state = "moved";
			break;
		}
		state = "own";
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	awa_fresh_read_end(&fresh);
	table_close(rel, NoLock);
	return state;
}

/*
 * The state of the xid space as sql says it: awa.xid_space_state() (own,
 * fresh, moved, unmarked), or awa.adopt_xid_space(...), which adopts it
 * first (own, adopted, rebased; restoring for the worker); with sql NULL, as
 * a fresh read sees it (fresh_state). With refuse, the refusal of a logical
 * subscription first (adopt_xid_space and fresh_state refuse themselves).
 * Returns "own" without a query while the backend's verdict stands, and when
 * the install predates the mark.
 */
static const char *
space_state(const char *sql, bool refuse)
{
	uint64		invals;
	const char *state;

	static bool registered = false;

	if (space_own)
		return "own";
	if (!registered)
	{
		awa_relcache_listen(xid_space_invalidate);
		CacheRegisterSyscacheCallback(SUBSCRIPTIONRELMAP, subscriptions_changed, (Datum) 0);
		registered = true;
	}
	space_relid = awa_relid(awa_namespace(), "xid_space");
	if (!OidIsValid(space_relid))
		return "own";
	invals = space_invals;
	if (refuse)
		refuse_subscribed_tables();
	state = sql != NULL ? query_text(sql) : fresh_state();
	if (strcmp(state, "adopted") == 0 || strcmp(state, "rebased") == 0)
		state = "own";
	if (strcmp(state, "own") == 0 && invals == space_invals)
		space_own = true;
	return state;
}

/*
 * Before an enqueue writes an entry or a claim reads a window: the rows are
 * this cluster's, recorded as such (fresh) or rebased (moved, unmarked) in
 * the caller's transaction if need be.
 */
void
awa_xid_space_adopt(void)
{
	const char *state;

	if (!IsolationUsesXactSnapshot())
	{
		(void) space_state("SELECT awa.adopt_xid_space()", false);
		return;
	}

	/*
	 * At REPEATABLE READ and SERIALIZABLE the state is only read, fresh:
	 * adopting rewrites rows and must see every commit made before its locks,
	 * so any state but own is refused.
	 */
	state = space_state(NULL, false);
	if (strcmp(state, "own") == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("the jobs of database \"%s\" are not yet this cluster's, and adopting "
					"them needs READ COMMITTED, not %s", get_database_name(MyDatabaseId),
					awa_isolation_name()),
			 errdetail("Their xid space is %s (docs/storage.md A.17); adopting them rewrites "
					   "rows and must see every commit made before its locks.", state),
			 errhint("Run SELECT awa.adopt_xid_space(); in a READ COMMITTED transaction "
					 "(a READ COMMITTED enqueue or claim, or the worker, also does it), "
					 "then retry.")));
}

/*
 * Before a reader (counts, a job's state, a cancel, a prune's proof) reads a
 * window: refuses when the rows came from another cluster and are not
 * rebased yet.
 */
void
awa_xid_space_require(void)
{
	const char *state = space_state(STATE_SQL, true);

	if (strcmp(state, "own") == 0 || strcmp(state, "fresh") == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the jobs of database \"%s\" %s", get_database_name(MyDatabaseId),
					strcmp(state, "moved") == 0
					? "came from another cluster and are not rebased yet"
					: "were loaded without the mark of their cluster (a restore under way, "
					"or a dump taken before awa_bgw 0.10)"),
			 errdetail("Their transaction ids belong to another xid space; reading a claim "
					   "window now could lose or repeat jobs."),
			 errhint("The next enqueue or claim, or the awa_bgw worker, rebases them once "
					 "the restore has finished; or run SELECT awa.adopt_xid_space() as "
					 "the extension's owner.")));
}

/* awa.cluster_system_identifier() RETURNS bigint */
Datum
awa_cluster_system_identifier(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) GetSystemIdentifier());
}

/*
 * awa_internal.xid_space_changed(): the statement trigger of awa.xid_space. The
 * relcache invalidation it asks for is sent when the transaction commits
 * (and seen at once by this backend's next command, or undone at abort).
 */
Datum
awa_xid_space_changed(PG_FUNCTION_ARGS)
{
	return awa_table_changed_trigger(fcinfo, "xid_space_changed()", "awa.xid_space");
}

/*
 * awa_internal.xid_space_settle() RETURNS text: the worker's check at the start of a
 * pass. Own: maintain. Moved: rebased here, then own, once the restore has
 * set the sequences (restoring until then). Fresh or unmarked: a restore may
 * be under way; the worker does not touch the rows and waits.
 */
Datum
awa_xid_space_settle(PG_FUNCTION_ARGS)
{
	const char *state = space_state(STATE_SQL, true);

	if (strcmp(state, "moved") == 0)
		state = space_state("SELECT awa.adopt_xid_space(false)", false);
	PG_RETURN_TEXT_P(cstring_to_text(state));
}
