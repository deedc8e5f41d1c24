# The maintenance worker's life in one database: it waits for the extension,
# becomes leader, heartbeats, rotates and prunes the rings (and keeps the
# ring control tables free of updates and dead tuples, DESIGN 3.4), follows
# SIGHUP, pauses with awa_bgw.enabled = off, survives a failing step, and is
# restarted by the launcher after pg_terminate_backend; after DROP EXTENSION
# it waits for the extension again. Ring traffic is made through the job API
# (enqueue, claim, heartbeat, complete, cancel): the queue ring stalls only
# behind an unclaimed job, and an open attempt's receipt and newest heartbeat
# are carried forward instead of stalling the claim and lease rings.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;
use Time::HiRes qw(usleep);

# pg_try_advisory_lock key of the maintenance leader ("AWA_MAIN")
my $LEADER_KEY = '4708303813012965710';

my $node = AwaNode->create('worker', q{
max_worker_processes = 16
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
awa_bgw.idle_interval = '1s'
awa_bgw.job_heartbeat_timeout = '1h'
awa_bgw.finished_job_window = 0
awa_bgw.rotate_fill = 0
});
$node->start;
# (finished_job_window 0: claim prune skips a slot for no reason but live work here, so
# that the carry-forward checks below can say it never does; the window's own skips are
# t/036's and sql/21_finished_window's. rotate_fill 0: the rings turn at the fixed
# cadence, whose ticks section 8 counts; the rings turning by need are t/036's.)

#---------------------------------------------------------------------------
# helpers (sql, status and wait_until come from t/AwaNode.pm)

# the token (run_lease) the claim of a job's first attempt drew
sub lease_of
{
	my ($job) = @_;
	my $lease = sql("SELECT run_lease FROM awa.lease_claims WHERE job_id = $job AND attempt = 1 LIMIT 1");
	die "no receipt of job $job" if $lease eq '';
	return $lease;
}


sub counter
{
	my ($kind, $ring, $outcome) = @_;    # kind: rotations | prunes
	return status("($kind->'$ring'->>'$outcome')::bigint");
}

# Sum of every outcome counter (rotate and prune) of one ring: it grows by
# two each time the worker runs that ring's tick.
sub ticks_expr
{
	my ($ring) = @_;
	return
	    "((SELECT sum(value::bigint) FROM jsonb_each_text(rotations->'$ring')"
	  . "   WHERE key <> 'last_blocker')"
	  . " + (SELECT sum(value::bigint) FROM jsonb_each_text(prunes->'$ring')"
	  . "   WHERE key <> 'last_reason'))";
}

sub ring_ticks
{
	my ($ring) = @_;
	return status(ticks_expr($ring));
}

sub cursor
{
	my ($ring) = @_;
	my ($slot, $gen) =
	  split /\|/, sql("SELECT slot, generation FROM awa.ring_cursor('$ring')");
	return ($slot, $gen);
}

sub filenode
{
	my ($rel) = @_;
	return sql("SELECT pg_relation_filenode('awa.$rel')");
}

# pids holding the leader lock in database postgres
sub leader_lock_holders
{
	return sql(
		qq{SELECT coalesce(string_agg(pid::text, ',' ORDER BY pid), 'none')
		     FROM pg_locks
		    WHERE locktype = 'advisory' AND granted
		      AND database = (SELECT oid FROM pg_database WHERE datname = 'postgres')
		      AND classid::bigint = (${LEADER_KEY}::bigint >> 32)
		      AND objid::bigint = (${LEADER_KEY}::bigint & 4294967295)
		      AND objsubid = 1});
}

sub reload_with
{
	my ($setting) = @_;
	sql("ALTER SYSTEM $setting");
	sql('SELECT pg_reload_conf()');
	return;
}

# SQL holding the rotation lock of each given ring (its ledger's private-lock
# serializer, DESIGN 3.1) to the end of the transaction: meanwhile the
# worker's rotate and prune of that ring skip (skipped_busy/blocked, locked).
# Needed where rows written in one transaction must share a slot: the rings'
# idle and busy gates see uncommitted rows (awa.try_relation_empty() reads
# with a dirty snapshot), so a ring may rotate while the transaction is open.
sub hold_rings_sql
{
	return join '', map {
		"SELECT awa_internal.private_xact_lock(hashtextextended("
		  . "'awa.queue_storage.ring_rotation:awa:$_', 0)) AS held_$_ \\gset\n"
	} @_;
}

