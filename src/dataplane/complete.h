/*-------------------------------------------------------------------------
 *
 * complete.h
 *	  An attempt's open receipt and its closure (complete.c), shared with
 *	  fail and heartbeat (attempts.c).
 *
 * src/dataplane/complete.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_COMPLETE_H
#define AWA_COMPLETE_H

#include "utils/relcache.h"

#include "src/rel/scan.h"

/* an open receipt's columns (complete.c's receipt_cols) */
#define AWA_RECEIPT_COLS 14
typedef struct AwaReceipt
{
	Datum		values[AWA_RECEIPT_COLS];
	bool		nulls[AWA_RECEIPT_COLS];
} AwaReceipt;

extern bool awa_lock_open_receipt(int64 job_id, int64 run_lease, AwaReceipt *r);
extern void awa_receipts_read_end(void);
extern const AwaFreshRead *awa_receipts_fresh(void);
extern Datum awa_receipt_col(AwaReceipt *r, const char *name);
extern bool awa_receipt_col_is_null(AwaReceipt *r, const char *name);
extern void awa_close_attempts(Oid nsp, AwaReceipt *rs, int n, const char *outcome,
							   const char *state, Datum error);
extern void awa_close_attempt(Oid nsp, AwaReceipt *r, const char *outcome, const char *state,
							  Datum error);
extern void awa_closure_decode(char code, const char **outcome, const char **state);
extern void awa_insert_named(Relation rel, int n, const char *const *names, Datum *values,
							 bool *nulls);

#endif							/* AWA_COMPLETE_H */
