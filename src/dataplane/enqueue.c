/*-------------------------------------------------------------------------
 *
 * enqueue.c
 *	  Entering due jobs into the queue ring in 0.9, in C (docs/storage.md
 *	  §A.13): awa.enqueue_ready(queue, priority, jobs), which awa.enqueue,
 *	  enqueue_batch, retries and the worker's promotion call.
 *
 * What the PL/pgSQL enqueue_ready did, step for step: the producer's lane
 * (its backend's shard of (queue, priority), the lowest lane registered for
 * it; registered first when there is none, src/dataplane/lanes.c), the queue
 * cursor (read fresh, and again after the child's lock, at REPEATABLE READ
 * and SERIALIZABLE: docs/storage.md A.18), then one ready entry per job in
 * the order given (lane_seq from awa.lane_seq, txid this transaction's
 * top-level xid, enqueued_at now or, in 0.10, NULL when that is within 1 ms
 * of the job's created_at), inserted straight
 * into the ready child of the current queue slot; then the note
 * (awa.note_enqueued: the slot's txid bound at once, the wake-ups and the
 * lane's mark at commit). No lock is taken but the child's ROW EXCLUSIVE.
 *
 * src/dataplane/enqueue.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"
#include "utils/xid8.h"

#include "src/compat.h"
#include "src/dataplane/activity.h"
#include "src/dataplane/checks.h"
#include "src/dataplane/enqueue.h"
#include "src/dataplane/lanes.h"
#include "src/dataplane/probes.h"
#include "src/dataplane/queuepolicy.h"
#include "src/dataplane/unique.h"
#include "src/dataplane/wait.h"
#include "src/dataplane/xidspace.h"
#include "src/rel/inserter.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_enqueue_ready);
PG_FUNCTION_INFO_V1(awa_enqueue);

/*
 * the hint of every refusal of enqueue_ready's input: a caller's mistake (the
 * messages name no schema: the function is in awa_internal, in awa before 0.10)
 */
#define ENQUEUE_READY_HINT \
	"enqueue_ready is internal: enqueue with awa.enqueue or awa.enqueue_batch."

/* the fields of an awa.new_job that an entry takes */
static const char *const job_fields[] = {
	"job_id", "kind", "args", "attempt", "max_attempts", "created_at"
};
#define NJOB lengthof(job_fields)
#define JOB_CREATED_AT 5		/* job_fields' created_at */

/* the fields of awa.new_job, in order */
static const char *const new_job_fields[] = {
	"ord", "job_id", "kind", "args", "priority", "run_at", "attempt", "max_attempts",
	"created_at", "error"
};

typedef struct Job
{
	int64		job_id;
	Datum		values[NJOB];
	bool		nulls[NJOB];
} Job;

/*
 * the lowest lane of (queue, priority, shard) visible now (to the statement's
 * snapshot, or to a fresh read when fresh is not NULL); 0: none. A lane
 * another transaction registered is remembered (lanes.c), and then read from
 * the cache.
 */
static int32
producer_lane(Oid nsp, text *queue, int16 priority, int32 shard, const AwaFreshRead *fresh)
{
	static const char *const cols[] = {"queue", "priority", "shard"};
	Relation	heap;
	AttrNumber	a_lane;
	ChildScan	cs;
	ScanKeyData keys[3];
	int32		lane = awa_lane_cache_get(nsp, queue, priority, shard);
	bool		ours = false;
	Oid			registry;

	if (lane != 0)
		return lane;
	heap = awa_open_table(nsp, "queue_lanes", -1);
	registry = RelationGetRelid(heap);
	a_lane = awa_column_number(heap, "lane_id");
	awa_child_scan_begin_fresh(&cs, heap, awa_open_index(heap, 3, cols), 3, fresh);
	ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber, InvalidOid,
						   cs.index->rd_indcollation[0], F_TEXTEQ, PointerGetDatum(queue));
	ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT2EQ, Int16GetDatum(priority));
	ScanKeyInit(&keys[2], 3, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(shard));
	index_rescan(cs.scan, keys, 3, NULL, 0);
	while (awa_child_scan_next(&cs, ForwardScanDirection))
	{
		bool		isnull;
		int32		l = awa_get_int32(cs.slot, a_lane, &isnull);

		if (lane == 0 || l < lane)
		{
			lane = l;
			ours = TransactionIdIsCurrentTransactionId(
				DatumGetTransactionId(slot_getsysattr(cs.slot, MinTransactionIdAttributeNumber,
													 &isnull)));
		}
	}
	awa_child_scan_end(&cs);
	/* visible and not this transaction's: committed, so a lane for good */
	if (lane != 0 && !ours)
		awa_lane_cache_put(nsp, registry, queue, priority, shard, lane);
	return lane;
}

