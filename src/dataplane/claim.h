/*-------------------------------------------------------------------------
 *
 * claim.h
 *	  The 0.9 claim in C (claim.c).
 *
 * src/dataplane/claim.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_CLAIM_H
#define AWA_CLAIM_H

extern void awa_require_read_committed(void);

#endif							/* AWA_CLAIM_H */
