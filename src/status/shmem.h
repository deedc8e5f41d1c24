/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  The maintenance workers' status in shared memory (shmem.c), private to
 *	  shmem.c: a worker attaches its slot once, then writes it through these
 *	  calls only; the launcher and other backends ask the questions below.
 *
 * src/status/shmem.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_SHMEM_H
#define AWA_SHMEM_H

#include "datatype/timestamp.h"

#include "src/awa_bgw.h"

typedef enum AwaWorkerState
{
	AWA_STATE_STARTING = 0,
	AWA_STATE_WAITING_FOR_EXTENSION,
	AWA_STATE_NEEDS_UPGRADE,
	AWA_STATE_IN_RECOVERY,
	AWA_STATE_DISABLED,
	AWA_STATE_FOLLOWER,
	AWA_STATE_LEADER,
	AWA_STATE_BAD_ROLE,			/* awa_bgw.role may not maintain: not superuser, NOLOGIN */
	AWA_STATE_NO_WORKER_SLOT,	/* no worker: the launcher found no free bgworker slot */
	AWA_STATE_RESTORE_PENDING	/* leads, but the rows are not marked as this cluster's */
} AwaWorkerState;

typedef enum AwaRotateOutcome
{
	AWA_ROTATE_ROTATED = 0,
	AWA_ROTATE_SKIPPED_IDLE,
	AWA_ROTATE_SKIPPED_BUSY,
	AWA_ROTATE_LOST_CAS,		/* a skipped_busy whose blocker was lost_cas */
	AWA_ROTATE_NOUTCOMES
} AwaRotateOutcome;

typedef enum AwaPruneOutcome
{
	AWA_PRUNE_PRUNED = 0,
	AWA_PRUNE_NOOP,
	AWA_PRUNE_ALREADY_PRUNED,
	AWA_PRUNE_BLOCKED,
	AWA_PRUNE_SKIPPED_ACTIVE,
	AWA_PRUNE_NOUTCOMES
} AwaPruneOutcome;

/* Most sessions kept per ring as the holders of a blocked prune's locks. */
#define AWA_PRUNE_BLOCKERS_MAX	8

/* What one fold step did (awa_status_note_fold). */
typedef enum AwaFoldOutcome
{
	AWA_FOLD_FOLDED = 0,
	AWA_FOLD_STOOD_DOWN,		/* under a pin of the MVCC horizon */
	AWA_FOLD_OTHER
} AwaFoldOutcome;

/*
 * A listed database whose worker the launcher could not register because every
 * background worker slot (max_worker_processes) was taken: the launcher's
 * record, of which shmem.c keeps a copy (awa_slot_waits_publish) shown in
 * awa.maintenance_status as state no_worker_slot.
 */
typedef struct AwaSlotWait
{
	bool		in_use;
	char		dbname[NAMEDATALEN];
	TimestampTz since;			/* the first failed registration */
	TimestampTz last_attempt_at;
	uint64		attempts;		/* failed registrations so far */
} AwaSlotWait;

extern void awa_shmem_request(void);
extern void awa_shmem_startup(void);

extern void awa_status_attach(Oid dboid, const char *dbname);
extern const char *awa_status_dbname(void);
extern void awa_status_set_state(AwaWorkerState state);
extern void awa_status_set_instance_id(const char *instance_id);
extern void awa_status_count_tick(void);
extern void awa_status_arm_idle(void);
extern bool awa_status_idle_armed(void);
extern void awa_status_set_idle(bool idle);
extern void awa_status_disarm_idle(void);
extern void awa_status_wake_idle_worker(void);
extern void awa_status_arm_deferred(void);
extern bool awa_status_deferred_armed(void);
extern void awa_status_wake_for_deferred(void);
extern bool awa_status_take_wake(void);
extern void awa_status_note_rotate(AwaRing ring, int outcome, const char *blocker);
extern void awa_status_note_prune(AwaRing ring, int outcome, const char *reason,
								  const int *blockers, int nblockers);
extern void awa_status_note_fold(AwaFoldOutcome outcome, bool trimmed, uint64 rows,
								 const char *pin_holder);
extern void awa_status_note_purge(uint64 rows);
extern void awa_status_note_error(const char *error);
extern void awa_status_set_auto_flip(const char *verdict, TimestampTz since);
extern TimestampTz awa_status_auto_flip_since(void);
extern bool awa_status_has_worker(Oid dboid);
extern int	awa_status_live_worker_pid(Oid dboid);
extern void awa_status_stop_workers_except(const char (*dbnames)[NAMEDATALEN], int n);
extern void awa_slot_waits_publish(const AwaSlotWait *waits);
extern int	awa_rotate_outcome_index(const char *outcome, const char *blocker);
extern int	awa_prune_outcome_index(const char *outcome);

#endif							/* AWA_SHMEM_H */
