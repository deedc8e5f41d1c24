/*-------------------------------------------------------------------------
 *
 * windows.c
 *	  The 0.9 claim order: snapshot windows (docs/storage.md §A.3).
 *
 * Enqueue takes no lock; each ready entry records the top-level xid of its
 * transaction (txid). A lane's position is its newest claim receipt that
 * carries a window (win_lo, win_hi: two pg_snapshots) and, in its own txid
 * and lane_seq, the last entry taken from that window. The window W(lo, hi)
 * holds the lane's committed entries visible in hi and not in lo (lo NULL:
 * nothing is visible); entries are taken in (txid, lane_seq) order. When a
 * window is used up, the next one is W(hi, S), S being the claiming
 * statement's snapshot. A window is read per ready child with ordered index
 * scans on (lane_id, txid, lane_seq): one per xid of xip(lo), and the range
 * [xmax(lo), xmax(hi)).
 *
 *	awa.window_position(lane, claim cursor)	the lane's position
 *	awa.window_claimables(lane, limit, claim cursor, queue slots)
 *		what a claim of the lane takes, in order, the window to record on the
 *		last row
 *	awa.window_has_work(lane, claim cursor, queue slots)
 *		the same question with limit 1, as a hint read without the lane lock
 *	awa.window_available(lane, claim cursor, queue slots)
 *		how many a claim could take, counted without keeping any
 *
 * The callers of window_claimables hold the lane's claim lock, and their
 * statement took its snapshot after it.
 *
 * A window can have entries in any ready child (a producer holds no lock, so
 * a transaction that started long ago writes into the slot current at its
 * insert), so every child is read; the ACCESS SHARE locks of the children that
 * gave nothing are released at once, so that, as in 0.7, a transaction left
 * open after a claim holds only the children it took from (DESIGN §3.7).
 *
 * src/dataplane/windows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/attmap.h"
#include "access/htup_details.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"
#include "utils/xid8.h"

#include "src/compat.h"
#include "src/dataplane/claimkey.h"
#include "src/dataplane/lanemarks.h"
#include "src/dataplane/probes.h"
#include "src/dataplane/windows.h"
#include "src/dataplane/xidspace.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_window_position);
PG_FUNCTION_INFO_V1(awa_window_claimables);
PG_FUNCTION_INFO_V1(awa_window_has_work);
PG_FUNCTION_INFO_V1(awa_window_available);

/* The layout of a pg_snapshot datum (utils/adt/xid8funcs.c); xip is sorted. */
typedef struct Snap
{
	int32		vl_len_;
	uint32		nxip;
	FullTransactionId xmin;
	FullTransactionId xmax;
	FullTransactionId xip[FLEXIBLE_ARRAY_MEMBER];
} Snap;

/* A lane's position: the window being consumed and the last entry taken. */
typedef struct Position
{
	bool		found;
	Datum		lo;				/* pg_snapshot, or 0 for none (nothing visible) */
	Datum		hi;
	FullTransactionId txid;
	int64		lane_seq;
	int64		claim_seq;
} Position;

/* One entry a window scan found (probes.h). */
typedef WindowEntry Cand;

/* The relations one read of a child opened (and locked). */
typedef struct Opened
{
	int			child;
	int			nrels;
	Oid			rels[4];
} Opened;

/* What one window scan of a lane collects. */
typedef struct WinScan
{
	int32		lane_id;
	int			want;			/* stop once this many are found in a child */
	TupleDesc	out;			/* NULL: keys only */
	bool		counting;		/* keep nothing, count in counted */
	int64		counted;
	List	   *cands;
	List	   *opened;			/* of Opened */
	/* the ready child being read */
	int			child;
	Opened	   *o;
	Oid			nsp;
	ChildScan	rs;
	ChildScan	ds;				/* its done child, opened at the first candidate */
	bool		ds_open;
	AttrMap    *map;
	AttrNumber	a_txid;
	AttrNumber	a_seq;
	AttrNumber	a_lease;
	bool		low;			/* its claim-order index is on xid_lo(txid) */
	int			found_here;
	/* once want entries are kept: the largest kept key; a child stops past it */
	bool		bounded;
	uint64		bound_txid;
	int64		bound_seq;
	/* the floor of the ready children's txid bounds (lanemarks.c), read once */
	uint64		space_floor;
} WinScan;

