/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  The shared-memory status of the maintenance workers: one slot per
 *	  worker, written by that worker under the status lock; the databases the
 *	  launcher found no background worker slot for, written by the launcher;
 *	  the set-returning functions behind the awa.maintenance_status view; and
 *	  awa.wake(), the one entry another backend writes (a request that the
 *	  worker of its database run every step now).
 *
 * The status and its lock are private to this file: a worker writes its slot
 * through the awa_status_* functions, the launcher and the statistics ask
 * theirs (shmem.h). Nothing that can raise an error runs while the lock is
 * held: no allocation, no ereport; what is to be reported or formatted is
 * copied out first.
 *
 * src/status/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "src/compat.h"
#include "src/status/shmem.h"

PG_FUNCTION_INFO_V1(awa_maintenance_worker_status);
PG_FUNCTION_INFO_V1(awa_maintenance_worker_ticks);
PG_FUNCTION_INFO_V1(awa_maintenance_worker_prune_blockers);
PG_FUNCTION_INFO_V1(awa_wake);
PG_FUNCTION_INFO_V1(awa_live_worker_instances);
PG_FUNCTION_INFO_V1(awa_maintenance_worker_idle);

/* the bytes a slot keeps of a blocker or a reason; of an error, a pin or a verdict */
#define AWA_INSTANCE_ID_LEN	40	/* a uuid's text and its NUL */
#define AWA_LABEL_LEN		64
#define AWA_ERROR_LEN		256

/*
 * One maintenance worker's status slot. Every field is guarded by the status
 * lock (AwaSharedState.lock): written under it in exclusive mode, read by
 * other processes under it in shared mode. Each field but wake_pending has one
 * writer, the worker that holds the slot (attach sets the identity fields;
 * detach clears in_use and pid), so that worker may read its own slot without
 * the lock.
 */
typedef struct AwaWorkerStatus
{
	bool		in_use;			/* status lock */
	Oid			dboid;			/* status lock */
	char		dbname[NAMEDATALEN];	/* status lock */
	int			pid;			/* status lock */
	int			procno;			/* status lock: the PGPROC whose latch awa.wake() sets */
	char		instance_id[AWA_INSTANCE_ID_LEN];	/* status lock: its row of
													 * awa.runtime_instances; "" */
	AwaWorkerState state;		/* status lock */
	TimestampTz state_since;	/* status lock */
	TimestampTz started_at;		/* status lock */
	TimestampTz leader_since;	/* status lock; 0 when not leader */
	uint64		rotations[AWA_RING_COUNT][AWA_ROTATE_NOUTCOMES];	/* status lock */
	char		last_blocker[AWA_RING_COUNT][AWA_LABEL_LEN];	/* status lock */
	uint64		prunes[AWA_RING_COUNT][AWA_PRUNE_NOUTCOMES];	/* status lock */
	char		last_prune_reason[AWA_RING_COUNT][AWA_LABEL_LEN];	/* status lock */
	/* status lock: pids holding or awaiting a lock a blocked prune wanted (0.9) */
	int			prune_blockers[AWA_RING_COUNT][AWA_PRUNE_BLOCKERS_MAX];
	int			nprune_blockers[AWA_RING_COUNT];	/* status lock */
	uint64		folds_run;		/* status lock */
	uint64		folds_stood_down;	/* status lock */
	uint64		rows_folded;	/* status lock */
	uint64		rows_trimmed;	/* status lock */
	TimestampTz last_fold_at;	/* status lock */
	char		pin_holder[AWA_ERROR_LEN];	/* status lock; empty: no pin at the last fold */
	char		auto_flip[AWA_ERROR_LEN];	/* status lock: the auto-flip check's verdict */
	TimestampTz auto_flip_since;	/* status lock: the stable window's start, or 0 */
	uint64		errors;			/* status lock */
	char		last_error[AWA_ERROR_LEN];	/* status lock */
	TimestampTz last_error_at;	/* status lock */
	uint64		ticks;			/* status lock: passes of the worker's loop */
	uint64		failed_jobs_purged; /* status lock: failed_jobs rows deleted */
	uint64		purge_batches;	/* status lock: retention transactions that deleted */
	bool		wake_pending;	/* status lock; set by awa.wake() in any backend */
	TimestampTz idle_since;		/* status lock: asleep on the idle cadences since; 0 */
	/*
	 * No lock: 1 while the worker sleeps on its idle cadences (or is about
	 * to); the first commit that wrote the data plane sets it to 0 and the
	 * worker's latch (awa_status_wake_idle_worker).
	 */
	pg_atomic_uint32 idle_armed;
	/*
	 * No lock: 1 while the worker's promotion waits for the next deferred job
	 * to fall due (armed before each promotion); the first commit that wrote
	 * a deferred job sets it to 0 and the worker's latch
	 * (awa_status_wake_for_deferred).
	 */
	pg_atomic_uint32 deferred_armed;
} AwaWorkerStatus;