/*
 * the producer's lane, registered first when there is none (lanes.c). At
 * REPEATABLE READ and SERIALIZABLE the lanes are a fresh read: what is
 * committed now, with no predicate lock (docs/storage.md A.18).
 */
static int32
enqueue_lane(Oid nsp, text *queue, int16 priority)
{
	int32		shard = MyProcPid % AWA_LANE_SHARDS;
	AwaFreshRead buf;
	const AwaFreshRead *level_read = awa_fresh_read_begin_for_level(&buf);
	int32		lane;

	lane = producer_lane(nsp, queue, priority, shard, level_read);
	awa_fresh_read_end(level_read);
	if (lane != 0)
		return lane;
	awa_register_lanes(nsp, queue, priority);
	CommandCounterIncrement();
	awa_fresh_read_begin(&buf);
	lane = producer_lane(nsp, queue, priority, shard, &buf);
	awa_fresh_read_end(&buf);
	if (lane == 0)
		elog(ERROR, "awa_bgw: no lane for the queue after registering it");
	return lane;
}

/* the jobs of the array */
static Job *
read_jobs(ArrayType *arr, int *njobs)
{
	Oid			elemtype = ARR_ELEMTYPE(arr);
	TupleDesc	desc = lookup_rowtype_tupdesc(elemtype, -1);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *enulls;
	Job		   *jobs;
	int			i;
	int			f;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign, &elems, &enulls, njobs);
	jobs = palloc(Max(*njobs, 1) * sizeof(Job));
	for (i = 0; i < *njobs; i++)
	{
		HeapTupleHeader th;
		HeapTupleData tup;

		if (enulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("enqueue_ready got a NULL job"),
					 errhint(ENQUEUE_READY_HINT)));
		th = DatumGetHeapTupleHeader(elems[i]);
		tup.t_len = HeapTupleHeaderGetDatumLength(th);
		tup.t_data = th;
		ItemPointerSetInvalid(&tup.t_self);
		tup.t_tableOid = InvalidOid;
		for (f = 0; f < (int) NJOB; f++)
		{
			int			a;

			for (a = 0; a < desc->natts; a++)
				if (strcmp(NameStr(TupleDescAttr(desc, a)->attname), job_fields[f]) == 0)
					break;
			if (a == desc->natts)
				elog(ERROR, "awa.new_job has no field %s", job_fields[f]);
			jobs[i].values[f] = heap_getattr(&tup, a + 1, desc, &jobs[i].nulls[f]);
		}
		jobs[i].job_id = DatumGetInt64(jobs[i].values[0]);
	}
	ReleaseTupleDesc(desc);
	return jobs;
}

/*
 * the queue ring's cursor: from the statement's snapshot at READ COMMITTED,
 * a fresh read at REPEATABLE READ and SERIALIZABLE
 */
static void
queue_cursor(Oid nsp, int32 *slot, int64 *gen)
{
	AwaFreshRead buf;
	const AwaFreshRead *fresh = awa_fresh_read_begin_for_level(&buf);
	bool		found;

	found = awa_ring_cursor_read_as(nsp, "queue", fresh, slot, gen);
	awa_fresh_read_end(fresh);
	if (!found)
		elog(ERROR, "the queue ring has no cursor");
	awa_check_slots(*slot, *gen, AWA_QUEUE_SLOTS);
}

