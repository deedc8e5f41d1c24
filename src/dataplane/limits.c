/*-------------------------------------------------------------------------
 *
 * limits.c
 *	  Running and rate limits per queue (max_running, and rate per rate_per
 *	  with a burst; docs/usage.md "Running limits",
 *	  docs/proposals/flow_control.md §3, §4): the shared counts and token
 *	  bucket of each limited queue, the claim's reservation, the deltas a
 *	  transaction keeps for its end, and the count of a queue's open attempts
 *	  after a start.
 *
 * Shared memory holds a fixed-size hash (awa_bgw.max_limited_queues entries)
 * keyed by (database, queue). An entry holds, under its spinlock (held for
 * arithmetic only):
 *	- running: attempts whose claim committed and whose close has not;
 *	- pending: attempts reserved by claims whose transaction has not ended;
 *	- ready: false until the entry's count was made (rebuild, below);
 *	- epoch: a number of its own, new at each rebuild, that the deltas carry;
 *	- the token bucket of its rate (src/dataplane/bucket.c), and fill: whether
 *	  the next bucket made starts full.
 * Invariant: running + pending <= max_running after every claim, and
 * running + pending >= the attempts that run plus those reserved.
 *
 * A claim (awa_limit_reserve) reserves room = max_running - running -
 * pending, at most what it asks, in pending; after the lanes answered with k
 * it gives back the rest (awa_limit_settle). The transaction's own closes of
 * the queue not yet committed add to its room (complete_and_claim at the
 * limit): the close and the claim take effect at the same commit, so the
 * attempts running never exceed the limit, while running + pending may, by
 * such closes, until that commit. A close of an attempt of a
 * limited queue (awa_limit_note_closed: complete, complete_batch, fail,
 * complete_and_claim, and through awa_internal.note_closed the closes in SQL:
 * rescue, cancel) counts -1. Each delta is kept in backend-local memory per
 * queue and nesting level, and applied at the end: a commit moves the claims'
 * +k from pending to running and takes the closes' -k from running, then
 * wakes the claimers waiting for the queue (src/dataplane/wait.c); an abort
 * gives the reservations back and drops the closes; a subtransaction's
 * commit moves its deltas to its parent, its abort applies them as an abort.
 * PREPARE moves the transaction's deltas into a shared array keyed by its
 * xid (four queues per max_prepared_transactions; 0A000 past it), still
 * counted; whoever next claims from a limited queue, or ends a transaction
 * (COMMIT PREPARED and ROLLBACK PREPARED among them), finds the xids that are
 * no longer in progress and applies their deltas as a commit or an abort.
 *
 * Rebuild: an entry is created not ready (after a start, or when a limit is
 * set on a queue that had none). The first claim that finds it so counts the
 * queue's open attempts (awa_internal.queue_open_attempts, which takes SHARE
 * locks on the receipts and closures, so that no transaction that claimed or
 * closed is in flight while it counts) in a subtransaction rolled back at
 * once, sets running, and makes the entry ready with a new epoch. Other
 * claimers of the queue wait meanwhile. A delta whose epoch is not the
 * entry's was made before the rebuild: the transaction's own (the count saw
 * its writes: marked absorbed, undone only by an abort) or a claim that had
 * not written its receipts when the count ran (applied to running at commit).
 * A delta of a queue whose entry is missing or not ready is dropped: the
 * count to come sees its outcome.
 *
 * Rates: a claim of a queue with a rate refills the entry's bucket and asks
 * the lanes for at most its whole tokens (and at most the room, with
 * max_running too), taking them under the same spinlock as the room; after
 * the lanes answered with k it gives the rest back at once. The k stay spent
 * when the transaction commits or is prepared; an abort (of the transaction,
 * or of the subtransaction that claimed) gives them back, up to the burst,
 * and wakes as many waiting claimers. No delta of a rate survives a restart
 * or crash: a bucket is made by the first claim that finds none, empty
 * (after a start the entries are new), or full when the rate was just set
 * (awa_internal.queue_limit_entry's refill). Each bucket has an id of its
 * own; tokens are given back only to the bucket they were taken from. A
 * claim that took nothing for want of a token says when the next is due
 * (LimitClaim.due_us), for a claim that waits (wait.c). A queue with a rate
 * and no max_running needs no count: its claims never wait for a rebuild.
 *
 * An entry stays until its limits are cleared (awa_internal.queue_limit_forget)
 * or the server restarts; the entries of a dropped database are removed when
 * the table is full and a queue needs a place (sweep_dropped_databases).
 *
 * Lock order: the hash's LWLock, then an entry's spinlock; the waiters' lock
 * (wait.c) only after both are released.
 *
 * src/dataplane/limits.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/syscache.h"

#include "src/dataplane/bucket.h"
#include "src/dataplane/limits.h"
#include "src/dataplane/queuepolicy.h"
#include "src/dataplane/wait.h"
#include "src/guc.h"
#include "src/rel/relcache.h"

PG_FUNCTION_INFO_V1(awa_queue_limit_entry);
PG_FUNCTION_INFO_V1(awa_queue_limit_forget);
PG_FUNCTION_INFO_V1(awa_queue_limit_state);
PG_FUNCTION_INFO_V1(awa_note_closed);

/* a queue name: at most 200 characters of at most 4 bytes, and its NUL */
#define QL_KEY_LEN		808