typedef struct AwaSharedState
{
	LWLock	   *lock;			/* the status lock */
	AwaWorkerStatus workers[AWA_BGW_MAX_DATABASES]; /* status lock */
	AwaSlotWait slot_waits[AWA_BGW_MAX_DATABASES];	/* status lock; the launcher's */
} AwaSharedState;

static AwaSharedState *awa_shared = NULL;

/* This worker's slot (NULL outside a maintenance worker, and once detached). */
static AwaWorkerStatus *my_status = NULL;
/* its database's name, for this worker's messages */
static char my_dbname[NAMEDATALEN];

static const char *const rotate_outcome_names[AWA_ROTATE_NOUTCOMES] = {
	"rotated", "skipped_idle", "skipped_busy", "lost_cas"
};
static const char *const prune_outcome_names[AWA_PRUNE_NOUTCOMES] = {
	"pruned", "noop", "already_pruned", "blocked", "skipped_active"
};

/*
 * A text for a status field of len bytes (len <= AWA_ERROR_LEN): the text when
 * it fits, else its start, cut at a character boundary and ended with "...",
 * so that a cut shows. Done before the status lock is taken.
 */
#define STATUS_CUT_MARK		"..."

static const char *
status_text(const char *src, char *buf, size_t len)
{
	size_t		n = strlen(src);
	int			keep;

	Assert(len <= AWA_ERROR_LEN && len > sizeof(STATUS_CUT_MARK));
	if (n < len)
		return src;
	keep = pg_mbcliplen(src, (int) n, (int) (len - sizeof(STATUS_CUT_MARK)));
	memcpy(buf, src, keep);
	strcpy(buf + keep, STATUS_CUT_MARK);
	return buf;
}

void
awa_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(sizeof(AwaSharedState)));
	RequestNamedLWLockTranche("awa_bgw", 1);
}

void
awa_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	awa_shared = ShmemInitStruct("awa_bgw", sizeof(AwaSharedState), &found);
	if (!found)
	{
		int			i;

		memset(awa_shared, 0, sizeof(AwaSharedState));
		awa_shared->lock = &(GetNamedLWLockTranche("awa_bgw"))->lock;
		for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
		{
			pg_atomic_init_u32(&awa_shared->workers[i].idle_armed, 0);
			pg_atomic_init_u32(&awa_shared->workers[i].deferred_armed, 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

static const char *
awa_state_name(AwaWorkerState state)
{
	switch (state)
	{
		case AWA_STATE_STARTING:
			return "starting";
		case AWA_STATE_WAITING_FOR_EXTENSION:
			return "waiting_for_extension";
		case AWA_STATE_NEEDS_UPGRADE:
			return "needs_upgrade";
		case AWA_STATE_IN_RECOVERY:
			return "in_recovery";
		case AWA_STATE_DISABLED:
			return "disabled";
		case AWA_STATE_FOLLOWER:
			return "follower";
		case AWA_STATE_LEADER:
			return "leader";
		case AWA_STATE_BAD_ROLE:
			return "bad_role";
		case AWA_STATE_NO_WORKER_SLOT:
			return "no_worker_slot";
		case AWA_STATE_RESTORE_PENDING:
			return "restore_pending";
	}
	return "unknown";
}

static void
status_detach(int code, Datum arg)
{
	if (my_status == NULL)
		return;
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	my_status->in_use = false;
	my_status->pid = 0;
	LWLockRelease(awa_shared->lock);
	my_status = NULL;
}

/*
 * Claim a status slot for this worker: the one its database used last, else a
 * free one. The slot is released at exit by a callback installed first.
 * Nothing under the lock can fail: a conflict is reported after releasing it.
 */
void
awa_status_attach(Oid dboid, const char *dbname)
{
	AwaWorkerStatus *free_slot = NULL;
	int			other_pid = 0;
	TimestampTz now = GetCurrentTimestamp();
	int			i;

	if (awa_shared == NULL)
		elog(ERROR, "awa_bgw shared memory is not initialized");

	before_shmem_exit(status_detach, (Datum) 0);

	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		AwaWorkerStatus *st = &awa_shared->workers[i];

		if (st->in_use && st->dboid == dboid)
			other_pid = st->pid;
		if (!st->in_use && (free_slot == NULL || st->dboid == dboid))
			free_slot = st;
	}
	if (other_pid == 0 && free_slot != NULL)
	{
		memset(free_slot, 0, sizeof(AwaWorkerStatus));
		pg_atomic_init_u32(&free_slot->idle_armed, 0);
		pg_atomic_init_u32(&free_slot->deferred_armed, 0);
		free_slot->in_use = true;
		free_slot->dboid = dboid;
		strlcpy(free_slot->dbname, dbname, NAMEDATALEN);
		free_slot->pid = MyProcPid;
		free_slot->procno = GetNumberFromPGProc(MyProc);
		free_slot->state = AWA_STATE_STARTING;
		free_slot->started_at = free_slot->state_since = now;
		my_status = free_slot;
	}
	LWLockRelease(awa_shared->lock);

	if (other_pid != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("another awa_bgw worker (PID %d) already maintains database \"%s\"",
						other_pid, dbname),
				 errhint("Only one awa_bgw worker runs per database; this one exits.")));
	if (free_slot == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("no free awa_bgw status slot for database \"%s\"", dbname),
				 errhint("awa_bgw maintains at most %d databases.", AWA_BGW_MAX_DATABASES)));
	strlcpy(my_dbname, dbname, NAMEDATALEN);
}