#define U64(x) U64FromFullTransactionId(x)

static bool
snap_visible(const Snap *s, uint64 x)
{
	uint32		lo = 0;
	uint32		hi;

	if (s == NULL)
		return false;
	if (x < U64(s->xmin))
		return true;
	if (x >= U64(s->xmax))
		return false;
	hi = s->nxip;
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;
		uint64		v = U64(s->xip[mid]);

		if (v == x)
			return false;
		if (v < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return true;
}

static Snap *
snap_of(Datum d)
{
	return d == (Datum) 0 ? NULL : (Snap *) DatumGetPointer(d);
}

/*
 * The statement's snapshot as a pg_snapshot, with this transaction's own xid
 * counted as running: a snapshot never lists its own transaction, so its
 * entries would read as visible in it; they must fall in the first window
 * opened after this transaction commits, not in this one.
 */
static Datum
current_window_hi(void)
{
	Snap	   *s = (Snap *) DatumGetPointer(DirectFunctionCall1(pg_current_snapshot,
															   (Datum) 0));
	FullTransactionId me = GetTopFullTransactionIdIfAny();
	uint64		x = U64(me);
	Snap	   *t;
	uint32		i;
	uint32		j = 0;

	if (!FullTransactionIdIsValid(me) || !snap_visible(s, x))
		return PointerGetDatum(s);
	t = palloc(offsetof(Snap, xip) + (s->nxip + 1) * sizeof(FullTransactionId));
	SET_VARSIZE(t, offsetof(Snap, xip) + (s->nxip + 1) * sizeof(FullTransactionId));
	t->nxip = s->nxip + 1;
	t->xmin = U64(s->xmin) > x ? me : s->xmin;
	t->xmax = s->xmax;
	for (i = 0; i < s->nxip && U64(s->xip[i]) < x; i++)
		t->xip[j++] = s->xip[i];
	t->xip[j++] = me;
	for (; i < s->nxip; i++)
		t->xip[j++] = s->xip[i];
	return PointerGetDatum(t);
}

/*
 * The lane's position: claim children from the current slot backwards, each
 * read backwards on (lane_id, claim_seq), the first receipt with a window;
 * under the active snapshot, or as the fresh read given (not NULL).
 */
static void
window_position(Oid nsp, int32 lane_id, int32 claim_slot, int64 claim_gen, int32 nslots,
				const AwaFreshRead *fresh, Position *p)
{
	int64		k;

	memset(p, 0, sizeof(Position));
	for (k = 0; !p->found && k <= Min(claim_gen, (int64) nslots - 1); k++)
	{
		Relation	heap = awa_open_table(nsp, "lease_claims",
										  awa_ring_slot(claim_slot, k, nslots));
		AttrNumber	a_lo = awa_column_number(heap, "win_lo");
		AttrNumber	a_hi = awa_column_number(heap, "win_hi");
		ChildScan	cs;
		ScanKeyData key;

		awa_child_scan_begin_fresh(&cs, heap, awa_open_position_index(heap), 1, fresh);
		ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(lane_id));
		index_rescan(cs.scan, &key, 1, NULL, 0);
		while (awa_child_scan_next(&cs, BackwardScanDirection))
		{
			bool		isnull;
			Datum		hi = slot_getattr(cs.slot, a_hi, &isnull);
			Datum		lo;

			if (isnull)
				continue;
			p->hi = PointerGetDatum(PG_DETOAST_DATUM_COPY(hi));
			lo = slot_getattr(cs.slot, a_lo, &isnull);
			p->lo = isnull ? (Datum) 0 : PointerGetDatum(PG_DETOAST_DATUM_COPY(lo));
			p->txid = DatumGetFullTransactionId(
				slot_getattr(cs.slot, awa_column_number(heap, "txid"), &isnull));
			p->lane_seq = awa_get_int64(cs.slot, awa_column_number(heap, "lane_seq"),
										&isnull);
			p->claim_seq = awa_get_int64(cs.slot, awa_column_number(heap, "claim_seq"),
										 &isnull);
			p->found = true;
			break;
		}
		awa_child_scan_end(&cs);
	}
}

