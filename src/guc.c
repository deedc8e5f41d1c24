/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  The awa_bgw.* settings: their variables and their definitions (made by
 *	  _PG_init, awa_bgw.c), and the SQL readers of the two that the API's
 *	  checks use: awa.max_payload_size() and awa.max_queues().
 *
 * src/guc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"
#include "utils/varlena.h"

#include "src/guc.h"

PG_FUNCTION_INFO_V1(awa_max_payload_size);
PG_FUNCTION_INFO_V1(awa_max_queues);

char	   *awa_bgw_databases = NULL;
char	   *awa_bgw_role = NULL;
bool		awa_bgw_enabled = true;
int			awa_bgw_rotate_interval[AWA_RING_COUNT] = {60000, 60000, 60000};
int			awa_bgw_pinned_rotate_interval = 10000;
int			awa_bgw_rotate_fill = 1024;
int			awa_bgw_rotate_min_age = 1000;
int			awa_bgw_prune_lock_timeout = 10;
int			awa_bgw_finished_job_window = 10000;
int			awa_bgw_fold_interval = 30000;
int			awa_bgw_fold_batch_size = 10000;
int			awa_bgw_horizon_pin_min_age = 5000;
bool		awa_bgw_auto_flip = true;
int			awa_bgw_auto_flip_stable_period = 600;
int			awa_bgw_runtime_fresh_window = 90;
int			awa_bgw_runtime_heartbeat_interval = 3600000;
int			awa_bgw_leader_retry_interval = 10000;
int			awa_bgw_promote_interval = 250;
int			awa_bgw_idle_interval = 60000;
int			awa_bgw_rescue_interval = 5000;
int			awa_bgw_job_heartbeat_timeout = 90;
int			awa_bgw_failed_retention = 7 * 24 * 3600;
int			awa_bgw_step_timeout = 60000;
int			awa_bgw_max_payload_size = 1024;
int			awa_bgw_max_queues = 10000;
int			awa_bgw_max_limited_queues = 1024;

/* awa_bgw.databases must be a list of identifiers: "a,,b" is refused. */
static bool
check_databases(char **newval, void **extra, GucSource source)
{
	char	   *raw = pstrdup(*newval);
	List	   *names = NIL;
	bool		ok = SplitIdentifierString(raw, ',', &names);

	if (!ok)
		GUC_check_errdetail("List database names separated by commas.");
	list_free(names);
	pfree(raw);
	return ok;
}

