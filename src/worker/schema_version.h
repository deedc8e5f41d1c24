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

/* One extension version this library maintains, and what it has. */
typedef struct AwaSchemaVersion
{
	const char *version;		/* extversion, as pg_extension holds it */
	bool		windows;		/* the data plane of snapshot windows (lanes,
								 * the C hot paths) */
	bool		schedules;		/* periodic jobs: awa.fire_due_schedules */
	bool		unique_keys;	/* the keys of unique jobs: awa.purge_unique_keys */
	bool		prune_holders;	/* who holds a blocked prune's locks:
								 * awa.ring_slot_lock_holders */
	bool		xid_space;		/* rows marked with their cluster's xid space:
								 * awa.xid_space_settle */
} AwaSchemaVersion;

/* A column of the table, named: what a caller asks for (the worker's steps). */
typedef enum AwaSchemaFeature
{
	AWA_FEATURE_NONE = 0,		/* asks for nothing: every version has it */
	AWA_FEATURE_WINDOWS,
	AWA_FEATURE_SCHEDULES,
	AWA_FEATURE_UNIQUE_KEYS,
	AWA_FEATURE_PRUNE_HOLDERS,
	AWA_FEATURE_XID_SPACE
} AwaSchemaFeature;

extern const AwaSchemaVersion *awa_schema_version(const char *version);
extern const char *awa_schema_version_oldest(void);
extern const char *awa_schema_version_latest(void);
extern bool awa_schema_has(const AwaSchemaVersion *schema, AwaSchemaFeature feature);

#endif							/* AWA_SCHEMA_VERSION_H */
