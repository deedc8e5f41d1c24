/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The per-database maintenance worker: its signals, its loop, its state
 *	  machine, leader election and the schedule of its steps.
 *
 * The worker idles (re-checking once a second) while maintenance is
 * disabled, while the server is in recovery, while the extension is missing
 * or at a version this library does not maintain, and while another process
 * holds the leader lock. A missing extension is one cheap catalog read a
 * second, said once (WARNING with the CREATE EXTENSION hint) per absence, and
 * once more when it appears; DROP EXTENSION sends the worker back to waiting. As
 * leader it runs, per ring and on that ring's cadence, one rotate transaction
 * then one prune transaction; and once a second it enqueues the runs of the
 * periodic schedules that are due (0.9). It neither
 * leads nor runs a step while its role is not a superuser with LOGIN (state
 * bad_role, said once); it looks again every awa_bgw.leader_retry_interval
 * and after each reload. A reload, and awa.wake() from any session of its
 * database, make every step due at once.
 *
 * src/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "src/autoflip.h"
#include "src/step.h"
#include "src/worker_args.h"

#define IDLE_RECHECK_MS		1000
/* one pass's budget for the failed_jobs retention; the next pass goes on at once */
#define PURGE_MAX_BATCHES	10
#define PURGE_BUDGET_MS		1000
#define SCHEDULE_CHECK_MS	1000	/* cron resolution is a minute */

typedef struct WorkerSchedule
{
	TimestampTz next_ring[AWA_RING_COUNT];
	TimestampTz next_promote;
	TimestampTz next_fold;
	TimestampTz next_rescue;
	TimestampTz next_schedules;
	TimestampTz next_unique_purge;
	int64		unique_after;	/* where the next purge of unique keys starts */
	TimestampTz next_heartbeat;
	TimestampTz next_leader_try;
	TimestampTz next_role_check;
	bool		role_named;		/* awa_bgw.role names a role (else bootstrap superuser) */
	char		role_problem[64];	/* why the role may not maintain, as logged; "" */
	bool		is_leader;
	bool		upgrade_logged;
	bool		absent_logged;	/* "no extension" said, for this absence */
	bool		windows;		/* the extension is at 0.9 (at the last check) */
	char		instance_id[40];
} WorkerSchedule;

static WorkerSchedule sched;

/*
 * Settings the steps depend on, fixed at session level after connecting, so
 * that database and role defaults (ALTER DATABASE/ROLE ... SET) cannot steer
 * the worker: a read-only or serializable default fails or changes every
 * step, a short lock or statement timeout fails them at random, replica
 * mode switches the fence triggers off. A step may still SET LOCAL them.
 */
static const char *const pinned_settings[][2] = {
	{"default_transaction_read_only", "off"},
	{"default_transaction_isolation", "read committed"},
	{"default_transaction_deferrable", "off"},
	{"statement_timeout", "0"},
	{"lock_timeout", "0"},
	{"idle_in_transaction_session_timeout", "0"},
	{"session_replication_role", "origin"},
	{"row_security", "on"},
	{"DateStyle", "ISO, MDY"},
	{"IntervalStyle", "postgres"},
	{"standard_conforming_strings", "on"},
};

static TimestampTz
after_ms(TimestampTz from, int ms)
{
	return TimestampTzPlusMilliseconds(from, ms);
}

/* Runs a session-level statement that returns one boolean; false on error or NULL. */
static bool
run_bool_step(const char *label, const char *sql)
{
	AwaStepResult res;

	if (!awa_run_session_step(label, sql, &res))
		return false;
	return strcmp(res.col1, "t") == 0;
}

static void
leader_release(void)
{
	if (!sched.is_leader)
		return;
	run_bool_step("leader release",
				  psprintf("SELECT pg_catalog.pg_advisory_unlock(" INT64_FORMAT ")",
						   AWA_BGW_LEADER_KEY));
	sched.is_leader = false;
	awa_auto_flip_reset("not leader");
	ereport(LOG, (errmsg("awa_bgw: gave up maintenance leadership of database \"%s\"",
						 awa_status_dbname())));
}

