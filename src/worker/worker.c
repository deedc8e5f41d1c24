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
 * once more when it appears; DROP EXTENSION sends the worker back to waiting.
 * As leader it drives the table of steps below: the worker owns when a step
 * runs (its cadence, a backlog run again at once, the budget of a pass), the
 * SQL function owns what it does. In order: promotion of deferred jobs,
 * rescue, the periodic schedules and the purge of unique keys (0.9), the
 * horizon-gated folds with the failed_jobs retention and the auto-flip check,
 * and per ring, on that ring's cadence, one rotate transaction then one prune
 * transaction. It neither leads nor runs a step while its role is not a
 * superuser with LOGIN (state bad_role, said once); it looks again every
 * awa_bgw.leader_retry_interval and after each reload. A reload, and
 * awa.wake() from any session of its database, make every step due at once.
 * While the database is idle (0.10) the steps but the folds sleep on their
 * idle cadences, woken by the first commit that writes the data plane ("When
 * idle" below; docs/operations.md).
 *
 * src/worker/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
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

#include "src/awa_bgw.h"
#include "src/guc.h"
#include "src/status/shmem.h"
#include "src/status/stats.h"
#include "src/worker/autoflip.h"
#include "src/worker/schema_version.h"
#include "src/worker/step.h"
#include "src/worker/worker.h"

/* pg_try_advisory_lock key of the per-database maintenance leader: "AWA_MAIN". */
#define AWA_BGW_LEADER_KEY		INT64CONST(4708303813012965710)

#define IDLE_RECHECK_MS		1000
/* one pass's budget for the failed_jobs retention; the next pass goes on at once */
#define PURGE_MAX_BATCHES	10
#define PURGE_BUDGET_MS		1000
#define SCHEDULE_CHECK_MS	1000	/* cron resolution is a minute */
#define SUMMARIZE_MS		1000	/* a range of 16 pages fills in 0.6 s at
									 * 1,000 jobs/s (job_id_lookup.md §5) */

/*
 * The leader's maintenance, as a table of steps ("the worker owns when, SQL
 * owns what"). Each entry names its step (the label in logs and last_error),
 * the SQL that does the work (parameters $1... bound by its handler), the
 * columns it reads from the result by name, its cadence, the counters it
 * bumps, and the handler that runs it and records its outcome; what it needs
 * of the installed version, as the table of versions says what each has
 * (src/worker/schema_version.c). One loop (maintain) drives the table in
 * order.
 *
 * Entries form groups: an entry flagged STEP_GROUP shares the cadence of the
 * entry before it and runs in the same pass. A handler returns STEP_AGAIN
 * when its step left work behind (a full batch, or the pass's budget spent):
 * the whole group is then due again at once instead of at its cadence, and
 * the later entries of the group flagged STEP_CAUGHT_UP wait for a pass that
 * leaves no backlog.
 */
typedef enum StepNext
{
	STEP_DONE = 0,				/* due again at the cadence */
	STEP_AGAIN					/* work left: the group is due again at once */
} StepNext;

#define STEP_GROUP		0x01	/* shares the cadence of the entry before it */
#define STEP_CAUGHT_UP	0x02	/* skipped while an earlier entry of its group left work */
#define STEP_GATED		0x04	/* outcome folded / stood_down: runs counted when folded */
#define STEP_PIN_SLOWED	0x08	/* under a pinned horizon, at most once per
								 * awa_bgw.pinned_rotate_interval */
#define STEP_BY_NEED	0x20	/* a rotation: checked every second while the
								 * rings turn by need (awa_bgw.rotate_fill) */
#define STEP_IDLES		0x10	/* a group whose cadence stretches while the
								 * database is idle (0.10, "When idle" below) */
#define STEP_FEEDS_PROMOTION 0x40	/* a group that may write deferred jobs
									 * (rescue's retries, the schedules): when
									 * it found work, promotion is due at once */

/* What else wakes a STEP_IDLES group of an idle database before awa_bgw.idle_interval */
typedef enum IdleWake
{
	IDLE_WAKE_BOUND = 0,		/* nothing: a commit that writes the data plane */
	IDLE_WAKE_DEFERRED,			/* the next deferred job's run_at */
	IDLE_WAKE_MINUTE			/* the next whole minute (the periodic schedules) */
} IdleWake;

/*
 * When idle (0.10, AWA_FEATURE_QUIET_IDLE; docs/operations.md): once every
 * STEP_IDLES group (promotion, rescue, the schedules, each ring's rotate and
 * prune) has found nothing to do in a run that began after the worker armed
 * its idle flag in shared memory, and the flag is still armed, the database is
 * idle: those groups sleep until their idle wake instead of their cadence.
 * The first commit that writes the data plane disarms the flag and sets the
 * worker's latch (src/dataplane/activity.c); the groups are then due at once,
 * and back on their cadences until they find nothing again. The folds keep
 * their cadence, and the heartbeat its own.
 */

typedef struct WorkerStep WorkerStep;
typedef StepNext (*StepHandler) (const WorkerStep *step, TimestampTz now);

struct WorkerStep
{
	const char *label;
	const char *sql;			/* NULL: the handler runs its own (auto-flip) */
	AwaSchemaFeature needs;		/* runs only at the versions that have it */
	AwaSchemaFeature sql_needs; /* at the versions without it, sql_without runs */
	const char *sql_without;
	AwaStepColumn columns[AWA_STEP_MAX_COLUMNS + 1];	/* read by name */
	const int  *interval_ms;	/* a GUC-backed cadence; NULL: every_ms */
	int			every_ms;
	int			flags;
	AwaCounter	runs;			/* AWA_NCOUNTERS: not counted */
	AwaCounter	rows;			/* bumped by the bigint column rows_column */
	const char *rows_column;
	const char *busy_column;	/* a bigint column: above 0, the step did work */
	IdleWake	idle_wake;		/* a STEP_IDLES group's head: see IdleWake */
	AwaCounter	stood_down;		/* STEP_GATED: a stand-down under a pin */
	StepHandler handler;
	int			arg;			/* the ring of a rotate or prune; a fold that trims */
};

static StepNext count_only(const WorkerStep *step, TimestampTz now);
static StepNext promote(const WorkerStep *step, TimestampTz now);
static StepNext fold(const WorkerStep *step, TimestampTz now);
static StepNext purge_failed_jobs(const WorkerStep *step, TimestampTz now);
static StepNext purge_unique_keys(const WorkerStep *step, TimestampTz now);
static StepNext auto_flip(const WorkerStep *step, TimestampTz now);
static StepNext rotate(const WorkerStep *step, TimestampTz now);
static StepNext prune(const WorkerStep *step, TimestampTz now);
static void idle_leave(TimestampTz now);
static void promotion_now(TimestampTz now);

#define NO_COUNTERS .runs = AWA_NCOUNTERS, .rows = AWA_NCOUNTERS, .stood_down = AWA_NCOUNTERS

/* $1 of rotate and prune: the ring's name */
#define ROTATE_SQL "SELECT outcome, blocker FROM " AWA_FN("rotate") "(" AWA_SCHEMA_ARG ", $1)"
/*
 * where the version has AWA_FEATURE_RINGS_BY_NEED (0.10): $2 the ring's
 * interval, $3 awa_bgw.rotate_fill (0: rotate at once, as ROTATE_SQL), $4
 * awa_bgw.rotate_min_age
 */
#define ROTATE_WHEN_DUE_SQL \
	"SELECT outcome, blocker FROM " AWA_INTERNAL_FN("rotate_when_due") \
	"($1, $2, NULLIF($3, 0), $4)"
/* how often a ring that turns by need is checked */
#define BY_NEED_CHECK_MS	1000
/*
 * where the version has AWA_FEATURE_PRUNE_HOLDERS (0.9+), a blocked prune also
 * names, in its transaction, who holds its locks
 */
#define PRUNE_SQL \
	"SELECT p.outcome, p.reason, CASE WHEN p.outcome = 'blocked' AND p.slot IS NOT NULL THEN " \
	AWA_FN("ring_slot_lock_holders") "(p.ring, p.slot) END AS holders " \
	"FROM " AWA_FN("prune") "(" AWA_SCHEMA_ARG ", $1) p"
#define PRUNE_SQL_WITHOUT_HOLDERS \
	"SELECT outcome, reason, NULL::pg_catalog.int4[] AS holders " \
	"FROM " AWA_FN("prune") "(" AWA_SCHEMA_ARG ", $1)"
#define RING_STEPS(ring, name) \
	{.label = "rotate of the " name " ring", .sql = ROTATE_WHEN_DUE_SQL, \
	 .sql_needs = AWA_FEATURE_RINGS_BY_NEED, .sql_without = ROTATE_SQL, \
	 .columns = {{"outcome", AWA_COL_TEXT}, {"blocker", AWA_COL_TEXT}}, \
	 .interval_ms = &awa_bgw_rotate_interval[ring], \
	 .flags = STEP_PIN_SLOWED | STEP_IDLES | STEP_BY_NEED, \
	 NO_COUNTERS, .handler = rotate, .arg = ring}, \
	{.label = "prune of the " name " ring", .sql = PRUNE_SQL, \
	 .sql_needs = AWA_FEATURE_PRUNE_HOLDERS, \
	 .sql_without = PRUNE_SQL_WITHOUT_HOLDERS, \
	 .columns = {{"outcome", AWA_COL_TEXT}, {"reason", AWA_COL_TEXT}, \
				 {"holders", AWA_COL_INT4_ARRAY}}, \
	 .flags = STEP_GROUP, NO_COUNTERS, .handler = prune, .arg = ring}

/*
 * Promotion, and how long until the next deferred job falls due (-1: none
 * waits). The subquery reads the statement's snapshot, taken before the
 * promotion: it is exact when nothing was promoted, the only time the worker
 * uses it (a promotion is work, and keeps the cadence short).
 */
#define PROMOTE_SQL \
	"SELECT p.promoted, (SELECT CASE WHEN m IS NULL THEN -1 ELSE pg_catalog.ceil(" \
	"greatest(0, pg_catalog.date_part('epoch', m - pg_catalog.clock_timestamp()) * 1000)) " \
	"END FROM (SELECT pg_catalog.min(d.run_at) AS m FROM " AWA_SCHEMA ".deferred_jobs d) n" \
	")::pg_catalog.int8 AS next_due_ms, " \
	"EXISTS (SELECT FROM pg_catalog.pg_prepared_xacts x " \
	"WHERE x.database OPERATOR(pg_catalog.=) pg_catalog.current_database()) AS prepared " \
	"FROM " AWA_FN("promote_deferred") "(" AWA_SCHEMA_ARG ") p"

static const WorkerStep steps[] = {
	{.label = "promotion of deferred jobs", .sql = PROMOTE_SQL,
	 .columns = {{"promoted", AWA_COL_INT8}, {"next_due_ms", AWA_COL_INT8},
				 {"prepared", AWA_COL_BOOL}},
	 .interval_ms = &awa_bgw_promote_interval, .flags = STEP_IDLES,
	 .idle_wake = IDLE_WAKE_DEFERRED,
	 .runs = AWA_C_PROMOTE_RUNS, .rows = AWA_C_JOBS_PROMOTED, .rows_column = "promoted",
	 .busy_column = "promoted", .stood_down = AWA_NCOUNTERS, .handler = promote},
	{.label = "rescue",
	 .sql = "SELECT rescued, outcome FROM " AWA_FN("rescue") "(" AWA_SCHEMA_ARG ")",
	 .columns = {{"rescued", AWA_COL_INT8}, {"outcome", AWA_COL_TEXT}},
	 .interval_ms = &awa_bgw_rescue_interval, .flags = STEP_IDLES | STEP_FEEDS_PROMOTION,
	 .runs = AWA_C_RESCUE_RUNS, .rows = AWA_C_JOBS_RESCUED, .rows_column = "rescued",
	 .busy_column = "rescued", .stood_down = AWA_NCOUNTERS, .handler = count_only},
	/*
	 * the job-id summaries of the ready and receipt children: the block
	 * ranges that are done filling (0.10)
	 */
	{.label = "summary of the job ids",
	 .sql = "SELECT " AWA_INTERNAL_FN("summarize_job_id_ranges") "() AS summarized",
	 .columns = {{"summarized", AWA_COL_INT8}},
	 .every_ms = SUMMARIZE_MS, .flags = STEP_IDLES, .needs = AWA_FEATURE_JOB_ID_BRIN,
	 NO_COUNTERS, .busy_column = "summarized", .handler = count_only},
	{.label = "periodic schedules",
	 .sql = "SELECT fired, failed FROM " AWA_FN("fire_due_schedules") "(" AWA_SCHEMA_ARG ")",
	 .columns = {{"fired", AWA_COL_INT8}, {"failed", AWA_COL_INT8}},
	 .every_ms = SCHEDULE_CHECK_MS, .flags = STEP_IDLES | STEP_FEEDS_PROMOTION,
	 .idle_wake = IDLE_WAKE_MINUTE,
	 .needs = AWA_FEATURE_SCHEDULES,
	 NO_COUNTERS, .busy_column = "fired", .handler = count_only},
	/* one batch per fold_interval, from where the last one stopped ($1) */
	{.label = "purge of unique keys",
	 .sql = "SELECT outcome, purged, last_job_id FROM " AWA_FN("purge_unique_keys") "($1)",
	 .columns = {{"outcome", AWA_COL_TEXT}, {"purged", AWA_COL_INT8},
				 {"last_job_id", AWA_COL_INT8}},
	 .interval_ms = &awa_bgw_fold_interval, .needs = AWA_FEATURE_UNIQUE_KEYS,
	 NO_COUNTERS, .handler = purge_unique_keys},
	/* the horizon-gated folds, then the auto-flip check, on the fold cadence */
	{.label = "fold of the rollup deltas",
	 .sql = "SELECT outcome, folded_rows, pin FROM "
	 AWA_FN("fold_terminal_rollup_deltas") "(" AWA_SCHEMA_ARG ")",
	 .columns = {{"outcome", AWA_COL_TEXT}, {"folded_rows", AWA_COL_INT8},
				 {"pin", AWA_COL_TEXT}},
	 .interval_ms = &awa_bgw_fold_interval, .flags = STEP_GATED,
	 .runs = AWA_C_FOLDS_RUN, .rows = AWA_C_ROWS_FOLDED, .rows_column = "folded_rows",
	 .stood_down = AWA_C_FOLDS_STOOD_DOWN, .handler = fold, .arg = false},
	{.label = "fold of the ring ledgers",
	 .sql = "SELECT outcome, trimmed_rows, pin FROM "
	 AWA_FN("fold_ring_rotation_ledgers") "(" AWA_SCHEMA_ARG ")",
	 .columns = {{"outcome", AWA_COL_TEXT}, {"trimmed_rows", AWA_COL_INT8},
				 {"pin", AWA_COL_TEXT}},
	 .flags = STEP_GROUP | STEP_GATED,
	 .runs = AWA_C_FOLDS_RUN, .rows = AWA_C_ROWS_TRIMMED, .rows_column = "trimmed_rows",
	 .stood_down = AWA_C_FOLDS_STOOD_DOWN, .handler = fold, .arg = true},
	{.label = "failed_jobs retention",
	 .sql = "SELECT outcome, purged, pin FROM "
	 AWA_FN("purge_failed_jobs_gated") "(" AWA_SCHEMA_ARG ")",
	 .columns = {{"outcome", AWA_COL_TEXT}, {"purged", AWA_COL_INT8}, {"pin", AWA_COL_TEXT}},
	 .flags = STEP_GROUP | STEP_CAUGHT_UP | STEP_GATED,
	 .runs = AWA_C_PURGE_RUNS, .rows = AWA_C_FAILED_JOBS_PURGED, .rows_column = "purged",
	 .stood_down = AWA_C_PURGES_STOOD_DOWN, .handler = purge_failed_jobs},
	/* its SQL is in autoflip.c: a check, then perhaps the flip */
	{.label = "auto-flip check",
	 .flags = STEP_GROUP | STEP_CAUGHT_UP, NO_COUNTERS, .handler = auto_flip},
	/* per ring, on that ring's cadence: one rotate transaction, then one prune */
	RING_STEPS(AWA_RING_QUEUE, "queue"),
	RING_STEPS(AWA_RING_LEASE, "lease"),
	RING_STEPS(AWA_RING_CLAIM, "claim"),
};

#define NSTEPS	lengthof(steps)
#define PROMOTION	0			/* the index of promotion's group in steps[] */

typedef struct WorkerSchedule
{
	TimestampTz next_due[NSTEPS];	/* of each group, kept at its first entry */
	int64		unique_after;	/* where the next purge of unique keys starts */
	bool		horizon_pinned; /* the last fold stood down under a pin */
	/* "When idle" (0.10), of each STEP_IDLES group, kept at its first entry */
	bool		group_busy[NSTEPS]; /* its last run found work, or failed */
	TimestampTz group_ran[NSTEPS];	/* when its last run began; 0: never */
	bool		busy;			/* the group running now found work */
	TimestampTz armed_at;		/* when the idle flag was armed; 0: it is not */
	bool		idle;			/* the STEP_IDLES groups sleep on their idle dues */
	TimestampTz deferred_due;	/* the next deferred job's run_at; 0: none */
	bool		promotion_waits;	/* the last promotion found nothing: the next
									 * waits for deferred_due or the deferred
									 * flag (0.10, "When idle" below) */
	TimestampTz next_heartbeat;
	Oid			extension_oid;	/* of the extension the last heartbeat wrote to */
	TimestampTz next_leader_try;
	TimestampTz next_role_check;
	bool		role_named;		/* awa_bgw.role names a role (else bootstrap superuser) */
	char		role_problem[64];	/* why the role may not maintain, as logged; "" */
	bool		is_leader;
	bool		upgrade_logged;
	bool		absent_logged;	/* "no extension" said, for this absence */
	const AwaSchemaVersion *schema; /* the version at the last check; NULL: none
									 * this library maintains */
	char		space_waiting[16];	/* the xid space state waited in, as logged; "" */
	char		instance_id[40];
} WorkerSchedule;

static WorkerSchedule sched;

/*
 * Settings the steps depend on, fixed at session level after connecting, so
 * that database and role defaults (ALTER DATABASE/ROLE ... SET) cannot steer
 * the worker: a read-only or serializable default fails or changes every
 * step, a short lock or statement timeout fails them at random, replica
 * mode switches the fence triggers off. A step may still SET LOCAL them.
 * JIT is off: a step's estimates (a probe per row over every child of a ring)
 * pass jit_above_cost while it runs in milliseconds, and compiling it cost
 * more than running it (a rescue under load: 1.4 s, of which most was JIT).
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
	{"jit", "off"},
};

static TimestampTz
after_ms(TimestampTz from, int ms)
{
	return TimestampTzPlusMilliseconds(from, ms);
}

static const AwaStepColumn held_column[] = {{"held", AWA_COL_BOOL}, {NULL}};

/*
 * Runs a session-level statement on the leader lock ($1) that returns one
 * boolean, held; false on error or NULL.
 */
static bool
run_leader_lock_step(const char *label, const char *sql)
{
	AwaStepResult res;
	AwaStepParams params = {0};

	awa_step_param(&params, INT8OID, Int64GetDatum(AWA_BGW_LEADER_KEY));
	if (!awa_run_session_step(label, sql, &params, held_column, &res))
		return false;
	return awa_step_bool(&res, "held");
}

static void
leader_release(void)
{
	if (!sched.is_leader)
		return;
	run_leader_lock_step("leader release",
						 "SELECT pg_catalog.pg_advisory_unlock($1) AS held");
	sched.is_leader = false;
	idle_leave(0);
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
	if (run_leader_lock_step("leader election",
							 "SELECT pg_catalog.pg_try_advisory_lock($1) AS held"))
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

	if (!awa_run_step("extension check", NULL, NULL, NULL, &res))
		return false;
	sched.schema = res.schema;
	if (res.extension == AWA_EXT_READY)
	{
		/* a new extension (dropped and created again) has no row of this worker yet */
		if (res.extension_oid != sched.extension_oid)
			sched.next_heartbeat = 0;
		sched.extension_oid = res.extension_oid;
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
					 errdetail("This library maintains awa_bgw %s to %s.",
							   awa_schema_version_oldest(), awa_schema_version_latest()),
					 errhint("From an older version, run ALTER EXTENSION awa_bgw UPDATE TO "
							 "'%s' in that database and follow docs/upgrade.md up to '%s'; "
							 "a newer version needs the library that ships it.",
							 awa_schema_version_oldest(), awa_schema_version_latest())));
		sched.upgrade_logged = true;
		awa_status_set_state(AWA_STATE_NEEDS_UPGRADE);
	}
	return false;
}

