/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  The cumulative counters of each database's maintenance (stats.c,
 *	  awa.worker_stats): kept by database, not by worker, so that they
 *	  outlive a worker's restart; zeroed by awa.stats_reset() and by a
 *	  server restart.
 *
 * src/status/stats.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_STATS_H
#define AWA_STATS_H

#include "src/awa_bgw.h"

typedef enum AwaCounter
{
	AWA_C_WORKER_STARTS = 0,
	AWA_C_LEADER_TERMS,
	AWA_C_PROMOTE_RUNS,
	AWA_C_JOBS_PROMOTED,
	AWA_C_RESCUE_RUNS,
	AWA_C_JOBS_RESCUED,
	AWA_C_FOLDS_RUN,
	AWA_C_FOLDS_STOOD_DOWN,
	AWA_C_ROWS_FOLDED,
	AWA_C_ROWS_TRIMMED,
	AWA_C_PURGE_RUNS,
	AWA_C_PURGES_STOOD_DOWN,
	AWA_C_FAILED_JOBS_PURGED,
	AWA_C_STEP_ERRORS,
	AWA_NCOUNTERS
} AwaCounter;

extern void awa_stats_shmem_request(void);
extern void awa_stats_shmem_startup(void);

extern void awa_stats_attach(Oid dboid, const char *dbname);
extern void awa_stats_count(AwaCounter counter, uint64 n);
extern void awa_stats_count_ring(AwaRing ring, bool rotate, int outcome);

#endif							/* AWA_STATS_H */