/* The name of this worker's database, as it attached. */
const char *
awa_status_dbname(void)
{
	return my_dbname;
}

/*
 * This worker's state; leader_since is set when it becomes leader, cleared
 * when it stops being one. (Its own slot: the state is read without the lock.)
 */
void
awa_status_set_state(AwaWorkerState state)
{
	TimestampTz now;

	if (my_status == NULL || my_status->state == state)
		return;
	now = GetCurrentTimestamp();
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	my_status->state = state;
	my_status->state_since = now;
	my_status->leader_since = (state == AWA_STATE_LEADER) ? now : 0;
	LWLockRelease(awa_shared->lock);
}

/*
 * The id of this worker's row in awa.runtime_instances (0.10): while the
 * worker runs, awa_internal.live_worker_instances() lists it, so the fleet
 * gate counts the row live whatever its last_seen_at (docs/design.md §6).
 */
void
awa_status_set_instance_id(const char *instance_id)
{
	if (my_status == NULL)
		return;
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	strlcpy(my_status->instance_id, instance_id, AWA_INSTANCE_ID_LEN);
	LWLockRelease(awa_shared->lock);
}

/*
 * The idle flag (docs/operations.md, "When idle"). The worker arms it before
 * the passes that show the database idle, and sleeps on its idle cadences
 * only if it is still armed after them; a backend whose transaction wrote the
 * data plane reads it after its commit is visible, and disarms it and sets
 * the worker's latch. Either the worker's pass saw the commit, or the
 * backend saw the flag (both sides order their access by a full barrier).
 */
void
awa_status_arm_idle(void)
{
	if (my_status != NULL)
		(void) pg_atomic_exchange_u32(&my_status->idle_armed, 1);
}

/* The worker sleeps on its idle cadences from now on (idle), or no longer. */
void
awa_status_set_idle(bool idle)
{
	TimestampTz since = idle ? GetCurrentTimestamp() : 0;

	if (my_status == NULL || (my_status->idle_since != 0) == idle)
		return;
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	my_status->idle_since = since;
	LWLockRelease(awa_shared->lock);
}

/* Whether the idle flag is still armed: no commit wrote the data plane since. */
bool
awa_status_idle_armed(void)
{
	if (my_status == NULL)
		return false;
	pg_memory_barrier();
	return pg_atomic_read_u32(&my_status->idle_armed) != 0;
}

void
awa_status_disarm_idle(void)
{
	if (my_status != NULL)
		pg_atomic_write_u32(&my_status->idle_armed, 0);
}

/*
 * The worker of this backend's database, or NULL. The slot is found without
 * the lock (its index is kept from the last call): a slot taken over
 * meanwhile by another database's worker at worst costs that worker a pass.
 */
