/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The launcher: a static background worker, connected to no database,
 *	  that keeps one dynamic maintenance worker running per database named
 *	  in awa_bgw.databases.
 *
 * The postmaster restarts the launcher; the launcher restarts workers, with
 * its own exponential back-off (a worker exits 1 on SIGTERM or FATAL and is
 * registered BGW_NEVER_RESTART). A worker is never restarted for a database
 * that no longer exists, so DROP DATABASE ... WITH (FORCE) of a maintained
 * database ends its worker for good; a database removed from the list has
 * its worker stopped. A template database, or one that allows no
 * connections, is not maintained (a worker connected to a template makes
 * every CREATE DATABASE from it fail): one warning, until that changes.
 *
 * When every background worker slot (max_worker_processes) is taken, a
 * worker cannot be registered: the launcher warns once per database (with
 * the hint to raise max_worker_processes), shows the database in
 * awa.maintenance_status as no_worker_slot, and tries again every few
 * seconds (its own short back-off, not the crash back-off) until a slot
 * frees; then it logs that the worker started.
 *
 * src/worker/launcher.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
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
#include "src/worker/launcher.h"
#include "src/worker/worker.h"

#define LAUNCHER_NAPTIME_MS		1000
#define BACKOFF_MIN_MS			1000
#define BACKOFF_MAX_MS			60000
#define STABLE_RUN_MS			60000	/* a run this long resets the back-off */
#define SLOT_RETRY_MIN_MS		1000	/* retries while no worker slot is free */
#define SLOT_RETRY_MAX_MS		5000

/* Whether a listed database can have a worker. */
typedef enum DatabaseFitness
{
	DB_FIT = 0,
	DB_MISSING,
	DB_TEMPLATE,
	DB_NO_CONNECTIONS
} DatabaseFitness;

typedef struct LauncherEntry
{
	bool		used;
	bool		wanted;			/* still listed in awa_bgw.databases */
	DatabaseFitness reported;	/* the unfitness last logged; DB_FIT: none */
	char		dbname[NAMEDATALEN];
	Oid			dboid;			/* of the running worker */
	BackgroundWorkerHandle *handle;
	TimestampTz started_at;
	TimestampTz next_start;
	int			backoff_ms;
	/* while no background worker slot is free for it (slot_attempts > 0) */
	uint64		slot_attempts;	/* failed registrations; 0: not waiting */
	TimestampTz slot_wait_since;
	TimestampTz last_slot_attempt;
	int			slot_retry_ms;
} LauncherEntry;

static LauncherEntry entries[AWA_BGW_MAX_DATABASES];

/* Whether workers can connect as awa_bgw.role; the problem last logged. */
typedef enum RoleFitness
{
	ROLE_FIT = 0,
	ROLE_MISSING,
	ROLE_NO_LOGIN
} RoleFitness;

static RoleFitness role_reported = ROLE_FIT;

static LauncherEntry *
entry_for(const char *dbname)
{
	LauncherEntry *free_entry = NULL;
	int			i;

	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		if (entries[i].used && strcmp(entries[i].dbname, dbname) == 0)
			return &entries[i];
		if (!entries[i].used && free_entry == NULL)
			free_entry = &entries[i];
	}
	if (free_entry == NULL)
	{
		ereport(WARNING,
				(errmsg("awa_bgw: cannot maintain database \"%s\": at most %d databases",
						dbname, AWA_BGW_MAX_DATABASES)));
		return NULL;
	}
	memset(free_entry, 0, sizeof(LauncherEntry));
	free_entry->used = true;
	strlcpy(free_entry->dbname, dbname, NAMEDATALEN);
	free_entry->backoff_ms = BACKOFF_MIN_MS;
	return free_entry;
}

/* Mark the entries of the databases listed now; returns false on a bad list. */
static bool
mark_wanted(void)
{
	char	   *raw = pstrdup(awa_bgw_databases ? awa_bgw_databases : "");
	List	   *names = NIL;
	ListCell   *lc;
	int			i;

	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
		entries[i].wanted = false;
	if (!SplitIdentifierString(raw, ',', &names))
	{
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("awa_bgw: invalid awa_bgw.databases: \"%s\"", awa_bgw_databases),
				 errhint("List database names separated by commas.")));
		list_free(names);
		pfree(raw);
		return false;
	}
	foreach(lc, names)
	{
		LauncherEntry *e = entry_for((const char *) lfirst(lc));

		if (e)
			e->wanted = true;
	}
	list_free(names);
	pfree(raw);
	return true;
}