/* whether this transaction holds a lock of mode on relation relid already */
static bool
holds_lock(Oid relid, LOCKMODE mode)
{
	LOCKTAG		tag;

	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	return awa_lock_held_by_me(&tag, mode);
}

/*
 * The ready child of the queue ring's current slot (*slot at *gen), opened
 * ROW EXCLUSIVE. At READ COMMITTED the cursor is read under the statement's
 * snapshot, as before. At REPEATABLE READ and SERIALIZABLE the transaction's
 * snapshot may be older than any number of rotations, so the cursor is a
 * fresh read, and read again after the child's lock: once the two agree,
 * the slot is current while we hold a lock its prune's ACCESS EXCLUSIVE
 * waits for, so no prune empties it and no rotation reuses it before we
 * commit (docs/storage.md A.18, E1-E2). A lock taken on a child that turned
 * out stale is given back, unless the transaction held it already.
 */
static Relation
current_ready_child(Oid nsp, int32 *slot, int64 *gen)
{
	int			tries;

	if (!IsolationUsesXactSnapshot())
	{
		queue_cursor(nsp, slot, gen);
		return awa_open_table_for(nsp, "ready_entries", *slot, RowExclusiveLock);
	}
	queue_cursor(nsp, slot, gen);
	for (tries = 0;; tries++)
	{
		char		name[NAMEDATALEN];
		Oid			relid;
		bool		held;
		Relation	child;
		int32		again_slot;
		int64		again_gen;

		snprintf(name, sizeof(name), "ready_entries_%d", *slot);
		relid = awa_relid(nsp, name);
		held = OidIsValid(relid) && holds_lock(relid, RowExclusiveLock);
		child = awa_open_table_for(nsp, "ready_entries", *slot, RowExclusiveLock);
		queue_cursor(nsp, &again_slot, &again_gen);
		if (again_slot == *slot && again_gen == *gen)
			return child;
		relid = RelationGetRelid(child);
		table_close(child, NoLock);
		if (!held)
			UnlockRelationOid(relid, RowExclusiveLock);
		if (tries >= 8)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("the queue ring turned under every try to enqueue"),
					 errhint("Retry the transaction.")));
		*slot = again_slot;
		*gen = again_gen;
	}
}

/*
 * An entry enqueued less than this after its job's created_at (the start of
 * the enqueuing transaction, for a first attempt) writes enqueued_at NULL,
 * which its readers take as created_at (coalesce): at most 1 ms early.
 */
#define ENQUEUED_AT_SAME_USECS 1000

/* the columns of the ready child that an entry sets (0: the catalog has none) */
typedef struct EntryColumns
{
	AttrNumber	fixed[6];		/* entry_fixed, in order */
	AttrNumber	job[NJOB];		/* job_fields, in order */
	AttrNumber	generation;		/* ready_generation: 0.9 only */
	AttrNumber	enqueued;		/* enqueued_at */
	bool		enqueued_nullable;	/* NULL in 0.10 (tables/entry_fields.sql) */
	AttrNumber	key;			/* group_key: 0.10 only */
} EntryColumns;

/* what the enqueue itself gives every entry */
static const char *const entry_fixed[] = {
	"ready_slot", "lane_id", "lane_seq", "queue", "priority", "txid"
};

/*
 * The entry's columns in child, by name. Each writer decides by the child it
 * opened, not by version (docs/proposals/receipt_fields.md §7): a 0.9 catalog
 * has ready_generation and a NOT NULL enqueued_at, and gets both written; a
 * 0.10 one has neither the column nor the constraint.
 */
