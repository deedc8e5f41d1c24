/*-------------------------------------------------------------------------
 *
 * schema_version.h
 *	  The library's version, and the extension versions it maintains with
 *	  what each has (schema_version.c): the one place that knows them.
 *
 * src/worker/schema_version.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_SCHEMA_VERSION_H
#define AWA_SCHEMA_VERSION_H

/*
 * The library's own version, as the semver it reports as its binary_version in
 * awa.runtime_instances: the newest extension version it ships (default_version in
 * awa_bgw.control; t/001 checks that they agree).
 */
#define AWA_BGW_BINARY_VERSION	"0.10.0"

/* One extension version this library maintains: an entry of its table. */
typedef struct AwaSchemaVersion
{
	const char *version;		/* extversion, as pg_extension holds it */
} AwaSchemaVersion;

/*
 * What a caller (the worker's steps) may need of the version installed; each
 * came with one version and stays in every later one (schema_version.c).
 */
typedef enum AwaSchemaFeature
{
	AWA_FEATURE_NONE = 0,		/* asks for nothing: every version has it */
	AWA_FEATURE_SCHEDULES,		/* periodic jobs: awa.fire_due_schedules */
	AWA_FEATURE_UNIQUE_KEYS,	/* the keys of unique jobs: awa.purge_unique_keys */
	AWA_FEATURE_PRUNE_HOLDERS,	/* who holds a blocked prune's locks:
								 * awa.ring_slot_lock_holders */
	AWA_FEATURE_XID_SPACE,		/* rows marked with their cluster's xid space:
								 * awa_internal.xid_space_settle */
	AWA_FEATURE_QUIET_IDLE,		/* a worker's liveness read from shared memory,
								 * promote_deferred's next_run_at: the worker
								 * sleeps while the database is idle */
	AWA_FEATURE_INTERNAL_SCHEMA,	/* the internals in schema awa_internal (a
									 * member of the extension), not awa:
									 * awa_internal.runtime_heartbeat */
	AWA_FEATURE_RINGS_BY_NEED,	/* awa_internal.rotate_when_due: a ring that
								 * turns by need (awa_bgw.rotate_fill) */
	AWA_FEATURE_JOB_ID_BRIN,	/* ready entries and receipts found by job
								 * id through a BRIN index the worker
								 * summarizes:
								 * awa_internal.summarize_job_id_ranges */
	AWA_NFEATURES
} AwaSchemaFeature;

extern const AwaSchemaVersion *awa_schema_version(const char *version);
extern const char *awa_schema_version_oldest(void);
extern const char *awa_schema_version_latest(void);
extern bool awa_schema_has(const AwaSchemaVersion *schema, AwaSchemaFeature feature);

#endif							/* AWA_SCHEMA_VERSION_H */
