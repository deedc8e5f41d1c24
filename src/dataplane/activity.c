/*-------------------------------------------------------------------------
 *
 * activity.c
 *	  What wakes a worker that sleeps idle (docs/operations.md, "When idle"):
 *	  every path that writes the data plane (an enqueue, deferred or due; a
 *	  claim; a completion, failure or heartbeat of an attempt; a cancel,
 *	  through awa_internal.note_activity()) notes it here, and when its
 *	  transaction commits, after the commit is visible, the worker of the
 *	  database is woken if it sleeps on its idle cadences
 *	  (awa_status_wake_idle_worker; nothing is written while it does not). A
 *	  PREPARE wakes it too: the worker does not sleep idle while a prepared
 *	  transaction of its database may hold jobs. An abort wakes no one.
 *	  A transaction that wrote a deferred job (a job not yet due, or a retry
 *	  with a backoff) also wakes a worker whose promotion waits for the next
 *	  deferred job to fall due (awa_status_wake_for_deferred).
 *
 * src/dataplane/activity.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"

#include "src/dataplane/activity.h"
#include "src/status/shmem.h"

PG_FUNCTION_INFO_V1(awa_note_activity);

static bool callback_registered = false;
static bool wrote_data_plane = false;
static bool wrote_deferred = false;

static void
activity_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			if (wrote_data_plane)
				awa_status_wake_idle_worker();
			if (wrote_deferred)
				awa_status_wake_for_deferred();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			break;
		default:
			return;
	}
	wrote_data_plane = false;
	wrote_deferred = false;
}

/* This transaction writes the data plane. */
void
awa_activity_note(void)
{
	if (!callback_registered)
	{
		RegisterXactCallback(activity_xact_callback, NULL);
		callback_registered = true;
	}
	wrote_data_plane = true;
}

/* This transaction writes a deferred job (and so the data plane). */
void
awa_activity_note_deferred(void)
{
	awa_activity_note();
	wrote_deferred = true;
}

/* awa_internal.note_activity(): the same, for the paths in SQL (a cancel) */
Datum
awa_note_activity(PG_FUNCTION_ARGS)
{
	awa_activity_note();
	PG_RETURN_VOID();
}
