/*-------------------------------------------------------------------------
 *
 * receipthints.h
 *	  Where this backend's claims wrote their receipts (receipthints.c).
 *
 * src/dataplane/receipthints.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_RECEIPTHINTS_H
#define AWA_RECEIPTHINTS_H

#include "storage/itemptr.h"

extern void awa_receipt_hint_put(Oid relid, int64 job_id, int64 run_lease,
								 const ItemPointerData *tid);
extern bool awa_receipt_hint_get(Oid relid, int64 job_id, int64 run_lease,
								 ItemPointerData *tid);

#endif							/* AWA_RECEIPTHINTS_H */
