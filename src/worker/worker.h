/*-------------------------------------------------------------------------
 *
 * worker.h
 *	  The per-database maintenance worker (worker.c): its entry point, and
 *	  what the launcher hands it in bgw_extra: plain values only (a dynamic
 *	  worker gets a copy of the registration).
 *
 * src/worker/worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_WORKER_H
#define AWA_WORKER_H

#include "postmaster/bgworker.h"

typedef struct AwaWorkerArgs
{
	Oid			roleoid;		/* InvalidOid: the bootstrap superuser */
	char		dbname[NAMEDATALEN];
} AwaWorkerArgs;

StaticAssertDecl(sizeof(AwaWorkerArgs) <= BGW_EXTRALEN,
				 "AwaWorkerArgs does not fit in bgw_extra");

/* bgw_function_name of the workers the launcher registers */
extern PGDLLEXPORT void awa_bgw_worker_main(Datum main_arg);

#endif							/* AWA_WORKER_H */