static void
entry_columns(Relation child, EntryColumns *c)
{
	int			f;

	StaticAssertStmt(lengthof(entry_fixed) == lengthof(c->fixed),
					 "one attribute number per fixed column");
	for (f = 0; f < (int) lengthof(entry_fixed); f++)
		c->fixed[f] = awa_column_number(child, entry_fixed[f]);
	for (f = 0; f < (int) NJOB; f++)
		c->job[f] = awa_column_number(child, job_fields[f]);
	c->generation = awa_column_number_if(child, "ready_generation");
	c->enqueued = awa_column_number(child, "enqueued_at");
	c->enqueued_nullable =
		!TupleDescAttr(RelationGetDescr(child), c->enqueued - 1)->attnotnull;
	/* 0.10's group key ('' for a job of no group); a 0.9 catalog has none */
	c->key = awa_column_number_if(child, "group_key");
}

/* sets column att of the row (att 0: the catalog has none, nothing to set) */
static inline void
set_column(Datum *row, bool *nulls, AttrNumber att, Datum value)
{
	if (att == InvalidAttrNumber)
		return;
	row[att - 1] = value;
	nulls[att - 1] = false;
}

/*
 * Whether the entry's enqueued_at may be left NULL: the column allows it and
 * the job was created less than ENQUEUED_AT_SAME_USECS before now (a first
 * attempt enqueued early in its transaction). A promotion or a retry has an
 * older created_at, and writes it; so does a clock that went back.
 */
static bool
enqueued_at_implied(const EntryColumns *c, const Job *job, TimestampTz now)
{
	TimestampTz created;

	if (!c->enqueued_nullable || job->nulls[JOB_CREATED_AT])
		return false;
	created = DatumGetTimestampTz(job->values[JOB_CREATED_AT]);
	return now >= created && now - created < ENQUEUED_AT_SAME_USECS;
}

/* one ready entry per job into the child of the current queue slot */
static int32
insert_entries(Oid nsp, text *queue, int16 priority, int32 lane, Job *jobs, int njobs)
{
	Relation	child;
	TupleDesc	desc;
	RowInserter ri;
	EntryColumns cols;
	Oid			seq = awa_relid(nsp, "lane_seq");
	Datum		txid = FullTransactionIdGetDatum(GetTopFullTransactionId());
	TimestampTz now = GetCurrentTimestamp();
	Datum		no_key = PointerGetDatum(cstring_to_text(""));
	Datum	   *row;
	bool	   *nulls;
	int32		slot;
	int64		gen;
	int			i;
	int			f;

	if (!OidIsValid(seq))
		elog(ERROR, "awa.lane_seq does not exist");
	child = current_ready_child(nsp, &slot, &gen);
	desc = RelationGetDescr(child);
	entry_columns(child, &cols);
	row = palloc0(desc->natts * sizeof(Datum));
	nulls = palloc(desc->natts * sizeof(bool));
	awa_row_inserter_begin(&ri, child);
	for (i = 0; i < njobs; i++)
	{
		Datum		fv[lengthof(entry_fixed)];

		fv[0] = Int32GetDatum(slot);
		fv[1] = Int32GetDatum(lane);
		fv[2] = Int64GetDatum(nextval_internal(seq, false));
		fv[3] = PointerGetDatum(queue);
		fv[4] = Int16GetDatum(priority);
		fv[5] = txid;
		memset(nulls, true, desc->natts * sizeof(bool));
		for (f = 0; f < (int) lengthof(entry_fixed); f++)
			set_column(row, nulls, cols.fixed[f], fv[f]);
		for (f = 0; f < (int) NJOB; f++)
		{
			row[cols.job[f] - 1] = jobs[i].values[f];
			nulls[cols.job[f] - 1] = jobs[i].nulls[f];
		}
		set_column(row, nulls, cols.generation, Int64GetDatum(gen));
		if (!enqueued_at_implied(&cols, &jobs[i], now))
			set_column(row, nulls, cols.enqueued, TimestampTzGetDatum(now));
		set_column(row, nulls, cols.key, no_key);
		awa_row_inserter_put(&ri, row, nulls);
	}
	awa_row_inserter_end(&ri);
	table_close(child, NoLock);
	return slot;
}

