-- What each public function and view is for, as \df+ and \dv+ show it. Public: the
-- application API, the status views, and the maintenance entry points an operator runs
-- by hand. Internals carry none: a function without a comment is not for callers.

-- the application API
COMMENT ON FUNCTION awa.enqueue(text, text, jsonb, int, timestamptz, int, text,
                                interval, text[]) IS
'enqueue one job (queue, kind, args, priority 0-9, run_at, max_attempts); returns its '
'job id. Transactional: a rolled-back enqueue leaves no job; takes no lock. With '
'unique_key: returns the id of the job of the same queue and key enqueued within '
'unique_for and in one of unique_states, if there is one, and writes nothing';
COMMENT ON FUNCTION awa.enqueue_batch(text, jsonb) IS
'enqueue a JSON array of jobs ({"kind", "args", "priority", "run_at", "max_attempts"}) '
'into one queue in one call; returns their job ids in input order';
COMMENT ON FUNCTION awa.claim(text, int, interval, interval) IS
'claim up to max_batch jobs of a queue (priority 0 first, FIFO within a lane) with a '
'deadline; with wait, sleep until a job of the queue commits or wait passes. Each row '
'carries the attempt''s run_lease, which every later call must pass back';
COMMENT ON FUNCTION awa.complete(bigint, bigint) IS
'complete the attempt (job_id, run_lease); false if that attempt is already closed '
'(rescued, cancelled, completed) or the token is not its token';
COMMENT ON FUNCTION awa.complete_batch(bigint[], bigint[]) IS
'complete many attempts (job_ids[i], run_leases[i]) in one call; returns the attempts '
'it completed';
COMMENT ON FUNCTION awa.complete_and_claim(bigint[], bigint[], text, int, interval) IS
'complete the attempts (job_ids[i], run_leases[i]) as complete_batch does, then claim '
'up to max_batch jobs of a queue as claim does without wait: a worker''s loop in one '
'transaction per job';
COMMENT ON FUNCTION awa.fail_and_claim(bigint, bigint, text, interval, text, int, interval) IS
'fail the attempt (job_id, run_lease) as fail does, then claim up to max_batch jobs of a '
'queue as claim does without wait: a worker''s loop in one transaction per job';
COMMENT ON FUNCTION awa.fail(bigint, bigint, text, interval) IS
'fail the attempt (job_id, run_lease) with an error text: retried after retry_in or the '
'exponential backoff until max_attempts, then moved to awa.failed_jobs';
COMMENT ON FUNCTION awa.heartbeat(bigint, bigint, jsonb) IS
'the attempt (job_id, run_lease) is alive, with optional progress; an attempt silent '
'for awa_bgw.job_heartbeat_timeout (or past its deadline) is rescued';
COMMENT ON FUNCTION awa.cancel(bigint) IS
'cancel a job that is available, scheduled or running; false if it is already '
'finished or unknown';
COMMENT ON FUNCTION awa.queue_counts(text) IS
'exact counts of a queue: available, scheduled, running, completed, failed';
COMMENT ON FUNCTION awa.register_queue(text, int) IS
'register a (queue, priority) ahead of its first enqueue (never needed in 0.9: the '
'first enqueue registers it without waiting)';
COMMENT ON FUNCTION awa.claim_waiters() IS
'the claims waiting for work now: backend pid, database, since when, whether woken';

-- status
COMMENT ON VIEW awa.terminal_jobs IS
'finished jobs the rings still hold (completed, failed, cancelled) with their '
'attempt, error and times; pruned history survives as counts only';

-- maintenance entry points (one transaction each; the worker runs them on its cadences)
COMMENT ON FUNCTION awa.rotate(text, text) IS
'advance a ring''s cursor into its next, empty slot: rotated, skipped_idle or '
'skipped_busy with the blocker; never waits';
COMMENT ON FUNCTION awa.prune(text, text) IS
'empty a ring''s oldest sealed slot with one TRUNCATE once nothing in it is live: '
'pruned, noop, already_pruned, skipped_active or blocked, with the reason';
COMMENT ON FUNCTION awa.promote_deferred(text) IS
'move scheduled and retrying jobs whose run_at has come into the queue ring';
COMMENT ON FUNCTION awa.rescue(text) IS
'close the attempts past their deadline or silent for awa_bgw.job_heartbeat_timeout, '
'and retry or fail their jobs';
COMMENT ON FUNCTION awa.fold_terminal_rollup_deltas(text) IS
'merge the rollup deltas that prune appended into awa.queue_terminal_rollups, unless '
'the MVCC horizon is genuinely pinned (then stood_down, with the holder)';
COMMENT ON FUNCTION awa.fold_ring_rotation_ledgers(text) IS
'trim each ring''s rotation ledger to one wrap, unless the horizon is genuinely pinned';
COMMENT ON FUNCTION awa.purge_unique_keys(bigint, bigint) IS
'forget the unique keys of jobs the data plane no longer holds: one batch after a job '
'id, returning where the next starts (0: the end); stands down while the horizon is '
'pinned';
COMMENT ON FUNCTION awa.purge_failed_jobs_gated(text) IS
'delete failed jobs older than awa_bgw.failed_retention, unless the horizon is '
'genuinely pinned';
COMMENT ON FUNCTION awa.horizon_pinned(interval) IS
'whether something genuinely pins the MVCC horizon: a holder older than min_age (see '
'awa.horizon_pins)';
COMMENT ON FUNCTION awa.ring_cursor(text) IS
'the authoritative cursor (slot, generation) of a ring';
COMMENT ON FUNCTION awa.flip_ring_authority(text, boolean, double precision) IS
'make the rotation ledgers authoritative (one way); refuses while a live runtime is not '
'flip-aware, unless forced';
COMMENT ON FUNCTION awa.ring_authority_status(text, double precision) IS
'the cursor authority, when it flipped, and the live, flip-aware and blocking runtimes';
COMMENT ON FUNCTION awa.ring_authority_blockers(text, double precision) IS
'the live runtimes that keep the flip from happening, and why';

