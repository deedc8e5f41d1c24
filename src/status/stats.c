/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  The cumulative counters of each database's maintenance, in the style of
 *	  pg_stat_*: one entry per database in the extension's shared memory,
 *	  bumped with atomics by that database's worker, read by
 *	  awa.worker_stats and awa.worker_ring_stats, zeroed by awa.stats_reset().
 *
 * An entry belongs to a database, not to a worker: a worker that restarts
 * (killed, crashed, relaunched by the launcher) finds its database's entry
 * and counts on. Nothing is written to disk: a server restart zeroes every
 * counter, as pg_stat_* did before PostgreSQL 15 kept them across a clean
 * shutdown. The entry table and its lock are this file's own: an entry is
 * taken (dboid, dbname) under the lock; the counters themselves take no lock.
 *
 * src/status/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "src/status/shmem.h"
#include "src/status/stats.h"

PG_FUNCTION_INFO_V1(awa_worker_stats);
PG_FUNCTION_INFO_V1(awa_worker_ring_stats);
PG_FUNCTION_INFO_V1(awa_stats_reset);

/*
 * One database's entry. Its identity is guarded by the stats lock
 * (AwaStatsTable.lock): taken and renamed under it in exclusive mode, read
 * under it in shared mode. Its counters are atomics, bumped by the database's
 * worker without the lock (and zeroed by awa.stats_reset under the shared
 * lock, which keeps the entry from changing hands meanwhile).
 */
typedef struct AwaDbStats
{
	Oid			dboid;			/* stats lock; InvalidOid: a free entry */
	char		dbname[NAMEDATALEN];	/* stats lock */
	TimestampTz attached_at;	/* stats lock: the last worker start */
	pg_atomic_uint64 stats_reset;	/* atomic: a TimestampTz */
	pg_atomic_uint64 counters[AWA_NCOUNTERS];	/* atomic */
	pg_atomic_uint64 rotations[AWA_RING_COUNT][AWA_ROTATE_NOUTCOMES];	/* atomic */
	pg_atomic_uint64 prunes[AWA_RING_COUNT][AWA_PRUNE_NOUTCOMES];	/* atomic */
} AwaDbStats;

typedef struct AwaStatsTable
{
	LWLock	   *lock;			/* the stats lock */
	AwaDbStats	dbstats[AWA_BGW_MAX_DATABASES];
} AwaStatsTable;

static AwaStatsTable *stats_table = NULL;

/* This worker's entry (NULL outside a maintenance worker). */
static AwaDbStats *my_stats = NULL;

/* A copy of one entry, read without the lock (each counter on its own). */
typedef struct DbStatsCopy
{
	char		dbname[NAMEDATALEN];
	TimestampTz stats_reset;
	uint64		counters[AWA_NCOUNTERS];
	uint64		rotations[AWA_RING_COUNT][AWA_ROTATE_NOUTCOMES];
	uint64		prunes[AWA_RING_COUNT][AWA_PRUNE_NOUTCOMES];
} DbStatsCopy;

static void
entry_zero(AwaDbStats *e, TimestampTz now)
{
	int			i,
				r;

	for (i = 0; i < AWA_NCOUNTERS; i++)
		pg_atomic_write_u64(&e->counters[i], 0);
	for (r = 0; r < AWA_RING_COUNT; r++)
	{
		for (i = 0; i < AWA_ROTATE_NOUTCOMES; i++)
			pg_atomic_write_u64(&e->rotations[r][i], 0);
		for (i = 0; i < AWA_PRUNE_NOUTCOMES; i++)
			pg_atomic_write_u64(&e->prunes[r][i], 0);
	}
	pg_atomic_write_u64(&e->stats_reset, (uint64) now);
}

void
awa_stats_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(sizeof(AwaStatsTable)));
	RequestNamedLWLockTranche("awa_bgw stats", 1);
}

