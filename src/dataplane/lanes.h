/*-------------------------------------------------------------------------
 *
 * lanes.h
 *	  The registration of a (queue, priority)'s lanes (lanes.c).
 *
 * src/dataplane/lanes.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_LANES_H
#define AWA_LANES_H

extern void awa_register_lanes(Oid nsp, text *queue, int16 priority);

#endif							/* AWA_LANES_H */
