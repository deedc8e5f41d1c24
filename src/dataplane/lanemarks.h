/*-------------------------------------------------------------------------
 *
 * lanemarks.h
 *	  Empty-lane marks and the txid bounds of the ready children, in shared
 *	  memory (lanemarks.c).
 *
 * src/dataplane/lanemarks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_LANEMARKS_H
#define AWA_LANEMARKS_H

extern void awa_lane_marks_shmem_request(void);
extern void awa_lane_marks_shmem_startup(void);

extern void awa_lane_bump(int32 lane);
extern void awa_lane_marks_prepare(TransactionId xid);
extern void awa_ready_child_entered(int32 slot);
extern uint64 awa_ready_space_bound(void);
extern uint64 awa_ready_child_bound(int32 slot, uint64 space_floor);
extern bool awa_lane_marked(int32 lane, uint64 *epoch);
extern void awa_lane_mark_empty(int32 lane, uint64 epoch);

#endif							/* AWA_LANEMARKS_H */