typedef struct LimitKey
{
	Oid			dboid;
	char		queue[QL_KEY_LEN];
} LimitKey;

typedef struct LimitEntry
{
	LimitKey	key;
	slock_t		mutex;			/* the fields below */
	int32		running;
	int32		pending;
	bool		ready;
	int			rebuilder;		/* pid of the backend counting, 0: none */
	uint64		epoch;
	bool		fill;			/* the next bucket made starts full */
	TokenBucket bucket;			/* id 0: none made yet */
} LimitEntry;

/* one queue's delta of this transaction, per nesting level */
typedef struct LimitDelta
{
	char		queue[QL_KEY_LEN];
	int			level;
	uint64		epoch;			/* the entry's when noted; 0: none or not ready */
	bool		absorbed;		/* a rebuild of this transaction counted it */
	int32		claimed;		/* reserved in pending, then taken */
	int32		closed;
	int32		reused;			/* of closed, the room a later claim of this
								 * transaction took (they apply at the same commit) */
} LimitDelta;

/* the tokens this transaction took from one bucket, per nesting level */
typedef struct TokenDelta
{
	char		queue[QL_KEY_LEN];
	int			level;
	uint64		bucket;			/* the bucket's id: given back only to it */
	int32		tokens;
} TokenDelta;

/* a delta of a prepared transaction, kept until it is committed or rolled back */
typedef struct PreparedDelta
{
	TransactionId xid;			/* InvalidTransactionId: a free slot */
	Oid			dboid;
	LimitDelta	delta;
} PreparedDelta;

typedef struct LimitShared
{
	LWLock	   *lock;			/* the hash: shared to use an entry, exclusive to add
								 * or remove one; and the prepared deltas */
	pg_atomic_uint64 next_epoch;
	pg_atomic_uint32 nprepared; /* slots in use: 0 lets everyone skip the lock */
	int			nslots;
	PreparedDelta prepared[FLEXIBLE_ARRAY_MEMBER];
} LimitShared;

static LimitShared *limit_shared = NULL;
static HTAB *limit_hash = NULL;

static LimitDelta *deltas = NULL;
static int	ndeltas = 0;
static int	maxdeltas = 0;
static TokenDelta *tdeltas = NULL;
static int	ntdeltas = 0;
static int	maxtdeltas = 0;
static bool callbacks_registered = false;

/* ---- shared memory ---- */

/* prepared deltas: four queues per prepared transaction */
static int
prepared_slots(void)
{
	return Max(max_prepared_xacts, 1) * 4;
}

static Size
shared_size(void)
{
	return add_size(offsetof(LimitShared, prepared),
					mul_size(prepared_slots(), sizeof(PreparedDelta)));
}

static Size
limits_size(void)
{
	return add_size(MAXALIGN(shared_size()),
					hash_estimate_size(awa_bgw_max_limited_queues, sizeof(LimitEntry)));
}

void
awa_limits_shmem_request(void)
{
	RequestAddinShmemSpace(limits_size());
	RequestNamedLWLockTranche("awa_bgw limits", 1);
}

void
awa_limits_shmem_startup(void)
{
	HASHCTL		ctl;
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	limit_shared = ShmemInitStruct("awa_bgw limits", shared_size(), &found);
	if (!found)
	{
		memset(limit_shared, 0, shared_size());
		limit_shared->lock = &(GetNamedLWLockTranche("awa_bgw limits"))->lock;
		pg_atomic_init_u64(&limit_shared->next_epoch, 1);
		pg_atomic_init_u32(&limit_shared->nprepared, 0);
		limit_shared->nslots = prepared_slots();
	}
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(LimitKey);
	ctl.entrysize = sizeof(LimitEntry);
	limit_hash = ShmemInitHash("awa_bgw limited queues", awa_bgw_max_limited_queues,
							   awa_bgw_max_limited_queues, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
	LWLockRelease(AddinShmemInitLock);
}

static void
require_shmem(void)
{
	if (limit_hash == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("queue limits need awa_bgw's shared memory"),
				 errhint("Preload awa_bgw (shared_preload_libraries).")));
}

static void
make_key(LimitKey *key, const char *queue)
{
	memset(key, 0, sizeof(*key));
	key->dboid = MyDatabaseId;
	strlcpy(key->queue, queue, QL_KEY_LEN);
}

/* the queue's entry of this database, or NULL; the caller holds the hash's lock */
static LimitEntry *
find_entry(const char *queue)
{
	LimitKey	key;

	make_key(&key, queue);
	return hash_search(limit_hash, &key, HASH_FIND, NULL);
}

