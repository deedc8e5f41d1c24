/*-------------------------------------------------------------------------
 *
 * worker_args.h
 *	  What the launcher hands a maintenance worker in bgw_extra: plain
 *	  values only (a dynamic worker gets a copy of the registration).
 *
 * src/worker/worker_args.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_WORKER_ARGS_H
#define AWA_WORKER_ARGS_H

#include "postmaster/bgworker.h"

typedef struct AwaWorkerArgs
{
	Oid			roleoid;		/* InvalidOid: the bootstrap superuser */
	char		dbname[NAMEDATALEN];
} AwaWorkerArgs;

StaticAssertDecl(sizeof(AwaWorkerArgs) <= BGW_EXTRALEN,
				 "AwaWorkerArgs does not fit in bgw_extra");

#endif							/* AWA_WORKER_ARGS_H */
