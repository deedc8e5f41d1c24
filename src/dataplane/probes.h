/*-------------------------------------------------------------------------
 *
 * probes.h
 *	  The fixed shape of the 0.9 rings, and what the hot paths and the 0.7/0.8
 *	  probes (src/legacy/probes_08.c) share of the per-slot probes (probes.c):
 *	  the ring cursor and the ring a cursor function is asked for, slot
 *	  arithmetic and checks, the cancel tombstone of an entry, a row appended
 *	  to a set-returning result.
 *
 * src/dataplane/probes.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_PROBES_H
#define AWA_PROBES_H

#include "access/attmap.h"
#include "fmgr.h"
#include "nodes/execnodes.h"

#include "src/rel/scan.h"

/*
 * The fixed shape of 0.9, the one C spelling of it: SQL's is awa.lane_shards()
 * and awa.ring_slot_count() (sql-src/api/lane_shards.sql,
 * sql-src/internal/names.sql). The lease ring's size is not needed in C.
 */
#define AWA_LANE_SHARDS		8
#define AWA_QUEUE_SLOTS		16
#define AWA_CLAIM_SLOTS		8

extern bool awa_ring_cursor_read(Oid nsp, const char *ring, int32 *slot, int64 *generation);
extern bool awa_ring_cursor_read_as(Oid nsp, const char *ring, const AwaFreshRead *fresh,
									int32 *slot, int64 *generation);
extern int	awa_ring_slot(int64 slot, int64 back, int nslots);
extern void awa_check_slots(int32 slot, int64 generation, int32 nslots);
extern bool awa_tombstoned(ChildScan *done, AttrNumber a_lease, int32 lane_id,
						   int64 lane_seq);
extern char *awa_ring_cursor_arg(FunctionCallInfo fcinfo);
extern void awa_ring_cursor_put(ReturnSetInfo *rsinfo, Oid nsp, const char *ring);
extern void awa_emit_row(ReturnSetInfo *rsinfo, TupleTableSlot *slot, AttrMap *map);

#endif							/* AWA_PROBES_H */