void
awa_stats_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	stats_table = ShmemInitStruct("awa_bgw stats", sizeof(AwaStatsTable), &found);
	if (!found)
	{
		int			d,
					i,
					r;

		memset(stats_table, 0, sizeof(AwaStatsTable));
		stats_table->lock = &(GetNamedLWLockTranche("awa_bgw stats"))->lock;
		for (d = 0; d < AWA_BGW_MAX_DATABASES; d++)
		{
			AwaDbStats *e = &stats_table->dbstats[d];

			e->dboid = InvalidOid;
			pg_atomic_init_u64(&e->stats_reset, 0);
			for (i = 0; i < AWA_NCOUNTERS; i++)
				pg_atomic_init_u64(&e->counters[i], 0);
			for (r = 0; r < AWA_RING_COUNT; r++)
			{
				for (i = 0; i < AWA_ROTATE_NOUTCOMES; i++)
					pg_atomic_init_u64(&e->rotations[r][i], 0);
				for (i = 0; i < AWA_PRUNE_NOUTCOMES; i++)
					pg_atomic_init_u64(&e->prunes[r][i], 0);
			}
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Find this database's entry, else take a free one, else the one whose
 * database has no worker and whose last worker started longest ago (there is
 * one: the caller holds one of the AWA_BGW_MAX_DATABASES status slots).
 * Called by the worker after awa_status_attach; nothing here can fail. Whether
 * a database has a worker is asked of shmem.c under the stats lock (the one
 * order these two locks are taken in).
 */
void
awa_stats_attach(Oid dboid, const char *dbname)
{
	AwaDbStats *found = NULL;
	AwaDbStats *spare = NULL;
	TimestampTz now = GetCurrentTimestamp();
	int			i;

	if (stats_table == NULL)
		return;
	LWLockAcquire(stats_table->lock, LW_EXCLUSIVE);
	for (i = 0; i < AWA_BGW_MAX_DATABASES && found == NULL; i++)
	{
		AwaDbStats *e = &stats_table->dbstats[i];

		if (e->dboid == dboid)
			found = e;
		else if (e->dboid == InvalidOid)
		{
			if (spare == NULL || spare->dboid != InvalidOid)
				spare = e;
		}
		else if ((spare == NULL || (spare->dboid != InvalidOid &&
									e->attached_at < spare->attached_at)) &&
				 !awa_status_has_worker(e->dboid))
			spare = e;
	}
	if (found == NULL && spare != NULL)
	{
		found = spare;
		found->dboid = dboid;
		entry_zero(found, now);
	}
	if (found != NULL)
	{
		strlcpy(found->dbname, dbname, NAMEDATALEN);
		found->attached_at = now;
	}
	LWLockRelease(stats_table->lock);

	my_stats = found;
	awa_stats_count(AWA_C_WORKER_STARTS, 1);
}

void
awa_stats_count(AwaCounter counter, uint64 n)
{
	if (my_stats != NULL && n > 0)
		pg_atomic_fetch_add_u64(&my_stats->counters[counter], n);
}

void
awa_stats_count_ring(AwaRing ring, bool rotate, int outcome)
{
	if (my_stats == NULL || outcome < 0)
		return;
	if (rotate && outcome < AWA_ROTATE_NOUTCOMES)
		pg_atomic_fetch_add_u64(&my_stats->rotations[ring][outcome], 1);
	else if (!rotate && outcome < AWA_PRUNE_NOUTCOMES)
		pg_atomic_fetch_add_u64(&my_stats->prunes[ring][outcome], 1);
}

/* Copies of every entry in use, in entry order; returns how many. */
static int
copy_entries(DbStatsCopy *out)
{
	int			n = 0;
	int			d,
				i,
				r;

	if (stats_table == NULL)
		return 0;
	LWLockAcquire(stats_table->lock, LW_SHARED);
	for (d = 0; d < AWA_BGW_MAX_DATABASES; d++)
	{
		AwaDbStats *e = &stats_table->dbstats[d];
		DbStatsCopy *c = &out[n];

		if (e->dboid == InvalidOid)
			continue;
		strlcpy(c->dbname, e->dbname, NAMEDATALEN);
		c->stats_reset = (TimestampTz) pg_atomic_read_u64(&e->stats_reset);
		for (i = 0; i < AWA_NCOUNTERS; i++)
			c->counters[i] = pg_atomic_read_u64(&e->counters[i]);
		for (r = 0; r < AWA_RING_COUNT; r++)
		{
			for (i = 0; i < AWA_ROTATE_NOUTCOMES; i++)
				c->rotations[r][i] = pg_atomic_read_u64(&e->rotations[r][i]);
			for (i = 0; i < AWA_PRUNE_NOUTCOMES; i++)
				c->prunes[r][i] = pg_atomic_read_u64(&e->prunes[r][i]);
		}
		n++;
	}
	LWLockRelease(stats_table->lock);
	return n;
}

/*
 * awa.worker_stats_counters(): one row per database with an entry: its name,
 * the AWA_NCOUNTERS counters in enum order, the rotations and prunes done
 * (every ring), and stats_reset.
 */
Datum
awa_worker_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DbStatsCopy *copy = palloc(sizeof(DbStatsCopy) * AWA_BGW_MAX_DATABASES);
	int			n;
	int			d;

	InitMaterializedSRF(fcinfo, 0);
	n = copy_entries(copy);
	for (d = 0; d < n; d++)
	{
		Datum		values[AWA_NCOUNTERS + 4];
		bool		nulls[AWA_NCOUNTERS + 4] = {0};
		uint64		rotated = 0;
		uint64		pruned = 0;
		int			i;

		values[0] = DirectFunctionCall1(namein, CStringGetDatum(copy[d].dbname));
		for (i = 0; i < AWA_NCOUNTERS; i++)
			values[1 + i] = Int64GetDatum((int64) copy[d].counters[i]);
		for (i = 0; i < AWA_RING_COUNT; i++)
		{
			rotated += copy[d].rotations[i][AWA_ROTATE_ROTATED];
			pruned += copy[d].prunes[i][AWA_PRUNE_PRUNED];
		}
		values[AWA_NCOUNTERS + 1] = Int64GetDatum((int64) rotated);
		values[AWA_NCOUNTERS + 2] = Int64GetDatum((int64) pruned);
		values[AWA_NCOUNTERS + 3] = TimestampTzGetDatum(copy[d].stats_reset);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/*
 * awa.worker_ring_stats_counters(): one row per database and ring: the
 * rotate outcomes, then the prune outcomes (the orders of AwaRotateOutcome
 * and AwaPruneOutcome), and stats_reset.
 */
Datum
awa_worker_ring_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DbStatsCopy *copy = palloc(sizeof(DbStatsCopy) * AWA_BGW_MAX_DATABASES);
	int			n;
	int			d,
				r,
				i;

	InitMaterializedSRF(fcinfo, 0);
	n = copy_entries(copy);
	for (d = 0; d < n; d++)
		for (r = 0; r < AWA_RING_COUNT; r++)
		{
			Datum		values[3 + AWA_ROTATE_NOUTCOMES + AWA_PRUNE_NOUTCOMES];
			bool		nulls[lengthof(values)];
			int			c = 0;

			memset(nulls, 0, sizeof(nulls));
			values[c++] = DirectFunctionCall1(namein, CStringGetDatum(copy[d].dbname));
			values[c++] = CStringGetTextDatum(awa_ring_name(r));
			for (i = 0; i < AWA_ROTATE_NOUTCOMES; i++)
				values[c++] = Int64GetDatum((int64) copy[d].rotations[r][i]);
			for (i = 0; i < AWA_PRUNE_NOUTCOMES; i++)
				values[c++] = Int64GetDatum((int64) copy[d].prunes[r][i]);
			values[c++] = TimestampTzGetDatum(copy[d].stats_reset);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	PG_RETURN_VOID();
}

/*
 * awa.stats_reset() RETURNS boolean: zeroes this database's counters and sets
 * its stats_reset to now; false when the database has no entry (no worker
 * has maintained it since the server started). Revoked from PUBLIC.
 */
Datum
awa_stats_reset(PG_FUNCTION_ARGS)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		done = false;
	int			d;

	if (stats_table == NULL)
		PG_RETURN_BOOL(false);
	LWLockAcquire(stats_table->lock, LW_SHARED);
	for (d = 0; d < AWA_BGW_MAX_DATABASES && !done; d++)
		if (stats_table->dbstats[d].dboid == MyDatabaseId)
		{
			entry_zero(&stats_table->dbstats[d], now);
			done = true;
		}
	LWLockRelease(stats_table->lock);
	PG_RETURN_BOOL(done);
}