static void
leader_try(TimestampTz now)
{
	if (sched.is_leader || now < sched.next_leader_try)
		return;
	sched.next_leader_try = after_ms(now, awa_bgw_leader_retry_interval);
	if (run_bool_step("leader election",
					  psprintf("SELECT pg_catalog.pg_try_advisory_lock(" INT64_FORMAT ")",
							   AWA_BGW_LEADER_KEY)))
	{
		sched.is_leader = true;
		awa_stats_count(AWA_C_LEADER_TERMS, 1);
		ereport(LOG, (errmsg("awa_bgw: became maintenance leader of database \"%s\"",
							 awa_status_dbname())));
	}
}

/*
 * What keeps the role from maintaining, or NULL; fills its name. Needs a
 * transaction. LOGIN matters only for a role named in awa_bgw.role: the
 * bootstrap superuser's workers connect without the check.
 */
static const char *
role_problem(Oid roleid, char *rolname)
{
	HeapTuple	tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(roleid));
	Form_pg_authid form;
	const char *problem = NULL;

	if (!HeapTupleIsValid(tup))
	{
		snprintf(rolname, NAMEDATALEN, "%u", roleid);
		return "does not exist";
	}
	form = (Form_pg_authid) GETSTRUCT(tup);
	strlcpy(rolname, NameStr(form->rolname), NAMEDATALEN);
	if (!form->rolsuper)
		problem = "is not a superuser";
	else if (sched.role_named && !form->rolcanlogin)
		problem = "has no LOGIN";
	ReleaseSysCache(tup);
	return problem;
}

/*
 * Whether this worker's role may maintain. Looked up on the leader retry
 * cadence and after a reload; a new problem is logged once, its end too.
 */
static bool
role_fit(TimestampTz now)
{
	MemoryContext cxt = CurrentMemoryContext;
	const char *problem;
	char		rolname[NAMEDATALEN];

	if (now < sched.next_role_check)
		return sched.role_problem[0] == '\0';
	sched.next_role_check = after_ms(now, awa_bgw_leader_retry_interval);

	StartTransactionCommand();
	problem = role_problem(GetSessionUserId(), rolname);
	CommitTransactionCommand();
	MemoryContextSwitchTo(cxt); /* the commit left TopMemoryContext current */

	if (problem != NULL && strcmp(problem, sched.role_problem) != 0)
		ereport(WARNING,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("awa_bgw: the worker for database \"%s\" does not maintain it: "
						"its role \"%s\" %s", awa_status_dbname(), rolname, problem),
				 errdetail("Maintenance needs a superuser; the worker idles in state "
						   "bad_role and takes no leadership."),
				 errhint("ALTER ROLE %s SUPERUSER LOGIN, then reload (SELECT "
						 "pg_reload_conf()); or set awa_bgw.role to such a role and "
						 "restart the server.", quote_identifier(rolname))));
	else if (problem == NULL && sched.role_problem[0] != '\0')
		ereport(LOG,
				(errmsg("awa_bgw: the role \"%s\" of the worker for database \"%s\" may "
						"maintain it now", rolname, awa_status_dbname())));
	strlcpy(sched.role_problem, problem ? problem : "", sizeof(sched.role_problem));
	return problem == NULL;
}

/*
 * Check the extension; returns true when it is ready to be maintained and
 * otherwise sets the idle state it stands in.
 */
static bool
extension_ready(void)
{
	AwaStepResult res;

	if (!awa_run_step("extension check", NULL, &res))
		return false;
	sched.windows = res.windows;
	if (res.extension == AWA_EXT_READY)
	{
		if (sched.absent_logged)
			ereport(LOG,
					(errmsg("awa_bgw: extension awa_bgw is installed in database \"%s\"; "
							"maintaining it", awa_status_dbname())));
		sched.upgrade_logged = false;
		sched.absent_logged = false;
		return true;
	}
	leader_release();
	if (res.extension == AWA_EXT_ABSENT)
	{
		if (!sched.absent_logged)
			ereport(WARNING,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("awa_bgw: database \"%s\" is listed in awa_bgw.databases but "
							"has no extension awa_bgw; waiting for it", awa_status_dbname()),
					 errdetail("The worker looks again every second and starts "
							   "maintaining the database once the extension exists."),
					 errhint("Run CREATE EXTENSION awa_bgw in that database, or remove it "
							 "from awa_bgw.databases and reload.")));
		sched.absent_logged = true;
		awa_status_set_state(AWA_STATE_WAITING_FOR_EXTENSION);
	}
	else
	{
		if (!sched.upgrade_logged)
			ereport(LOG,
					(errmsg("awa_bgw: database \"%s\" has extension awa_bgw at a version "
							"this library does not maintain; waiting",
							awa_status_dbname()),
					 errhint("Run ALTER EXTENSION awa_bgw UPDATE TO '%s' in that database.",
							 AWA_BGW_SCHEMA_VERSION)));
		sched.upgrade_logged = true;
		awa_status_set_state(AWA_STATE_NEEDS_UPGRADE);
	}
	return false;
}

