/*-------------------------------------------------------------------------
 *
 * awa_bgw.h
 *	  What every part of awa_bgw shares: the library's versions, its limits,
 *	  the names of its background workers and the three rings. No functions:
 *	  each module declares its own in its own header.
 *
 * src/awa_bgw.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_BGW_H
#define AWA_BGW_H

/*
 * The library's own version, as the semver it reports as its binary_version in
 * awa.runtime_instances: the newest extension version it ships (default_version in
 * awa_bgw.control; t/001 checks that they agree).
 */
#define AWA_BGW_BINARY_VERSION	"0.10.0"
/*
 * The extension versions this library maintains (src/worker/step.c,
 * extension_state): 0.7 (either authority), 0.8, 0.9 (the data plane of
 * snapshot windows) and 0.10 (the windows with the mark of their xid space).
 * Any other (0.6): needs_upgrade, to AWA_BGW_SCHEMA_VERSION_LATEST.
 */
#define AWA_BGW_SCHEMA_VERSION_LATEST "0.10"

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