/*
 * Whether the rows of the database are this cluster's (docs/storage.md
 * §A.17), rebasing them when they came from another; the worker maintains
 * only then. Fresh or unmarked, a restore may be under way: the worker
 * touches nothing, and says once what it waits for.
 */
static bool
xid_space_own(void)
{
	static const AwaStepColumn columns[] = {{"state", AWA_COL_TEXT}, {NULL}};
	AwaStepResult res;
	const char *state;

	if (!awa_schema_has(sched.schema, AWA_FEATURE_XID_SPACE))
		return true;
	/* AWA_FEATURE_XID_SPACE came with the internal schema: nothing runs before it */
	if (!awa_run_step_by_version("xid space check",
								 "SELECT " AWA_INTERNAL_FN("xid_space_settle") "() AS state",
								 AWA_FEATURE_INTERNAL_SCHEMA, NULL, NULL, columns, &res) ||
		!res.has_row)
		return false;
	state = awa_step_text(&res, "state");
	if (strcmp(state, "own") == 0)
	{
		sched.space_waiting[0] = '\0';
		return true;
	}
	if (strcmp(sched.space_waiting, state) != 0)
		ereport(LOG,
				(errmsg("awa_bgw: the jobs of database \"%s\" are %s; not maintaining it yet",
						awa_status_dbname(),
						strcmp(state, "fresh") == 0
						? "not marked with this cluster's xid space (no job yet)"
						: strcmp(state, "restoring") == 0
						? "marked with another cluster's xid space, and their restore is "
						"not finished (a pg_restore is connected, or a sequence is not set)"
						: "not marked with their cluster's xid space"),
				 errdetail("A restore's CREATE EXTENSION leaves the mark to its data; the "
						   "worker waits for it, so as not to act on a restore half done."),
				 errhint("Once the restore has finished, the first enqueue or claim marks "
						 "or rebases them, or run SELECT awa.adopt_xid_space().")));
	strlcpy(sched.space_waiting, state, sizeof(sched.space_waiting));
	return false;
}

