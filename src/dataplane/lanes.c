/*-------------------------------------------------------------------------
 *
 * lanes.c
 *	  The registration of a (queue, priority)'s lanes (docs/storage.md §A.5,
 *	  §A.18): awa.ensure_lanes from 0.10, and the first enqueue of a
 *	  (queue, priority) at every isolation level.
 *
 * One lane per shard, each with a lane id drawn from awa.queue_lane_id_seq.
 * No lock and no unique key: a concurrent first producer never waits for
 * this one (both may register a shard; claimers read every lane, producers
 * the lowest of their shard). A new queue beyond awa_bgw.max_queues is
 * refused (54000): the registration reserves its place in the registry of
 * registrations in flight (registry.c) first, then counts the queues it sees
 * with a snapshot taken after the reservation, plus the registrations of
 * other transactions in flight, so the bound is never overshot.
 *
 * The reads are fresh (src/rel/scan.h): at REPEATABLE READ and SERIALIZABLE
 * they see what is committed now, not what the transaction's snapshot saw,
 * and at SERIALIZABLE they take no predicate lock. (Until 0.10 the
 * registration was PL/pgSQL, which reads with the statement's snapshot: the
 * transaction's own at those levels, so the count could miss a queue
 * committed after it; released/awa_bgw--0.9.sql keeps that one.)
 *
 * The producer's lane cache: a backend remembers the lane it found for a
 * (queue, priority, shard) once that lane's registry row is another
 * transaction's (so committed: it was visible), and reads the registry again
 * only after an invalidation of the registry (DROP EXTENSION, a full
 * reset). A registry row is never deleted nor updated, so a committed lane
 * stays a lane for good; should a second lane of the shard commit later (two
 * first producers), entries go on into the one remembered, which claimers
 * read as they read every lane. Bounded: a full cache is emptied.
 *
 * src/dataplane/lanes.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "commands/sequence.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "src/dataplane/lanes.h"
#include "src/dataplane/probes.h"
#include "src/dataplane/registry.h"
#include "src/guc.h"
#include "src/rel/inserter.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_ensure_lanes);

/* "<nsp> <priority> <shard> <queue>": a queue name is at most 800 bytes */
#define LANE_KEY_LEN	840
#define LANE_CACHE_MAX	4096

typedef struct CachedLane
{
	char		key[LANE_KEY_LEN];
	int32		lane;
} CachedLane;

static MemoryContext lane_cxt = NULL;
static HTAB *lane_cache = NULL;
static Oid	lane_registry = InvalidOid;	/* the registry the cache read */

static const char *const lane_key[] = {"queue", "priority", "shard"};

static void
lane_cache_invalidate(Oid relid)
{
	if (lane_cache != NULL && (!OidIsValid(relid) || relid == lane_registry))
	{
		MemoryContextReset(lane_cxt);
		lane_cache = NULL;
	}
}

/* the cache's key for (queue, priority, shard) of schema nsp; false: none fits */
static bool
lane_cache_key(char *key, Oid nsp, text *queue, int16 priority, int32 shard)
{
	if (VARSIZE_ANY_EXHDR(queue) > LANE_KEY_LEN - 40)
		return false;
	snprintf(key, LANE_KEY_LEN, "%u %d %d %.*s", nsp, priority, shard,
			 (int) VARSIZE_ANY_EXHDR(queue), VARDATA_ANY(queue));
	return true;
}

/* the lane cached for (queue, priority, shard) of schema nsp; 0: none */
int32
awa_lane_cache_get(Oid nsp, text *queue, int16 priority, int32 shard)
{
	char		key[LANE_KEY_LEN];
	CachedLane *e;

	if (lane_cache == NULL || !lane_cache_key(key, nsp, queue, priority, shard))
		return 0;
	e = hash_search(lane_cache, key, HASH_FIND, NULL);
	return e != NULL ? e->lane : 0;
}

/*
 * Remember lane for (queue, priority, shard) of schema nsp, whose registry
 * (relation registry) holds its row committed.
 */
void
awa_lane_cache_put(Oid nsp, Oid registry, text *queue, int16 priority, int32 shard,
				   int32 lane)
{
	char		key[LANE_KEY_LEN];
	CachedLane *e;
	HASHCTL		ctl;

	if (!lane_cache_key(key, nsp, queue, priority, shard))
		return;
	if (lane_cxt == NULL)
	{
		/* before the first entry is made */
		awa_relcache_listen(lane_cache_invalidate);
		lane_cxt = AllocSetContextCreate(CacheMemoryContext, "awa_bgw producer lanes",
										 ALLOCSET_SMALL_SIZES);
	}
	if (lane_cache != NULL && (registry != lane_registry ||
							   hash_get_num_entries(lane_cache) >= LANE_CACHE_MAX))
		lane_cache_invalidate(InvalidOid);
	if (lane_cache == NULL)
	{
		ctl.keysize = LANE_KEY_LEN;
		ctl.entrysize = sizeof(CachedLane);
		ctl.hcxt = lane_cxt;
		lane_cache = hash_create("awa_bgw producer lanes", 64, &ctl,
								 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
		lane_registry = registry;
	}
	e = hash_search(lane_cache, key, HASH_ENTER, NULL);
	e->lane = lane;
}

/*
 * Whether the queue has any lane, as a fresh read sees it; have[shard] set
 * for each shard the (queue, priority) has. The scan takes a reference of
 * its own to the registry (and closes it, keeping the lock).
 */
static bool
read_lanes(Oid relid, text *queue, int16 priority, bool *have)
{
	Relation	rel = table_open(relid, AccessShareLock);
	AttrNumber	a_prio = awa_column_number(rel, "priority");
	AttrNumber	a_shard = awa_column_number(rel, "shard");
	AwaFreshRead fresh;
	ChildScan	cs;
	ScanKeyData key;
	bool		any = false;

	awa_fresh_read_begin(&fresh);
	awa_child_scan_begin_fresh(&cs, rel, awa_open_index(rel, 3, lane_key), 1, &fresh);
	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   cs.index->rd_indcollation[0], F_TEXTEQ, PointerGetDatum(queue));
	index_rescan(cs.scan, &key, 1, NULL, 0);
	while (awa_child_scan_next(&cs, ForwardScanDirection))
	{
		bool		isnull;
		int16		p = DatumGetInt16(slot_getattr(cs.slot, a_prio, &isnull));
		int16		s = DatumGetInt16(slot_getattr(cs.slot, a_shard, &isnull));

		any = true;
		if (p == priority && s >= 0 && s < AWA_LANE_SHARDS)
			have[s] = true;
	}
	awa_child_scan_end(&cs);
	awa_fresh_read_end(&fresh);
	return any;
}

