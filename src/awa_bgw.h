/*-------------------------------------------------------------------------
 *
 * awa_bgw.h
 *	  What every part of awa_bgw shares: its limits, the names of its
 *	  background workers and the three rings. No functions: each module
 *	  declares its own in its own header. The library's version and the
 *	  extension versions it maintains are in src/worker/schema_version.h.
 *
 * src/awa_bgw.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_BGW_H
#define AWA_BGW_H

/* Most databases one cluster's launcher maintains at once. */
#define AWA_BGW_MAX_DATABASES	64

#define AWA_BGW_WORKER_TYPE		"awa_bgw worker"
#define AWA_BGW_LAUNCHER_TYPE	"awa_bgw launcher"

typedef enum AwaRing
{
	AWA_RING_QUEUE = 0,
	AWA_RING_LEASE,
	AWA_RING_CLAIM,
	AWA_RING_COUNT
} AwaRing;

/* A ring's name, as SQL spells it (the $1 of awa.rotate and awa.prune). */
static inline const char *
awa_ring_name(int ring)
{
	static const char *const names[AWA_RING_COUNT] = {"queue", "lease", "claim"};

	Assert(ring >= 0 && ring < AWA_RING_COUNT);
	return names[ring];
}

#endif							/* AWA_BGW_H */
