/*-------------------------------------------------------------------------
 *
 * enqueue.h
 *	  The writing of new jobs (enqueue.c), shared with enqueue_batch and the
 *	  requeue of a retry (attempts.c).
 *
 * src/dataplane/enqueue.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_ENQUEUE_H
#define AWA_ENQUEUE_H

#include "datatype/timestamp.h"

/* one job to enqueue: the fields of awa.new_job (kind, args, error: datums) */
typedef struct AwaNewJob
{
	int32		ord;
	int64		job_id;
	Datum		kind;
	Datum		args;
	int32		priority;		/* checked: 0 to 9 */
	TimestampTz run_at;
	int32		attempt;
	int32		max_attempts;
	TimestampTz created_at;
	Datum		error;			/* 0: NULL */
} AwaNewJob;

extern int64 awa_next_job_id(void);
extern void awa_enqueue_jobs(text *queue, AwaNewJob *jobs, int njobs);

#endif							/* AWA_ENQUEUE_H */