/* A millisecond GUC, reloadable with SIGHUP (or SET by a superuser when suset). */
static void
define_ms(const char *name, const char *desc, int *var, int boot, int min, int max,
		  bool suset)
{
	DefineCustomIntVariable(name, desc, NULL, var, boot, min, max,
							suset ? PGC_SUSET : PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
}

static void
define_s(const char *name, const char *desc, int *var, int boot, int min, int max)
{
	DefineCustomIntVariable(name, desc, NULL, var, boot, min, max,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
}

/* Defines the awa_bgw.* settings (from _PG_init, in the postmaster). */
void
awa_define_gucs(void)
{
	DefineCustomStringVariable("awa_bgw.databases",
							   "Databases whose queue storage the awa_bgw worker maintains.",
							   "A comma-separated list of database names; one maintenance "
							   "worker runs per listed database. Empty: none.",
							   &awa_bgw_databases, "postgres", PGC_SIGHUP,
							   GUC_LIST_INPUT, check_databases, NULL, NULL);
	DefineCustomStringVariable("awa_bgw.role",
							   "Role the maintenance workers connect as.",
							   "Must have LOGIN. Empty: the bootstrap superuser.",
							   &awa_bgw_role, "", PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("awa_bgw.enabled",
							 "Whether the maintenance workers do any work.",
							 "off pauses maintenance (workers idle and give up leadership).",
							 &awa_bgw_enabled, true, PGC_SIGHUP, 0, NULL, NULL, NULL);
	define_ms("awa_bgw.queue_rotate_interval",
			  "Longest time the queue ring's slot stays current while it holds rows.",
			  &awa_bgw_rotate_interval[AWA_RING_QUEUE], 60000, 100, 3600000, false);
	define_ms("awa_bgw.lease_rotate_interval",
			  "Longest time the lease ring's slot stays current while it holds rows.",
			  &awa_bgw_rotate_interval[AWA_RING_LEASE], 60000, 100, 3600000, false);
	define_ms("awa_bgw.claim_rotate_interval",
			  "Longest time the claim ring's slot stays current while it holds rows.",
			  &awa_bgw_rotate_interval[AWA_RING_CLAIM], 60000, 100, 3600000, false);
	define_ms("awa_bgw.pinned_rotate_interval",
			  "Shortest cadence of each ring's rotate and prune while the MVCC horizon is pinned.",
			  &awa_bgw_pinned_rotate_interval, 10000, 100, 3600000, false);
	DefineCustomIntVariable("awa_bgw.rotate_fill",
							"Fill, in blocks, at which a ring's current slot turns before its "
							"rotate interval (0.10).",
							"Above 0 (the default, 1024): a ring turns by need, checked every "
							"second: when its current slot is *_rotate_interval old, or, once "
							"it is awa_bgw.rotate_min_age old, when its tables hold this many "
							"blocks or when it is empty and an older slot holds rows. 0: each "
							"ring turns every *_rotate_interval while it holds rows.",
							&awa_bgw_rotate_fill, 1024, 0, 1048576, PGC_SIGHUP, GUC_UNIT_BLOCKS,
							NULL, NULL, NULL);
	define_ms("awa_bgw.rotate_min_age",
			  "Least age of a ring's current slot before it turns by fill or drain (0.10).",
			  &awa_bgw_rotate_min_age, 1000, 0, 3600000, false);
	define_ms("awa_bgw.prune_lock_timeout",
			  "How long prune waits for its exclusive locks before it reports blocked.",
			  &awa_bgw_prune_lock_timeout, 10, 1, 60000, true);
	DefineCustomIntVariable("awa_bgw.finished_job_window",
							"Least time a finished job stays visible to awa.job and to "
							"unique keys (0.10).",
							"Prune leaves a slot holding a job's terminal record written "
							"less than this long ago. 0: as long as the slot's turn lasts.",
							&awa_bgw_finished_job_window, 10000, 0, 86400000, PGC_SUSET,
							GUC_UNIT_MS, NULL, NULL, NULL);
	define_ms("awa_bgw.fold_interval", "Cadence of the horizon-gated folds.",
			  &awa_bgw_fold_interval, 30000, 100, 86400000, false);
	DefineCustomIntVariable("awa_bgw.fold_batch_size",
							"Most rows one fold transaction deletes (0.9).",
							"A larger backlog is folded over several transactions, run "
							"one after another.",
							&awa_bgw_fold_batch_size, 10000, 10, 1000000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	define_ms("awa_bgw.horizon_pin_min_age",
			  "Age from which an open transaction genuinely pins the MVCC horizon.",
			  &awa_bgw_horizon_pin_min_age, 5000, 0, 86400000, true);
	DefineCustomBoolVariable("awa_bgw.auto_flip",
							 "Whether the leader flips the ring cursor authority to ledger "
							 "by itself.", NULL,
							 &awa_bgw_auto_flip, true, PGC_SIGHUP, 0, NULL, NULL, NULL);
	define_s("awa_bgw.auto_flip_stable_period",
			 "How long the whole fresh fleet must be flip-aware before the auto-flip.",
			 &awa_bgw_auto_flip_stable_period, 600, 1, 604800);
	define_s("awa_bgw.runtime_fresh_window",
			 "How recent a runtime's heartbeat must be for it to count as live.",
			 &awa_bgw_runtime_fresh_window, 90, 1, 86400);
	define_ms("awa_bgw.runtime_heartbeat_interval",
			  "How often the worker refreshes its own row in awa.runtime_instances.",
			  &awa_bgw_runtime_heartbeat_interval, 3600000, 100, 86400000, false);
	define_ms("awa_bgw.idle_interval",
			  "The longest an idle database's promotion, rescue and rings wait between looks.",
			  &awa_bgw_idle_interval, 60000, 1000, 3600000, false);
	define_ms("awa_bgw.leader_retry_interval",
			  "How often a worker that is not leader retries the leader lock.",
			  &awa_bgw_leader_retry_interval, 10000, 100, 3600000, false);
	define_ms("awa_bgw.promote_interval", "Cadence of deferred-job promotion.",
			  &awa_bgw_promote_interval, 250, 10, 3600000, false);
	define_ms("awa_bgw.rescue_interval", "Cadence of the rescue of stuck attempts.",
			  &awa_bgw_rescue_interval, 5000, 100, 3600000, false);
	define_s("awa_bgw.job_heartbeat_timeout",
			 "A running attempt with no heartbeat for this long is rescued.",
			 &awa_bgw_job_heartbeat_timeout, 90, 1, 604800);
	define_s("awa_bgw.failed_retention", "How long failed_jobs keeps a failed job.",
			 &awa_bgw_failed_retention, 7 * 24 * 3600, 1, INT_MAX);
	define_ms("awa_bgw.step_timeout",
			  "Statement timeout armed for each maintenance step; 0 disables it.",
			  &awa_bgw_step_timeout, 60000, 0, 3600000, false);
	DefineCustomIntVariable("awa_bgw.max_payload_size",
							"Largest job args, heartbeat progress or error text accepted.",
							"Larger ones are refused with SQLSTATE 54000. Only a superuser "
							"(or the server configuration) may change it.",
							&awa_bgw_max_payload_size, 1024, 1, 1024 * 1024,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("awa_bgw.max_queues",
							"Most queues one database may hold (0.9).",
							"A first enqueue into a new queue beyond it is refused with "
							"SQLSTATE 54000. Only a superuser may change it.",
							&awa_bgw_max_queues, 10000, 1, 1000000,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("awa_bgw.max_limited_queues",
							"Most queues with a running or rate limit at once, in every database of "
							"the cluster (shared memory, src/dataplane/limits.c).",
							"awa.set_queue_limits on one more queue is refused with "
							"SQLSTATE 53400. Set at server start.",
							&awa_bgw_max_limited_queues, 1024, 1, 1000000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);

	MarkGUCPrefixReserved("awa_bgw");
}

/*
 * max_payload_size() RETURNS bigint: awa_bgw.max_payload_size in bytes, for
 * the checks of the API (awa.check_payload).
 */
Datum
awa_max_payload_size(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) awa_bgw_max_payload_size * 1024);
}

/* max_queues() RETURNS int: awa_bgw.max_queues, for awa.ensure_lanes (0.9). */
Datum
awa_max_queues(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(awa_bgw_max_queues);
}
