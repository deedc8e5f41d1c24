/*-------------------------------------------------------------------------
 *
 * wait.h
 *	  Claims that wait (wait.c): the lanes a transaction claimed from or
 *	  enqueued into, noted for its end, which wakes the waiting claims; the
 *	  claim itself, for a call that claims after other work; the catch of an
 *	  internal subtransaction that failed.
 *
 * src/dataplane/wait.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_WAIT_H
#define AWA_WAIT_H

#include "fmgr.h"
#include "nodes/execnodes.h"
#include "utils/resowner.h"

extern void awa_wait_shmem_request(void);
extern void awa_wait_shmem_startup(void);

extern void awa_claim_now_args(FunctionCallInfo fcinfo, int first, ReturnSetInfo *rsi);
extern bool awa_claim_missed_busy_lane(void);
extern int64 awa_claim_token_due_us(void);
extern void awa_note_claimed_lane(text *queue, int taken, int32 lane);
extern void awa_wake_queue_waiters(const char *queue, int n);
extern void awa_note_enqueued_lane(text *queue, int jobs, int32 lane, int32 ready_slot);
extern ErrorData *awa_subxact_abort(MemoryContext cxt, ResourceOwner owner);

#endif							/* AWA_WAIT_H */
