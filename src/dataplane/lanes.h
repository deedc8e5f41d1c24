/*-------------------------------------------------------------------------
 *
 * lanes.h
 *	  The registration of a (queue, priority)'s lanes, and the producer's
 *	  cache of committed lanes (lanes.c).
 *
 * src/dataplane/lanes.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_LANES_H
#define AWA_LANES_H

extern void awa_register_lanes(Oid nsp, text *queue, int16 priority);
extern int32 awa_lane_cache_get(Oid nsp, text *queue, int16 priority, int32 shard);
extern void awa_lane_cache_put(Oid nsp, Oid registry, text *queue, int16 priority,
							   int32 shard, int32 lane);

#endif							/* AWA_LANES_H */