-- per-queue grants and pauses
COMMENT ON FUNCTION awa.queue_allowed(text, text) IS
'whether the current role may use a queue for a privilege (enqueue, claim, manage)';
COMMENT ON FUNCTION awa.grant_queue(text, regrole, text[]) IS
'grant a role privileges on one queue (enqueue, claim, manage); once a queue has a '
'grant, only the roles granted (and superusers) may use it';
COMMENT ON FUNCTION awa.revoke_queue(text, regrole, text[]) IS
'revoke privileges on one queue; revoking its last grant opens the queue again';
COMMENT ON FUNCTION awa.forget_dropped_queue_grantees() IS
'remove the per-queue grants of roles that no longer exist';
COMMENT ON FUNCTION awa.pause_queue(text) IS
'pause a queue: enqueues go on, claims take nothing and waiting claims wait';
COMMENT ON FUNCTION awa.resume_queue(text) IS
'resume a paused queue; its waiting claims wake at commit';
COMMENT ON FUNCTION awa.set_queue_limits(text, int, int, interval, int) IS
'limit a queue to max_running attempts running at once and to rate claims per rate_per '
'(a token bucket of burst tokens), across every session; replaces its limits';
COMMENT ON FUNCTION awa.clear_queue_limits(text) IS
'remove a queue''s running and rate limits; true when it had any';
COMMENT ON VIEW awa.queue_grants IS
'the per-queue grants: queue, grantee, privileges, who granted, when';
COMMENT ON VIEW awa.queue_settings IS
'every queue known: whether it is paused (since when, by whom), whether it is '
'restricted by per-queue grants, its running limit (max_running) and its rate limit '
'(rate per rate_per, burst)';

-- monitoring
COMMENT ON FUNCTION awa.stats_reset() IS
'zero the cumulative maintenance counters of this database (awa.worker_stats, '
'awa.worker_ring_stats) and set their stats_reset';

-- job lookup and replay
COMMENT ON FUNCTION awa.job(bigint) IS
'one job as the data plane holds it: state (scheduled, retryable, available, running, '
'completed, failed, cancelled), attempt, body, times, last error, progress; no row when '
'nothing of it is left. A restricted queue''s jobs only for roles with a privilege on it';
COMMENT ON FUNCTION awa.jobs(text, text, text, int) IS
'jobs by queue, state and kind, newest job id first, at most lim (1 to 1000); for '
'operators';
COMMENT ON FUNCTION awa.retry_failed(bigint) IS
're-enqueue a failed job under its own id with one more attempt; NULL if it is not in '
'awa.failed_jobs';
COMMENT ON FUNCTION awa.retry_failed_queue(text, text, timestamptz) IS
're-enqueue up to 10000 failed jobs of a queue (of a kind, failed since); returns how '
'many: call again until 0';
COMMENT ON FUNCTION awa.purge_failed(text, text, timestamptz) IS
'delete up to 10000 failed jobs (of a queue, of a kind) that failed before a time; '
'returns how many';
COMMENT ON FUNCTION awa.cancel_queue(text, text) IS
'cancel up to 1000 scheduled, available and running jobs of a queue (of a kind); '
'returns how many: call again until 0';

-- periodic jobs
COMMENT ON FUNCTION awa.schedule(text, text, text, text, jsonb, text, int, int) IS
'create or replace a periodic job: a five-field cron expression in a time zone, and the '
'job the worker enqueues at each fire time; returns the next fire time';
COMMENT ON FUNCTION awa.unschedule(text) IS
'remove a periodic job; false if there was none of that name';
COMMENT ON FUNCTION awa.cron_next(text, timestamptz, text) IS
'the first fire time of a five-field cron expression after a time, in a time zone';
COMMENT ON FUNCTION awa.fire_due_schedules(text, timestamptz) IS
'enqueue the due runs of the periodic jobs, each exactly once (the leader runs it every '
'second): how many fired and failed';
COMMENT ON VIEW awa.schedules IS
'the periodic jobs: cron expression, time zone, the job, next and last run, last job id';

-- the DBA's tools and monitoring calls that had no comment: every function of schema awa
-- has one, none of awa_internal (sql/15_comments.sql)
COMMENT ON FUNCTION awa.entry_unclaimed(awa.ready_entries) IS
'whether a ready entry is still unclaimed (its lane''s window read at this snapshot); the '
'alert queries of docs/operations.md use it';
COMMENT ON FUNCTION awa.horizon_pins_at(interval) IS
'the sessions, prepared transactions, replication slots and standbys that hold the xmin '
'horizon back, with their age and whether they pin it for at least the given age '
'(awa.horizon_pins reads it)';
COMMENT ON FUNCTION awa.queue_stats_rows(interval) IS
'per queue: available, scheduled and running jobs, the oldest available, and outcomes in '
'total and in the window given (awa.queue_stats reads it, with a one-minute window)';
COMMENT ON FUNCTION awa.ring_slot_blocker(text, int) IS
'the first family whose child in the ring slot holds a row, ''locked'' when a child cannot '
'be read without waiting, NULL when the slot is empty: what keeps it from being pruned';
COMMENT ON FUNCTION awa.xid_space_state() IS
'the mark of the xid space of the rows: own (this cluster''s), moved (another '
'cluster''s: they are rebased before a claim), fresh (no mark, no job) or unmarked (jobs '
'but no mark)';
