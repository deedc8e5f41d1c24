/*-------------------------------------------------------------------------
 *
 * checks.h
 *	  The validation of the API's arguments (checks.c), with the rules and
 *	  messages of the PL/pgSQL checks.
 *
 * src/dataplane/checks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_CHECKS_H
#define AWA_CHECKS_H

#include "datatype/timestamp.h"
#include "fmgr.h"

extern const char *awa_isolation_name(void);
extern void awa_require_read_committed(const char *fn);
extern void awa_check_name(const char *what, text *value);
extern void awa_check_payload(const char *what, int64 bytes);
extern void awa_check_job_datums(const Datum *v, const bool *n);
extern Datum awa_priority_arg(FunctionCallInfo fcinfo, int argno);
extern int64 awa_interval_us(const Interval *iv);

#endif							/* AWA_CHECKS_H */