static AwaWorkerStatus *
db_worker(void)
{
	static int	cached = -1;
	int			i;

	if (awa_shared == NULL)
		return NULL;
	if (cached >= 0 && awa_shared->workers[cached].in_use &&
		awa_shared->workers[cached].dboid == MyDatabaseId)
		return &awa_shared->workers[cached];
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
		if (awa_shared->workers[i].in_use && awa_shared->workers[i].dboid == MyDatabaseId)
		{
			cached = i;
			return &awa_shared->workers[i];
		}
	return NULL;
}

/*
 * Disarms flag of the worker st and sets its latch, if the flag is armed;
 * nothing is written while it is not, so a busy database pays one read.
 */
static void
wake_if_armed(AwaWorkerStatus *st, pg_atomic_uint32 *flag)
{
	pg_memory_barrier();
	if (pg_atomic_read_u32(flag) == 0 || pg_atomic_exchange_u32(flag, 0) == 0)
		return;
	SetLatch(&GetPGProcByNumber(st->procno)->procLatch);
}

/*
 * In a backend, after a commit that wrote the data plane: wakes the worker of
 * its database if it sleeps idle.
 */
void
awa_status_wake_idle_worker(void)
{
	AwaWorkerStatus *st = db_worker();

	if (st != NULL)
		wake_if_armed(st, &st->idle_armed);
}

/*
 * The deferred flag (docs/operations.md, "When idle": promotion waits for the
 * next deferred job). The worker arms it before each promotion, whose
 * snapshot then sees every deferred job committed before; a backend whose
 * transaction wrote a deferred job reads it after its commit is visible, and
 * disarms it and sets the worker's latch. Either the promotion saw the job,
 * or the backend saw the flag (full barriers on both sides, as for idle).
 */
void
awa_status_arm_deferred(void)
{
	if (my_status != NULL)
		(void) pg_atomic_exchange_u32(&my_status->deferred_armed, 1);
}

/* Whether the deferred flag is still armed: no deferred job committed since. */
bool
awa_status_deferred_armed(void)
{
	if (my_status == NULL)
		return false;
	pg_memory_barrier();
	return pg_atomic_read_u32(&my_status->deferred_armed) != 0;
}

/* In a backend, after a commit that wrote a deferred job: wakes the worker. */
void
awa_status_wake_for_deferred(void)
{
	AwaWorkerStatus *st = db_worker();

	if (st != NULL)
		wake_if_armed(st, &st->deferred_armed);
}

/* One more pass of the worker's loop, whatever it did. */
void
awa_status_count_tick(void)
{
	if (my_status == NULL)
		return;
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	my_status->ticks++;
	LWLockRelease(awa_shared->lock);
}

/* A rotation's outcome (an index of rotate_outcome_names) and its blocker, if any. */
void
awa_status_note_rotate(AwaRing ring, int outcome, const char *blocker)
{
	char		buf[AWA_LABEL_LEN];

	if (my_status == NULL || outcome < 0 || outcome >= AWA_ROTATE_NOUTCOMES)
		return;
	if (blocker != NULL)
		blocker = status_text(blocker, buf, AWA_LABEL_LEN);
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	my_status->rotations[ring][outcome]++;
	if (blocker != NULL && blocker[0] != '\0')
		strlcpy(my_status->last_blocker[ring], blocker, AWA_LABEL_LEN);
	LWLockRelease(awa_shared->lock);
}

/*
 * A prune's outcome (an index of prune_outcome_names), its reason, if any, and
 * the pids that held or awaited the locks it wanted (none: cleared).
 */
void
awa_status_note_prune(AwaRing ring, int outcome, const char *reason, const int *blockers,
					  int nblockers)
{
	char		buf[AWA_LABEL_LEN];

	if (my_status == NULL || outcome < 0 || outcome >= AWA_PRUNE_NOUTCOMES)
		return;
	if (reason != NULL)
		reason = status_text(reason, buf, AWA_LABEL_LEN);
	nblockers = Max(Min(nblockers, AWA_PRUNE_BLOCKERS_MAX), 0);
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	my_status->prunes[ring][outcome]++;
	if (reason != NULL && reason[0] != '\0')
		strlcpy(my_status->last_prune_reason[ring], reason, AWA_LABEL_LEN);
	if (nblockers > 0)
		memcpy(my_status->prune_blockers[ring], blockers, nblockers * sizeof(int));
	my_status->nprune_blockers[ring] = nblockers;
	LWLockRelease(awa_shared->lock);
}