/* Notice workers that stopped; stop workers no longer wanted. */
static void
reap_workers(TimestampTz now)
{
	int			i;

	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		LauncherEntry *e = &entries[i];
		pid_t		pid;

		if (!e->used || e->handle == NULL)
			continue;
		if (GetBackgroundWorkerPid(e->handle, &pid) == BGWH_STOPPED)
		{
			pfree(e->handle);
			e->handle = NULL;
			if (TimestampDifferenceExceeds(e->started_at, now, STABLE_RUN_MS))
				e->backoff_ms = BACKOFF_MIN_MS;
			e->next_start = TimestampTzPlusMilliseconds(now, e->backoff_ms);
			if (e->wanted)
				ereport(LOG,
						(errmsg("awa_bgw: worker for database \"%s\" exited; restarting it "
								"in %d ms if the database still exists",
								e->dbname, e->backoff_ms)));
			e->backoff_ms = Min(e->backoff_ms * 2, BACKOFF_MAX_MS);
		}
		else if (!e->wanted)
			TerminateBackgroundWorker(e->handle);
	}
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
		if (entries[i].used && !entries[i].wanted && entries[i].handle == NULL)
			entries[i].used = false;
}

/*
 * Every background worker slot is taken: warn once per database (not on each
 * retry) and try again soon, on a short back-off of its own, so that the
 * worker starts within seconds of a slot freeing.
 */
static void
no_worker_slot(LauncherEntry *e, TimestampTz now)
{
	if (e->slot_attempts == 0)
	{
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("awa_bgw: could not start a worker for database \"%s\": no free "
						"background worker slot", e->dbname),
				 errdetail("All %d slots of max_worker_processes are taken; the launcher "
						   "retries every few seconds and logs again when the worker "
						   "starts.", max_worker_processes),
				 errhint("Raise max_worker_processes (and restart the server): awa_bgw "
						 "needs one slot for its launcher and one per maintained "
						 "database, besides parallel and replication workers.")));
		e->slot_wait_since = now;
		e->slot_retry_ms = SLOT_RETRY_MIN_MS;
	}
	e->slot_attempts++;
	e->last_slot_attempt = now;
	e->next_start = TimestampTzPlusMilliseconds(now, e->slot_retry_ms);
	e->slot_retry_ms = Min(e->slot_retry_ms * 2, SLOT_RETRY_MAX_MS);
}

/* Show the databases waiting for a worker slot in awa.maintenance_status. */
static void
publish_slot_waits(void)
{
	AwaSlotWait waits[AWA_BGW_MAX_DATABASES];
	int			i;

	memset(waits, 0, sizeof(waits));
	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		LauncherEntry *e = &entries[i];

		if (!e->used || !e->wanted || e->handle != NULL || e->slot_attempts == 0)
			continue;
		waits[i].in_use = true;
		strlcpy(waits[i].dbname, e->dbname, NAMEDATALEN);
		waits[i].since = e->slot_wait_since;
		waits[i].last_attempt_at = e->last_slot_attempt;
		waits[i].attempts = e->slot_attempts;
	}
	awa_slot_waits_publish(waits);
}