/*
 * the producer's lane, then the entries, in the order given, and their note.
 * The order is the claim order of the entries within the lane: an enqueue
 * gives its jobs in input order (which is job id order), a promotion gives
 * the due jobs oldest run_at first (sql-src/maintenance/promote.sql), so
 * that a job due earlier is claimed earlier. (Until 0.10 the entries were
 * sorted by job id here, which put a promotion's batch in job id order.)
 */
static void
enqueue_due(Oid nsp, text *queue, int16 priority, Job *jobs, int njobs)
{
	int32		lane = enqueue_lane(nsp, queue, priority);
	int32		slot;

	if (njobs == 0)
		return;
	slot = insert_entries(nsp, queue, priority, lane, jobs, njobs);
	awa_note_enqueued_lane(queue, njobs, lane, slot);
}

/*
 * awa.enqueue_ready(queue text, priority smallint, jobs awa.new_job[])
 *		RETURNS void
 */
Datum
awa_enqueue_ready(PG_FUNCTION_ARGS)
{
	Job		   *jobs;
	int			njobs;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("enqueue_ready needs a queue, a priority and jobs, none NULL"),
				 errhint(ENQUEUE_READY_HINT)));
	awa_xid_space_adopt();
	jobs = read_jobs(PG_GETARG_ARRAYTYPE_P(2), &njobs);
	enqueue_due(awa_namespace(), PG_GETARG_TEXT_PP(0), PG_GETARG_INT16(1), jobs, njobs);
	PG_RETURN_VOID();
}

/* an awa.new_job datum of j */
static Datum
new_job_datum(TupleDesc desc, const AwaNewJob *j)
{
	Datum		values[10];
	bool		nulls[10] = {0};
	int			a;

	if (desc->natts != 10)
		elog(ERROR, "awa.new_job has %d fields, not 10", desc->natts);
	values[0] = Int32GetDatum(j->ord);
	values[1] = Int64GetDatum(j->job_id);
	values[2] = j->kind;
	values[3] = j->args;
	values[4] = Int16GetDatum((int16) j->priority);
	values[5] = TimestampTzGetDatum(j->run_at);
	values[6] = Int32GetDatum(j->attempt);
	values[7] = Int32GetDatum(j->max_attempts);
	values[8] = TimestampTzGetDatum(j->created_at);
	values[9] = j->error;
	nulls[9] = j->error == (Datum) 0;
	for (a = 0; a < 10; a++)
		if (strcmp(NameStr(TupleDescAttr(desc, a)->attname), new_job_fields[a]) != 0)
			elog(ERROR, "awa.new_job's field %d is not %s", a + 1, new_job_fields[a]);
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

/*
 * enqueue_jobs(queue, jobs) of the internals' schema (awa_internal; awa
 * before 0.10) for jobs not yet due: into awa.deferred_jobs
 */
static void
enqueue_deferred(Oid nsp, text *queue, AwaNewJob *jobs, int njobs)
{
	Oid			typid = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
										CStringGetDatum("new_job"), ObjectIdGetDatum(nsp));
	Oid			argtypes[2] = {TEXTOID, InvalidOid};
	TupleDesc	desc;
	Datum	   *elems = palloc(njobs * sizeof(Datum));
	Oid			fn;
	int			nest;
	int			i;

	if (!OidIsValid(typid))
		elog(ERROR, "type awa.new_job does not exist");
	argtypes[1] = get_array_type(typid);
	desc = lookup_rowtype_tupdesc_copy(typid, -1);
	for (i = 0; i < njobs; i++)
		elems[i] = new_job_datum(desc, &jobs[i]);
	fn = awa_internal_function("enqueue_jobs", 2, argtypes);
	awa_activity_note_deferred();
	nest = awa_path_pin();
	OidFunctionCall2(fn, PointerGetDatum(queue),
					 PointerGetDatum(construct_array(elems, njobs, typid, -1, false,
													 TYPALIGN_DOUBLE)));
	awa_path_unpin(nest);
}

/*
 * What awa.enqueue_jobs(queue, jobs) does, the due jobs in C: the jobs not yet
 * due into awa.deferred_jobs (through enqueue_jobs), then the due ones into
 * the ring, one priority after another in priority order.
 */