/*
 * How often the worker refreshes its row in awa.runtime_instances. From 0.10
 * the fleet gate reads a worker's liveness from shared memory
 * (awa_internal.live_worker_instances), so the row is a registration,
 * refreshed every awa_bgw.runtime_heartbeat_interval (an hour by default) and
 * an idle database is not written to for it. Before 0.10 the gate reads the
 * row's last_seen_at alone: then at least three times per
 * awa_bgw.runtime_fresh_window, so that the row counts as live.
 */
static int
heartbeat_interval(void)
{
	if (awa_schema_has(sched.schema, AWA_FEATURE_QUIET_IDLE))
		return awa_bgw_runtime_heartbeat_interval;
	return Min(awa_bgw_runtime_heartbeat_interval, awa_bgw_runtime_fresh_window * 1000 / 3);
}

/* the heartbeat's arguments, after its function's name (by version: heartbeat) */
#define HEARTBEAT_ARGS "($1::pg_catalog.uuid, $2, $3, $4, $5)"

static void
heartbeat(TimestampTz now)
{
	AwaStepParams params = {0};
	AwaStepResult res;

	if (now < sched.next_heartbeat)
		return;
	sched.next_heartbeat = after_ms(now, heartbeat_interval());
	awa_step_param(&params, TEXTOID, CStringGetTextDatum(sched.instance_id));
	awa_step_param(&params, TEXTOID,
				   CStringGetTextDatum(psprintf("awa_bgw worker (database %s)",
												awa_status_dbname())));
	awa_step_param(&params, TEXTOID, CStringGetTextDatum(AWA_BGW_BINARY_VERSION));
	awa_step_param(&params, INT4OID, Int32GetDatum(MyProcPid));
	awa_step_param(&params, BOOLOID, BoolGetDatum(sched.is_leader));
	awa_run_step_by_version("runtime heartbeat",
							"SELECT " AWA_INTERNAL_FN("runtime_heartbeat") HEARTBEAT_ARGS,
							AWA_FEATURE_INTERNAL_SCHEMA,
							"SELECT " AWA_FN("runtime_heartbeat") HEARTBEAT_ARGS,
							&params, NULL, &res);
}