static void
start_worker(LauncherEntry *e, Oid dboid, Oid roleoid, TimestampTz now)
{
	BackgroundWorker worker;
	AwaWorkerArgs args;
	MemoryContext oldcxt;
	bool		registered;

	memset(&worker, 0, sizeof(worker));
	memset(&args, 0, sizeof(args));
	args.roleoid = roleoid;
	strlcpy(args.dbname, e->dbname, NAMEDATALEN);

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "awa_bgw");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, CppAsString(awa_bgw_worker_main));
	snprintf(worker.bgw_name, BGW_MAXLEN, "awa_bgw worker for database %s", e->dbname);
	snprintf(worker.bgw_type, BGW_MAXLEN, AWA_BGW_WORKER_TYPE);
	worker.bgw_main_arg = ObjectIdGetDatum(dboid);
	worker.bgw_notify_pid = MyProcPid;
	memcpy(worker.bgw_extra, &args, sizeof(args));

	e->started_at = now;
	/* the handle outlives the transaction this runs in */
	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	registered = RegisterDynamicBackgroundWorker(&worker, &e->handle);
	MemoryContextSwitchTo(oldcxt);
	if (!registered)
	{
		e->handle = NULL;
		no_worker_slot(e, now);
		return;
	}
	if (e->slot_attempts > 0)
		ereport(LOG,
				(errmsg("awa_bgw: a background worker slot is free: started the worker "
						"for database \"%s\" after " UINT64_FORMAT " failed attempts",
						e->dbname, e->slot_attempts)));
	e->slot_attempts = 0;
	e->dboid = dboid;
	e->reported = DB_FIT;
}

/*
 * Whether a database can be maintained, and its OID. A heap scan of
 * pg_database, because a process connected to no database cannot open
 * pg_database's indexes (the autovacuum launcher reads it the same way).
 */
static DatabaseFitness
lookup_database(const char *dbname, Oid *dboid)
{
	Relation	rel = table_open(DatabaseRelationId, AccessShareLock);
	TableScanDesc scan = table_beginscan_catalog(rel, 0, NULL);
	HeapTuple	tup;
	DatabaseFitness result = DB_MISSING;

	*dboid = InvalidOid;
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (strcmp(NameStr(db->datname), dbname) != 0)
			continue;
		*dboid = db->oid;
		result = db->datistemplate ? DB_TEMPLATE
			: !db->datallowconn ? DB_NO_CONNECTIONS : DB_FIT;
		break;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

/* Say once why a listed database has no worker (again only if the reason changes). */
static void
report_unfit(LauncherEntry *e, DatabaseFitness fitness)
{
	if (e->reported == fitness)
		return;
	e->reported = fitness;
	if (fitness == DB_MISSING)
		ereport(LOG,
				(errmsg("awa_bgw: database \"%s\" listed in awa_bgw.databases does "
						"not exist; waiting for it", e->dbname)));
	else if (fitness == DB_TEMPLATE)
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("awa_bgw: database \"%s\" listed in awa_bgw.databases is a "
						"template database; not maintaining it", e->dbname),
				 errdetail("A session connected to a template database makes CREATE "
						   "DATABASE from it fail."),
				 errhint("Remove it from awa_bgw.databases and reload.")));
	else if (fitness == DB_NO_CONNECTIONS)
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("awa_bgw: database \"%s\" listed in awa_bgw.databases does "
						"not allow connections; not maintaining it", e->dbname),
				 errhint("Remove it from awa_bgw.databases and reload, or allow "
						 "connections with ALTER DATABASE ... ALLOW_CONNECTIONS true.")));
}

/*
 * The pid of a live worker for this database that this launcher did not start
 * (its predecessor's, left running when the launcher restarted), or 0.
 */
static pid_t
orphan_worker_pid(Oid dboid)
{
	return (pid_t) awa_status_live_worker_pid(dboid);
}

/*
 * Stop workers left by a previous launcher whose database is no longer listed;
 * the ones still wanted are adopted (start_due_workers starts no second one).
 */
static void
stop_unwanted_orphans(void)
{
	char		wanted[AWA_BGW_MAX_DATABASES][NAMEDATALEN];
	int			n = 0;
	int			j;

	for (j = 0; j < AWA_BGW_MAX_DATABASES; j++)
		if (entries[j].used && entries[j].wanted)
			strlcpy(wanted[n++], entries[j].dbname, NAMEDATALEN);
	awa_status_stop_workers_except((const char (*)[NAMEDATALEN]) wanted, n);
}

/*
 * A running worker whose database became a template (or closed to connections)
 * is stopped: it would make CREATE DATABASE from it fail. It is not started
 * again while that lasts.
 */
static void
stop_if_unfit(LauncherEntry *e)
{
	Oid			dboid;
	DatabaseFitness fitness = lookup_database(e->dbname, &dboid);

	if (fitness != DB_TEMPLATE && fitness != DB_NO_CONNECTIONS)
		return;
	report_unfit(e, fitness);
	TerminateBackgroundWorker(e->handle);
}