/* the entry's running count, new: not ready (the hash's lock held exclusively) */
static void
reset_counts(LimitEntry *e)
{
	e->running = 0;
	e->pending = 0;
	e->ready = false;
	e->rebuilder = 0;
	e->epoch = 0;
}

/*
 * Removes the entries of databases that no longer exist (a DROP DATABASE
 * leaves its queues' entries behind: nothing runs in a dropped database to
 * remove them). Called when the table is full. The
 * databases are looked up with no lock of the hash held; an entry removed
 * is one nobody can use again (removing any entry is safe in any case: a
 * claim that finds its queue's entry missing makes it again and counts).
 */
static void
sweep_dropped_databases(void)
{
	Oid		   *dbs = palloc(sizeof(Oid) * awa_bgw_max_limited_queues);
	int			ndbs = 0;
	int			ngone = 0;
	HASH_SEQ_STATUS seq;
	LimitEntry *e;
	int			i;

	LWLockAcquire(limit_shared->lock, LW_SHARED);
	hash_seq_init(&seq, limit_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		for (i = 0; i < ndbs && dbs[i] != e->key.dboid; i++)
			;
		if (i == ndbs && ndbs < awa_bgw_max_limited_queues)
			dbs[ndbs++] = e->key.dboid;
	}
	LWLockRelease(limit_shared->lock);
	for (i = 0; i < ndbs; i++)
		if (!SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(dbs[i])))
			dbs[ngone++] = dbs[i];
	if (ngone > 0)
	{
		LWLockAcquire(limit_shared->lock, LW_EXCLUSIVE);
		hash_seq_init(&seq, limit_hash);
		while ((e = hash_seq_search(&seq)) != NULL)
			for (i = 0; i < ngone; i++)
				if (e->key.dboid == dbs[i])
				{
					(void) hash_search(limit_hash, &e->key, HASH_REMOVE, NULL);
					break;
				}
		LWLockRelease(limit_shared->lock);
	}
	pfree(dbs);
}

/*
 * Creates the queue's entry (not ready, no bucket: the next one made starts
 * empty) unless it exists; recount: its running count starts again (a
 * max_running set on a queue that had none), refill: its bucket is made again
 * at the next claim, full (a rate set on a queue that had none). When the
 * table is full, the entries of dropped databases make room first.
 */
static void
ensure_entry(const char *queue, bool recount, bool refill)
{
	LimitKey	key;
	LimitEntry *e;
	bool		found;

	require_shmem();
	make_key(&key, queue);
	LWLockAcquire(limit_shared->lock, LW_EXCLUSIVE);
	e = hash_search(limit_hash, &key, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		LWLockRelease(limit_shared->lock);
		sweep_dropped_databases();
		LWLockAcquire(limit_shared->lock, LW_EXCLUSIVE);
		e = hash_search(limit_hash, &key, HASH_ENTER_NULL, &found);
	}
	if (e != NULL && !found)
	{
		SpinLockInit(&e->mutex);
		reset_counts(e);
		e->fill = false;
		memset(&e->bucket, 0, sizeof(e->bucket));
	}
	/* no spinlock: every holder of one holds the hash's lock, shared */
	if (e != NULL && found && recount)
		reset_counts(e);
	if (e != NULL && refill)
	{
		e->bucket.id = 0;
		e->fill = true;
	}
	LWLockRelease(limit_shared->lock);
	if (e == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many queues with a running or rate limit"),
				 errdetail("awa_bgw.max_limited_queues (%d) queues of the cluster have one.",
						   awa_bgw_max_limited_queues),
				 errhint("Clear the limit of a queue that no longer needs it "
						 "(awa.clear_queue_limits), or raise awa_bgw.max_limited_queues "
						 "and restart the server.")));
}

/* ---- the transaction's deltas ---- */

static void limits_xact_callback(XactEvent event, void *arg);
static void limits_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
									SubTransactionId parentSubid, void *arg);

/*
 * The transaction callbacks, registered by _PG_init for every process: a
 * COMMIT PREPARED or ROLLBACK PREPARED, in a session that never used a limit,
 * must resolve the prepared deltas it ends and wake the claimers they let in.
 */
void
awa_limits_init(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(limits_xact_callback, NULL);
	RegisterSubXactCallback(limits_subxact_callback, NULL);
	callbacks_registered = true;
}

/*
 * Room for one more element in a backend-local array of n used of *max
 * (doubled when full, in TopMemoryContext); the array, perhaps moved.
 */
static void *
array_room(void *array, int n, int *max, Size elem)
{
	awa_limits_init();
	if (n < *max)
		return array;
	*max = Max(8, *max * 2);
	return array == NULL
		? MemoryContextAlloc(TopMemoryContext, *max * elem)
		: repalloc(array, *max * elem);
}

/* room for one more delta, made before any shared count is changed */
static void
reserve_delta_space(void)
{
	deltas = array_room(deltas, ndeltas, &maxdeltas, sizeof(LimitDelta));
}

