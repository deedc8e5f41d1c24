/*-------------------------------------------------------------------------
 *
 * receipthints.c
 *	  A backend's memory of where its claims wrote their receipts: the claim
 *	  child and the TID of each attempt's receipt, so that the completion,
 *	  failure or heartbeat of an attempt this backend claimed reads that
 *	  tuple first instead of building the child's BRIN bitmap
 *	  (docs/storage.md A.22).
 *
 * A hint only orders the pages a lookup reads: the row at the TID is taken
 * only when it is a row of the attempt (its job_id and run_lease compared)
 * that the lookup's snapshot sees, as any row the bitmap's pages give is;
 * otherwise the lookup goes on as it would without the hint. So a hint gone
 * stale (the claim rolled back, the child truncated by a prune, the slot
 * reused) costs one tuple's read and is never wrong. An attempt has one
 * receipt in a child, so the row found first is the row.
 *
 * The memory is direct-mapped by attempt, AWA_RECEIPT_HINTS entries in
 * TopMemoryContext; a claim's receipt takes its entry's place from an older
 * one. A session that claims and completes in turn (the usual consumer)
 * finds each of its attempts there; one that completes another session's
 * claims finds none, and reads as before.
 *
 * src/dataplane/receipthints.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/memutils.h"

#include "src/dataplane/receipthints.h"

/* entries kept, a power of two (32 bytes each) */
#define AWA_RECEIPT_HINTS 1024

typedef struct ReceiptHint
{
	int64		job_id;
	int64		run_lease;
	Oid			relid;			/* the claim child; InvalidOid: empty */
	ItemPointerData tid;
} ReceiptHint;

static ReceiptHint *hints = NULL;

/* the entry of an attempt */
static ReceiptHint *
hint_entry(int64 job_id, int64 run_lease)
{
	uint64		h = hash_bytes_uint32((uint32) job_id) ^ (uint64) run_lease;

	return &hints[h & (AWA_RECEIPT_HINTS - 1)];
}

/* A claim wrote the receipt of (job_id, run_lease) at tid of relid. */
void
awa_receipt_hint_put(Oid relid, int64 job_id, int64 run_lease, const ItemPointerData *tid)
{
	ReceiptHint *e;

	if (hints == NULL)
		hints = MemoryContextAllocZero(TopMemoryContext,
									   AWA_RECEIPT_HINTS * sizeof(ReceiptHint));
	e = hint_entry(job_id, run_lease);
	e->job_id = job_id;
	e->run_lease = run_lease;
	e->relid = relid;
	e->tid = *tid;
}

/* Whether a claim of this backend wrote the attempt's receipt in relid: its TID. */
bool
awa_receipt_hint_get(Oid relid, int64 job_id, int64 run_lease, ItemPointerData *tid)
{
	ReceiptHint *e;

	if (hints == NULL)
		return false;
	e = hint_entry(job_id, run_lease);
	if (e->relid != relid || e->job_id != job_id || e->run_lease != run_lease)
		return false;
	*tid = e->tid;
	return true;
}
