/*-------------------------------------------------------------------------
 *
 * jobstate.h
 *	  A job's state as a fresh read (jobstate.c), for unique enqueues at
 *	  REPEATABLE READ and SERIALIZABLE.
 *
 * src/dataplane/jobstate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_JOBSTATE_H
#define AWA_JOBSTATE_H

#include "src/rel/scan.h"

extern char *awa_job_state_fresh(Oid nsp, int64 job_id, const AwaFreshRead *fresh);

#endif							/* AWA_JOBSTATE_H */