static void
heartbeat(TimestampTz now)
{
	char	   *name;
	char	   *sql;
	AwaStepResult res;

	if (now < sched.next_heartbeat)
		return;
	sched.next_heartbeat = after_ms(now, awa_bgw_runtime_heartbeat_interval);
	name = psprintf("awa_bgw worker (database %s)", awa_status_dbname());
	sql = psprintf("SELECT awa.runtime_heartbeat('%s', %s, '%s', %d, %s)",
				   sched.instance_id, quote_literal_cstr(name), AWA_BGW_BINARY_VERSION,
				   MyProcPid, sched.is_leader ? "true" : "false");
	awa_run_step("runtime heartbeat", sql, &res);
	pfree(sql);
	pfree(name);
}

/*
 * The pids of a blocked prune's lock holders ("pid,pid,..." in col3, 0.9);
 * none for any other outcome. Returns how many.
 */
static int
prune_blockers(const AwaStepResult *res, int *pids)
{
	const char *p = res->col3;
	int			n = 0;

	while (strcmp(res->col1, "blocked") == 0 && *p && n < AWA_PRUNE_BLOCKERS_MAX)
	{
		char	   *end;
		long		pid = strtol(p, &end, 10);

		if (end == p)
			break;
		pids[n++] = (int) pid;
		p = (*end == ',') ? end + 1 : end;
	}
	return n;
}

/* A rotation's or prune's outcome, in the statistics and in the status. */
static void
count_ring_outcome(AwaRing ring, bool rotate, const AwaStepResult *res)
{
	int			idx;

	idx = rotate ? awa_rotate_outcome_index(res->col1, res->col2)
		: awa_prune_outcome_index(res->col1);
	if (idx < 0)
		return;
	awa_stats_count_ring(ring, rotate, idx);
	if (rotate)
		awa_status_note_rotate(ring, idx, res->col2);
	else
	{
		int			pids[AWA_PRUNE_BLOCKERS_MAX];
		int			n = prune_blockers(res, pids);

		awa_status_note_prune(ring, idx, res->col2, pids, n);
	}
}

/*
 * One rotate transaction, then one prune transaction, for a ring that is due.
 * In 0.9 a blocked prune also names, in the same transaction, the sessions
 * that hold or await a lock on the children it wanted.
 */
static void
ring_tick(AwaRing ring, TimestampTz now)
{
	char		label[64];
	char		sql[400];
	AwaStepResult res;

	if (now < sched.next_ring[ring])
		return;
	sched.next_ring[ring] = after_ms(now, awa_bgw_rotate_interval[ring]);

	snprintf(label, sizeof(label), "rotate of the %s ring", awa_ring_names[ring]);
	snprintf(sql, sizeof(sql),
			 "SELECT outcome, blocker FROM awa.rotate('awa', '%s')", awa_ring_names[ring]);
	if (awa_run_step(label, sql, &res) && res.extension == AWA_EXT_READY)
		count_ring_outcome(ring, true, &res);

	snprintf(label, sizeof(label), "prune of the %s ring", awa_ring_names[ring]);
	if (sched.windows)
		snprintf(sql, sizeof(sql),
				 "SELECT p.outcome, p.reason, CASE WHEN p.outcome = 'blocked' THEN "
				 "pg_catalog.array_to_string(awa.ring_slot_lock_holders(p.ring, p.slot), ',') "
				 "END FROM awa.prune('awa', '%s') p", awa_ring_names[ring]);
	else
		snprintf(sql, sizeof(sql),
				 "SELECT outcome, reason FROM awa.prune('awa', '%s')", awa_ring_names[ring]);
	if (awa_run_step(label, sql, &res) && res.extension == AWA_EXT_READY)
		count_ring_outcome(ring, false, &res);
}