/* the delta of (queue, level, epoch, absorbed); space was reserved */
static LimitDelta *
delta_for(const char *queue, int level, uint64 epoch, bool absorbed)
{
	LimitDelta *d;
	int			i;

	for (i = 0; i < ndeltas; i++)
	{
		d = &deltas[i];
		if (d->level == level && d->epoch == epoch && d->absorbed == absorbed &&
			strcmp(d->queue, queue) == 0)
			return d;
	}
	Assert(ndeltas < maxdeltas);
	d = &deltas[ndeltas++];
	memset(d, 0, sizeof(*d));
	strlcpy(d->queue, queue, QL_KEY_LEN);
	d->level = level;
	d->epoch = epoch;
	d->absorbed = absorbed;
	return d;
}

/*
 * The room this transaction's own closes of the queue give its claims (the
 * close and the claim take effect at the same commit, or neither does): the
 * closes of the entry's epoch not yet reused.
 */
static int32
own_room(const char *queue, uint64 epoch)
{
	int32		room = 0;
	int			i;

	for (i = 0; i < ndeltas; i++)
		if (!deltas[i].absorbed && deltas[i].epoch == epoch &&
			strcmp(deltas[i].queue, queue) == 0)
			room += deltas[i].closed - deltas[i].reused;
	return room;
}

/* marks n of the room own_room gave as taken */
static void
own_room_take(const char *queue, uint64 epoch, int32 n)
{
	int			i;

	for (i = 0; i < ndeltas && n > 0; i++)
		if (!deltas[i].absorbed && deltas[i].epoch == epoch &&
			strcmp(deltas[i].queue, queue) == 0)
		{
			int32		k = Min(n, deltas[i].closed - deltas[i].reused);

			deltas[i].reused += k;
			n -= k;
		}
}

/* ---- the tokens this transaction took ---- */

/* room for one more token delta, made before any bucket is changed */
static void
reserve_token_space(void)
{
	tdeltas = array_room(tdeltas, ntdeltas, &maxtdeltas, sizeof(TokenDelta));
}

/* adds n (negative: given back) to the tokens of (queue, level, bucket); space was reserved */
static void
note_tokens(const char *queue, int level, uint64 bucket, int32 n)
{
	TokenDelta *d = NULL;
	int			i;

	for (i = 0; i < ntdeltas && d == NULL; i++)
		if (tdeltas[i].level == level && tdeltas[i].bucket == bucket &&
			strcmp(tdeltas[i].queue, queue) == 0)
			d = &tdeltas[i];
	if (d == NULL)
	{
		Assert(ntdeltas < maxtdeltas);
		d = &tdeltas[ntdeltas++];
		memset(d, 0, sizeof(*d));
		strlcpy(d->queue, queue, QL_KEY_LEN);
		d->level = level;
		d->bucket = bucket;
	}
	d->tokens += n;
}

/*
 * An abort gives n tokens back to the queue's bucket when it is still the
 * one they were taken from (up to its burst), and wakes as many waiting
 * claimers, which sleep until a token is due otherwise.
 */
static void
give_tokens(const char *queue, uint64 bucket, int32 n)
{
	LimitEntry *e;
	bool		given = false;

	if (limit_hash == NULL || n <= 0)
		return;
	LWLockAcquire(limit_shared->lock, LW_SHARED);
	e = find_entry(queue);
	if (e != NULL)
	{
		SpinLockAcquire(&e->mutex);
		if (e->bucket.id == bucket)
		{
			awa_bucket_give(&e->bucket, n);
			given = true;
		}
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(limit_shared->lock);
	if (given)
		awa_wake_queue_waiters(queue, n);
}

/* The transaction ends: an abort gives its tokens back; a commit or a PREPARE spends them. */
static void
tokens_at_end(bool abort)
{
	int			i;

	for (i = 0; abort && i < ntdeltas; i++)
		give_tokens(tdeltas[i].queue, tdeltas[i].bucket, tdeltas[i].tokens);
	ntdeltas = 0;
}

/*
 * The subtransaction at level ends: at its commit its tokens go to its
 * parent (the array only shrinks), at its abort back to their buckets.
 */
static void
tokens_at_sub_end(int level, bool abort)
{
	int			n = ntdeltas;
	int			kept = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		TokenDelta	d = tdeltas[i];

		if (d.level < level)
			tdeltas[kept++] = d;
		else if (abort)
			give_tokens(d.queue, d.bucket, d.tokens);
		else
		{
			ntdeltas = kept;
			note_tokens(d.queue, level - 1, d.bucket, d.tokens);
			kept = ntdeltas;
		}
	}
	ntdeltas = kept;
}

/*
 * Applies one delta at the end of its (sub)transaction, committed or not,
 * and wakes as many claimers of the queue as it freed room for.
 */