/*
 * Run one entry's SQL with its parameters (NULL: none), sql or, at a version
 * without its sql_needs, sql_without (chosen in the step's transaction, by
 * the version it reads), and count it: a run and its rows, or for a gated
 * step a stand-down under a pin, or a run and its rows when it folded.
 * Returns whether it ran (no error, the extension ready).
 */
static bool
run_entry(const WorkerStep *step, const AwaStepParams *params, AwaStepResult *res)
{
	if (!awa_run_step_by_version(step->label, step->sql, step->sql_needs, step->sql_without,
								 params, step->columns, res) ||
		res->extension != AWA_EXT_READY)
	{
		sched.busy = true;		/* a failed step is not an idle one */
		return false;
	}
	if (step->busy_column != NULL && awa_step_int8(res, step->busy_column) > 0)
		sched.busy = true;
	if (step->flags & STEP_GATED)
	{
		if (awa_step_text_is(res, "outcome", "stood_down"))
		{
			awa_stats_count(step->stood_down, 1);
			return true;
		}
		if (!awa_step_text_is(res, "outcome", "folded"))
			return true;
	}
	if (step->runs < AWA_NCOUNTERS)
		awa_stats_count(step->runs, 1);
	if (step->rows < AWA_NCOUNTERS && step->rows_column != NULL)
		awa_stats_count(step->rows, (uint64) Max(awa_step_int8(res, step->rows_column), 0));
	return true;
}