/*
 * A job-maintenance step (promotion, rescue) on its own cadence; its first
 * column is the number of jobs it moved, counted in rows_counter.
 */
static void
job_tick(TimestampTz now, TimestampTz *next_at, int interval_ms, const char *label,
		 const char *sql, AwaCounter runs_counter, AwaCounter rows_counter)
{
	AwaStepResult res;

	if (now < *next_at)
		return;
	*next_at = after_ms(now, interval_ms);
	if (awa_run_step(label, sql, &res) && res.extension == AWA_EXT_READY &&
		runs_counter < AWA_NCOUNTERS)	/* AWA_NCOUNTERS: a step not counted */
	{
		awa_stats_count(runs_counter, 1);
		awa_stats_count(rows_counter, strtoull(res.col1, NULL, 10));
	}
}

/*
 * Record one fold's outcome (col1 outcome, col2 rows, col3 pin holder); returns
 * whether it was a full batch, so more may be waiting.
 */
static bool
count_fold(const AwaStepResult *res, bool trimmed)
{
	uint64		rows = 0;

	if (strcmp(res->col1, "stood_down") == 0)
	{
		awa_stats_count(AWA_C_FOLDS_STOOD_DOWN, 1);
		awa_status_note_fold(AWA_FOLD_STOOD_DOWN, trimmed, 0, res->col3);
	}
	else if (strcmp(res->col1, "folded") == 0)
	{
		rows = strtoul(res->col2, NULL, 10);
		awa_stats_count(AWA_C_FOLDS_RUN, 1);
		awa_stats_count(trimmed ? AWA_C_ROWS_TRIMMED : AWA_C_ROWS_FOLDED, rows);
		awa_status_note_fold(AWA_FOLD_FOLDED, trimmed, rows, NULL);
	}
	else
		awa_status_note_fold(AWA_FOLD_OTHER, trimmed, 0, NULL);
	return rows >= (uint64) awa_bgw_fold_batch_size;
}

/* Record the failed_jobs retention's outcome (col1 outcome, col2 rows purged). */
static void
count_purge(const AwaStepResult *res)
{
	if (strcmp(res->col1, "stood_down") == 0)
		awa_stats_count(AWA_C_PURGES_STOOD_DOWN, 1);
	else if (strcmp(res->col1, "folded") == 0)
	{
		awa_stats_count(AWA_C_PURGE_RUNS, 1);
		awa_stats_count(AWA_C_FAILED_JOBS_PURGED, strtoull(res->col2, NULL, 10));
	}
}

/*
 * The failed_jobs retention: batches of at most awa_bgw.fold_batch_size rows
 * (0.9), each its own transaction under the horizon gate, while a batch comes
 * back full, at most PURGE_MAX_BATCHES of them or PURGE_BUDGET_MS in one pass;
 * returns whether rows may be left (the budget ran out).
 */
static bool
purge_tick(void)
{
	TimestampTz start = GetCurrentTimestamp();
	int			batches;

	for (batches = 0; batches < PURGE_MAX_BATCHES; batches++)
	{
		AwaStepResult res;
		uint64		rows;

		if (!awa_run_step("failed_jobs retention",
						  "SELECT outcome, purged, pin FROM awa.purge_failed_jobs_gated('awa')",
						  &res) || res.extension != AWA_EXT_READY)
			return false;
		count_purge(&res);
		if (strcmp(res.col1, "folded") != 0)
			return false;		/* stood down under a pin */
		rows = strtoull(res.col2, NULL, 10);
		awa_status_note_purge(rows);
		if (rows < (uint64) awa_bgw_fold_batch_size)
			return false;
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), PURGE_BUDGET_MS))
			break;
	}
	return true;
}