/* How many queues have lanes, as a fresh read sees it (the index is in queue order). */
static int64
count_queues(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	AttrNumber	a_queue = awa_column_number(rel, "queue");
	AwaFreshRead fresh;
	ChildScan	cs;
	text	   *last = NULL;
	int64		n = 0;

	awa_fresh_read_begin(&fresh);
	awa_child_scan_begin_fresh(&cs, rel, awa_open_index(rel, 3, lane_key), 0, &fresh);
	index_rescan(cs.scan, NULL, 0, NULL, 0);
	while (awa_child_scan_next(&cs, ForwardScanDirection))
	{
		bool		isnull;
		text	   *q = DatumGetTextPP(slot_getattr(cs.slot, a_queue, &isnull));

		if (last == NULL || !DatumGetBool(DirectFunctionCall2Coll(texteq,
																  cs.index->rd_indcollation[0],
																  PointerGetDatum(last),
																  PointerGetDatum(q))))
		{
			n++;
			last = DatumGetTextPCopy(PointerGetDatum(q));
		}
	}
	awa_child_scan_end(&cs);
	awa_fresh_read_end(&fresh);
	return n;
}

/* A new queue: its place reserved, then refused when the queues are at the bound. */
static void
check_queue_bound(Oid relid)
{
	int			others = Max(awa_queue_registration_reserve(), 0);

	if (count_queues(relid) + others >= awa_bgw_max_queues)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many queues: awa_bgw.max_queues is %d", awa_bgw_max_queues),
				 errhint("Reuse an existing queue, or raise awa_bgw.max_queues in the server "
						 "configuration.")));
}

/*
 * Registers the shards of (queue, priority) that a fresh read does not see
 * (all of them for a new queue or priority; shards 4-7 of a queue registered
 * under 0.8, which had four). The caller checked the names and the rights.
 */
void
awa_register_lanes(Oid nsp, text *queue, int16 priority)
{
	static const char *const cols[] = {"lane_id", "queue", "priority", "shard", "created_at"};
	Relation	rel = awa_open_table_for(nsp, "queue_lanes", -1, RowExclusiveLock);
	Oid			seq = awa_relid(nsp, "queue_lane_id_seq");
	TupleDesc	desc = RelationGetDescr(rel);
	bool		have[AWA_LANE_SHARDS] = {0};
	Datum	   *row = palloc0(desc->natts * sizeof(Datum));
	bool	   *nulls = palloc(desc->natts * sizeof(bool));
	AttrNumber	at[lengthof(cols)];
	RowInserter ri;
	int			s;
	int			c;

	if (!OidIsValid(seq))
		elog(ERROR, "awa.queue_lane_id_seq does not exist");
	for (c = 0; c < (int) lengthof(cols); c++)
		at[c] = awa_column_number(rel, cols[c]);
	if (!read_lanes(RelationGetRelid(rel), queue, priority, have))
		check_queue_bound(RelationGetRelid(rel));
	awa_row_inserter_begin(&ri, rel);
	for (s = 0; s < AWA_LANE_SHARDS; s++)
	{
		Datum		v[lengthof(cols)];

		if (have[s])
			continue;
		v[0] = Int32GetDatum((int32) nextval_internal(seq, false));
		v[1] = PointerGetDatum(queue);
		v[2] = Int16GetDatum(priority);
		v[3] = Int16GetDatum((int16) s);
		v[4] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
		memset(nulls, true, desc->natts * sizeof(bool));
		for (c = 0; c < (int) lengthof(cols); c++)
		{
			row[at[c] - 1] = v[c];
			nulls[at[c] - 1] = false;
		}
		awa_row_inserter_put(&ri, row, nulls);
	}
	awa_row_inserter_end(&ri);
	table_close(rel, NoLock);
}

/* awa.ensure_lanes(queue text, priority smallint) RETURNS void (0.10) */
Datum
awa_ensure_lanes(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("ensure_lanes needs a queue and a priority, neither NULL"),
				 errhint("Register a queue with awa.register_queue(queue, priority).")));
	awa_register_lanes(awa_namespace(), PG_GETARG_TEXT_PP(0), PG_GETARG_INT16(1));
	PG_RETURN_VOID();
}