/* out's columns found by name in in (0: not there, read as NULL) */
static AttrMap *
attrmap_by_name(TupleDesc in, TupleDesc out)
{
	AttrMap    *map = make_attrmap(out->natts);
	int			i;
	int			j;

	for (i = 0; i < out->natts; i++)
	{
		Form_pg_attribute o = TupleDescAttr(out, i);

		for (j = 0; j < in->natts; j++)
		{
			Form_pg_attribute a = TupleDescAttr(in, j);

			if (!a->attisdropped && strcmp(NameStr(a->attname), NameStr(o->attname)) == 0)
			{
				map->attnums[i] = a->attnum;
				break;
			}
		}
	}
	return map;
}

/* keeps the entry in the scan's slot (count only: just counts it) */
static void
collect(WinScan *w, uint64 txid, int64 seq)
{
	Cand	   *c;
	int			i;

	w->found_here++;
	if (w->counting)
	{
		w->counted++;
		return;
	}
	c = palloc0(sizeof(Cand));
	c->txid = txid;
	c->seq = seq;
	c->child = w->child;
	if (w->out != NULL)
	{
		TupleTableSlot *slot = w->rs.slot;

		slot_getallattrs(slot);
		c->values = palloc0(w->out->natts * sizeof(Datum));
		c->nulls = palloc(w->out->natts * sizeof(bool));
		for (i = 0; i < w->out->natts; i++)
		{
			AttrNumber	in = w->map->attnums[i];
			Form_pg_attribute att = TupleDescAttr(w->out, i);

			c->nulls[i] = in == 0 || slot->tts_isnull[in - 1];
			if (!c->nulls[i])
				c->values[i] = datumCopy(slot->tts_values[in - 1], att->attbyval,
										 att->attlen);
		}
	}
	w->cands = lappend(w->cands, c);
}

/* whether the entry has a cancel tombstone in its slot's done child */
static bool
entry_tombstoned(WinScan *w, int64 seq)
{
	if (!w->ds_open)
	{
		Relation	done = awa_open_table(w->nsp, "done_entries", w->child);

		w->a_lease = awa_column_number(done, "run_lease");
		awa_child_scan_begin(&w->ds, done, awa_open_tombstone_index(done), 2);
		w->o->rels[w->o->nrels++] = RelationGetRelid(done);
		w->o->rels[w->o->nrels++] = RelationGetRelid(w->ds.index);
		w->ds_open = true;
	}
	return awa_tombstoned(&w->ds, w->a_lease, w->lane_id, seq);
}

/* whether (txid, seq) sorts after the largest entry the scan keeps */
static bool
past_bound(WinScan *w, uint64 txid, int64 seq)
{
	return w->bounded &&
		(txid > w->bound_txid || (txid == w->bound_txid && seq > w->bound_seq));
}

/*
 * Reads the lane's entries of one span of xids (claimkey.c; and, when the
 * span is one xid and seq_after >= 0, lane_seq > seq_after) that are visible
 * in hi and not tombstoned, in index order, until the child has given
 * w->want. The index may return rows of other epochs: each row's txid is
 * tested against the span first. A span that is not ordered (whole epochs
 * read in one pass, claimkey.c) is read to its end: its rows are sorted with
 * the others by keep_best. (Always four keys: a rescan takes as many as the
 * scan was begun with.)
 */
static void
scan_one_span(WinScan *w, const Snap *hi, const AwaXidSpan *span, int64 seq_after)
{
	ScanKeyData keys[4];

	awa_claim_order_span_keys(keys, w->low, w->lane_id, span, seq_after);
	index_rescan(w->rs.scan, keys, 4, NULL, 0);
	while ((w->found_here < w->want || !span->ordered) &&
		   index_getnext_slot(w->rs.scan, ForwardScanDirection, w->rs.slot))
	{
		bool		isnull;
		uint64		x = U64(DatumGetFullTransactionId(slot_getattr(w->rs.slot, w->a_txid,
																  &isnull)));
		int64		seq = awa_get_int64(w->rs.slot, w->a_seq, &isnull);

		if (x < span->from || x >= span->to)
			continue;
		if (past_bound(w, x, seq))
		{
			if (!span->ordered)
				continue;
			w->found_here = w->want;	/* the rest of this child is larger still */
			break;
		}
		if (!snap_visible(hi, x) || entry_tombstoned(w, seq))
			continue;
		collect(w, x, seq);
	}
}

