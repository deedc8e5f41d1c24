/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  The differences between the PostgreSQL majors that awa_bgw builds
 *	  against (15 to 18), in one place. Each is guarded on the release that
 *	  made the change, so that the majors between those tested build too, and
 *	  says in one line why it exists. The code calls the awa_ names (or the
 *	  newer PostgreSQL name where the old release lacks it); nothing else in
 *	  the tree tests PG_VERSION_NUM. Include it after postgres.h.
 *
 * src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_COMPAT_H
#define AWA_COMPAT_H

/* 16 moved the varlena macros (VARDATA_ANY, VARSIZE_ANY_EXHDR) out of postgres.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* 16 named a relation's storage a RelFileLocator (rd_locator.relNumber, was rd_node.relNode) */
#if PG_VERSION_NUM >= 160000
#define awa_relation_file_number(rel) ((rel)->rd_locator.relNumber)
#else
#define awa_relation_file_number(rel) ((rel)->rd_node.relNode)
#endif

/* 16 gave build_attrmap_by_name missing_ok: a missing column stays an error here */
#if PG_VERSION_NUM >= 160000
#define awa_build_attrmap_by_name(in, out) build_attrmap_by_name((in), (out), false)
#else
#define awa_build_attrmap_by_name(in, out) build_attrmap_by_name((in), (out))
#endif

/* 16 gave ExecInsertIndexTuples onlySummarizing: an insert updates every index */
#if PG_VERSION_NUM >= 160000
#define awa_insert_index_tuples(rri, slot, estate) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, false, NULL, NIL, false)
#else
#define awa_insert_index_tuples(rri, slot, estate) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, false, NULL, NIL)
#endif

/* 17 gave LockHeldByMe orstronger: the private locks ask for their one mode exactly */
#if PG_VERSION_NUM >= 170000
#define awa_lock_held_by_me(tag, mode) LockHeldByMe((tag), (mode), false)
#else
#define awa_lock_held_by_me(tag, mode) LockHeldByMe((tag), (mode))
#endif

/* 17 dropped PGPROC.pgprocno: a proc's number is its place in ProcGlobal->allProcs */
#if PG_VERSION_NUM < 170000
#define GetNumberFromPGProc(proc) ((proc)->pgprocno)
#endif

/* 18 gave index_beginscan an instrumentation argument: the probes keep none */
#if PG_VERSION_NUM >= 180000
#define awa_index_beginscan(heap, index, snapshot, nkeys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), 0)
#else
#define awa_index_beginscan(heap, index, snapshot, nkeys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), 0)
#endif

/* 18 gave index_beginscan_bitmap an instrumentation argument too: none kept */
#if PG_VERSION_NUM >= 180000
#define awa_index_beginscan_bitmap(index, snapshot, nkeys) \
	index_beginscan_bitmap((index), (snapshot), NULL, (nkeys))
#else
#define awa_index_beginscan_bitmap(index, snapshot, nkeys) \
	index_beginscan_bitmap((index), (snapshot), (nkeys))
#endif

/*
 * 18 made a backend's own bitmap iterator a TBMPrivateIterator that iterates
 * into the caller's result (TBMIterator became a by-value union of it and the
 * shared one): awa_tbm_next gives only the next page's block number
 */
#include "nodes/tidbitmap.h"
#if PG_VERSION_NUM >= 180000
typedef TBMPrivateIterator AwaTbmIter;
#define awa_tbm_begin(tbm) tbm_begin_private_iterate(tbm)
#define awa_tbm_end(it) tbm_end_private_iterate(it)
static inline bool
awa_tbm_next(AwaTbmIter *it, BlockNumber *blockno)
{
	TBMIterateResult res;

	if (!tbm_private_iterate(it, &res))
		return false;
	*blockno = res.blockno;
	return true;
}
#else
typedef TBMIterator AwaTbmIter;
#define awa_tbm_begin(tbm) tbm_begin_iterate(tbm)
#define awa_tbm_end(it) tbm_end_iterate(it)
static inline bool
awa_tbm_next(AwaTbmIter *it, BlockNumber *blockno)
{
	TBMIterateResult *res = tbm_iterate(it);

	if (res == NULL)
		return false;
	*blockno = res->blockno;
	return true;
}
#endif

/*
 * 18 renamed a result relation's CHECK states (ri_CheckConstraintExprs), and
 * added NOT ENFORCED checks (none built, none evaluated) and virtual generated
 * columns, which a check's expression is expanded over before it is planned
 */
#if PG_VERSION_NUM >= 180000
#define awa_rri_checks(rri) ((rri)->ri_CheckConstraintExprs)
#define awa_check_enforced(check) ((check).ccenforced)
#define awa_has_virtual_columns(constr) ((constr)->has_generated_virtual)
#else
#define awa_rri_checks(rri) ((rri)->ri_ConstraintExprs)
#define awa_check_enforced(check) true
#define awa_has_virtual_columns(constr) false
#endif

#endif							/* AWA_COMPAT_H */
