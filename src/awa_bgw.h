/*-------------------------------------------------------------------------
 *
 * awa_bgw.h
 *	  Shared declarations of awa_bgw: GUC variables, the shared-memory status
 *	  of the maintenance workers, and the entry points of each module.
 *
 * src/awa_bgw.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_BGW_H
#define AWA_BGW_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

/*
 * The library's own version, as the semver it reports as its binary_version in
 * awa.runtime_instances: the newest extension version it ships (default_version in
 * awa_bgw.control; t/001 checks that they agree).
 */
#define AWA_BGW_BINARY_VERSION	"0.10.0"
/*
 * The extension versions this library maintains (src/worker/step.c, extension_state):
 * 0.7 (either authority), 0.8, 0.9 (the data plane of snapshot windows) and
 * 0.10 (the windows with the mark of their xid space). Any other (0.6):
 * needs_upgrade, to AWA_BGW_SCHEMA_VERSION_LATEST.
 */
#define AWA_BGW_SCHEMA_VERSION_LATEST "0.10"

/* pg_try_advisory_lock key of the per-database maintenance leader: "AWA_MAIN". */
#define AWA_BGW_LEADER_KEY		INT64CONST(4708303813012965710)

/* Most databases one cluster's launcher maintains at once. */
#define AWA_BGW_MAX_DATABASES	64

#define AWA_BGW_WORKER_TYPE		"awa_bgw worker"
#define AWA_BGW_LAUNCHER_TYPE	"awa_bgw launcher"

typedef enum AwaRing
{
	AWA_RING_QUEUE = 0,
	AWA_RING_LEASE,
	AWA_RING_CLAIM,
	AWA_RING_COUNT
} AwaRing;

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

#define AWA_LABEL_LEN		64
#define AWA_ERROR_LEN		256

/* Most sessions kept per ring as the holders of a blocked prune's locks. */
#define AWA_PRUNE_BLOCKERS_MAX	8

/*
 * The cumulative counters of one database's maintenance (awa.worker_stats,
 * stats.c): kept by database, not by worker, so that they outlive a worker's
 * restart; zeroed by awa.stats_reset() and by a server restart.
 */
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

/* GUCs (awa_bgw.c) */
extern char *awa_bgw_databases;
extern char *awa_bgw_role;
extern bool awa_bgw_enabled;
extern int	awa_bgw_rotate_interval[AWA_RING_COUNT];
extern int	awa_bgw_pinned_rotate_interval;
extern int	awa_bgw_prune_lock_timeout;
extern int	awa_bgw_fold_interval;
extern int	awa_bgw_fold_batch_size;
extern int	awa_bgw_horizon_pin_min_age;
extern bool awa_bgw_auto_flip;
extern int	awa_bgw_auto_flip_stable_period;
extern int	awa_bgw_runtime_fresh_window;
extern int	awa_bgw_runtime_heartbeat_interval;
extern int	awa_bgw_leader_retry_interval;
extern int	awa_bgw_promote_interval;
extern int	awa_bgw_rescue_interval;
extern int	awa_bgw_job_heartbeat_timeout;
extern int	awa_bgw_failed_retention;
extern int	awa_bgw_step_timeout;
extern int	awa_bgw_max_payload_size;
extern int	awa_bgw_max_queues;

extern const char *const awa_ring_names[AWA_RING_COUNT];

/* the shared memory of each module (shmem.c, stats.c, registry.c, wait.c, lanemarks.c) */
extern void awa_shmem_request(void);
extern void awa_shmem_startup(void);
extern void awa_stats_shmem_request(void);
extern void awa_stats_shmem_startup(void);
extern void awa_registry_shmem_request(void);
extern void awa_registry_shmem_startup(void);
extern void awa_wait_shmem_request(void);
extern void awa_wait_shmem_startup(void);
extern void awa_lane_marks_shmem_request(void);
extern void awa_lane_marks_shmem_startup(void);

/*
 * shmem.c: the maintenance workers' status, private to shmem.c. A worker
 * attaches its slot once, then writes it through these calls only; the
 * launcher and other backends ask the questions below.
 */
extern void awa_status_attach(Oid dboid, const char *dbname);
extern const char *awa_status_dbname(void);
extern void awa_status_set_state(AwaWorkerState state);
extern void awa_status_count_tick(void);
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

/* lanemarks.c */
extern void awa_lane_bump(int32 lane);
extern void awa_lane_marks_prepare(TransactionId xid);
extern void awa_ready_child_entered(int32 slot);
extern uint64 awa_ready_child_bound(int32 slot);
extern bool awa_lane_marked(int32 lane, uint64 *epoch);
extern void awa_lane_mark_empty(int32 lane, uint64 epoch);

/* privlock.c: the private lock space (docs/storage.md A.2) */
extern bool awa_private_lock(int64 key, bool dont_wait);
extern bool awa_private_lock_for(int64 key, int32 timeout_ms);
extern bool awa_private_unlock(int64 key);
extern int64 awa_claim_lock_key(int32 lane_id);
extern int64 awa_attempt_lock_key(int64 job_id, int64 run_lease);

/* claim.c, tokens.c, wait.c */
extern void awa_require_read_committed(void);
extern void awa_check_name(const char *what, text *value);
extern void awa_check_payload(const char *what, int64 bytes);
extern void awa_check_job_datums(const Datum *v, const bool *n);
extern int64 awa_new_lease_token(void);
extern void awa_note_claimed_lane(text *queue, int taken, int32 lane);
extern void awa_note_enqueued_lane(text *queue, int jobs, int32 lane, int32 ready_slot);

/* stats.c: the cumulative counters (awa.worker_stats) */
extern void awa_stats_attach(Oid dboid, const char *dbname);
extern void awa_stats_count(AwaCounter counter, uint64 n);
extern void awa_stats_count_ring(AwaRing ring, bool rotate, int outcome);
/* queuepolicy.c: per-queue grants and pauses (privilege bits of awa.queue_privileges) */
#define AWA_QUEUE_ENQUEUE	1
#define AWA_QUEUE_CLAIM		2
#define AWA_QUEUE_MANAGE	4
extern void awa_queue_policy_invalidate(Oid relid);
extern bool awa_queue_allowed_for(text *queue, int priv);
extern void awa_queue_require(text *queue, int priv);
extern bool awa_queue_paused(text *queue);

/* launcher.c, worker.c: background worker entry points */
extern PGDLLEXPORT void awa_bgw_launcher_main(Datum main_arg);
extern PGDLLEXPORT void awa_bgw_worker_main(Datum main_arg);
extern void awa_register_launcher(void);

#endif							/* AWA_BGW_H */