/* Say once that no worker can start as awa_bgw.role (again only if that changes). */
static void
report_role(RoleFitness fitness)
{
	if (fitness == role_reported)
		return;
	role_reported = fitness;
	if (fitness == ROLE_MISSING)
		ereport(WARNING,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("awa_bgw: role \"%s\" (awa_bgw.role) does not exist; starting no workers",
						awa_bgw_role),
				 errhint("Create it as a superuser WITH LOGIN, or set awa_bgw.role to "
						 "such a role and restart the server.")));
	else if (fitness == ROLE_NO_LOGIN)
		ereport(WARNING,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("awa_bgw: role \"%s\" (awa_bgw.role) has no LOGIN; starting no workers",
						awa_bgw_role),
				 errhint("ALTER ROLE %s LOGIN; the workers start within a second.",
						 quote_identifier(awa_bgw_role))));
}

/*
 * The role workers connect as (InvalidOid: the bootstrap superuser) in
 * *roleoid; false when a worker could not connect as it. Whether it may
 * maintain (a superuser) is each worker's own check.
 */
static bool
worker_role(Oid *roleoid)
{
	HeapTuple	tup;
	RoleFitness fitness = ROLE_FIT;

	*roleoid = InvalidOid;
	if (awa_bgw_role && awa_bgw_role[0] != '\0')
	{
		tup = SearchSysCache1(AUTHNAME, CStringGetDatum(awa_bgw_role));
		if (!HeapTupleIsValid(tup))
			fitness = ROLE_MISSING;
		else
		{
			Form_pg_authid form = (Form_pg_authid) GETSTRUCT(tup);

			*roleoid = form->oid;
			if (!form->rolcanlogin)
				fitness = ROLE_NO_LOGIN;
			ReleaseSysCache(tup);
		}
	}
	report_role(fitness);
	return fitness == ROLE_FIT;
}

/*
 * Start the wanted workers that are not running and are due, and stop running
 * ones whose database can no longer be maintained; needs a transaction.
 */
static void
start_due_workers(TimestampTz now)
{
	Oid			roleoid;
	bool		can_start = worker_role(&roleoid);
	int			i;

	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		LauncherEntry *e = &entries[i];
		DatabaseFitness fitness;
		Oid			dboid;

		if (!e->used || !e->wanted)
			continue;
		if (e->handle != NULL)
		{
			stop_if_unfit(e);
			continue;
		}
		if (!can_start)
			e->slot_attempts = 0;	/* no slot needed while no worker may start */
		if (!can_start || now < e->next_start)
			continue;
		fitness = lookup_database(e->dbname, &dboid);
		if (fitness != DB_FIT)
		{
			e->slot_attempts = 0;
			report_unfit(e, fitness);
			continue;
		}
		if (orphan_worker_pid(dboid) != 0)
		{
			e->slot_attempts = 0;
			continue;			/* a predecessor's worker still runs it */
		}
		start_worker(e, dboid, roleoid, now);
	}
}

static void
launcher_reconcile(void)
{
	TimestampTz now = GetCurrentTimestamp();

	if (!mark_wanted())
		return;
	reap_workers(now);
	stop_unwanted_orphans();

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	start_due_workers(now);
	CommitTransactionCommand();
	publish_slot_waits();
}

void
awa_bgw_launcher_main(Datum main_arg)
{
	/* Establish signal handlers before unblocking signals. */
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname(AWA_BGW_LAUNCHER_TYPE);
	/* SIGHUPs may have been missed before the handler was installed */
	ProcessConfigFile(PGC_SIGHUP);

	for (;;)
	{
		launcher_reconcile();

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 LAUNCHER_NAPTIME_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}

void
awa_register_launcher(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "awa_bgw");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, CppAsString(awa_bgw_launcher_main));
	snprintf(worker.bgw_name, BGW_MAXLEN, AWA_BGW_LAUNCHER_TYPE);
	snprintf(worker.bgw_type, BGW_MAXLEN, AWA_BGW_LAUNCHER_TYPE);
	RegisterBackgroundWorker(&worker);
}