/*
 * A fold's outcome: rows folded (or trimmed from the ledgers) when it folded,
 * the pin's holder when it stood down; the time of the fold in any case.
 */
void
awa_status_note_fold(AwaFoldOutcome outcome, bool trimmed, uint64 rows,
					 const char *pin_holder)
{
	TimestampTz now = GetCurrentTimestamp();
	char		buf[AWA_ERROR_LEN];

	if (my_status == NULL)
		return;
	pin_holder = status_text(pin_holder ? pin_holder : "", buf, AWA_ERROR_LEN);
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	if (outcome == AWA_FOLD_STOOD_DOWN)
	{
		my_status->folds_stood_down++;
		strlcpy(my_status->pin_holder, pin_holder, AWA_ERROR_LEN);
	}
	else if (outcome == AWA_FOLD_FOLDED)
	{
		my_status->folds_run++;
		if (trimmed)
			my_status->rows_trimmed += rows;
		else
			my_status->rows_folded += rows;
		my_status->pin_holder[0] = '\0';
	}
	my_status->last_fold_at = now;
	LWLockRelease(awa_shared->lock);
}

/* A failed_jobs retention transaction that deleted rows. */
void
awa_status_note_purge(uint64 rows)
{
	if (my_status == NULL || rows == 0)
		return;
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	my_status->failed_jobs_purged += rows;
	my_status->purge_batches++;
	LWLockRelease(awa_shared->lock);
}

/* A step's error, as the step runner formatted it: counted, kept with its time. */
void
awa_status_note_error(const char *error)
{
	TimestampTz now = GetCurrentTimestamp();
	char		buf[AWA_ERROR_LEN];

	if (my_status == NULL)
		return;
	error = status_text(error, buf, AWA_ERROR_LEN);
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	my_status->errors++;
	strlcpy(my_status->last_error, error, AWA_ERROR_LEN);
	my_status->last_error_at = now;
	LWLockRelease(awa_shared->lock);
}

/* The auto-flip check's verdict, and the start of its stable window (0: none). */
void
awa_status_set_auto_flip(const char *verdict, TimestampTz since)
{
	char		buf[AWA_ERROR_LEN];

	if (my_status == NULL)
		return;
	verdict = status_text(verdict, buf, AWA_ERROR_LEN);
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	strlcpy(my_status->auto_flip, verdict, AWA_ERROR_LEN);
	my_status->auto_flip_since = since;
	LWLockRelease(awa_shared->lock);
}

/* The start of this worker's auto-flip stable window, or 0 (its own slot: no lock). */
TimestampTz
awa_status_auto_flip_since(void)
{
	return my_status != NULL ? my_status->auto_flip_since : 0;
}

/* Whether a worker holds a status slot for dboid. */
bool
awa_status_has_worker(Oid dboid)
{
	bool		found = false;
	int			i;

	if (awa_shared == NULL)
		return false;
	LWLockAcquire(awa_shared->lock, LW_SHARED);
	for (i = 0; i < AWA_BGW_MAX_DATABASES && !found; i++)
		found = awa_shared->workers[i].in_use && awa_shared->workers[i].dboid == dboid;
	LWLockRelease(awa_shared->lock);
	return found;
}

/*
 * The pid of the live worker that holds a status slot for dboid, or 0. Asked
 * under the lock: a worker gives its slot back, under the lock, before it
 * exits, so the pid checked is that worker's.
 */
int
awa_status_live_worker_pid(Oid dboid)
{
	int			pid = 0;
	int			i;

	LWLockAcquire(awa_shared->lock, LW_SHARED);
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		AwaWorkerStatus *st = &awa_shared->workers[i];

		if (st->in_use && st->dboid == dboid && st->pid > 0 && kill(st->pid, 0) == 0)
			pid = st->pid;
	}
	LWLockRelease(awa_shared->lock);
	return pid;
}

/*
 * Sends SIGTERM to every worker whose database is none of the n names (under
 * the lock, as above: each pid signalled is a worker that has not exited).
 */
void
awa_status_stop_workers_except(const char (*dbnames)[NAMEDATALEN], int n)
{
	int			i,
				j;

	LWLockAcquire(awa_shared->lock, LW_SHARED);
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		AwaWorkerStatus *st = &awa_shared->workers[i];
		bool		wanted = false;

		if (!st->in_use || st->pid <= 0)
			continue;
		for (j = 0; j < n && !wanted; j++)
			wanted = strcmp(dbnames[j], st->dbname) == 0;
		if (!wanted)
			kill(st->pid, SIGTERM);
	}
	LWLockRelease(awa_shared->lock);
}