/* Promotion, rescue, the periodic schedules: run, counted, nothing more. */
static StepNext
count_only(const WorkerStep *step, TimestampTz now)
{
	AwaStepResult res;

	run_entry(step, NULL, &res);
	return STEP_DONE;
}

/*
 * Promotion, counted, and when it promoted nothing, when the next deferred job
 * falls due: the worker wakes for it (0.10), idle or not. The deferred flag is
 * armed before the promotion's snapshot, so a deferred job it does not see
 * wakes the worker when its transaction commits. While a prepared transaction
 * of the database may hold deferred jobs (its COMMIT PREPARED, in another
 * session, would wake no one), promotion keeps its cadence.
 */
static StepNext
promote(const WorkerStep *step, TimestampTz now)
{
	AwaStepResult res;
	int64		due_ms;

	sched.promotion_waits = false;
	awa_status_arm_deferred();
	if (!run_entry(step, NULL, &res))
		return STEP_DONE;
	due_ms = awa_step_int8(&res, "next_due_ms");
	sched.deferred_due = due_ms < 0 ? 0
		: after_ms(GetCurrentTimestamp(), (int) Min(due_ms, awa_bgw_idle_interval));
	sched.promotion_waits = awa_step_int8(&res, "promoted") == 0 &&
		!awa_step_bool(&res, "prepared") &&
		awa_schema_has(sched.schema, AWA_FEATURE_QUIET_IDLE);
	return STEP_DONE;
}