# One job through the API: enqueue into $queue (committed: a job is claimable
# once its enqueue has committed), then in one transaction claim it (deadline
# 1 hour), heartbeat it if asked, complete it; another session holds the queue
# and lease rings still meanwhile, so the ready entry stays in the queue ring's
# current slot (the receipt and its closure always share a claim slot). Returns
# the ready entry's slot, the job id and its receipt's claim generation; dies
# unless claim, heartbeat and complete did their job (the completion: one
# closure with the state completed, no done entry; docs/storage.md A.15).
sub closed_job
{
	my ($queue, $heartbeat) = @_;
	my $beat = $heartbeat ? 'awa.heartbeat(:job, :lease)' : 'true';
	my $holder = $node->background_psql('postgres');
	$holder->query_safe('BEGIN');
	$holder->query_safe($_) for split /\n/, hold_rings_sql('queue', 'lease') =~ s/ \\gset//gr;
	my $out = sql(
		qq{SELECT awa.enqueue('$queue', 'k') AS job \\gset
BEGIN;
SELECT coalesce(string_agg(job_id || ':' || attempt, ','), 'none') AS claimed,
       coalesce(max(run_lease), 0) AS lease
  FROM awa.claim('$queue', 10, '1 hour') \\gset
SELECT $beat AS beat \\gset
SELECT awa.complete(:job, :lease) AS done \\gset
SELECT (SELECT string_agg(ready_slot::text, ',') FROM awa.ready_entries WHERE job_id = :job)
       || '|' || :job || '|' || :'claimed' || '|' || :'beat' || '|' || :'done'
       || '|' || (SELECT string_agg(claim_generation::text, ',') FROM awa.lease_claims
                   WHERE job_id = :job)
       || '|' || (SELECT string_agg(awa_internal.closure_state(outcome_code, state), ',')
                    FROM awa.lease_claim_closures WHERE job_id = :job)
       || '|' || (SELECT count(*) FROM awa.done_entries WHERE job_id = :job);
COMMIT;});
	$holder->query_safe('COMMIT');
	$holder->quit;
	my ($slot, $job, $claimed, $beat_ok, $done, $claim_gen, $state, $done_entries) =
	  split /\|/, $out;
	# the completion is one row: its closure, carrying the state (docs/storage.md A.15)
	die "closed_job($queue): claim/heartbeat/complete went wrong: $out"
	  unless defined $done_entries
	  && $claimed eq "$job:1"
	  && $beat_ok eq 't'
	  && $done eq 't'
	  && $claim_gen =~ /^\d+$/
	  && $state eq 'completed'
	  && $done_entries eq '0';
	return ($slot, $job, $claim_gen);
}

# A closed job in the queue ring's current slot; returns the slot.
sub queue_closed_job
{
	my ($queue) = @_;
	my ($slot) = closed_job($queue, 0);
	return $slot;
}

# awa.queue_counts(queue) as "available|scheduled|running|completed|failed".
# The children of the ring families are locked before the statement takes its
# snapshot: queue_counts reads them by name under the calling statement's
# snapshot, so a prune committing in between (TRUNCATE is not MVCC-safe, and
# a carried receipt is inserted by that prune) could make it miss a row.
sub counts
{
	my ($queue) = @_;
	return sql(
		qq{BEGIN;
		   LOCK TABLE awa.ready_entries, awa.done_entries, awa.lease_claims,
		              awa.lease_claim_closures IN ACCESS SHARE MODE;
		   SELECT available || '|' || scheduled || '|' || running || '|' || completed
		          || '|' || failed FROM awa.queue_counts('$queue');
		   COMMIT;});
}

# Wait until the worker itself has found each ring idle twice more. Only the
# worker removes ring rows, so its idle check cannot race a prune (a check
# from this session could, while a prune carries a row from one slot into
# another); and with no traffic an idle ring stays idle.
sub wait_worker_idle
{
	my ($what, @rings) = @_;
	my $cond = join ' AND ', map {
		my $n = counter('rotations', $_, 'skipped_idle');
		"(rotations->'$_'->>'skipped_idle')::bigint >= $n + 2"
	} @rings;
	wait_until($what,
		"SELECT $cond FROM awa.maintenance_status WHERE database = 'postgres'");
	return;
}

# Give the ring closed traffic in its current slot and wait until the worker
# has rotated past it and pruned it again (the ring is idle once more).
sub ring_round
{
	my ($ring, $insert) = @_;
	my (undef, $gen) = cursor($ring);
	$insert->();
	wait_until(
		"$ring ring rotated past generation $gen and pruned its traffic",
		"SELECT c.generation > $gen AND awa_internal.ring_is_idle('$ring')
		   FROM awa.ring_cursor('$ring') c");
	return;
}

sub queue_round
{
	my ($queue) = @_;
	ring_round('queue', sub { queue_closed_job($queue) });
	return;
}

#---------------------------------------------------------------------------
# 1. Before CREATE EXTENSION: the worker runs and waits for the extension.
#    Its status is read from a scratch database (not maintained) that has the
#    extension, since the view reads the cluster's shared memory.

wait_until('launcher is running',
	q{SELECT count(*) FROM pg_stat_activity
	   WHERE backend_type = 'awa_bgw launcher' AND datname IS NULL}, '1');
my $launcher_pid = sql(
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'awa_bgw launcher'});

sql('CREATE DATABASE scratch');
sql('CREATE EXTENSION awa_bgw', 'scratch');

wait_until(
	'worker of postgres waits for the extension',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'},
	'waiting_for_extension', 'scratch');

my $worker_pid = sql(
	q{SELECT pid FROM pg_stat_activity
	   WHERE backend_type = 'awa_bgw worker' AND datname = 'postgres'});
like($worker_pid, qr/^\d+$/, 'one awa_bgw worker connected to postgres');
is(status('pid', 'scratch'),
	$worker_pid, 'status row carries the pid of the worker in pg_stat_activity');
is( sql(q{SELECT string_agg(database::text, ',') FROM awa.maintenance_status},
		'scratch'),
	'postgres',
	'no worker for the unlisted database scratch');
is(status('leader_since IS NULL', 'scratch'),
	't', 'no leader_since while waiting for the extension');
is(leader_lock_holders(), 'none',
	'leader lock not taken in a database without the extension');