/* The same for the xids [from, to), span by span in increasing order. */
static void
scan_span(WinScan *w, const Snap *hi, uint64 from, uint64 to, int64 seq_after)
{
	AwaXidSpan	spans[AWA_MAX_XID_SPANS];
	int			n = awa_xid_spans(from, to, w->low, spans);
	int			i;

	for (i = 0; i < n; i++)
	{
		if (w->found_here >= w->want || past_bound(w, spans[i].from, -1))
			return;
		scan_one_span(w, hi, &spans[i], seq_after);
	}
}

/*
 * The entries of W(lo, hi) in one ready child after (after_txid, after_seq)
 * (has_after false: from the window's start): the xids of xip(lo), each
 * alone, then the range [xmax(lo), xmax(hi)).
 */
static void
scan_child_window(WinScan *w, const Snap *lo, const Snap *hi, bool has_after,
				  uint64 after_txid, int64 after_seq)
{
	uint64		start = lo ? U64(lo->xmax) : 0;	/* 0: entries from before 0.9 */
	uint32		i;

	if (lo != NULL)
		for (i = 0; i < lo->nxip; i++)
		{
			uint64		x = U64(lo->xip[i]);

			if ((has_after && x < after_txid) || !snap_visible(hi, x))
				continue;
			scan_span(w, hi, x, x + 1, has_after && x == after_txid ? after_seq : -1);
		}
	if (has_after && after_txid >= start)
	{
		scan_span(w, hi, after_txid, after_txid + 1, after_seq);
		start = after_txid + 1;
	}
	scan_span(w, hi, start, U64(hi->xmax), -1);
}

