/*-------------------------------------------------------------------------
 *
 * lanemarks.c
 *	  Empty-lane marks (docs/storage.md §A.12): a claim that found a lane
 *	  empty leaves a mark in shared memory, so that the claims after it skip
 *	  the lane without reading its window, until something may have given the
 *	  lane work.
 *
 * Shared memory holds AWA_LANE_MARKS slots, a lane's slot chosen by a hash of
 * (database, lane_id). Each slot has an epoch (a 64-bit counter) and one mark:
 * (database, instance, lane, epoch) meaning "this lane had no claimable entry
 * at that epoch". The instance is the OID of awa.queue_lane_id_seq, so that a
 * mark never outlives the extension that made it (lane ids start again after
 * DROP and CREATE EXTENSION). A mark is trusted while the slot's epoch still
 * equals the mark's.
 *
 * What bumps a lane's epoch (src/dataplane/wait.c calls awa_lane_bump):
 *	- the commit of a transaction that enqueued into the lane, after the
 *	  commit is visible to new snapshots;
 *	- the abort (of the transaction or of a subtransaction) of a claim that
 *	  took from the lane: its jobs are claimable again;
 *	- PREPARE TRANSACTION of a transaction that did either: its outcome comes
 *	  in another session, so the transaction's xid is kept as pending, and no
 *	  mark is made while a pending transaction is in progress; the first claim
 *	  that finds it finished bumps every slot.
 *
 * Why a mark is never wrong (the proof is in docs/storage.md §A.12): a claim
 * reads the epoch E (awa.lane_look) before its statement takes snapshot S,
 * holds the lane's claim lock while it reads the lane, and finds nothing
 * claimable in S. Holding the lock, no other transaction has an uncommitted
 * receipt in the lane; an entry committed after S bumps the epoch after S,
 * hence after E was read; so while the epoch is still E the lane has gained
 * nothing claimable, and a claim may skip it.
 *
 * The same shared memory holds the ready-child bounds (§A.12): per (database,
 * ready slot) hash the largest txid an enqueue entered, and per (database,
 * instance) a floor below which lie the entries that came in otherwise (an
 * earlier life of the server, a restore, a copy from a template). A claim
 * does not open a ready child whose bound is below its window's lower
 * snapshot.
 *
 *	awa.lane_look(lane)				the epoch to remember, NULL: known empty
 *	awa.lane_seen_empty(lane, epoch)	leaves the mark
 *
 * src/dataplane/lanemarks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/lsyscache.h"

#include "src/dataplane/lanemarks.h"
#include "src/rel/relcache.h"

PG_FUNCTION_INFO_V1(awa_lane_look);
PG_FUNCTION_INFO_V1(awa_lane_seen_empty);

#define AWA_LANE_MARKS 4096
#define AWA_CHILD_BOUNDS 1024
#define AWA_SPACE_BOUNDS 256

typedef struct LaneMark
{
	pg_atomic_uint64 epoch;
	slock_t		mutex;			/* the mark's fields */
	bool		set;
	Oid			db;
	Oid			instance;
	int32		lane;
	uint64		empty_at;
} LaneMark;

/* the floor of a (database, instance)'s ready bounds: see awa_ready_space_bound */
typedef struct SpaceBound
{
	slock_t		mutex;
	Oid			db;				/* InvalidOid: free */
	Oid			instance;
	uint64		floor;
} SpaceBound;

typedef struct LaneMarks
{
	slock_t		mutex;			/* npending, pending[], distrust */
	bool		distrust;		/* pending[] overflowed: no marks until restart */
	int			npending;
	int			maxpending;
	LaneMark	marks[AWA_LANE_MARKS];
	/* ready-child bounds: the largest txid entered per (database, slot) hash */
	pg_atomic_uint64 child_max[AWA_CHILD_BOUNDS];
	SpaceBound	spaces[AWA_SPACE_BOUNDS];
	TransactionId pending[FLEXIBLE_ARRAY_MEMBER];
} LaneMarks;

static LaneMarks *lane_marks = NULL;

static int
max_pending(void)
{
	return max_prepared_xacts + 16;
}

static Size
lane_marks_size(void)
{
	return add_size(offsetof(LaneMarks, pending),
					mul_size(max_pending(), sizeof(TransactionId)));
}

void
awa_lane_marks_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(lane_marks_size()));
}