#---------------------------------------------------------------------------
# 2. CREATE EXTENSION: the same worker becomes leader.

sql('CREATE EXTENSION awa_bgw');
wait_until('worker becomes leader after CREATE EXTENSION',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'},
	'leader');
is(status('pid'), $worker_pid, 'the same worker (no restart) leads');
is(status('leader_since IS NOT NULL AND leader_since >= started_at'),
	't', 'leader_since is set');
is(leader_lock_holders(), $worker_pid,
	'the worker holds advisory lock 4708303813012965710');

#---------------------------------------------------------------------------
# 3. Runtime heartbeat: own row, binary_version the library's own (awa_bgw.control's
# default_version as semver), last_seen_at moves.

my ($default_version) = slurp_file('awa_bgw.control') =~ /^default_version = '([0-9.]+)'/m
  or die 'no default_version in awa_bgw.control';
my $binary_version = "$default_version.0";
wait_until(
	'worker registers in awa.runtime_instances',
	qq{SELECT count(*) FROM awa.runtime_instances
	    WHERE pid = $worker_pid AND binary_version = '$binary_version'}, '1');
my $seen = sql(
	"SELECT last_seen_at FROM awa.runtime_instances WHERE pid = $worker_pid");
wait_until(
	'last_seen_at advances (now() moves in the worker)',
	qq{SELECT last_seen_at > '$seen'::timestamptz
	     FROM awa.runtime_instances WHERE pid = $worker_pid});
is( sql(
		qq{SELECT last_seen_at > started_at AND name LIKE '%postgres%'
		     FROM awa.runtime_instances WHERE pid = $worker_pid}),
	't',
	'heartbeat row: last_seen_at after started_at, name names the database');
# the worker started before CREATE EXTENSION: its id still comes from
# gen_random_uuid(), not the pid-derived fallback
is( sql(
		qq{SELECT instance_id::text LIKE '00000000-0000-4000-8000-%'
		     FROM awa.runtime_instances WHERE pid = $worker_pid}),
	'f',
	'instance id is a random uuid');

# 0.10: the worker's row counts as live from shared memory, whatever its last_seen_at (the
# worker refreshes it only every awa_bgw.runtime_heartbeat_interval, an hour by default)
my $instance = sql("SELECT instance_id FROM awa.runtime_instances WHERE pid = $worker_pid");
is(sql(q{SELECT array_agg(i) FROM awa_internal.live_worker_instances() i}), "{$instance}",
	'shared memory lists the worker\'s row as live');
is( sql(qq{SELECT awa_internal.runtime_live('$instance', now() - interval '2 days', 90),
	              awa_internal.runtime_live(gen_random_uuid(), now() - interval '2 days', 90),
	              awa_internal.runtime_live(gen_random_uuid(), now(), 90)}),
	't|f|t',
	'a row is live when a running worker owns it, or when its heartbeat is fresh');
# the leader's purge of rows stale for a day spares a running worker's row (in one
# transaction, so that the worker's own heartbeat cannot refresh it meanwhile)
is( sql(qq{BEGIN;
	       UPDATE awa.runtime_instances SET last_seen_at = now() - interval '2 days'
	        WHERE instance_id = '$instance';
	       INSERT INTO awa.runtime_instances (instance_id, name, last_seen_at)
	       VALUES ('00000000-0000-0000-0000-0000000000ee', 'gone', now() - interval '2 days');
	       SELECT count(*) FROM awa_internal.runtime_heartbeat('00000000-0000-0000-0000-0000000000ef',
	                                                  'other', '0.10.0', 1, true);
	       SELECT string_agg(name, ',' ORDER BY name) FROM awa.runtime_instances
	        WHERE last_seen_at < now() - interval '1 day';
	       ROLLBACK;}),
	"1\nawa_bgw worker (database postgres)",
	'the purge of stale rows deletes a gone runtime\'s and spares the running worker\'s');

#---------------------------------------------------------------------------
# 4. An idle ring is not rotated.

my $idle = counter('rotations', 'queue', 'skipped_idle');
wait_until('worker keeps ticking the idle queue ring',
	"SELECT (rotations->'queue'->>'skipped_idle')::bigint >= $idle + 5
	   FROM awa.maintenance_status WHERE database = 'postgres'");
is( sql(
		q{SELECT string_agg(ring || ':' || generation || ':' || ledger_rows, ',')
		    FROM awa.ring_status}),
	'queue:0:1,lease:0:1,claim:0:1',
	'idle rings: cursors at genesis, ledgers hold one row');
is(counter('rotations', 'queue', 'rotated'), '0', 'no rotation counted');

#---------------------------------------------------------------------------
# 5. Traffic: the rings rotate and the closed sealed slots are truncated. (The
#    job is enqueued, claimed and completed in one transaction: its ready entry
#    is claimed, so the queue slot may be truncated.) The completion is one
#    closure in the receipt's claim slot (docs/storage.md A.15): the queue
#    ring's done child is never written, and it is the claim ring's prune that
#    appends the terminal counts to queue_terminal_rollup_deltas.

my $ready0 = filenode('ready_entries_0');
my $done0 = filenode('done_entries_0');
my $closures0 = filenode('lease_claim_closures_0');
is(queue_closed_job('q_first'), '0',
	'closed job lands in slot 0, its closure carrying the state completed');
wait_until('ready_entries_0 is truncated',
	"SELECT pg_relation_filenode('awa.ready_entries_0') <> $ready0");
is(filenode('done_entries_0') . '/' . sql(q{SELECT pg_relation_size('awa.done_entries_0')}),
	"$done0/0", 'done_entries_0 was never written: no block, same relfilenode');
is(sql('SELECT count(*) FROM awa.ready_entries_0'), '0', 'queue slot 0 is empty');
# the claim ring may prune slot 0 while the queue ring still holds the entry: then the
# receipt, the lane's position, is carried forward with its closure (not counted), and
# the prune of the slot it went to counts it
wait_until('the closure has left the claim ring, counted into the pruned history',
	q{SELECT NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures x
	                       JOIN awa.lease_claims c USING (claim_slot, job_id, run_lease)
	                      WHERE c.queue = 'q_first')
	     AND (SELECT completed FROM awa_internal.queue_pruned_terminal_counts('q_first')) > 0});