static void
apply_delta(const LimitDelta *d, bool commit)
{
	LimitEntry *e;
	int			freed = 0;

	if (limit_hash == NULL || (d->claimed == 0 && d->closed == 0))
		return;
	LWLockAcquire(limit_shared->lock, LW_SHARED);
	e = find_entry(d->queue);
	if (e != NULL)
	{
		int32		before;

		SpinLockAcquire(&e->mutex);
		before = e->running + e->pending;
		if (!e->ready)
			;					/* the count to come sees the outcome */
		else if (d->absorbed)
		{
			/* the rebuild counted this transaction's writes as if committed */
			if (!commit)
				e->running += d->closed - d->claimed;
		}
		else if (d->epoch == e->epoch)
		{
			e->pending -= d->claimed;
			if (commit)
				e->running += d->claimed - d->closed;
		}
		else if (commit)
			e->running += d->claimed;	/* claimed after the count read */
		e->running = Max(e->running, 0);
		e->pending = Max(e->pending, 0);
		freed = before - (e->running + e->pending);
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(limit_shared->lock);
	if (freed > 0)
		awa_wake_queue_waiters(d->queue, freed);
}

/* ---- prepared transactions ---- */

/*
 * PREPARE: the transaction's deltas move to shared memory, keyed by its xid,
 * still counted (its claims in pending, its closes not applied) until
 * resolve_prepared finds it ended. 0A000 when the slots are full.
 */
static void
prepare_deltas(TransactionId xid)
{
	int			need = 0;
	int			free_slots = 0;
	int			i;
	int			k = 0;

	for (i = 0; i < ndeltas; i++)
		if (deltas[i].claimed != 0 || deltas[i].closed != 0)
			need++;
	if (need == 0)
		return;
	if (TransactionIdIsValid(xid) && limit_shared != NULL)
	{
		LWLockAcquire(limit_shared->lock, LW_EXCLUSIVE);
		for (i = 0; i < limit_shared->nslots; i++)
			if (!TransactionIdIsValid(limit_shared->prepared[i].xid))
				free_slots++;
		for (i = 0; free_slots >= need && i < ndeltas; i++)
		{
			if (deltas[i].claimed == 0 && deltas[i].closed == 0)
				continue;
			while (TransactionIdIsValid(limit_shared->prepared[k].xid))
				k++;
			limit_shared->prepared[k].xid = xid;
			limit_shared->prepared[k].dboid = MyDatabaseId;
			limit_shared->prepared[k].delta = deltas[i];
			pg_atomic_fetch_add_u32(&limit_shared->nprepared, 1);
		}
		LWLockRelease(limit_shared->lock);
	}
	if (free_slots < need)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot prepare a transaction that claimed or closed attempts of "
						"more queues with a running limit than prepared transactions "
						"can hold"),
				 errhint("Commit or roll back the prepared transactions "
						 "(pg_prepared_xacts), or claim and complete the jobs of a "
						 "limited queue in transactions that commit.")));
	ndeltas = 0;
}

/*
 * The deltas of the prepared transactions of this database that have ended,
 * applied (committed) or dropped (rolled back), and taken out of shared
 * memory; costs one atomic read while none is prepared. Run by every claim
 * of a limited queue and at the end of every transaction (so also by COMMIT
 * PREPARED and ROLLBACK PREPARED).
 */
static void
resolve_prepared(void)
{
	int			i;

	if (limit_shared == NULL || pg_atomic_read_u32(&limit_shared->nprepared) == 0)
		return;
	/* no allocation here: this runs in the commit callback, where an error is fatal */
	for (i = 0; i < limit_shared->nslots; i++)
	{
		TransactionId xid;
		LimitDelta	d;
		bool		mine = false;

		LWLockAcquire(limit_shared->lock, LW_SHARED);
		xid = limit_shared->prepared[i].dboid == MyDatabaseId
			? limit_shared->prepared[i].xid : InvalidTransactionId;
		LWLockRelease(limit_shared->lock);
		/* its status, read without the lock */
		if (!TransactionIdIsValid(xid) || TransactionIdIsInProgress(xid))
			continue;
		LWLockAcquire(limit_shared->lock, LW_EXCLUSIVE);
		if (TransactionIdEquals(limit_shared->prepared[i].xid, xid))
		{
			d = limit_shared->prepared[i].delta;
			limit_shared->prepared[i].xid = InvalidTransactionId;
			pg_atomic_fetch_sub_u32(&limit_shared->nprepared, 1);
			mine = true;
		}
		LWLockRelease(limit_shared->lock);
		if (mine)
			apply_delta(&d, TransactionIdDidCommit(xid));
	}
}

static bool
have_deltas(void)
{
	int			i;

	for (i = 0; i < ndeltas; i++)
		if (deltas[i].claimed != 0 || deltas[i].closed != 0)
			return true;
	return false;
}

static void
limits_xact_callback(XactEvent event, void *arg)
{
	int			i;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			for (i = 0; i < ndeltas; i++)
				apply_delta(&deltas[i], event == XACT_EVENT_COMMIT ||
							event == XACT_EVENT_PARALLEL_COMMIT);
			ndeltas = 0;
			tokens_at_end(event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT);
			resolve_prepared();
			return;
		case XACT_EVENT_PRE_PREPARE:
			if (have_deltas())
				prepare_deltas(GetTopTransactionIdIfAny());
			return;
		case XACT_EVENT_PREPARE:
			/* its tokens stay spent, whether it is committed or rolled back */
			ntdeltas = 0;
			break;
		default:
			return;
	}
	ndeltas = 0;
}