static int
cand_cmp(const ListCell *a, const ListCell *b)
{
	const Cand *x = lfirst(a);
	const Cand *y = lfirst(b);

	if (x->txid != y->txid)
		return x->txid < y->txid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

/*
 * Keeps the scan's want smallest entries, in order; once there are that many,
 * the largest of them bounds the reading of the next children.
 */
static void
keep_best(WinScan *w)
{
	Cand	   *last;

	list_sort(w->cands, cand_cmp);
	w->cands = list_truncate(w->cands, w->want);
	if (list_length(w->cands) < w->want)
		return;
	last = llast(w->cands);
	w->bounded = true;
	w->bound_txid = last->txid;
	w->bound_seq = last->seq;
}

/*
 * Whether to skip a ready child as empty: it has no block (a prune's TRUNCATE
 * gave it a new, empty file). The size is asked of the kernel (an lseek)
 * unless this backend has seen this very file before, and then:
 * - with a block: it is read without asking (if it has become empty since,
 *   by VACUUM cutting off the pages of rolled-back entries, the read finds
 *   nothing);
 * - empty, and the child's bound (src/dataplane/lanemarks.c, read after the
 *   scan's snapshot was taken) is still the one read then: it is still empty
 *   of any entry this snapshot may see. An empty answer is kept only when that
 *   bound was below the xmin of the active snapshot, taken before the lseek,
 *   so no transaction with a txid at or below it could still write; any other
 *   writer raises the bound above it before its commit (A.12), and a snapshot
 *   that sees it committed then reads another bound, and asks again.
 * At 8 lanes and 16 queue slots, the kernel was asked a dozen times a claim
 * (issue 33, CPU per job).
 */
#define AWA_MAX_READY_SLOTS 64

/*
 * The xmin of the active snapshot as a full xid; 0 (below every bound) when
 * there is none or it has no normal xmin (SnapshotAny). A snapshot's xmin is
 * within 2^31 xids before the next xid.
 */
static uint64
active_xmin(void)
{
	FullTransactionId next;
	TransactionId xmin;

	if (!ActiveSnapshotSet())
		return 0;
	xmin = GetActiveSnapshot()->xmin;
	if (!TransactionIdIsNormal(xmin))
		return 0;
	next = ReadNextFullTransactionId();
	return U64FromFullTransactionId(next) - (uint32) (XidFromFullTransactionId(next) - xmin);
}

typedef struct SeenChild
{
	Oid			rel;
	Oid			file;
	bool		empty;
	uint64		bound;			/* when empty: the bound that keeps it so */
} SeenChild;

static bool
child_empty(Relation ready, int slot, uint64 bound)
{
	static SeenChild seen[AWA_MAX_READY_SLOTS];
	SeenChild  *c = slot >= 0 && slot < AWA_MAX_READY_SLOTS ? &seen[slot] : NULL;
	bool		empty;

	if (c != NULL && c->rel == RelationGetRelid(ready) &&
		c->file == awa_relation_file_number(ready) &&
		(!c->empty || c->bound == bound))
		return c->empty;
	empty = RelationGetNumberOfBlocks(ready) == 0;
	if (c == NULL)
		return empty;
	c->rel = InvalidOid;
	if (!empty || bound < active_xmin())
	{
		c->rel = RelationGetRelid(ready);
		c->file = awa_relation_file_number(ready);
		c->empty = empty;
		c->bound = bound;
	}
	return empty;
}

/*
 * W(lo, hi) after the position (if given) over every ready child that may
 * hold one of its entries; a keys-only scan that does not count (w->out NULL,
 * the hint) stops at the first child that has one.
 *
 * An entry of W(lo, hi) is not visible in lo, so its txid is at least
 * xmin(lo): a child whose txid bound (src/dataplane/lanemarks.c, read after this
 * statement's snapshot was taken) is below that has none, and is not opened.
 * The floor of the bounds (w->space_floor) is read once per claim of a lane,
 * with a position or not, so that a database's first claim takes it and the
 * windows after it can skip.
 */
static void
scan_window(WinScan *w, Oid nsp, int32 queue_slots, const Snap *lo, const Snap *hi,
			bool has_after, uint64 after_txid, int64 after_seq)
{
	int			s;

	w->nsp = nsp;
	for (s = 0; s < queue_slots && (w->out != NULL || w->counting || w->cands == NIL); s++)
	{
		Relation	ready;
		Opened	   *o;
		uint64		bound = awa_ready_child_bound(s, w->space_floor);

		if (lo != NULL && bound < U64(lo->xmin))
			continue;
		ready = awa_open_table(nsp, "ready_entries", s);
		o = palloc0(sizeof(Opened));

		o->child = s;
		o->rels[o->nrels++] = RelationGetRelid(ready);
		w->opened = lappend(w->opened, o);
		/* a pruned (truncated) slot has no block: nothing to read */
		if (child_empty(ready, s, bound))
		{
			table_close(ready, NoLock);
			continue;
		}
		w->a_txid = awa_column_number(ready, "txid");
		w->a_seq = awa_column_number(ready, "lane_seq");
		w->map = w->out ? attrmap_by_name(RelationGetDescr(ready), w->out) : NULL;
		w->found_here = 0;
		w->child = s;
		w->o = o;
		w->ds_open = false;
		awa_child_scan_begin(&w->rs, ready, awa_open_claim_order_index(ready, &w->low), 4);
		o->rels[o->nrels++] = RelationGetRelid(w->rs.index);
		scan_child_window(w, lo, hi, has_after, after_txid, after_seq);
		if (w->ds_open)
			awa_child_scan_end(&w->ds);
		awa_child_scan_end(&w->rs);
		if (w->map)
			free_attrmap(w->map);
		keep_best(w);
	}
}


/* Releases the locks of every child read that none of taken comes from. */
static void
release_unused(List *opened, List *taken)
{
	ListCell   *lc;

	foreach(lc, opened)
	{
		Opened	   *o = lfirst(lc);
		ListCell   *tc;
		bool		used = false;
		int			i;

		foreach(tc, taken)
			used = used || ((Cand *) lfirst(tc))->child == o->child;
		if (used)
			continue;
		for (i = 0; i < o->nrels; i++)
			UnlockRelationOid(o->rels[i], AccessShareLock);
	}
}

/*
 * Whether the lane's entry (txid, lane_seq) is unclaimed, as
 * awa.entry_unclaimed asks it, read as the fresh read given (the claim
 * cursor and the lane's position): in no earlier window of the lane, and not
 * at or before its position in the current one. AWA_UNCLAIMED_UNKNOWN when
 * the claim ring has no cursor (the SQL's lane_window then has no row).
 */
AwaUnclaimed
awa_entry_unclaimed_fresh(Oid nsp, int32 lane_id, uint64 txid, int64 lane_seq,
						  const AwaFreshRead *fresh)
{
	int32		claim_slot;
	int64		claim_gen;
	Position	p;

	if (!awa_ring_cursor_read_as(nsp, "claim", fresh, &claim_slot, &claim_gen))
		return AWA_UNCLAIMED_UNKNOWN;
	awa_check_slots(claim_slot, claim_gen, AWA_CLAIM_SLOTS);
	window_position(nsp, lane_id, claim_slot, claim_gen, AWA_CLAIM_SLOTS, fresh, &p);
	if (!p.found)
		return AWA_UNCLAIMED_YES;
	if (snap_visible(snap_of(p.lo), txid))
		return AWA_UNCLAIMED_NO;
	if (snap_visible(snap_of(p.hi), txid) &&
		(txid < U64(p.txid) || (txid == U64(p.txid) && lane_seq <= p.lane_seq)))
		return AWA_UNCLAIMED_NO;
	return AWA_UNCLAIMED_YES;
}

/*
 * What a claim of the lane takes, up to limit, in order: the rest of the
 * position's window, then W(position's hi, S). *win_lo and *win_hi get the
 * window of the last entry taken.
 */
static List *
lane_takes(int32 lane_id, int limit, int32 claim_slot, int64 claim_gen, int32 claim_slots,
		   int32 queue_slots, TupleDesc out, Datum *win_lo, Datum *win_hi, int64 *counted)
{
	Oid			nsp = awa_namespace();
	Position	p;
	WinScan		w;
	List	   *taken = NIL;

	awa_check_slots(claim_slot, claim_gen, claim_slots);
	awa_check_slots(0, 0, queue_slots);
	window_position(nsp, lane_id, claim_slot, claim_gen, claim_slots, NULL, &p);
	memset(&w, 0, sizeof(w));
	w.lane_id = lane_id;
	w.want = limit;
	w.out = out;
	w.counting = counted != NULL;
	w.space_floor = awa_ready_space_bound();
	if (p.found)
	{
		scan_window(&w, nsp, queue_slots, snap_of(p.lo), snap_of(p.hi), true,
					U64(p.txid), p.lane_seq);
		taken = w.cands;		/* the smallest, in order (keep_best) */
		*win_lo = p.lo;
		*win_hi = p.hi;
	}
	if (list_length(taken) < limit)
	{
		Datum		s = current_window_hi();

		w.cands = NIL;
		w.bounded = false;
		w.want = limit - list_length(taken);
		scan_window(&w, nsp, queue_slots, p.found ? snap_of(p.hi) : NULL, snap_of(s),
					false, 0, 0);
		if (w.cands != NIL)
		{
			*win_lo = p.found ? p.hi : (Datum) 0;
			*win_hi = s;
		}
		taken = list_concat(taken, w.cands);
	}
	release_unused(w.opened, taken);
	if (counted != NULL)
		*counted = w.counted;
	return taken;
}

/* lane_takes for a claim (src/dataplane/claim.c): entries in out's layout */
List *
awa_window_take(int32 lane_id, int limit, int32 claim_slot, int64 claim_gen,
				int32 claim_slots, int32 queue_slots, TupleDesc out, Datum *win_lo,
				Datum *win_hi)
{
	return lane_takes(lane_id, limit, claim_slot, claim_gen, claim_slots, queue_slots, out,
					  win_lo, win_hi, NULL);
}

/* the number (from 0) of the result column name; -1 when there is none */
static int
result_column(TupleDesc desc, const char *name)
{
	int			i;

	for (i = 0; i < desc->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), name) == 0)
			return i;
	return -1;
}