void
awa_lane_marks_shmem_startup(void)
{
	bool		found;
	int			i;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	lane_marks = ShmemInitStruct("awa_bgw lane marks", lane_marks_size(), &found);
	if (!found)
	{
		memset(lane_marks, 0, lane_marks_size());
		SpinLockInit(&lane_marks->mutex);
		lane_marks->maxpending = max_pending();
		for (i = 0; i < AWA_LANE_MARKS; i++)
		{
			pg_atomic_init_u64(&lane_marks->marks[i].epoch, 0);
			SpinLockInit(&lane_marks->marks[i].mutex);
		}
		for (i = 0; i < AWA_CHILD_BOUNDS; i++)
			pg_atomic_init_u64(&lane_marks->child_max[i], 0);
		for (i = 0; i < AWA_SPACE_BOUNDS; i++)
			SpinLockInit(&lane_marks->spaces[i].mutex);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* a hash of (this database, key): where a lane's mark or a slot's bound is */
static uint32
db_hash(int32 key)
{
	return hash_combine(murmurhash32((uint32) MyDatabaseId), murmurhash32((uint32) key));
}

static LaneMark *
mark_of(int32 lane)
{
	return &lane_marks->marks[db_hash(lane) % AWA_LANE_MARKS];
}

/* Something may have given the lane work: its mark (if any) no longer holds. */
void
awa_lane_bump(int32 lane)
{
	if (lane_marks == NULL)
		return;
	pg_memory_barrier();
	pg_atomic_fetch_add_u64(&mark_of(lane)->epoch, 1);
}

static void
bump_all(void)
{
	int			i;

	pg_memory_barrier();
	for (i = 0; i < AWA_LANE_MARKS; i++)
		pg_atomic_fetch_add_u64(&lane_marks->marks[i].epoch, 1);
}

/*
 * A transaction that enqueued or claimed is being prepared: its outcome will
 * come in another session. No mark is made until it has ended.
 */
void
awa_lane_marks_prepare(TransactionId xid)
{
	if (lane_marks == NULL)
		return;
	SpinLockAcquire(&lane_marks->mutex);
	if (!TransactionIdIsValid(xid) || lane_marks->npending >= lane_marks->maxpending)
		lane_marks->distrust = true;
	else
		lane_marks->pending[lane_marks->npending++] = xid;
	SpinLockRelease(&lane_marks->mutex);
}

/*
 * Whether marks may be made now: no prepared transaction that enqueued or
 * claimed is still in progress. The ended ones are forgotten, after every
 * slot is bumped (a claim whose snapshot did not see one's outcome must not
 * leave a mark).
 */
static bool
pending_settled(void)
{
	TransactionId first;
	int			left;
	int			i;

	SpinLockAcquire(&lane_marks->mutex);
	left = lane_marks->distrust ? -1 : lane_marks->npending;
	first = left > 0 ? lane_marks->pending[0] : InvalidTransactionId;
	SpinLockRelease(&lane_marks->mutex);
	if (left <= 0)
		return left == 0;
	/* one at a time keeps the lock short; a later claim looks at the next */
	if (TransactionIdIsInProgress(first))
		return false;
	bump_all();
	SpinLockAcquire(&lane_marks->mutex);
	for (i = 0; i < lane_marks->npending; i++)
		if (TransactionIdEquals(lane_marks->pending[i], first))
		{
			lane_marks->pending[i] = lane_marks->pending[--lane_marks->npending];
			break;
		}
	left = lane_marks->npending;
	SpinLockRelease(&lane_marks->mutex);
	return left == 0;
}

/* ---- ready-child bounds ---- */

static Oid	lane_instance(void);

static pg_atomic_uint64 *
child_max_of(int32 slot)
{
	return &lane_marks->child_max[db_hash(slot) % AWA_CHILD_BOUNDS];
}

/*
 * This transaction entered ready entries (txid: its top-level xid) into the
 * ready child of slot: the child's bound is raised to that xid at once,
 * before the transaction can commit.
 */
void
awa_ready_child_entered(int32 slot)
{
	pg_atomic_uint64 *m;
	uint64		x;
	uint64		cur;

	if (lane_marks == NULL)
		return;
	x = U64FromFullTransactionId(GetTopFullTransactionId());
	m = child_max_of(slot);
	cur = pg_atomic_read_u64(m);
	while (cur < x && !pg_atomic_compare_exchange_u64(m, &cur, x))
		;
}

/*
 * The floor of this database's ready bounds: above the txid of every entry
 * that came into its ready children by another way than an enqueue of this
 * server's life. It is the last txid assigned when this (database, instance)
 * was first read since the server started (or since another pair took its slot: read
 * again, it is only higher, and too high is safe). Entries of an earlier life
 * of the server are below it. So are the rows of a restore, which creates the
 * instance (CREATE EXTENSION) after the dump took its snapshot, and those of a
 * database copied from a template, which is a new database: neither pair can
 * be read before its rows are in (docs/storage.md §A.12). PG_UINT64_MAX: no
 * floor (in recovery, or no extension), every child is read.
 */
uint64
awa_ready_space_bound(void)
{
	Oid			inst;
	SpaceBound *b;
	uint64		bound = 0;
	bool		known;

	if (lane_marks == NULL || RecoveryInProgress())
		return PG_UINT64_MAX;
	inst = lane_instance();
	if (!OidIsValid(inst))
		return PG_UINT64_MAX;
	b = &lane_marks->spaces[db_hash((int32) inst) % AWA_SPACE_BOUNDS];
	SpinLockAcquire(&b->mutex);
	known = b->db == MyDatabaseId && b->instance == inst;
	if (known)
		bound = b->floor;
	SpinLockRelease(&b->mutex);
	if (known)
		return bound;
	/* every xid assigned so far is below the next one */
	bound = U64FromFullTransactionId(ReadNextFullTransactionId()) - 1;
	SpinLockAcquire(&b->mutex);
	if (b->db == MyDatabaseId && b->instance == inst)
		bound = Max(bound, b->floor);
	b->db = MyDatabaseId;
	b->instance = inst;
	b->floor = bound;
	SpinLockRelease(&b->mutex);
	return bound;
}

/*
 * An upper bound of the txids of the entries in the ready child of slot, read
 * after the caller's snapshot was taken: the largest entered since this
 * server started, or the floor of the database's space (awa_ready_space_bound,
 * read by the caller once for all slots) when that is higher.
 */
uint64
awa_ready_child_bound(int32 slot, uint64 space_floor)
{
	if (lane_marks == NULL)
		return PG_UINT64_MAX;
	pg_memory_barrier();
	return Max(space_floor, pg_atomic_read_u64(child_max_of(slot)));
}

/* the OID of awa.queue_lane_id_seq: a new one with every CREATE EXTENSION */
static Oid
lane_instance(void)
{
	return awa_relid(awa_namespace(), "queue_lane_id_seq");
}

/*
 * awa.lane_look(lane int) RETURNS bigint: the lane's epoch, to be read before
 * the statement that reads the lane takes its snapshot; NULL when the lane is
 * marked empty at its current epoch (a claim skips it).
 */
bool
awa_lane_marked(int32 lane, uint64 *epoch)
{
	LaneMark   *m;
	uint64		e;
	bool		empty;
	Oid			inst;

	*epoch = 0;
	if (lane_marks == NULL)
		return false;
	inst = lane_instance();
	m = mark_of(lane);
	e = pg_atomic_read_u64(&m->epoch);
	SpinLockAcquire(&m->mutex);
	empty = m->set && m->db == MyDatabaseId && m->lane == lane && m->instance == inst &&
		m->empty_at == e;
	SpinLockRelease(&m->mutex);
	pg_memory_barrier();
	*epoch = e;
	return empty && !lane_marks->distrust;
}

Datum
awa_lane_look(PG_FUNCTION_ARGS)
{
	uint64		e;

	if (awa_lane_marked(PG_GETARG_INT32(0), &e))
		PG_RETURN_NULL();
	PG_RETURN_INT64((int64) e);
}

/*
 * awa.lane_seen_empty(lane int, epoch bigint): a claim that held the lane's
 * claim lock, with a snapshot taken after it read epoch (awa.lane_look), found
 * nothing to take.
 */
void
awa_lane_mark_empty(int32 lane, uint64 epoch)
{
	Oid			inst;
	LaneMark   *m;

	if (lane_marks == NULL || !pending_settled())
		return;
	inst = lane_instance();
	m = mark_of(lane);
	SpinLockAcquire(&m->mutex);
	m->set = true;
	m->db = MyDatabaseId;
	m->instance = inst;
	m->lane = lane;
	m->empty_at = epoch;
	SpinLockRelease(&m->mutex);
}

Datum
awa_lane_seen_empty(PG_FUNCTION_ARGS)
{
	if (PG_GETARG_INT64(1) >= 0)
		awa_lane_mark_empty(PG_GETARG_INT32(0), (uint64) PG_GETARG_INT64(1));
	PG_RETURN_VOID();
}