/*
 * The horizon-gated folds, each its own transaction (the gate is checked at the
 * start of each): rollup deltas, ledger trim, failed_jobs retention; then the
 * auto-flip check. Each fold deletes at most awa_bgw.fold_batch_size rows (0.9);
 * after a full batch the next pass folds again at once instead of waiting for
 * fold_interval, so a backlog is caught up in bounded transactions between the
 * other steps.
 */
static void
fold_tick(TimestampTz now)
{
	AwaStepResult res;
	bool		more = false;

	if (now < sched.next_fold)
		return;
	sched.next_fold = after_ms(now, awa_bgw_fold_interval);
	if (awa_run_step("fold of the rollup deltas",
					 "SELECT outcome, folded_rows, pin FROM awa.fold_terminal_rollup_deltas('awa')",
					 &res) && res.extension == AWA_EXT_READY)
		more |= count_fold(&res, false);
	if (awa_run_step("fold of the ring ledgers",
					 "SELECT outcome, trimmed_rows, pin FROM awa.fold_ring_rotation_ledgers('awa')",
					 &res) && res.extension == AWA_EXT_READY)
		more |= count_fold(&res, true);
	if (more)
	{
		sched.next_fold = now;
		return;
	}
	if (purge_tick())
	{
		sched.next_fold = now;
		return;
	}
	awa_auto_flip_tick(now);
}

/*
 * The keys of unique jobs (0.9): one batch per fold_interval, from where the
 * last one stopped, of the keys whose jobs the data plane no longer holds;
 * stands down under a pinned horizon like the folds (col1 outcome, col2 rows,
 * col3 the job id the next batch starts after).
 */
static void
unique_purge_tick(TimestampTz now)
{
	AwaStepResult res;
	char		sql[128];

	if (now < sched.next_unique_purge)
		return;
	sched.next_unique_purge = after_ms(now, awa_bgw_fold_interval);
	snprintf(sql, sizeof(sql),
			 "SELECT outcome, purged, last_job_id FROM awa.purge_unique_keys(" INT64_FORMAT ")",
			 sched.unique_after);
	if (awa_run_step("purge of unique keys", sql, &res) &&
		res.extension == AWA_EXT_READY && strcmp(res.col1, "folded") == 0)
		sched.unique_after = strtoll(res.col3, NULL, 10);
}

/* One pass of the state machine; returns the next time anything is due. */
static TimestampTz
worker_tick(void)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz next = after_ms(now, IDLE_RECHECK_MS);
	int			r;

	awa_status_count_tick();
	if (!awa_bgw_enabled)
	{
		leader_release();
		awa_status_set_state(AWA_STATE_DISABLED);
		return next;
	}
	if (RecoveryInProgress())
	{
		leader_release();
		awa_status_set_state(AWA_STATE_IN_RECOVERY);
		return next;
	}
	if (!role_fit(now))
	{
		leader_release();
		awa_status_set_state(AWA_STATE_BAD_ROLE);
		return next;
	}
	if (!extension_ready())
		return next;

	leader_try(now);
	heartbeat(now);
	if (!sched.is_leader)
	{
		awa_status_set_state(AWA_STATE_FOLLOWER);
		return Min(next, sched.next_leader_try);
	}
	awa_status_set_state(AWA_STATE_LEADER);

	job_tick(now, &sched.next_promote, awa_bgw_promote_interval, "promotion of deferred jobs",
			 "SELECT promoted FROM awa.promote_deferred('awa')",
			 AWA_C_PROMOTE_RUNS, AWA_C_JOBS_PROMOTED);
	job_tick(now, &sched.next_rescue, awa_bgw_rescue_interval, "rescue",
			 "SELECT rescued, outcome FROM awa.rescue('awa')",
			 AWA_C_RESCUE_RUNS, AWA_C_JOBS_RESCUED);
	if (sched.windows)
	{
		job_tick(now, &sched.next_schedules, SCHEDULE_CHECK_MS, "periodic schedules",
				 "SELECT fired, failed FROM awa.fire_due_schedules('awa')",
				 AWA_NCOUNTERS, AWA_NCOUNTERS);
		unique_purge_tick(now);
		next = Min(next, Min(sched.next_schedules, sched.next_unique_purge));
	}
	fold_tick(now);
	for (r = 0; r < AWA_RING_COUNT; r++)
	{
		ring_tick((AwaRing) r, now);
		next = Min(next, sched.next_ring[r]);
	}
	next = Min(next, sched.next_promote);
	next = Min(next, sched.next_fold);
	next = Min(next, sched.next_rescue);
	return Min(next, sched.next_heartbeat);
}

