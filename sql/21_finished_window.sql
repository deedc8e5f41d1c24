-- The finished-job window (0.10; docs/storage.md A.19): prune leaves a claim slot that
-- holds a terminal closure, and a queue slot that holds a done entry, written less than
-- awa_bgw.finished_job_window ago, so a finished job stays visible to awa.job (and to
-- unique keys) at least that long. test/regress.conf sets the window to 0, so that the
-- other files prune by hand at once; here a superuser sets it per session.
\i sql/fresh.inc

SHOW awa_bgw.finished_job_window;
SET awa_bgw.finished_job_window = '1h';
SELECT awa_internal.finished_job_window() AS window;

-- three jobs: one completed, one cancelled while available, one failed with a retry
-- (its closure ends an attempt, not the job)
SELECT awa.enqueue('win', 'done') AS j_done \gset
SELECT awa.enqueue('win', 'cancel') AS j_cancel \gset
SELECT awa.enqueue('win', 'retry', max_attempts => 3) AS j_retry \gset
SELECT awa.cancel(:j_cancel) AS cancelled;
SELECT count(*) AS claimed FROM (
    SELECT CASE WHEN c.job_id = :j_done THEN awa.complete(c.job_id, c.run_lease)
                ELSE awa.fail(c.job_id, c.run_lease, 'again', interval '1 hour') END
      FROM awa.claim('win', 10) c) x;
SELECT job_id = :j_done AS is_done, state FROM awa.job(:j_done)
UNION ALL SELECT false, state FROM awa.job(:j_cancel)
UNION ALL SELECT false, state FROM awa.job(:j_retry);

-- seal the slots they are in, then prune: both rings keep the slot for the window
SELECT outcome FROM awa.rotate('awa', 'claim');
SELECT outcome FROM awa.rotate('awa', 'queue');
SELECT ring, outcome, reason, slot FROM awa.prune('awa', 'claim');
SELECT ring, outcome, reason, slot FROM awa.prune('awa', 'queue');
SELECT state AS still_completed FROM awa.job(:j_done);
SELECT state AS still_cancelled FROM awa.job(:j_cancel);

-- what holds the slot is the age of the rows, not of the slot: the completed job's
-- closure made two hours old frees the claim slot; the retried attempt's closure (no
-- terminal state) never held it
UPDATE awa.lease_claim_closures SET closed_at = closed_at - interval '2 hours'
 WHERE job_id = :j_done;
SELECT ring, outcome, reason, slot FROM awa.prune('awa', 'claim');
SELECT count(*) AS done_gone FROM awa.job(:j_done);
SELECT state AS retry_waits FROM awa.job(:j_retry);

-- the queue slot's tombstone: with a window of 0 (as long as the slot's turn lasts),
-- the slot is pruned at once
SET awa_bgw.finished_job_window = 0;
SELECT awa_internal.finished_job_window() AS window;
SELECT ring, outcome, reason, slot FROM awa.prune('awa', 'queue');
SELECT count(*) AS cancel_gone FROM awa.job(:j_cancel);
-- counts are exact across both prunes: the rollups hold what the slots held
SELECT completed, failed FROM awa.queue_counts('win');

-- the setting is a superuser's: any other role may not set it (42501), and a
-- value out of range is refused (22023)
SET awa_bgw.finished_job_window = '10s';
CREATE ROLE awa_window_tenant;
SET ROLE awa_window_tenant;
SELECT left(sqlstate_of($$SET awa_bgw.finished_job_window = '1d'$$), 5) AS sqlstate;
RESET ROLE;
DROP ROLE awa_window_tenant;
SELECT left(sqlstate_of($$SET awa_bgw.finished_job_window = '-1s'$$), 5) AS sqlstate;
SELECT left(sqlstate_of($$SET awa_bgw.finished_job_window = '2d'$$), 5) AS sqlstate;
SHOW awa_bgw.finished_job_window;