static void
limits_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	int			n = ndeltas;
	int			kept = 0;
	int			i;

	if (event != SUBXACT_EVENT_COMMIT_SUB && event != SUBXACT_EVENT_ABORT_SUB)
		return;
	tokens_at_sub_end(level, event == SUBXACT_EVENT_ABORT_SUB);
	for (i = 0; i < n; i++)
	{
		LimitDelta	d = deltas[i];
		LimitDelta *parent;

		if (d.level < level)
			deltas[kept++] = d;
		else if (event == SUBXACT_EVENT_ABORT_SUB)
			apply_delta(&d, false);
		else
		{
			/* to the parent's delta of the same kind (the array only shrinks) */
			ndeltas = kept;
			parent = delta_for(d.queue, level - 1, d.epoch, d.absorbed);
			parent->claimed += d.claimed;
			parent->closed += d.closed;
			parent->reused += d.reused;
			kept = ndeltas;
		}
	}
	ndeltas = kept;
}

/* ---- the rebuild ---- */

/* gives up the rebuild this backend began (an error while counting) */
static void
rebuild_abandon(const char *queue)
{
	LimitEntry *e;

	LWLockAcquire(limit_shared->lock, LW_SHARED);
	e = find_entry(queue);
	if (e != NULL)
	{
		SpinLockAcquire(&e->mutex);
		if (e->rebuilder == MyProcPid)
			e->rebuilder = 0;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(limit_shared->lock);
}

/*
 * The queue's open attempts, counted in a subtransaction rolled back at once;
 * on an error the rebuild this backend began is given up. Not inlined: no
 * local of the caller lives across its PG_TRY (gcc's -Wclobbered).
 */
static pg_noinline int32
count_open_attempts(const char *queue)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	Oid			argtypes[1] = {TEXTOID};
	Oid			fn = awa_internal_function("queue_open_attempts", 1, argtypes);
	volatile int64 n = 0;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		n = DatumGetInt64(OidFunctionCall1(fn, CStringGetTextDatum(queue)));
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata = awa_subxact_abort(cxt, owner);

		rebuild_abandon(queue);
		ReThrowError(edata);
	}
	PG_END_TRY();
	return (int32) Min(n, (int64) PG_INT32_MAX);
}

/*
 * Counts the queue's open attempts into its entry, which this backend marked
 * as its to rebuild, and makes it ready; the transaction's own deltas of the
 * queue, which the count saw, become absorbed.
 */