/*
 * A row's enqueued_at as its readers see it: an entry of 0.10 written within
 * 1 ms of its job's created_at has it NULL (src/dataplane/enqueue.c), and
 * reads created_at instead, as coalesce(enqueued_at, created_at) does in SQL.
 */
static void
entered_at(Cand *c, int a_enqueued, int a_created)
{
	if (a_enqueued < 0 || a_created < 0 || !c->nulls[a_enqueued])
		return;
	c->values[a_enqueued] = c->values[a_created];
	c->nulls[a_enqueued] = c->nulls[a_created];
}

/*
 * window_claimables(lane_id, limit, claim_slot, claim_gen, claim_slots,
 *					 queue_slots) RETURNS TABLE (ready_entries' columns...,
 *					 win_lo pg_snapshot, win_hi pg_snapshot)
 *
 * The window columns are set on the last row only: the receipt that records
 * the lane's new position. The entries' columns are copied by name (a 0.9
 * catalog's result has ready_generation, 0.10's not), enqueued_at read as
 * its readers read it.
 */
Datum
awa_window_claimables(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32		limit = PG_GETARG_INT32(1);
	Datum		lo = (Datum) 0;
	Datum		hi = (Datum) 0;
	List	   *taken;
	ListCell   *lc;
	int			a_lo;
	int			a_hi;
	int			a_enqueued;
	int			a_created;

	awa_xid_space_require();
	InitMaterializedSRF(fcinfo, 0);
	a_lo = result_column(rsinfo->setDesc, "win_lo");
	a_hi = result_column(rsinfo->setDesc, "win_hi");
	a_enqueued = result_column(rsinfo->setDesc, "enqueued_at");
	a_created = result_column(rsinfo->setDesc, "created_at");
	if (a_lo < 0 || a_hi < 0)
		elog(ERROR, "window_claimables must return win_lo and win_hi");
	if (limit < 1)
		return (Datum) 0;
	taken = lane_takes(PG_GETARG_INT32(0), limit, PG_GETARG_INT32(2), PG_GETARG_INT64(3),
					   PG_GETARG_INT32(4), PG_GETARG_INT32(5), rsinfo->setDesc, &lo, &hi,
					   NULL);
	foreach(lc, taken)
	{
		Cand	   *c = lfirst(lc);

		if (lnext(taken, lc) == NULL)
		{
			c->values[a_lo] = lo;
			c->nulls[a_lo] = lo == (Datum) 0;
			c->values[a_hi] = hi;
			c->nulls[a_hi] = false;
		}
		entered_at(c, a_enqueued, a_created);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, c->values, c->nulls);
	}
	return (Datum) 0;
}