/*
 * Whether this worker's database is still listed in awa_bgw.databases. The
 * launcher stops the worker of a database removed from the list; the worker
 * also checks for itself after each reload, so that it stops even when the
 * launcher that started it is gone.
 */
static bool
database_still_listed(void)
{
	char	   *raw = pstrdup(awa_bgw_databases ? awa_bgw_databases : "");
	List	   *names = NIL;
	ListCell   *lc;
	bool		listed = false;

	if (!SplitIdentifierString(raw, ',', &names))
		listed = true;			/* a bad list is the launcher's to report */
	foreach(lc, names)
	{
		if (strcmp((const char *) lfirst(lc), awa_status_dbname()) == 0)
			listed = true;
	}
	list_free(names);
	pfree(raw);
	return listed;
}

/* Every step is due: after a reload, and when awa.wake() asks. */
static void
run_everything_now(void)
{
	memset(sched.next_ring, 0, sizeof(sched.next_ring));
	sched.next_promote = sched.next_rescue = sched.next_fold = 0;
	sched.next_schedules = 0;
	sched.next_unique_purge = 0;
	sched.next_leader_try = 0;
}

static void
pin_settings(void)
{
	size_t		i;

	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);
	for (i = 0; i < lengthof(pinned_settings); i++)
		SetConfigOption(pinned_settings[i][0], pinned_settings[i][1], PGC_SUSET,
						PGC_S_SESSION);
}

static void
new_instance_id(void)
{
	AwaStepResult res;

	/* gen_random_uuid() is core; it needs no extension and writes nothing */
	awa_run_session_step("instance id", "SELECT pg_catalog.gen_random_uuid()::text",
						 &res);
	if (res.col1[0] == '\0')
		snprintf(res.col1, sizeof(res.col1), "00000000-0000-4000-8000-%012x", MyProcPid);
	strlcpy(sched.instance_id, res.col1, sizeof(sched.instance_id));
}

void
awa_bgw_worker_main(Datum main_arg)
{
	Oid			dboid = DatumGetObjectId(main_arg);
	AwaWorkerArgs args;
	MemoryContext loop_cxt;

	memcpy(&args, MyBgworkerEntry->bgw_extra, sizeof(args));

	/* Establish signal handlers before unblocking signals. */
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnectionByOid(dboid, args.roleoid, 0);
	pgstat_report_appname(AWA_BGW_WORKER_TYPE);
	pin_settings();

	awa_status_attach(dboid, args.dbname);
	awa_stats_attach(dboid, args.dbname);
	memset(&sched, 0, sizeof(sched));
	sched.role_named = OidIsValid(args.roleoid);
	new_instance_id();
	ereport(LOG, (errmsg("awa_bgw: worker started for database \"%s\"", args.dbname)));

	/* what one pass of the loop allocates is freed when the pass ends */
	loop_cxt = AllocSetContextCreate(TopMemoryContext, "awa_bgw worker loop",
									 ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		MemoryContext old = MemoryContextSwitchTo(loop_cxt);
		TimestampTz next = worker_tick();
		long		wait_ms;

		MemoryContextSwitchTo(old);
		MemoryContextReset(loop_cxt);
		pgstat_report_stat(true);
		wait_ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), next);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(wait_ms, 1), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			if (!database_still_listed())
			{
				ereport(LOG,
						(errmsg("awa_bgw: database \"%s\" is no longer listed in awa_bgw.databases; "
								"worker exiting", awa_status_dbname())));
				leader_release();
				proc_exit(0);
			}
			/* a new cadence or retry interval takes effect at once */
			run_everything_now();
			sched.next_role_check = 0;
		}
		if (awa_status_take_wake())
			run_everything_now();
	}
}
