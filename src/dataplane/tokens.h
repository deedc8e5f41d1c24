/*-------------------------------------------------------------------------
 *
 * tokens.h
 *	  Attempt tokens (tokens.c): the run_lease that names one claimed attempt.
 *
 * src/dataplane/tokens.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_TOKENS_H
#define AWA_TOKENS_H

extern int64 awa_new_lease_token(void);

#endif							/* AWA_TOKENS_H */