/*
 * A horizon-gated fold (rollup deltas; ring ledgers, arg: trimmed). Each folds
 * at most awa_bgw.fold_batch_size rows (0.9); a full batch leaves a backlog,
 * folded again at once instead of after fold_interval, in bounded
 * transactions between the other steps.
 */
static StepNext
fold(const WorkerStep *step, TimestampTz now)
{
	AwaStepResult res;
	bool		trimmed = (bool) step->arg;
	int64		rows = 0;

	if (!run_entry(step, NULL, &res))
		return STEP_DONE;
	if (awa_step_text_is(&res, "outcome", "stood_down"))
	{
		sched.horizon_pinned = true;
		awa_status_note_fold(AWA_FOLD_STOOD_DOWN, trimmed, 0, awa_step_text(&res, "pin"));
	}
	else if (awa_step_text_is(&res, "outcome", "folded"))
	{
		sched.horizon_pinned = false;
		rows = Max(awa_step_int8(&res, step->rows_column), 0);
		awa_status_note_fold(AWA_FOLD_FOLDED, trimmed, (uint64) rows, NULL);
	}
	else
		awa_status_note_fold(AWA_FOLD_OTHER, trimmed, 0, NULL);
	return rows >= awa_bgw_fold_batch_size ? STEP_AGAIN : STEP_DONE;
}

/*
 * The failed_jobs retention: batches of at most awa_bgw.fold_batch_size rows
 * (0.9), each its own transaction under the horizon gate, while a batch comes
 * back full, at most PURGE_MAX_BATCHES of them or PURGE_BUDGET_MS in one pass;
 * again at once when the budget ran out with rows perhaps left.
 */
static StepNext
purge_failed_jobs(const WorkerStep *step, TimestampTz now)
{
	TimestampTz start = GetCurrentTimestamp();
	int			batches;

	for (batches = 0; batches < PURGE_MAX_BATCHES; batches++)
	{
		AwaStepResult res;
		int64		rows;

		if (!run_entry(step, NULL, &res) || !awa_step_text_is(&res, "outcome", "folded"))
			return STEP_DONE;	/* failed, or stood down under a pin */
		rows = Max(awa_step_int8(&res, "purged"), 0);
		awa_status_note_purge((uint64) rows);
		if (rows < awa_bgw_fold_batch_size)
			return STEP_DONE;
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), PURGE_BUDGET_MS))
			break;
	}
	return STEP_AGAIN;
}

/*
 * The keys of unique jobs whose jobs the data plane no longer holds (0.9), one
 * batch from where the last one stopped; stands down under a pinned horizon
 * like the folds.
 */
static StepNext
purge_unique_keys(const WorkerStep *step, TimestampTz now)
{
	AwaStepParams params = {0};
	AwaStepResult res;

	awa_step_param(&params, INT8OID, Int64GetDatum(sched.unique_after));
	if (run_entry(step, &params, &res) && awa_step_text_is(&res, "outcome", "folded"))
		sched.unique_after = awa_step_int8(&res, "last_job_id");
	return STEP_DONE;
}

static StepNext
auto_flip(const WorkerStep *step, TimestampTz now)
{
	awa_auto_flip_tick(now);
	return STEP_DONE;
}

/* ms as an interval */
static Interval *
ms_interval(int ms)
{
	Interval   *iv = palloc0(sizeof(Interval));

	iv->time = (int64) ms * 1000;
	return iv;
}

/*
 * A rotation of the ring arg: its outcome and blocker, in the stats and the
 * status. With awa_bgw.rotate_fill above 0 (and a version that has it) the
 * ring turns by need: rotate_when_due rotates it only when it is due
 * (skipped_not_due otherwise: the ring holds rows, so the worker is not idle).
 */
static StepNext
rotate(const WorkerStep *step, TimestampTz now)
{
	AwaRing		ring = (AwaRing) step->arg;
	AwaStepParams params = {0};
	AwaStepResult res;
	const char *outcome;
	const char *blocker;
	int			idx;

	awa_step_param(&params, TEXTOID, CStringGetTextDatum(awa_ring_name(ring)));
	awa_step_param(&params, INTERVALOID,
				   IntervalPGetDatum(ms_interval(awa_bgw_rotate_interval[ring])));
	awa_step_param(&params, INT8OID, Int64GetDatum(awa_bgw_rotate_fill));
	awa_step_param(&params, INTERVALOID, IntervalPGetDatum(ms_interval(awa_bgw_rotate_min_age)));
	if (!run_entry(step, &params, &res) || !res.has_row)
		return STEP_DONE;
	blocker = awa_step_text(&res, "blocker");
	outcome = awa_step_text(&res, "outcome");
	if (outcome == NULL || strcmp(outcome, "skipped_idle") != 0)
		sched.busy = true;		/* the ring holds rows: not idle */
	idx = outcome ? awa_rotate_outcome_index(outcome, blocker) : -1;
	if (idx >= 0)
	{
		awa_stats_count_ring(ring, true, idx);
		awa_status_note_rotate(ring, idx, blocker);
	}
	return STEP_DONE;
}