/* The launcher replaces the list of databases waiting for a worker slot. */
void
awa_slot_waits_publish(const AwaSlotWait *waits)
{
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	memcpy(awa_shared->slot_waits, waits, sizeof(awa_shared->slot_waits));
	LWLockRelease(awa_shared->lock);
}

/* Whether awa.wake() asked for a pass since the last call; clears the request. */
bool
awa_status_take_wake(void)
{
	bool		pending;

	if (my_status == NULL)
		return false;
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	pending = my_status->wake_pending;
	my_status->wake_pending = false;
	LWLockRelease(awa_shared->lock);
	return pending;
}

/*
 * awa.wake() RETURNS boolean: asks the worker of the current database to run
 * every step now, whatever their cadences (it sets the worker's latch); false
 * when no worker maintains this database.
 */
Datum
awa_wake(PG_FUNCTION_ARGS)
{
	int			procno = -1;
	int			i;

	if (awa_shared == NULL)
		PG_RETURN_BOOL(false);
	LWLockAcquire(awa_shared->lock, LW_EXCLUSIVE);
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		AwaWorkerStatus *st = &awa_shared->workers[i];

		if (st->in_use && st->dboid == MyDatabaseId && st->pid != 0)
		{
			st->wake_pending = true;
			procno = st->procno;
			break;
		}
	}
	LWLockRelease(awa_shared->lock);
	if (procno < 0)
		PG_RETURN_BOOL(false);
	SetLatch(&GetPGProcByNumber(procno)->procLatch);
	PG_RETURN_BOOL(true);
}

/*
 * awa_internal.live_worker_instances() RETURNS SETOF uuid: the rows of
 * awa.runtime_instances whose workers run now and maintain the current
 * database. The ids are copied under the lock (a worker gives its slot back
 * under it before it exits), then read as uuids.
 */