static void
rebuild(const char *queue)
{
	LimitEntry *e;
	int32		running;
	uint64		epoch = 0;
	int			i;

	running = count_open_attempts(queue);
	LWLockAcquire(limit_shared->lock, LW_SHARED);
	e = find_entry(queue);
	if (e != NULL)
	{
		SpinLockAcquire(&e->mutex);
		if (e->rebuilder == MyProcPid && !e->ready)
		{
			e->running = running;
			e->pending = 0;
			e->epoch = epoch = pg_atomic_fetch_add_u64(&limit_shared->next_epoch, 1);
			e->ready = true;
		}
		if (e->rebuilder == MyProcPid)
			e->rebuilder = 0;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(limit_shared->lock);
	for (i = 0; epoch != 0 && i < ndeltas; i++)
		if (strcmp(deltas[i].queue, queue) == 0)
		{
			deltas[i].absorbed = true;
			deltas[i].epoch = epoch;
		}
}

/* ---- the claim ---- */

typedef enum
{
	RESERVED,					/* claim->reserved is what was taken */
	MISSING,					/* no entry: create it */
	WAIT,						/* another backend counts */
	REBUILD						/* this backend counts */
} ReserveStep;

/* the entry's bucket, refilled as of now, or made (the entry's lock held) */
static TokenBucket *
entry_bucket(LimitEntry *e, const AwaQueueLimits *lim, int64 now)
{
	if (e->bucket.id == 0)
	{
		awa_bucket_make(&e->bucket, pg_atomic_fetch_add_u64(&limit_shared->next_epoch, 1),
						lim->rate, lim->per_us, lim->burst, e->fill, now);
		e->fill = false;
	}
	else
		awa_bucket_refill(&e->bucket, lim->rate, lim->per_us, lim->burst, now);
	return &e->bucket;
}

/*
 * The reservation itself, under the entry's spinlock: at most asked, at most
 * the bucket's whole tokens (a rate), at most the room the shared count and
 * the transaction's own closes leave (max_running; *own: how much came from
 * those closes); the tokens of what it reserved taken.
 */
static void
reserve_locked(LimitEntry *e, const char *queue, const AwaQueueLimits *lim, int asked,
			   int64 now, LimitClaim *claim, int *own)
{
	TokenBucket *b = lim->rate > 0 ? entry_bucket(e, lim, now) : NULL;
	int			want = b != NULL ? Min(asked, awa_bucket_whole(b)) : asked;
	int			took = want;

	*own = 0;
	if (lim->max_running > 0)
	{
		int32		shared_room = lim->max_running - e->running - e->pending;

		*own = Min(want, own_room(queue, e->epoch));
		took = *own + Max(0, Min(want - *own, shared_room));
		e->pending += took;
		claim->counted = true;
		claim->epoch = e->epoch;
	}
	if (b != NULL)
	{
		(void) awa_bucket_take(b, took);
		claim->bucket = b->id;
		claim->due_us = took == 0 ? awa_bucket_due_us(b) : 0;
	}
	claim->reserved = took;
}

/*
 * One try at the reservation, under the locks (a queue with max_running
 * waits for its entry's count, a queue with a rate alone needs none).
 * *other: a rebuilder seen.
 */
static ReserveStep
reserve_step(const char *queue, const AwaQueueLimits *lim, int asked, LimitClaim *claim,
			 int *own, int *other)
{
	int64		now = lim->rate > 0 ? awa_bucket_now() : 0;
	LimitEntry *e;
	ReserveStep step;

	LWLockAcquire(limit_shared->lock, LW_SHARED);
	e = find_entry(queue);
	if (e == NULL)
	{
		LWLockRelease(limit_shared->lock);
		return MISSING;
	}
	SpinLockAcquire(&e->mutex);
	if (e->ready || lim->max_running <= 0)
	{
		reserve_locked(e, queue, lim, asked, now, claim, own);
		step = RESERVED;
	}
	else if (e->rebuilder == 0 || e->rebuilder == *other || e->rebuilder == MyProcPid)
	{
		/* nobody counts, or the one seen last time (now checked as gone) */
		e->rebuilder = MyProcPid;
		step = REBUILD;
	}
	else
	{
		*other = e->rebuilder;
		step = WAIT;
	}
	SpinLockRelease(&e->mutex);
	LWLockRelease(limit_shared->lock);
	return step;
}

/* what a reservation leaves to the transaction's end (space was reserved) */
static void
note_reserved(const char *queue, const LimitClaim *claim, int own)
{
	int			level = GetCurrentTransactionNestLevel();

	if (claim->counted)
	{
		if (claim->reserved > 0)
			delta_for(queue, level, claim->epoch, false)->claimed += claim->reserved;
		own_room_take(queue, claim->epoch, own);
	}
	if (claim->bucket != 0 && claim->reserved > 0)
		note_tokens(queue, level, claim->bucket, claim->reserved);
}

/*
 * Reserves at most asked attempts of the queue under its limits lim: room
 * under max_running, tokens of its rate. Returns how many (0: none, the
 * queue is at its limit or out of tokens), and in *claim what
 * awa_limit_settle needs, and when the next token is due. Counts the queue's
 * open attempts first when it has max_running and its entry is not ready.
 */
int
awa_limit_reserve(text *queue_t, const AwaQueueLimits *lim, int asked, LimitClaim *claim)
{
	char		queue[QL_KEY_LEN];
	int			other = 0;
	int			own = 0;

	require_shmem();
	text_to_cstring_buffer(queue_t, queue, sizeof(queue));
	memset(claim, 0, sizeof(*claim));
	if (lim->max_running > 0)
		resolve_prepared();
	for (;;)
	{
		reserve_delta_space();
		reserve_token_space();
		switch (reserve_step(queue, lim, asked, claim, &own, &other))
		{
			case RESERVED:
				note_reserved(queue, claim, own);
				return claim->reserved;
			case MISSING:
				ensure_entry(queue, false, false);
				break;
			case REBUILD:
				rebuild(queue);
				break;
			case WAIT:
				/* a rebuilder that is gone left its mark: the next try takes over */
				if (BackendPidGetProc(other) != NULL)
				{
					other = 0;
					(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
									 1, PG_WAIT_EXTENSION);
					ResetLatch(MyLatch);
				}
				CHECK_FOR_INTERRUPTS();
				break;
		}
	}
}

/* gives unused room and tokens of the claim back to its entry */
static void
settle_shared(const char *queue, const LimitClaim *claim, int unused)
{
	LimitEntry *e;

	LWLockAcquire(limit_shared->lock, LW_SHARED);
	e = find_entry(queue);
	if (e != NULL)
	{
		SpinLockAcquire(&e->mutex);
		if (claim->counted && e->ready && e->epoch == claim->epoch)
			e->pending = Max(e->pending - unused, 0);
		if (claim->bucket != 0 && e->bucket.id == claim->bucket)
			awa_bucket_give(&e->bucket, unused);
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(limit_shared->lock);
}

/*
 * The lanes answered the claim with 'took' entries: the rest of its room and
 * of its tokens is given back at once. No one is woken: the lanes gave this
 * claim nothing more, and a claimer that looked while the room was reserved
 * was woken by a commit and looks again after 1, 2 ... 64 ms (wait.c); a
 * waiting claimer woken here could be this one, looking again at once, for
 * ever. Room the transaction's own closes gave stays taken (a close's room
 * goes to one claim of its transaction, used or not).
 */
void
awa_limit_settle(text *queue_t, const LimitClaim *claim, int took)
{
	char		queue[QL_KEY_LEN];
	int			unused = claim->reserved - took;
	int			level = GetCurrentTransactionNestLevel();

	if (unused <= 0)
		return;
	text_to_cstring_buffer(queue_t, queue, sizeof(queue));
	reserve_delta_space();
	reserve_token_space();
	if (claim->counted)
		delta_for(queue, level, claim->epoch, false)->claimed -= unused;
	if (claim->bucket != 0)
		note_tokens(queue, level, claim->bucket, -unused);
	settle_shared(queue, claim, unused);
}

/* ---- closes ---- */

/*
 * This transaction closed n attempts of the queue (after writing their
 * closures): counted at its commit when the queue has a running limit.
 */
void
awa_limit_note_closed(text *queue_t, int n)
{
	char		queue[QL_KEY_LEN];
	LimitEntry *e;
	uint64		epoch = 0;

	if (n <= 0 || awa_queue_max_running(queue_t) <= 0 || limit_hash == NULL)
		return;
	text_to_cstring_buffer(queue_t, queue, sizeof(queue));
	reserve_delta_space();
	LWLockAcquire(limit_shared->lock, LW_SHARED);
	e = find_entry(queue);
	if (e != NULL)
	{
		SpinLockAcquire(&e->mutex);
		epoch = e->ready ? e->epoch : 0;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(limit_shared->lock);
	delta_for(queue, GetCurrentTransactionNestLevel(), epoch, false)->closed += n;
}

/* ---- SQL ---- */

/*
 * awa_internal.note_closed(queue text, n int): the closes written in SQL
 * (awa_internal.close_attempts)
 */
Datum
awa_note_closed(PG_FUNCTION_ARGS)
{
	if (!PG_ARGISNULL(0) && !PG_ARGISNULL(1))
		awa_limit_note_closed(PG_GETARG_TEXT_PP(0), PG_GETARG_INT32(1));
	PG_RETURN_VOID();
}

/*
 * awa_internal.queue_limit_entry(queue text, recount boolean, refill
 * boolean): the queue's shared entry, made before its limits are written
 * (53400 when the table is full); recount starts its running count again (a
 * max_running on a queue that had none: the closes were not counted, or
 * counted by an earlier limit since cleared), refill makes its bucket again,
 * full, at the next claim (a rate on a queue that had none).
 */
Datum
awa_queue_limit_entry(PG_FUNCTION_ARGS)
{
	ensure_entry(text_to_cstring(PG_GETARG_TEXT_PP(0)), PG_GETARG_BOOL(1),
				 PG_GETARG_BOOL(2));
	PG_RETURN_VOID();
}

/* awa_internal.queue_limit_forget(queue text): the limit is cleared */
Datum
awa_queue_limit_forget(PG_FUNCTION_ARGS)
{
	LimitKey	key;

	require_shmem();
	make_key(&key, text_to_cstring(PG_GETARG_TEXT_PP(0)));
	LWLockAcquire(limit_shared->lock, LW_EXCLUSIVE);
	(void) hash_search(limit_hash, &key, HASH_REMOVE, NULL);
	LWLockRelease(limit_shared->lock);
	PG_RETURN_VOID();
}

/*
 * awa_internal.queue_limit_state(queue text, OUT running int, OUT pending
 * int, OUT ready boolean, OUT tokens int): the queue's shared counts, and the
 * whole tokens its bucket would hold if refilled now (NULL: no bucket made
 * yet); no row without an entry. Reading refills nothing.
 */
Datum
awa_queue_limit_state(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		now = awa_bucket_now();
	LimitEntry *e;
	TokenBucket b;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	bool		found = false;

	memset(&b, 0, sizeof(b));
	InitMaterializedSRF(fcinfo, 0);
	require_shmem();
	LWLockAcquire(limit_shared->lock, LW_SHARED);
	e = find_entry(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	if (e != NULL)
	{
		SpinLockAcquire(&e->mutex);
		values[0] = Int32GetDatum(e->running);
		values[1] = Int32GetDatum(e->pending);
		values[2] = BoolGetDatum(e->ready);
		b = e->bucket;
		SpinLockRelease(&e->mutex);
		found = true;
	}
	LWLockRelease(limit_shared->lock);
	if (!found)
		return (Datum) 0;
	/* the copy refilled at its own parameters */
	if (b.id != 0)
		awa_bucket_refill(&b, b.rate, b.per_us, b.burst, now);
	values[3] = Int32GetDatum(b.id != 0 ? awa_bucket_whole(&b) : 0);
	nulls[3] = b.id == 0;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