isnt(filenode('lease_claim_closures_0'), $closures0, 'lease_claim_closures_0 was truncated');
ok(sql(q{SELECT generation FROM awa.ring_cursor('queue')}) >= 1,
	'queue ring rotated');
is( sql(
		q{SELECT completed || ':' || failed FROM awa_internal.queue_pruned_terminal_counts('q_first')}),
	'1:0',
	'claim prune appended the closure\'s terminal count to the pruned history, once');
ok(counter('rotations', 'queue', 'rotated') >= 1, 'status counts the rotation');
ok(counter('prunes', 'queue', 'pruned') >= 1, 'status counts the prune');
ok(counter('prunes', 'claim', 'pruned') >= 1, 'status counts the claim prune');
is(counts('q_first'), '0|0|0|1|0',
	'queue_counts still counts the pruned completion (from the delta)');

#---------------------------------------------------------------------------
# 6. DESIGN 3.4: many rotations on all three rings write only ledger rows.
#    Along the way (docs/storage.md §6): the heartbeats of closed attempts
#    are pruned; a running attempt's receipt and newest heartbeat are carried
#    forward, so neither the claim ring nor the lease ring stalls behind it.

my @rings = qw(queue lease claim);
my @cold = map { ("${_}_ring_state", "${_}_ring_slots") } @rings;

# every ledger row inserted so far is visible in the statistics
sub wait_ledger_stats
{
	my $cond = join ' AND ', map {
		"(SELECT n_tup_ins FROM pg_stat_user_tables WHERE relid = 'awa.${_}_ring_rotations'::regclass)"
		  . " >= (SELECT count(*) FROM awa.${_}_ring_rotations)"
	} @rings;
	wait_until('statistics show every ledger insert', "SELECT $cond");
	return;
}

wait_ledger_stats();
my (%ins_before, %gen_before);
for my $ring (@rings)
{
	$ins_before{$ring} = sql(
		"SELECT n_tup_ins FROM pg_stat_user_tables WHERE relid = 'awa.${ring}_ring_rotations'::regclass"
	);
	(undef, $gen_before{$ring}) = cursor($ring);
}

# lease ring: heartbeats of closed attempts (claimed, heartbeated and
# completed in one transaction) are pruned, not carried; twice, the second
# time from slot 1 so that the ring wraps.
for (1 .. 2)
{
	ring_round('lease', sub { closed_job('q_lease', 1) });
}

# claim and lease rings: jobs A and B are claimed together (receipts in claim
# slot C) and heartbeat together (lease slot L); B completes in the same
# transaction as the heartbeats (so its heartbeat is never that of an open
# attempt when L is pruned), A keeps running.
wait_worker_idle('the worker finds every ring idle', @rings);
my ($job_a, $job_b) = split /\n/,
  sql(
	q{BEGIN;
	  SELECT awa.enqueue('q_carry', 'k');
	  SELECT awa.enqueue('q_carry', 'k');
	  COMMIT;});
# in the claiming transaction the receipts' slot cannot be truncated (a prune
# would need an exclusive lock on it), so its relfilenode read here is the
# one the receipts were written into
my ($claimed, $claim_at, $claims_fn) = split /\n/,
  sql(
	qq{BEGIN;
	   SELECT string_agg(job_id || ':' || attempt, ',' ORDER BY job_id)
	     FROM awa.claim('q_carry', 10, '1 hour');
	   SELECT string_agg(DISTINCT claim_slot || ':' || claim_generation, ',')
	     FROM awa.lease_claims WHERE job_id IN ($job_a, $job_b);
	   SELECT pg_relation_filenode(format('awa.lease_claims_%s', claim_slot))
	     FROM awa.lease_claims WHERE job_id = $job_a;
	   COMMIT;});
is($claimed, "$job_a:1,$job_b:1", 'claim takes both jobs, first attempt each');
like($claim_at, qr/^\d+:\d+$/, 'both receipts are in one claim slot');
my ($claim_slot, $claim_gen) = split /:/, $claim_at;
my ($lease_a, $lease_b) = (lease_of($job_a), lease_of($job_b));
my $hold_lease = hold_rings_sql('lease');
my ($beats, $lease_at, $leases_fn, $beat_a, $b_done) = split /\n/,
  sql(
	qq{BEGIN;
	   $hold_lease
	   SELECT awa.heartbeat($job_a, $lease_a) AND awa.heartbeat($job_b, $lease_b);
	   SELECT string_agg(DISTINCT lease_slot || ':' || lease_generation, ',')
	     FROM awa.leases WHERE job_id IN ($job_a, $job_b);
	   SELECT pg_relation_filenode(format('awa.leases_%s', lease_slot))
	     FROM awa.leases WHERE job_id = $job_a;
	   SELECT heartbeat_at FROM awa.leases WHERE job_id = $job_a;
	   SELECT awa.complete($job_b, $lease_b);
	   COMMIT;});