/*
 * A prune of the ring arg: its outcome and reason, and at 0.9 the sessions
 * that held or awaited a lock on the children a blocked prune wanted.
 */
static StepNext
prune(const WorkerStep *step, TimestampTz now)
{
	AwaRing		ring = (AwaRing) step->arg;
	AwaStepParams params = {0};
	AwaStepResult res;
	const char *outcome;
	const int  *holders;
	int			nholders;
	int			idx;

	awa_step_param(&params, TEXTOID, CStringGetTextDatum(awa_ring_name(ring)));
	if (!run_entry(step, &params, &res) || !res.has_row)
		return STEP_DONE;
	outcome = awa_step_text(&res, "outcome");
	idx = outcome ? awa_prune_outcome_index(outcome) : -1;
	if (idx < 0)
		return STEP_DONE;
	nholders = awa_step_ints(&res, "holders", &holders);
	awa_stats_count_ring(ring, false, idx);
	awa_status_note_prune(ring, idx, awa_step_text(&res, "reason"), holders,
						  Min(nholders, AWA_PRUNE_BLOCKERS_MAX));
	return STEP_DONE;
}

/*
 * A step's cadence. While the last fold stood down under a pinned horizon, a
 * ring rotates (and prunes) at most once per awa_bgw.pinned_rotate_interval:
 * each prune's TRUNCATE writes new pg_class row versions that no vacuum can
 * remove before the pin ends, so fewer, fuller slots leave fewer of them
 * (docs/operations.md, "When the folds stand down for long").
 */
static int
step_interval(const WorkerStep *step)
{
	int			ms = step->interval_ms ? *step->interval_ms : step->every_ms;

	if ((step->flags & STEP_BY_NEED) && awa_bgw_rotate_fill > 0)
		ms = Min(ms, BY_NEED_CHECK_MS);
	if ((step->flags & STEP_PIN_SLOWED) && sched.horizon_pinned)
		ms = Max(ms, awa_bgw_pinned_rotate_interval);
	return ms;
}

/* Whether the version installed (at the last check) has what the step needs. */
static bool
step_runs_here(const WorkerStep *step)
{
	return awa_schema_has(sched.schema, step->needs);
}

/* The next whole minute after now: the periodic schedules fall due on one. */
static TimestampTz
next_minute(TimestampTz now)
{
	return now - now % USECS_PER_MINUTE + USECS_PER_MINUTE;
}

/*
 * When a group that has just run is due again: after its cadence, or, while
 * the database is idle (0.10), when its idle wake says: within
 * awa_bgw.idle_interval, and sooner for the next deferred job or the next
 * whole minute.
 */
static TimestampTz
group_due(const WorkerStep *head, TimestampTz now)
{
	TimestampTz due;

	if (head->idle_wake == IDLE_WAKE_DEFERRED && sched.promotion_waits && !sched.idle)
	{
		/* the next deferred job, within idle_interval, never before the cadence */
		due = after_ms(now, Max(awa_bgw_idle_interval, step_interval(head)));
		if (sched.deferred_due != 0)
			due = Min(due, sched.deferred_due);
		return Max(due, after_ms(now, step_interval(head)));
	}
	if (!sched.idle || !(head->flags & STEP_IDLES))
		return after_ms(now, step_interval(head));
	/* idle stretches a cadence, never shortens one (a ring at an hour stays so) */
	due = after_ms(now, Max(awa_bgw_idle_interval, step_interval(head)));
	if (head->idle_wake == IDLE_WAKE_DEFERRED && sched.deferred_due != 0)
		due = Min(due, sched.deferred_due);
	else if (head->idle_wake == IDLE_WAKE_MINUTE)
		due = Min(due, next_minute(now));
	return due;
}

/* The index after the last entry of the group that starts at head. */
static int
group_end(int head)
{
	int			end = head + 1;

	while (end < (int) NSTEPS && (steps[end].flags & STEP_GROUP))
		end++;
	return end;
}

/*
 * Runs the group at head, entry by entry. It is due again after its cadence,
 * or at once when an entry left work behind; whether it found work is kept
 * for the idle check.
 */
static void
run_group(int head, TimestampTz now)
{
	bool		backlog = false;
	int			i;

	sched.busy = false;
	for (i = head; i < group_end(head); i++)
	{
		const WorkerStep *step = &steps[i];

		if (!step_runs_here(step) || ((step->flags & STEP_CAUGHT_UP) && backlog))
			continue;
		if (step->handler(step, now) == STEP_AGAIN)
			backlog = true;
	}
	sched.group_busy[head] = sched.busy || backlog;
	sched.group_ran[head] = now;
	sched.next_due[head] = backlog ? now : group_due(&steps[head], now);
	if ((steps[head].flags & STEP_FEEDS_PROMOTION) && sched.group_busy[head])
		promotion_now(now);
}

/*
 * Promotion is due at once (a deferred job was written that its wait may not
 * know of).
 */
static void
promotion_now(TimestampTz now)
{
	Assert(steps[PROMOTION].handler == promote);
	sched.next_due[PROMOTION] = Min(sched.next_due[PROMOTION], now);
	sched.promotion_waits = false;
}

