/*-------------------------------------------------------------------------
 *
 * schema_version.c
 *	  The extension versions this library maintains, and what each has: one
 *	  table, asked by the step runner (which version is installed: step.c,
 *	  extension_state) and by the worker (which steps run, with which SQL).
 *
 * A database is maintained at any version in the table, all at once from one
 * library: 0.7 (either authority of the ring cursors), 0.8, 0.9 (the data
 * plane of snapshot windows, and what came with it) and 0.10 (the windows
 * with the mark of their xid space). At any other version (0.6, or one newer
 * than this library) the worker waits in state needs_upgrade, with the hint
 * to update to the newest. A new version is one more entry; a new difference
 * between versions, one more feature and the version it came with.
 *
 * src/worker/schema_version.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "src/worker/schema_version.h"

/* oldest first: the last entry is the newest (awa_schema_version_latest) */
static const AwaSchemaVersion schema_versions[] = {
	{"0.7"},
	{"0.8"},
	{"0.9"},					/* the data plane of snapshot windows */
	{"0.10"},
};

/* the version each feature came with; every later version has it too */
static const char *const feature_since[AWA_NFEATURES] = {
	[AWA_FEATURE_NONE] = "0.7",
	[AWA_FEATURE_SCHEDULES] = "0.9",
	[AWA_FEATURE_UNIQUE_KEYS] = "0.9",
	[AWA_FEATURE_PRUNE_HOLDERS] = "0.9",
	[AWA_FEATURE_XID_SPACE] = "0.10",
	[AWA_FEATURE_QUIET_IDLE] = "0.10",
	[AWA_FEATURE_INTERNAL_SCHEMA] = "0.10",
	[AWA_FEATURE_RINGS_BY_NEED] = "0.10",
	[AWA_FEATURE_JOB_ID_BRIN] = "0.10",
};

/* The entry of version, or NULL when this library does not maintain it. */
const AwaSchemaVersion *
awa_schema_version(const char *version)
{
	int			i;

	for (i = 0; i < (int) lengthof(schema_versions); i++)
		if (strcmp(version, schema_versions[i].version) == 0)
			return &schema_versions[i];
	return NULL;
}

/* The oldest version maintained: an older database is upgraded to it first. */
const char *
awa_schema_version_oldest(void)
{
	return schema_versions[0].version;
}

/* The newest version, the one a version not maintained is to be updated to. */
const char *
awa_schema_version_latest(void)
{
	return schema_versions[lengthof(schema_versions) - 1].version;
}

/*
 * Whether the version (an entry of the table, NULL for none) has the
 * feature: whether it is the version the feature came with or a later one.
 * AWA_FEATURE_NONE asks for nothing, which every version (and none) has.
 */
bool
awa_schema_has(const AwaSchemaVersion *schema, AwaSchemaFeature feature)
{
	const AwaSchemaVersion *since;

	if (feature == AWA_FEATURE_NONE)
		return true;
	if (schema == NULL || feature < 0 || feature >= AWA_NFEATURES)
		return false;
	since = awa_schema_version(feature_since[feature]);
	Assert(since != NULL);
	return since != NULL && schema >= since;
}
