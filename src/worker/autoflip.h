/*-------------------------------------------------------------------------
 *
 * autoflip.h
 *	  The leader's auto-flip of the ring cursor authority.
 *
 * src/worker/autoflip.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_AUTOFLIP_H
#define AWA_AUTOFLIP_H

#include "datatype/timestamp.h"

extern void awa_auto_flip_tick(TimestampTz now);
extern void awa_auto_flip_reset(const char *verdict);

#endif							/* AWA_AUTOFLIP_H */
