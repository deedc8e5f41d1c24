/*-------------------------------------------------------------------------
 *
 * relprobe.c
 *	  awa.try_relation_empty(regclass): the never-waiting emptiness probe that
 *	  rotation's busy and idle gates and prune's already-pruned gate use.
 *
 * It takes ACCESS SHARE only if that is granted at once (a child held
 * ACCESS EXCLUSIVE by a prune reads as NULL, "locked"), checks SELECT
 * privilege, and looks for one tuple with a dirty snapshot: a row inserted by
 * a transaction still in progress counts, so rotation never moves into a slot
 * that an open enqueue is writing, and prune never calls such a slot empty.
 * It writes nothing and assigns no transaction id. Because its dirty read
 * sees rows that no snapshot and no row-level security policy would show, it
 * probes only tables of schema awa without row-level security.
 *
 * src/rel/relprobe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(awa_try_relation_empty);

#define PROBE_SCHEMA "awa"

/* Refuses a relation of another schema; relnamespace as the caller read it. */
static void
require_awa_schema(Oid relid, Oid relnamespace)
{
	if (relnamespace == get_namespace_oid(PROBE_SCHEMA, true))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("awa.try_relation_empty() does not probe \"%s\": it is not in schema %s",
					get_rel_name(relid), PROBE_SCHEMA),
			 errhint("It probes the ring child partitions of schema %s only.",
					 PROBE_SCHEMA)));
}

/* Refuses a table with row-level security: the dirty read would bypass it. */
static void
require_no_row_security(Relation rel)
{
	if (!rel->rd_rel->relrowsecurity)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("awa.try_relation_empty() does not probe \"%s\": it has row-level security enabled",
					RelationGetRelationName(rel)),
			 errhint("Its probe reads every row, bypassing row security policies; "
					 "disable row-level security on the table, or do not probe it.")));
}

Datum
awa_try_relation_empty(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	SnapshotData dirty;
	TableScanDesc scan;
	TupleTableSlot *slot;
	bool		found;

	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid))));
	require_awa_schema(relid, get_rel_namespace(relid));

	if (!ConditionalLockRelationOid(relid, AccessShareLock))
		PG_RETURN_NULL();

	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
	{
		UnlockRelationOid(relid, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	}
	if (rel->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(rel)),
				 errhint("awa.try_relation_empty() probes one ring child partition, "
						 "not a partitioned parent.")));
	/* again under the lock: SET SCHEMA and ENABLE ROW LEVEL SECURITY need a stronger one */
	require_awa_schema(relid, rel->rd_rel->relnamespace);
	require_no_row_security(rel);

	InitDirtySnapshot(dirty);
	scan = table_beginscan(rel, &dirty, 0, NULL);
	slot = table_slot_create(rel, NULL);
	found = table_scan_getnextslot(scan, ForwardScanDirection, slot);
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	relation_close(rel, NoLock);

	PG_RETURN_BOOL(!found);
}