is($beats, 't', 'both attempts heartbeat');
like($lease_at, qr/^\d+:\d+$/, 'both heartbeats are in one lease slot');
my ($lease_slot, $lease_gen) = split /:/, $lease_at;
is($b_done, 't', 'B completes');
is(counts('q_carry'), '0|0|1|1|0', 'queue_counts: A running, B completed');

wait_until(
	"claim slot $claim_slot and lease slot $lease_slot are truncated under the running job",
	"SELECT pg_relation_filenode('awa.lease_claims_$claim_slot') <> $claims_fn
	    AND pg_relation_filenode('awa.leases_$lease_slot') <> $leases_fn");
is( sql(
		"SELECT count(*) || ':' || bool_and(claim_generation > $claim_gen)
		   FROM awa.lease_claims WHERE job_id = $job_a"),
	'1:true',
	'A\'s open receipt was carried forward: one copy, in a later claim generation');
is( sql(
		"SELECT count(*) || ':' || bool_and(lease_generation > $lease_gen)
		        || ':' || bool_and(heartbeat_at = '$beat_a')
		   FROM awa.leases WHERE job_id = $job_a"),
	'1:true:true',
	'A\'s newest heartbeat was carried forward as it was (one copy, a later lease generation)');
is(sql("SELECT count(*) FROM awa.leases WHERE job_id = $job_b"),
	'0', 'the heartbeat of the completed attempt B was pruned, not carried');
is(counts('q_carry'), '0|0|1|1|0', 'A is still running');
is( status(
		q{(prunes->'claim'->>'skipped_active') || '/' || (prunes->'lease'->>'skipped_active')}),
	'0/0',
	'claim and lease prunes never skip a slot as active');
cmp_ok(counter('prunes', 'claim', 'pruned'), '>=', 1, 'status counts the claim prunes');
cmp_ok(counter('prunes', 'lease', 'pruned'), '>=', 1, 'status counts the lease prunes');

# queue ring: two rounds, each a full wrap; A's ready entry goes with them (a claimed
# entry does not hold the queue ring). A's args do not: its receipt has none (0.10,
# docs/storage.md A.20), so the queue ring holds them while A runs, one held_args row
# carried at each prune of its slot; the ring is idle but for it.
sub queue_round_holding
{
	my ($queue, $held_job) = @_;
	my (undef, $gen) = cursor('queue');
	queue_closed_job($queue);
	wait_until(
		"queue ring rotated past generation $gen and pruned its traffic but the args of $held_job",
		"SELECT c.generation > $gen
		        AND NOT EXISTS (SELECT 1 FROM awa.ready_entries)
		        AND NOT EXISTS (SELECT 1 FROM awa.done_entries)
		        AND (SELECT array_agg(h.job_id) FROM awa.held_args h) = ARRAY[$held_job]::bigint[]
		   FROM awa.ring_cursor('queue') c");
	return;
}
queue_round_holding('q_many', $job_a);
queue_round_holding('q_many', $job_a);
is(sql("SELECT attempt || ':' || (args IS NOT NULL) FROM awa.held_args WHERE job_id = $job_a"),
	'1:true', 'the queue ring holds the args of A while it runs, once');
is(sql("SELECT count(*) FROM awa.ready_entries WHERE job_id IN ($job_a, $job_b)"),
	'0', 'the ready entries of A and B were pruned while A runs');
# B's closed receipt was only kept (as its lane's position) while the queue
# ring held its lane's entries
wait_until('B\'s closed receipt is pruned from the claim ring',
	"SELECT count(*) = 0 FROM awa.lease_claims WHERE job_id = $job_b");

# A, carried round the claim ring, can still be completed, once: the
# closure goes into the slot that holds the receipt now
is( sql(
		qq{BEGIN;
		   SELECT awa.complete($job_a, $lease_a);
		   SELECT count(*)
		     FROM awa.lease_claims c JOIN awa.lease_claim_closures x
		          ON x.claim_slot = c.claim_slot AND x.job_id = c.job_id
		             AND x.run_lease = c.run_lease
		    WHERE c.job_id = $job_a AND c.claim_generation > $claim_gen
		      AND awa_internal.closure_outcome(x.outcome_code, x.outcome) = 'completed';
		   COMMIT;}),
	"t\n1",
	'the carried receipt of A completes; its closure is in the receipt\'s slot');
is(sql("SELECT awa.complete($job_a, $lease_a)"), 'f', 'a second complete of A changes nothing');

# with A closed nothing is carried any more: every ring prunes to idle
wait_worker_idle('every ring goes idle once A is completed', @rings);
is(sql("SELECT count(*) FROM awa.leases WHERE job_id = $job_a")
	  . '/' . sql("SELECT count(*) FROM awa.lease_claims WHERE job_id = $job_a"),
	'0/0', 'A\'s heartbeat and receipt are gone');
isnt(filenode("lease_claims_$claim_slot"), $claims_fn, 'claim slot C was truncated');
is(counts('q_carry'), '0|0|0|2|0', 'queue_counts: both jobs completed');

wait_ledger_stats();
for my $ring (@rings)
{
	my (undef, $gen) = cursor($ring);
	my $ins = sql(
		"SELECT n_tup_ins FROM pg_stat_user_tables WHERE relid = 'awa.${ring}_ring_rotations'::regclass"
	);
	cmp_ok($gen - $gen_before{$ring}, '>=', 7, "$ring ring rotated many times");
	cmp_ok($ins - $ins_before{$ring},
		'>=', $gen - $gen_before{$ring},
		"positive control: ${ring}_ring_rotations n_tup_ins grew by every rotation");
}
for my $rel (@cold)
{
	my $expected_ins = $rel =~ /_state$/ ? 1 : ($rel =~ /^queue/ ? 16 : 8);
	is( sql(
			qq{SELECT n_tup_ins || ' ' || n_tup_upd || ' ' || n_tup_hot_upd || ' '
			          || n_tup_del || ' ' || n_dead_tup
			     FROM pg_stat_user_tables WHERE relid = 'awa.$rel'::regclass}),
		"$expected_ins 0 0 0 0",
		"$rel: only its install rows inserted; no update, delete or dead tuple");
}

#---------------------------------------------------------------------------
# 7. A slot with an unclaimed job: prune reports skipped_active
#    (queue.unclaimed), rotation into it skipped_busy (ready_entries), and the
#    slot is not truncated until every entry in it is claimed or cancelled; a
#    claimed job that is still running does not hold it.

my $active0 = counter('prunes', 'queue', 'skipped_active');
my $busy0 = counter('rotations', 'queue', 'skipped_busy');
# jobs X and Y, enqueued in one transaction (holding the queue ring still):
# one slot, one lane, X first; the slot cannot be truncated while this
# transaction holds it
my $hold_queue = hold_rings_sql('queue');
my ($job_x, $job_y, $live_at, $live_fn) = split /\n/,
  sql(
	qq{BEGIN;
	  $hold_queue
	  SELECT awa.enqueue('q_live', 'k') AS x \\gset
	  SELECT awa.enqueue('q_live', 'k') AS y \\gset
	  SELECT :x;
	  SELECT :y;
	  SELECT string_agg(DISTINCT ready_slot || ':' || lane_id, ',')
	    FROM awa.ready_entries WHERE job_id IN (:x, :y);
	  SELECT pg_relation_filenode(format('awa.ready_entries_%s', ready_slot))
	    FROM awa.ready_entries WHERE job_id = :x;
	  COMMIT;});
like($live_at, qr/^\d+:\d+$/, 'X and Y are in one slot and one lane');
my ($live_slot) = split /:/, $live_at;
my $stall = ($live_slot + 15) % 16;
wait_until(
	'queue ring stalls in the slot before the unclaimed jobs',
	qq{SELECT c.slot = $stall
	          AND (m.prunes->'queue'->>'skipped_active')::bigint >= $active0 + 3
	          AND (m.rotations->'queue'->>'skipped_busy')::bigint >= $busy0 + 3
	     FROM awa.ring_cursor('queue') c, awa.maintenance_status m
	    WHERE m.database = 'postgres'});
is( status(
		q{(prunes->'queue'->>'last_reason') || '/' || (rotations->'queue'->>'last_blocker')}),
	'queue.unclaimed/ready_entries',
	'prune: skipped_active (queue.unclaimed); rotation: skipped_busy (ready_entries)');
my $active1 = counter('prunes', 'queue', 'skipped_active');
wait_until('prune keeps skipping the slot',
	"SELECT (prunes->'queue'->>'skipped_active')::bigint >= $active1 + 5
	   FROM awa.maintenance_status WHERE database = 'postgres'");
is(filenode("ready_entries_$live_slot"),
	$live_fn, 'the slot was not truncated');
is(sql("SELECT count(*) FROM awa.ready_entries_$live_slot WHERE job_id IN ($job_x, $job_y)"),
	'2', 'the unclaimed jobs are still there');
is(sql(q{SELECT slot FROM awa.ring_cursor('queue')}),
	$stall, 'the cursor did not move into the slot');
is(counts('q_live'), '2|0|0|0|0', 'queue_counts: two available');

# claiming X is not enough: Y, unclaimed, still holds the slot
is(sql(q{SELECT string_agg(job_id || ':' || attempt, ',') FROM awa.claim('q_live', 1, '1 hour')}),
	"$job_x:1", 'claim takes X, the older job');
my $lease_x = lease_of($job_x);
my $active2 = counter('prunes', 'queue', 'skipped_active');
wait_until('with Y unclaimed, prune still skips the slot',
	"SELECT (prunes->'queue'->>'skipped_active')::bigint >= $active2 + 3
	   FROM awa.maintenance_status WHERE database = 'postgres'");
is(filenode("ready_entries_$live_slot"),
	$live_fn, 'the slot was still not truncated');
is( status(q{prunes->'queue'->>'last_reason'}),
	'queue.unclaimed', 'prune still reports queue.unclaimed');
is(sql(q{SELECT slot FROM awa.ring_cursor('queue')}),
	$stall, 'the cursor still did not move into the slot');

# cancelling Y (never claimed) writes a tombstone into Y's own slot (read in
# the cancelling transaction, which holds the slot); X is claimed and Y
# cancelled, so the slot is truncated while X runs
is( sql(
		qq{BEGIN;
		   SELECT awa.cancel($job_y);
		   SELECT string_agg(ready_slot || ':' || run_lease || ':' || state, ',')
		     FROM awa.done_entries WHERE job_id = $job_y;
		   COMMIT;}),
	"t\n$live_slot:0:cancelled",
	'cancel of the available job Y: a tombstone in its own slot');
wait_until('the slot is truncated while X still runs',
	"SELECT pg_relation_filenode('awa.ready_entries_$live_slot') <> $live_fn");
is(sql("SELECT count(*) FROM awa.ready_entries WHERE job_id IN ($job_x, $job_y)"),
	'0', 'the entries of X and Y are gone');
is(counts('q_live'), '0|0|1|0|0', 'queue_counts: X running, nothing available');

is(sql("SELECT awa.complete($job_x, $lease_x)"), 't', 'X completes');
wait_worker_idle('every ring idle again', @rings);
is(counts('q_live'), '0|0|0|1|0', 'queue_counts: X completed (Y cancelled)');

#---------------------------------------------------------------------------
# 8. SIGHUP: queue_rotate_interval = 1h stops the queue ring's ticks (the
#    claim ring, still on 200 ms, is the clock); back to 100 ms, it rotates.

reload_with(q{SET awa_bgw.queue_rotate_interval = '1h'});

# wait until the queue ring's counters stand still over three claim ticks
{
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	my ($q0, $c0) = (ring_ticks('queue'), ring_ticks('claim'));
	my $settled = 0;
	while (time() < $deadline)
	{
		my ($q, $c) = (ring_ticks('queue'), ring_ticks('claim'));
		if ($q != $q0)
		{
			($q0, $c0) = ($q, $c);
		}
		elsif ($c - $c0 >= 6)
		{
			$settled = 1;
			last;
		}
		usleep(100_000);
	}
	ok($settled, 'after the reload the queue ring stops ticking')
	  or die 'queue ring never settled';
}
my ($slow_slot, $slow_gen) = cursor('queue');
my $qticks = ring_ticks('queue');
my $cticks = ring_ticks('claim');
my (undef, $slow_job, $slow_claim_gen) = closed_job('q_slow', 0);
# the claim ring has traffic (the job's receipt): it rotates past the
# receipt's slot, whose prune carries the receipt (its lane's position) on
wait_until(
	'the claim ring ticks ten more times and turns past the receipt\'s slot',
	"SELECT " . ticks_expr('claim') . " >= $cticks + 20
	        AND (SELECT generation FROM awa.ring_cursor('claim')) >= $slow_claim_gen + 8
	   FROM awa.maintenance_status WHERE database = 'postgres'");
is(ring_ticks('queue'), $qticks, 'no queue tick at the 1h cadence');
is(sql(q{SELECT generation FROM awa.ring_cursor('queue')}),
	$slow_gen, 'queue ring not rotated despite traffic');
is( sql(
		"SELECT count(*) || ':' || bool_and(claim_generation > $slow_claim_gen)
		   FROM awa.lease_claims WHERE job_id = $slow_job"),
	'1:true',
	'the completed job\'s receipt, its lane\'s position, is carried while the queue ring holds its entry'
);

reload_with('RESET awa_bgw.queue_rotate_interval');
wait_until('back at 100 ms the queue ring rotates',
	"SELECT generation > $slow_gen FROM awa.ring_cursor('queue')");
wait_until('queue ring idle again', q{SELECT awa_internal.ring_is_idle('queue')});
wait_until('with the entry pruned, the receipt is no longer carried',
	"SELECT count(*) = 0 FROM awa.lease_claims WHERE job_id = $slow_job");

#---------------------------------------------------------------------------
# 9. enabled = off: state disabled and the leader lock released; on: leader.

my $log_offset = -s $node->logfile;
reload_with('SET awa_bgw.enabled = off');
wait_until('enabled = off: worker disabled',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'},
	'disabled');
is(leader_lock_holders(), 'none', 'disabled worker holds no leader lock');
is(status('leader_since IS NULL'), 't', 'leader_since cleared');
is(sql("SELECT pg_try_advisory_lock($LEADER_KEY)"),
	't', 'another session can take the leader lock');
ok($node->wait_for_log(
		qr/awa_bgw: gave up maintenance leadership of database "postgres"/,
		$log_offset),
	'log says the worker gave up leadership');

reload_with('RESET awa_bgw.enabled');
wait_until('enabled = on: worker leads again',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'},
	'leader');
is(status('pid'), $worker_pid, 'the same worker process');
is(leader_lock_holders(), $worker_pid, 'and it holds the leader lock again');

#---------------------------------------------------------------------------
# 10. An outsider locks the queue ring's ledger: the queue ring's rotate and
#     prune do not wait for it (every lock wait of theirs is bounded by
#     awa_bgw.prune_lock_timeout): they report lock_timeout, no step fails, and
#     the other rings go on. Then a step that does wait for a lock (promotion,
#     with awa.deferred_jobs locked) waits into awa_bgw.step_timeout: the error
#     is logged, counted and shown, and the worker goes on.

reload_with(q{SET awa_bgw.step_timeout = '1s'});
my $errors0 = status('errors');
$log_offset = -s $node->logfile;
# a job waiting in the queue ring, so that its rotation is tried (an idle ring is
# not) while the lock is held
sql(q{SELECT awa.enqueue('q_locked', 'k')});

my $locker = $node->background_psql('postgres');
$locker->set_query_timer_restart;
$locker->query_safe(
	'BEGIN; LOCK TABLE awa.queue_ring_rotations IN ACCESS EXCLUSIVE MODE');

wait_until('rotate and prune of the queue ring give way to the lock',
	q{SELECT (rotations->'queue'->>'last_blocker') || '/' || (prunes->'queue'->>'last_reason')
	    FROM awa.maintenance_status WHERE database = 'postgres'},
	'lock_timeout/lock_timeout');
my $claim_ticks = ring_ticks('claim');
wait_until('the other rings go on while the queue ring is locked',
	"SELECT " . ticks_expr('claim')
	  . " > $claim_ticks FROM awa.maintenance_status WHERE database = 'postgres'");
is(status('errors'), $errors0, 'no step failed: none waited for the lock');
$locker->query_safe('COMMIT');
# (the job done, the ring can become idle again)
is(sql(q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('q_locked')}), '1',
	'the job enqueued before the lock is claimed and completed');

$locker->query_safe('BEGIN; LOCK TABLE awa.deferred_jobs IN ACCESS EXCLUSIVE MODE');
wait_until('the blocked promotion fails and is counted',
	"SELECT awa.wake() AND errors >= $errors0 + 1 FROM awa.maintenance_status"
	  . " WHERE database = 'postgres'");
like(
	status('last_error'),
	qr/^promotion of deferred jobs: canceling statement due to statement timeout \(SQLSTATE 57014\)$/,
	'last_error names the step and the statement timeout');
is(status('last_error_at IS NOT NULL'), 't', 'last_error_at set');
ok( $node->wait_for_log(
		qr/WARNING:  awa_bgw: promotion of deferred jobs failed: canceling statement due to statement timeout/,
		$log_offset),
	'the failure is logged as a WARNING');
is(status('pid'), $worker_pid, 'the worker survived the errors');

$locker->query_safe('COMMIT');
$locker->quit;
reload_with('RESET awa_bgw.step_timeout');
queue_round('q_after_error');
is(status('pid || state'), "${worker_pid}leader",
	'rotation resumed under the same leader');

#---------------------------------------------------------------------------
# 11. pg_terminate_backend: the launcher starts a new worker, which leads.

$log_offset = -s $node->logfile;
is(sql("SELECT pg_terminate_backend($worker_pid)"), 't', 'worker terminated');
wait_until(
	'a new worker leads',
	qq{SELECT pid <> $worker_pid AND state = 'leader'
	     FROM awa.maintenance_status WHERE database = 'postgres'});
my $new_pid = status('pid');
is( sql(
		q{SELECT string_agg(pid::text, ',') FROM pg_stat_activity
		   WHERE backend_type = 'awa_bgw worker'}),
	$new_pid,
	'exactly one worker, the new one');
is(leader_lock_holders(), $new_pid, 'the new worker holds the leader lock');
is(sql(q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'awa_bgw launcher'}),
	$launcher_pid, 'the launcher is the same process');
ok( $node->wait_for_log(
		qr/awa_bgw: worker for database "postgres" exited; restarting it/,
		$log_offset),
	'the launcher logged the restart');
queue_round('q_new_worker');
ok(counter('rotations', 'queue', 'rotated') >= 1,
	'the new worker rotates the queue ring');
wait_until(
	'the new worker registers in awa.runtime_instances',
	qq{SELECT count(*) FROM awa.runtime_instances
	    WHERE pid = $new_pid AND binary_version = '$binary_version'
	      AND instance_id::text NOT LIKE '00000000-0000-4000-8000-%'}, '1');

#---------------------------------------------------------------------------
# 12. DROP EXTENSION: the worker waits for the extension again and must not
#     keep the leader lock of a database it no longer maintains.

# Lock the ring singletons first: every rotate and prune step reads its
# ring's singleton before any other table, so the worker queues behind this
# transaction instead of deadlocking with DROP EXTENSION's exclusive locks.
sql(
	q{BEGIN;
	  LOCK TABLE awa.queue_ring_state, awa.lease_ring_state, awa.claim_ring_state
	      IN ACCESS EXCLUSIVE MODE;
	  DROP EXTENSION awa_bgw;
	  COMMIT;});
wait_until(
	'after DROP EXTENSION the worker waits for the extension',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'},
	'waiting_for_extension', 'scratch');
is(status('pid', 'scratch'), $new_pid, 'the same worker process');
# the leader lock is a session lock: it must be released even though the
# extension is gone (else another leader is blocked, and the next
# pg_try_advisory_lock() stacks a second hold on it)
is(leader_lock_holders(), 'none', 'leader lock released after DROP EXTENSION');
sql('CREATE EXTENSION awa_bgw');
wait_until('after CREATE EXTENSION the worker leads again',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'},
	'leader');
reload_with('SET awa_bgw.enabled = off');
wait_until('enabled = off: worker disabled',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'},
	'disabled');
is(leader_lock_holders(), 'none',
	'disabled worker holds no leader lock after a DROP/CREATE EXTENSION cycle');

done_testing();
