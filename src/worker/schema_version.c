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
 * to update to the newest. A new version is one more row; a new difference
 * between versions, one more column and its feature.
 *
 * src/worker/schema_version.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "src/worker/schema_version.h"

/* oldest first: the last row is the newest (awa_schema_version_latest) */
static const AwaSchemaVersion schema_versions[] = {
	/* version windows schedules unique_keys prune_holders xid_space */
	{"0.7",    false,  false,    false,      false,        false},
	{"0.8",    false,  false,    false,      false,        false},
	{"0.9",    true,   true,     true,       true,         false},
	{"0.10",   true,   true,     true,       true,         true},
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
 * feature; AWA_FEATURE_NONE asks for nothing, which every version has.
 */
bool
awa_schema_has(const AwaSchemaVersion *schema, AwaSchemaFeature feature)
{
	if (schema == NULL)
		return feature == AWA_FEATURE_NONE;
	switch (feature)
	{
		case AWA_FEATURE_NONE:
			return true;
		case AWA_FEATURE_WINDOWS:
			return schema->windows;
		case AWA_FEATURE_SCHEDULES:
			return schema->schedules;
		case AWA_FEATURE_UNIQUE_KEYS:
			return schema->unique_keys;
		case AWA_FEATURE_PRUNE_HOLDERS:
			return schema->prune_holders;
		case AWA_FEATURE_XID_SPACE:
			return schema->xid_space;
	}
	return false;
}
