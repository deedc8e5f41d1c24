/*-------------------------------------------------------------------------
 *
 * readyof.c
 *	  A job's ready entries for the SQL readers (awa.job's records,
 *	  awa.cancel of an available job): awa_internal.ready_entries_of(job_id),
 *	  every child of the queue ring read by the job-id lookup that the C
 *	  readers share (rel/scan.c awa_child_scan_job), so that what these
 *	  readers cost depends on no plan and on no kind of index.
 *
 * It reads under the statement's snapshot, as the SQL it replaces did
 * (rel/scan.c awa_statement_read). At SERIALIZABLE the scans get SnapshotAny
 * and the statement's snapshot as their filter, so that they take no
 * predicate lock (an index without predicate locks of its own, BRIN, would
 * otherwise be locked whole and conflict with every enqueue into its child;
 * docs/storage.md A.18). The caller holds the ring families
 * (awa_internal.hold_ring_families), as for the SQL before.
 *
 * src/dataplane/readyof.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/attmap.h"
#include "funcapi.h"
#include "utils/rel.h"

#include "src/compat.h"
#include "src/dataplane/probes.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_ready_entries_of);

/*
 * The job's rows of one ready child into the result, each in the parent's
 * row type (a child made after a column was dropped lays its columns out
 * otherwise: mapped by name).
 */
static void
put_child_rows(ReturnSetInfo *rsinfo, Relation heap, int64 job_id, const AwaFreshRead *read)
{
	AttrMap    *map = awa_build_attrmap_by_name(RelationGetDescr(heap), rsinfo->setDesc);
	ChildScan	cs;

	awa_child_scan_job(&cs, heap, job_id, read);
	while (awa_child_scan_next(&cs, ForwardScanDirection))
		awa_emit_row(rsinfo, cs.slot, map);
	awa_child_scan_end(&cs);
	free_attrmap(map);
}

/*
 * awa_internal.ready_entries_of(job_id bigint) RETURNS SETOF awa.ready_entries
 *
 * Every ready entry of the job the statement's snapshot sees, slot by slot.
 */
Datum
awa_ready_entries_of(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			nsp = awa_namespace();
	int64		job_id = PG_GETARG_INT64(0);
	AwaFreshRead read;
	int			s;

	InitMaterializedSRF(fcinfo, 0);
	awa_statement_read(&read);
	for (s = 0; s < AWA_QUEUE_SLOTS; s++)
		put_child_rows(rsinfo, awa_open_table(nsp, "ready_entries", s), job_id, &read);
	return (Datum) 0;
}
