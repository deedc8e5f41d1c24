/*-------------------------------------------------------------------------
 *
 * unique.h
 *	  The C side of unique jobs (unique.c): awa.unique_job, called by enqueue.
 *
 * src/dataplane/unique.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_UNIQUE_H
#define AWA_UNIQUE_H

extern int64 awa_unique_job(text *queue, const Datum *v, const bool *n, int64 job_id);

#endif							/* AWA_UNIQUE_H */