void
awa_enqueue_jobs(text *queue, AwaNewJob *jobs, int njobs)
{
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	Oid			nsp = awa_namespace();
	AwaNewJob  *later = palloc(Max(njobs, 1) * sizeof(AwaNewJob));
	Job		   *due = palloc(Max(njobs, 1) * sizeof(Job));
	int			nlater = 0;
	int			p;
	int			i;

	awa_xid_space_adopt();
	awa_activity_note();
	for (i = 0; i < njobs; i++)
		if (jobs[i].run_at > now)
			later[nlater++] = jobs[i];
	if (nlater > 0)
		enqueue_deferred(nsp, queue, later, nlater);
	for (p = 0; p <= 9; p++)
	{
		int			ndue = 0;

		for (i = 0; i < njobs; i++)
		{
			if (jobs[i].run_at > now || jobs[i].priority != p)
				continue;
			due[ndue].job_id = jobs[i].job_id;
			due[ndue].values[0] = Int64GetDatum(jobs[i].job_id);
			due[ndue].values[1] = jobs[i].kind;
			due[ndue].values[2] = jobs[i].args;
			due[ndue].values[3] = Int32GetDatum(jobs[i].attempt);
			due[ndue].values[4] = Int32GetDatum(jobs[i].max_attempts);
			due[ndue].values[5] = TimestampTzGetDatum(jobs[i].created_at);
			memset(due[ndue].nulls, false, sizeof(due[ndue].nulls));
			ndue++;
		}
		if (ndue > 0)
			enqueue_due(nsp, queue, (int16) p, due, ndue);
	}
}

/* the next job id (nextval of awa.job_id_seq, its rights checked) */
int64
awa_next_job_id(void)
{
	Oid			seq = awa_relid(awa_namespace(), "job_id_seq");

	if (!OidIsValid(seq))
		elog(ERROR, "awa.job_id_seq does not exist");
	return nextval_internal(seq, true);
}

/*
 * awa.enqueue(queue text, kind text, args jsonb, priority int (0.9: smallint),
 *			   run_at timestamptz, max_attempts int, unique_key text,
 *			   unique_for interval, unique_states text[]) RETURNS bigint
 *
 * With a unique_key (or a unique_for or unique_states, which awa.unique_job
 * refuses without one), the id of the job that stands in the new one's way
 * is returned and nothing is written (sql-src/api/unique.sql).
 */
Datum
awa_enqueue(PG_FUNCTION_ARGS)
{
	Datum		v[9];
	bool		n[9];
	AwaNewJob	job;
	int			i;

	for (i = 0; i < 9; i++)
	{
		v[i] = i < PG_NARGS() ? PG_GETARG_DATUM(i) : (Datum) 0;
		n[i] = i < PG_NARGS() ? PG_ARGISNULL(i) : true;
	}
	v[3] = awa_priority_arg(fcinfo, 3);
	awa_check_job_datums(v, n);
	awa_queue_require(PG_GETARG_TEXT_PP(0), AWA_QUEUE_ENQUEUE);
	job.ord = 1;
	job.job_id = awa_next_job_id();
	if (!n[6] || !n[7] || !n[8])
	{
		int64		existing = awa_unique_job(PG_GETARG_TEXT_PP(0), &v[6], &n[6],
											  job.job_id);

		if (existing != job.job_id)
			PG_RETURN_INT64(existing);
	}
	job.kind = v[1];
	job.args = v[2];
	job.priority = DatumGetInt32(v[3]);
	job.run_at = DatumGetTimestampTz(v[4]);
	job.attempt = 1;
	job.max_attempts = DatumGetInt32(v[5]);
	job.created_at = GetCurrentTransactionStartTimestamp();
	job.error = (Datum) 0;
	awa_enqueue_jobs(PG_GETARG_TEXT_PP(0), &job, 1);
	PG_RETURN_INT64(job.job_id);
}
