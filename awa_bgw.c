/*-------------------------------------------------------------------------
 *
 * awa_bgw.c
 *	  Library entry point (_PG_init): defines the awa_bgw.* GUCs (src/guc.c),
 *	  installs the shared memory hooks that size and attach each module's
 *	  share, and registers the launcher background worker.
 *
 * The library only works when preloaded: the launcher and the shared status
 * need the postmaster. Under pg_upgrade (IsBinaryUpgrade) it does nothing.
 *
 * awa_bgw.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"

#include "src/dataplane/lanemarks.h"
#include "src/dataplane/limits.h"
#include "src/dataplane/registry.h"
#include "src/dataplane/wait.h"
#include "src/guc.h"
#include "src/status/shmem.h"
#include "src/status/stats.h"
#include "src/worker/launcher.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	awa_shmem_request();
	awa_stats_shmem_request();
	awa_registry_shmem_request();
	awa_wait_shmem_request();
	awa_lane_marks_shmem_request();
	awa_limits_shmem_request();
}

static void
shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	awa_shmem_startup();
	awa_stats_shmem_startup();
	awa_registry_shmem_startup();
	awa_wait_shmem_startup();
	awa_lane_marks_shmem_startup();
	awa_limits_shmem_startup();
}

void
_PG_init(void)
{
	if (IsBinaryUpgrade)
		return;

	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("awa_bgw can only be loaded via shared_preload_libraries"),
				 errhint("Add awa_bgw to shared_preload_libraries in postgresql.conf "
						 "and restart the server.")));

	awa_define_gucs();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shmem_startup;

	awa_limits_init();
	awa_register_launcher();
}
