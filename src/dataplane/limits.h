/*-------------------------------------------------------------------------
 *
 * limits.h
 *	  Running limits per queue (limits.c): the shared counts, the claim's
 *	  reservation and the closes that free room.
 *
 * src/dataplane/limits.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_LIMITS_H
#define AWA_LIMITS_H

#include "fmgr.h"

extern void awa_limits_shmem_request(void);
extern void awa_limits_shmem_startup(void);
extern void awa_limits_init(void);

extern int	awa_limit_reserve(text *queue, int32 max_running, int asked, uint64 *epoch);
extern void awa_limit_settle(text *queue, uint64 epoch, int reserved, int took);
extern void awa_limit_note_closed(text *queue, int n);

#endif							/* AWA_LIMITS_H */