/* One pass over the table of steps: each group that is due runs. */
static void
maintain(TimestampTz now)
{
	int			head;

	for (head = 0; head < (int) NSTEPS; head = group_end(head))
		if (step_runs_here(&steps[head]) && now >= sched.next_due[head])
			run_group(head, now);
}

/* The earliest time a group is due, or next if that is sooner. */
static TimestampTz
earliest_due(TimestampTz next)
{
	int			head;

	for (head = 0; head < (int) NSTEPS; head = group_end(head))
		if (step_runs_here(&steps[head]))
			next = Min(next, sched.next_due[head]);
	return next;
}

/* Back on the cadences; due at once when the groups slept idle. */
static void
idle_leave(TimestampTz now)
{
	int			head;

	if (sched.idle)
		for (head = 0; head < (int) NSTEPS; head = group_end(head))
			if (steps[head].flags & STEP_IDLES)
				sched.next_due[head] = now;
	if (sched.armed_at != 0)
		awa_status_disarm_idle();
	awa_status_set_idle(false);
	sched.idle = false;
	sched.armed_at = 0;
}

/*
 * Arms the idle flag, unless a prepared transaction of this database may hold
 * jobs: its COMMIT PREPARED, in another session, would wake no one. Armed
 * first, then looked for: a PREPARE that wrote the data plane is listed in
 * pg_prepared_xacts before it reads the flag, so either the look sees it or
 * it sees the flag (and wakes the worker).
 */
static void
idle_arm(void)
{
	static const AwaStepColumn columns[] = {{"prepared", AWA_COL_BOOL}, {NULL}};
	AwaStepResult res;

	sched.armed_at = GetCurrentTimestamp();
	awa_status_arm_idle();
	if (awa_run_step("idle check",
					 "SELECT EXISTS (SELECT FROM pg_catalog.pg_prepared_xacts "
					 "WHERE database OPERATOR(pg_catalog.=) pg_catalog.current_database()) "
					 "AS prepared", NULL, columns, &res) &&
		!awa_step_bool(&res, "prepared"))
		return;
	awa_status_disarm_idle();
	sched.armed_at = 0;
}

/*
 * After a pass (0.10): arms the idle flag once every STEP_IDLES group found
 * nothing, and once each has run again since, still finding nothing, with the
 * flag still armed, puts them on their idle wakes. Any work found leaves.
 */
static void
idle_settle(TimestampTz now)
{
	bool		quiet = true;
	bool		ran_since_armed = true;
	int			head;

	if (!awa_schema_has(sched.schema, AWA_FEATURE_QUIET_IDLE))
		return;
	for (head = 0; head < (int) NSTEPS; head = group_end(head))
	{
		if (!(steps[head].flags & STEP_IDLES) || !step_runs_here(&steps[head]))
			continue;
		quiet = quiet && sched.group_ran[head] != 0 && !sched.group_busy[head];
		/*
		 * a promotion that waits for the next deferred job looks again only
		 * when one is written (its own flag) or falls due: it has seen what
		 * it would see now
		 */
		ran_since_armed = ran_since_armed &&
			(sched.group_ran[head] > sched.armed_at ||
			 (head == PROMOTION && sched.promotion_waits));
	}
	if (!quiet)
		idle_leave(now);
	else if (sched.armed_at == 0)
		idle_arm();
	else if (ran_since_armed && !sched.idle && awa_status_idle_armed())
	{
		sched.idle = true;
		awa_status_set_idle(true);
		for (head = 0; head < (int) NSTEPS; head = group_end(head))
			if (steps[head].flags & STEP_IDLES)
				sched.next_due[head] = group_due(&steps[head], now);
	}
}

/* One pass of the state machine; returns the next time anything is due. */
static TimestampTz
worker_tick(void)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz next = after_ms(now, IDLE_RECHECK_MS);

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
	if (!xid_space_own())
	{
		awa_status_set_state(AWA_STATE_RESTORE_PENDING);
		return next;
	}
	awa_status_set_state(AWA_STATE_LEADER);
	/* a commit wrote the data plane since the idle flag was armed */
	if (sched.armed_at != 0 && !awa_status_idle_armed())
		idle_leave(now);
	/* a commit wrote a deferred job since the last promotion began */
	if (sched.promotion_waits && !awa_status_deferred_armed())
		promotion_now(now);
	maintain(now);
	idle_settle(now);
	if (sched.idle)
		next = after_ms(now, awa_bgw_idle_interval);
	return Min(earliest_due(next), sched.next_heartbeat);
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
	idle_leave(0);
	memset(sched.next_due, 0, sizeof(sched.next_due));
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
	static const AwaStepColumn id_column[] = {{"id", AWA_COL_TEXT}, {NULL}};
	AwaStepResult res;
	const char *id = NULL;

	/* gen_random_uuid() is core; it needs no extension and writes nothing */
	if (awa_run_session_step("instance id",
							 "SELECT pg_catalog.gen_random_uuid()::pg_catalog.text AS id",
							 NULL, id_column, &res))
		id = awa_step_text(&res, "id");
	if (id != NULL && strlen(id) < sizeof(sched.instance_id))
		strlcpy(sched.instance_id, id, sizeof(sched.instance_id));
	else
		snprintf(sched.instance_id, sizeof(sched.instance_id),
				 "00000000-0000-4000-8000-%012x", MyProcPid);
	awa_status_set_instance_id(sched.instance_id);
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
