/*-------------------------------------------------------------------------
 *
 * autoflip.c
 *	  The leader's auto-flip of the ring cursor authority (DESIGN §6).
 *
 * On the fold cadence the leader reads awa.ring_authority_status. While the
 * authority is columns, it keeps a stable window: it opens when every fresh
 * runtime (a heartbeat within awa_bgw.runtime_fresh_window) is flip-aware and
 * there is at least one (the leader counts itself), and closes on any blocker,
 * on an error, and when this process stops leading. Once the window has lasted
 * awa_bgw.auto_flip_stable_period, the leader calls awa.flip_ring_authority
 * without force; the SQL checks the gate again under its locks. The window
 * lives in this process only, so a new leader starts a new one.
 *
 * src/autoflip.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "src/autoflip.h"
#include "src/step.h"

/* The window closes: leadership lost, auto-flip turned off, a blocker seen. */
void
awa_auto_flip_reset(const char *verdict)
{
	awa_status_set_auto_flip(verdict, 0);
}

static void
flip(void)
{
	AwaStepResult res;
	char	   *sql;

	sql = psprintf("SELECT awa.flip_ring_authority('awa', false, %d)",
				   awa_bgw_runtime_fresh_window);
	if (awa_run_step("auto-flip", sql, &res) && res.extension == AWA_EXT_READY
		&& strcmp(res.col1, "ledger") == 0)
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
	pfree(sql);
}

void
awa_auto_flip_tick(TimestampTz now)
{
	AwaStepResult res;
	char	   *sql;
	bool		ok;
	long		live;
	long		blocking;
	char		verdict[AWA_ERROR_LEN];

	if (!awa_bgw_auto_flip)
	{
		awa_auto_flip_reset("off");
		return;
	}
	sql = psprintf("SELECT authority, live_instances, blocking_instances "
				   "FROM awa.ring_authority_status('awa', %d)",
				   awa_bgw_runtime_fresh_window);
	ok = awa_run_step("auto-flip check", sql, &res);
	pfree(sql);
	if (!ok || res.extension != AWA_EXT_READY)
	{
		awa_auto_flip_reset("check failed; window restarted");
		return;
	}
	if (strcmp(res.col1, "ledger") == 0)
	{
		awa_auto_flip_reset("ledger");
		return;
	}
	live = strtol(res.col2, NULL, 10);
	blocking = strtol(res.col3, NULL, 10);
	if (blocking > 0 || live == 0)
	{
		snprintf(verdict, sizeof(verdict),
				 "waiting: %ld fresh runtime(s) not flip-aware, %ld live", blocking, live);
		awa_auto_flip_reset(verdict);
		return;
	}
	if (awa_status_auto_flip_since() == 0)
		awa_status_set_auto_flip("stable window open", now);
	else if (TimestampDifferenceExceeds(awa_status_auto_flip_since(), now,
										awa_bgw_auto_flip_stable_period * 1000))
		flip();
}
