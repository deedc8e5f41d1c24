/*-------------------------------------------------------------------------
 *
 * autoflip.c
 *	  The leader's auto-flip of the ring cursor authority (DESIGN §6).
 *
 * On the fold cadence, as the last entry of the fold group of the worker's
 * table of steps (worker.c), the leader reads awa.ring_authority_status
 * (authority, live_instances, blocking_instances, by name). While the
 * authority is columns, it keeps a stable window: it opens when every fresh
 * runtime (a heartbeat within awa_bgw.runtime_fresh_window) is flip-aware and
 * there is at least one (the leader counts itself), and closes on any blocker,
 * on an error, and when this process stops leading. Once the window has lasted
 * awa_bgw.auto_flip_stable_period, the leader calls awa.flip_ring_authority
 * without force; the SQL checks the gate again under its locks. The window
 * lives in this process only, so a new leader starts a new one.
 *
 * Only a 0.7 database updated from 0.6 can still be at columns authority (a
 * fresh 0.7 or later is seeded ledger, the update to 0.8 refuses columns, and
 * the flip is one-way), so from 0.8 on the check only records "ledger". It is
 * not in src/legacy/ because the worker runs it at every version and
 * awa.maintenance_status shows its verdict: it goes at 1.0 as a change to the
 * worker (docs/development.md, "Support window of old schema versions").
 *
 * src/worker/autoflip.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/timestamp.h"

#include "src/guc.h"
#include "src/status/shmem.h"
#include "src/worker/autoflip.h"
#include "src/worker/step.h"

/* The window closes: leadership lost, auto-flip turned off, a blocker seen. */
void
awa_auto_flip_reset(const char *verdict)
{
	awa_status_set_auto_flip(verdict, 0);
}

/* $1: awa_bgw.runtime_fresh_window, in seconds */
static const char flip_sql[] =
"SELECT " AWA_FN("flip_ring_authority") "(" AWA_SCHEMA_ARG ", false, $1) AS authority";
static const char check_sql[] =
"SELECT authority, live_instances, blocking_instances FROM "
AWA_FN("ring_authority_status") "(" AWA_SCHEMA_ARG ", $1)";

static const AwaStepColumn flip_columns[] = {
	{"authority", AWA_COL_TEXT},
	{NULL}
};

static const AwaStepColumn check_columns[] = {
	{"authority", AWA_COL_TEXT},
	{"live_instances", AWA_COL_INT8},
	{"blocking_instances", AWA_COL_INT8},
	{NULL}
};

static void
flip(void)
{
	AwaStepResult res;
	AwaStepParams params = {0};

	awa_step_param(&params, INT4OID, Int32GetDatum(awa_bgw_runtime_fresh_window));
	if (awa_run_step("auto-flip", flip_sql, &params, flip_columns, &res) &&
		res.extension == AWA_EXT_READY && awa_step_text_is(&res, "authority", "ledger"))
	{
		ereport(LOG,
				(errmsg("awa_bgw: auto-flipped the ring cursor authority of database \"%s\" "
						"from columns to ledger",
						awa_status_dbname()),
				 errdetail("Every fresh runtime had been flip-aware for %d s.",
						   awa_bgw_auto_flip_stable_period)));
		awa_auto_flip_reset("flipped");
	}
	else
		awa_auto_flip_reset("flip failed; window restarted");
}

void
awa_auto_flip_tick(TimestampTz now)
{
	AwaStepResult res;
	AwaStepParams params = {0};
	bool		ok;
	int64		live;
	int64		blocking;

	if (!awa_bgw_auto_flip)
	{
		awa_auto_flip_reset("off");
		return;
	}
	awa_step_param(&params, INT4OID, Int32GetDatum(awa_bgw_runtime_fresh_window));
	ok = awa_run_step("auto-flip check", check_sql, &params, check_columns, &res);
	if (!ok || res.extension != AWA_EXT_READY)
	{
		awa_auto_flip_reset("check failed; window restarted");
		return;
	}
	if (awa_step_text_is(&res, "authority", "ledger"))
	{
		awa_auto_flip_reset("ledger");
		return;
	}
	live = awa_step_int8(&res, "live_instances");
	blocking = awa_step_int8(&res, "blocking_instances");
	if (blocking > 0 || live == 0)
	{
		char	   *verdict = psprintf("waiting: " INT64_FORMAT " fresh runtime(s) not "
									   "flip-aware, " INT64_FORMAT " live", blocking, live);

		awa_auto_flip_reset(verdict);
		pfree(verdict);
		return;
	}
	if (awa_status_auto_flip_since() == 0)
		awa_status_set_auto_flip("stable window open", now);
	else if (TimestampDifferenceExceeds(awa_status_auto_flip_since(), now,
										awa_bgw_auto_flip_stable_period * 1000))
		flip();
}