Datum
awa_live_worker_instances(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char		ids[AWA_BGW_MAX_DATABASES][AWA_INSTANCE_ID_LEN];
	int			n = 0;
	int			i;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (awa_shared == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(awa_shared->lock, LW_SHARED);
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		AwaWorkerStatus *st = &awa_shared->workers[i];

		if (st->in_use && st->dboid == MyDatabaseId && st->pid > 0 &&
			st->instance_id[0] != '\0')
			memcpy(ids[n++], st->instance_id, AWA_INSTANCE_ID_LEN);
	}
	LWLockRelease(awa_shared->lock);
	for (i = 0; i < n; i++)
	{
		Datum		value = DirectFunctionCall1(uuid_in, CStringGetDatum(ids[i]));
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
	PG_RETURN_VOID();
}

/* {"queue": {"rotated": n, ..., "last_blocker": "..."}, "lease": ..., "claim": ...} */
static Jsonb *
counters_jsonb(const uint64 (*counts)[], int noutcomes, const char *const *names,
			   const char (*labels)[AWA_LABEL_LEN], const char *label_key)
{
	StringInfoData buf;
	int			r,
				o;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (r = 0; r < AWA_RING_COUNT; r++)
	{
		const uint64 *row = ((const uint64 *) counts) + r * noutcomes;

		appendStringInfo(&buf, "%s\"%s\": {", r ? ", " : "", awa_ring_name(r));
		for (o = 0; o < noutcomes; o++)
			appendStringInfo(&buf, "%s\"%s\": " UINT64_FORMAT, o ? ", " : "",
							 names[o], row[o]);
		appendStringInfo(&buf, ", \"%s\": ", label_key);
		if (labels[r][0])
			escape_json(&buf, labels[r]);
		else
			appendStringInfoString(&buf, "null");
		appendStringInfoChar(&buf, '}');
	}
	appendStringInfoChar(&buf, '}');
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

static Datum
nullable_ts(TimestampTz ts, bool *isnull)
{
	*isnull = (ts == 0);
	return TimestampTzGetDatum(ts);
}

/*
 * A status row for a database that has no worker because no background worker
 * slot was free: no pid, state no_worker_slot since the first failed attempt,
 * errors = the failed attempts, last_error says why.
 */
static void
put_slot_wait_row(ReturnSetInfo *rsinfo, const AwaSlotWait *w)
{
	Datum		values[19] = {0};
	bool		nulls[19];
	int			i;

	for (i = 0; i < 19; i++)
		nulls[i] = true;
	values[0] = DirectFunctionCall1(namein, CStringGetDatum(w->dbname));
	nulls[0] = false;
	values[2] = CStringGetTextDatum(awa_state_name(AWA_STATE_NO_WORKER_SLOT));
	nulls[2] = false;
	values[3] = nullable_ts(w->since, &nulls[3]);
	values[16] = Int64GetDatum((int64) w->attempts);
	nulls[16] = false;
	values[17] = CStringGetTextDatum(psprintf("no free background worker slot "
											  "(max_worker_processes = %d)",
											  max_worker_processes));
	nulls[17] = false;
	values[18] = nullable_ts(w->last_attempt_at, &nulls[18]);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * The rows of awa.maintenance_status: a copy of the slots taken under the lock,
 * then the databases waiting for a background worker slot.
 */
Datum
awa_maintenance_worker_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	AwaWorkerStatus *copy;
	AwaSlotWait *waits;
	int			n = 0;
	int			nwaits = 0;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (awa_shared == NULL)
		PG_RETURN_VOID();

	copy = palloc(sizeof(AwaWorkerStatus) * AWA_BGW_MAX_DATABASES);
	waits = palloc(sizeof(AwaSlotWait) * AWA_BGW_MAX_DATABASES);
	LWLockAcquire(awa_shared->lock, LW_SHARED);
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		if (awa_shared->workers[i].in_use)
			copy[n++] = awa_shared->workers[i];
		if (awa_shared->slot_waits[i].in_use)
			waits[nwaits++] = awa_shared->slot_waits[i];
	}
	LWLockRelease(awa_shared->lock);

	for (i = 0; i < nwaits; i++)
		put_slot_wait_row(rsinfo, &waits[i]);

	for (i = 0; i < n; i++)
	{
		AwaWorkerStatus *st = &copy[i];
		Datum		values[19];
		bool		nulls[19] = {0};

		values[0] = CStringGetDatum(st->dbname);
		values[0] = DirectFunctionCall1(namein, values[0]);
		values[1] = Int32GetDatum(st->pid);
		values[2] = CStringGetTextDatum(awa_state_name(st->state));
		values[3] = nullable_ts(st->state_since, &nulls[3]);
		values[4] = nullable_ts(st->started_at, &nulls[4]);
		values[5] = nullable_ts(st->leader_since, &nulls[5]);
		values[6] = JsonbPGetDatum(counters_jsonb((const uint64 (*)[]) st->rotations,
												  AWA_ROTATE_NOUTCOMES, rotate_outcome_names,
												  (const char (*)[AWA_LABEL_LEN]) st->last_blocker,
												  "last_blocker"));
		values[7] = JsonbPGetDatum(counters_jsonb((const uint64 (*)[]) st->prunes,
												  AWA_PRUNE_NOUTCOMES, prune_outcome_names,
												  (const char (*)[AWA_LABEL_LEN]) st->last_prune_reason,
												  "last_reason"));
		values[8] = Int64GetDatum((int64) st->folds_run);
		values[9] = Int64GetDatum((int64) st->folds_stood_down);
		values[10] = Int64GetDatum((int64) st->rows_folded);
		values[11] = Int64GetDatum((int64) st->rows_trimmed);
		values[12] = nullable_ts(st->last_fold_at, &nulls[12]);
		values[13] = CStringGetTextDatum(st->pin_holder);
		nulls[13] = (st->pin_holder[0] == '\0');
		values[14] = CStringGetTextDatum(st->auto_flip);
		nulls[14] = (st->auto_flip[0] == '\0');
		values[15] = nullable_ts(st->auto_flip_since, &nulls[15]);
		values[16] = Int64GetDatum((int64) st->errors);
		values[17] = CStringGetTextDatum(st->last_error);
		nulls[17] = (st->last_error[0] == '\0');
		values[18] = nullable_ts(st->last_error_at, &nulls[18]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/*
 * awa.maintenance_worker_ticks() RETURNS TABLE (pid int, ticks bigint,
 * failed_jobs_purged bigint, purge_batches bigint): the passes of each worker's
 * loop and its failed_jobs retention (0.9's maintenance_status joins it by pid).
 */
Datum
awa_maintenance_worker_ticks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			pids[AWA_BGW_MAX_DATABASES];
	uint64		counts[AWA_BGW_MAX_DATABASES][3];
	int			n = 0;
	int			i,
				c;

	InitMaterializedSRF(fcinfo, 0);
	if (awa_shared == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(awa_shared->lock, LW_SHARED);
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		AwaWorkerStatus *st = &awa_shared->workers[i];

		if (!st->in_use)
			continue;
		pids[n] = st->pid;
		counts[n][0] = st->ticks;
		counts[n][1] = st->failed_jobs_purged;
		counts[n++][2] = st->purge_batches;
	}
	LWLockRelease(awa_shared->lock);

	for (i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = Int32GetDatum(pids[i]);
		for (c = 0; c < 3; c++)
			values[c + 1] = Int64GetDatum((int64) counts[i][c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/*
 * awa_internal.maintenance_worker_idle() RETURNS TABLE (pid int, idle_since
 * timestamptz): since when each worker sleeps on its idle cadences (0.10; NULL
 * while it runs its steps on their cadences).
 */
Datum
awa_maintenance_worker_idle(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			pids[AWA_BGW_MAX_DATABASES];
	TimestampTz since[AWA_BGW_MAX_DATABASES];
	int			n = 0;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (awa_shared == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(awa_shared->lock, LW_SHARED);
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
		if (awa_shared->workers[i].in_use && awa_shared->workers[i].pid > 0)
		{
			pids[n] = awa_shared->workers[i].pid;
			since[n++] = awa_shared->workers[i].idle_since;
		}
	LWLockRelease(awa_shared->lock);
	for (i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = Int32GetDatum(pids[i]);
		values[1] = nullable_ts(since[i], &nulls[1]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/* {"queue": [pid, ...], ...}: the rings whose last prune saw holders; NULL: none */
static Jsonb *
prune_blockers_jsonb(const AwaWorkerStatus *st)
{
	StringInfoData buf;
	int			r,
				i;
	bool		any = false;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (r = 0; r < AWA_RING_COUNT; r++)
	{
		if (st->nprune_blockers[r] == 0)
			continue;
		appendStringInfo(&buf, "%s\"%s\": [", any ? ", " : "", awa_ring_name(r));
		for (i = 0; i < st->nprune_blockers[r]; i++)
			appendStringInfo(&buf, "%s%d", i ? ", " : "", st->prune_blockers[r][i]);
		appendStringInfoChar(&buf, ']');
		any = true;
	}
	appendStringInfoChar(&buf, '}');
	if (!any)
		return NULL;
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/*
 * awa.maintenance_worker_prune_blockers() RETURNS TABLE (pid int,
 * prune_blocked_by jsonb): per worker, the sessions that held or awaited a lock
 * on the ring children its last blocked prune of each ring wanted (0.9).
 */
Datum
awa_maintenance_worker_prune_blockers(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	AwaWorkerStatus *copy;
	int			n = 0;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (awa_shared == NULL)
		PG_RETURN_VOID();
	copy = palloc(sizeof(AwaWorkerStatus) * AWA_BGW_MAX_DATABASES);
	LWLockAcquire(awa_shared->lock, LW_SHARED);
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
		if (awa_shared->workers[i].in_use)
			copy[n++] = awa_shared->workers[i];
	LWLockRelease(awa_shared->lock);

	for (i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};
		Jsonb	   *blockers = prune_blockers_jsonb(&copy[i]);

		values[0] = Int32GetDatum(copy[i].pid);
		values[1] = blockers ? JsonbPGetDatum(blockers) : (Datum) 0;
		nulls[1] = (blockers == NULL);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/* Outcome names, for the step runner's mapping of SQL results to counters. */
int
awa_rotate_outcome_index(const char *outcome, const char *blocker)
{
	int			o;

	if (strcmp(outcome, "skipped_busy") == 0 && blocker && strcmp(blocker, "lost_cas") == 0)
		return AWA_ROTATE_LOST_CAS;
	for (o = 0; o < AWA_ROTATE_NOUTCOMES; o++)
		if (strcmp(outcome, rotate_outcome_names[o]) == 0)
			return o;
	return -1;
}

int
awa_prune_outcome_index(const char *outcome)
{
	int			o;

	for (o = 0; o < AWA_PRUNE_NOUTCOMES; o++)
		if (strcmp(outcome, prune_outcome_names[o]) == 0)
			return o;
	return -1;
}