/*
 * window_has_work(lane_id, claim_slot, claim_gen, claim_slots, queue_slots)
 * RETURNS boolean: whether a claim of the lane would take anything now. A
 * hint when read without the lane's claim lock.
 */
Datum
awa_window_has_work(PG_FUNCTION_ARGS)
{
	Datum		lo;
	Datum		hi;

	awa_xid_space_require();
	PG_RETURN_BOOL(lane_takes(PG_GETARG_INT32(0), 1, PG_GETARG_INT32(1), PG_GETARG_INT64(2),
							  PG_GETARG_INT32(3), PG_GETARG_INT32(4), NULL, &lo, &hi,
							  NULL) != NIL);
}

/*
 * window_available(lane_id, claim_slot, claim_gen, claim_slots, queue_slots)
 * RETURNS bigint: the lane's unclaimed, uncancelled committed entries (what a
 * claim with no limit would take), counted without keeping one, so that a
 * backlog of any size costs no memory.
 */
Datum
awa_window_available(PG_FUNCTION_ARGS)
{
	Datum		lo;
	Datum		hi;
	int64		n = 0;

	awa_xid_space_require();
	(void) lane_takes(PG_GETARG_INT32(0), PG_INT32_MAX, PG_GETARG_INT32(1), PG_GETARG_INT64(2),
					  PG_GETARG_INT32(3), PG_GETARG_INT32(4), NULL, &lo, &hi, &n);
	PG_RETURN_INT64(n);
}

/*
 * window_position(lane_id, claim_slot, claim_gen, claim_slots,
 *				   OUT win_lo, OUT win_hi, OUT txid, OUT lane_seq, OUT claim_seq):
 * all NULL when the lane has no position (never claimed from in 0.9).
 */
Datum
awa_window_position(PG_FUNCTION_ARGS)
{
	int32		claim_slot = PG_GETARG_INT32(1);
	int64		claim_gen = PG_GETARG_INT64(2);
	int32		nslots = PG_GETARG_INT32(3);
	TupleDesc	desc;
	Position	p;
	Datum		values[5];
	bool		nulls[5];

	awa_xid_space_require();
	awa_check_slots(claim_slot, claim_gen, nslots);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	desc = BlessTupleDesc(desc);
	window_position(awa_namespace(), PG_GETARG_INT32(0), claim_slot, claim_gen, nslots, NULL,
					&p);
	values[0] = p.lo;
	values[1] = p.hi;
	values[2] = FullTransactionIdGetDatum(p.txid);
	values[3] = Int64GetDatum(p.lane_seq);
	values[4] = Int64GetDatum(p.claim_seq);
	nulls[0] = !p.found || p.lo == (Datum) 0;
	nulls[1] = nulls[2] = nulls[3] = nulls[4] = !p.found;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
