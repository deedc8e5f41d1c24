# The maintenance worker's life in one database: it waits for the extension,
# becomes leader, heartbeats, rotates and prunes the rings (and keeps the
# ring control tables free of updates and dead tuples, DESIGN 3.4), follows
# SIGHUP, pauses with awa_bgw.enabled = off, survives a failing step, and is
# restarted by the launcher after pg_terminate_backend; after DROP EXTENSION
# it waits for the extension again.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# pg_try_advisory_lock key of the maintenance leader ("AWA_MAIN")
my $LEADER_KEY = '4708303813012965710';

my $node = PostgreSQL::Test::Cluster->new('worker');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'awa_bgw'
max_worker_processes = 16
awa_bgw.databases = 'postgres'
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
});
$node->start;

#---------------------------------------------------------------------------
# helpers

sub sql
{
	my ($query, $db) = @_;
	return $node->safe_psql($db // 'postgres', $query);
}

# Wait until $query returns $expected ('t' by default); dies on timeout, so
# that one missing event does not turn into a cascade of 180 s timeouts.
sub wait_until
{
	my ($what, $query, $expected, $db) = @_;
	my $ok = $node->poll_query_until($db // 'postgres', $query, $expected);
	ok($ok, $what) or die "gave up waiting: $what";
	return;
}

# One column of the postgres worker's row of awa.maintenance_status.
sub status
{
	my ($expr, $db) = @_;
	return sql(
		"SELECT $expr FROM awa.maintenance_status WHERE database = 'postgres'",
		$db);
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

my $next_job = 1;

# A closed job (ready row plus its terminal done row) in the queue ring's
# current slot; returns the slot.
sub queue_closed_job
{
	my ($queue) = @_;
	my $id = $next_job++;
	return sql(
		qq{WITH c AS MATERIALIZED (SELECT slot, generation FROM awa.ring_cursor('queue')),
		   r AS (INSERT INTO awa.ready_entries (ready_slot, ready_generation, job_id, queue,
		                                        priority, kind, args, attempt, max_attempts, run_at)
		         SELECT slot, generation, $id, '$queue', 0, 'k', '{}', 1, 25, now() FROM c)
		   INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease, queue,
		                                 priority, state)
		   SELECT slot, generation, $id, 1, '$queue', 0, 'completed' FROM c
		   RETURNING ready_slot});
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
		"SELECT c.generation > $gen AND awa.ring_is_idle('$ring')
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
# 3. Runtime heartbeat: own row, binary_version 0.7.0, last_seen_at moves.

wait_until(
	'worker registers in awa.runtime_instances',
	qq{SELECT count(*) FROM awa.runtime_instances
	    WHERE pid = $worker_pid AND binary_version = '0.7.0'}, '1');
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
# 5. Traffic: the ring rotates and the closed sealed slot is truncated, its
#    terminal counts appended to queue_terminal_rollup_deltas.

my $ready0 = filenode('ready_entries_0');
my $done0 = filenode('done_entries_0');
is(queue_closed_job('q_first'), '0', 'closed job lands in slot 0');
wait_until('ready_entries_0 is truncated',
	"SELECT pg_relation_filenode('awa.ready_entries_0') <> $ready0");
isnt(filenode('done_entries_0'), $done0,
	'done_entries_0 truncated with it (new relfilenode)');
is(sql('SELECT count(*) FROM awa.ready_entries_0') . '/'
	  . sql('SELECT count(*) FROM awa.done_entries_0'),
	'0/0', 'slot 0 is empty');
is(sql(q{SELECT generation FROM awa.ring_cursor('queue')}),
	'1', 'queue ring rotated once (generation 1)');
is( sql(
		q{SELECT string_agg(queue || ':' || priority || ':' || pruned_completed_delta
		                    || ':' || pruned_failed_delta, ',')
		    FROM awa.queue_terminal_rollup_deltas}),
	'q_first:0:1:0',
	'prune appended the slot\'s terminal counts as a rollup delta');
ok(counter('rotations', 'queue', 'rotated') >= 1, 'status counts the rotation');
ok(counter('prunes', 'queue', 'pruned') >= 1, 'status counts the prune');

#---------------------------------------------------------------------------
# 6. DESIGN 3.4: many rotations on all three rings write only ledger rows.

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

# claim ring: an open claim (job 900) and a closed one (job 901) in slot C;
# the ring rotates round to the slot before C and stalls there.
my ($claim_slot, $claim_gen) = cursor('claim');
my $claims_fn = filenode("lease_claims_$claim_slot");
sql(
	qq{BEGIN;
	   INSERT INTO awa.lease_claims (claim_slot, claim_generation, job_id, run_lease,
	                                 ready_slot, ready_generation)
	   VALUES ($claim_slot, $claim_gen, 900, 1, 0, 0), ($claim_slot, $claim_gen, 901, 1, 0, 0);
	   INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, job_id, run_lease,
	                                         outcome)
	   VALUES ($claim_slot, $claim_gen, 901, 1, 'completed');
	   COMMIT;});
my $claim_stall = ($claim_slot + 7) % 8;
wait_until(
	'claim ring stalls before the slot with an open claim',
	qq{SELECT c.slot = $claim_stall AND (m.rotations->'claim'->>'skipped_busy')::bigint > 0
	          AND (m.prunes->'claim'->>'skipped_active')::bigint > 0
	     FROM awa.ring_cursor('claim') c, awa.maintenance_status m
	    WHERE m.database = 'postgres'});
is( status(
		q{(rotations->'claim'->>'last_blocker') || '/' || (prunes->'claim'->>'last_reason')}),
	'lease_claims/claim.open',
	'claim ring: rotation blocked by lease_claims, prune by the open claim');
is(filenode("lease_claims_$claim_slot"),
	$claims_fn, 'the open claim\'s slot was not truncated');

# lease ring: heartbeats of attempt (901, 1), closed by the closure above;
# twice, the second time from slot 1 so that the ring wraps.
for (1 .. 2)
{
	ring_round(
		'lease',
		sub {
			sql(q{INSERT INTO awa.leases (lease_slot, lease_generation, job_id, run_lease)
			      SELECT slot, generation, 901, 1 FROM awa.ring_cursor('lease')});
		});
}

# queue ring: two rounds, each a full wrap
queue_round('q_many');
queue_round('q_many');

# close claim 900: the claim ring prunes its slot and goes idle (without a
# further rotation: an idle ring is not rotated)
sql(
	qq{INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, job_id,
	                                        run_lease, outcome)
	   VALUES ($claim_slot, $claim_gen, 900, 1, 'completed')});
wait_until('claim ring prunes the closed slot and goes idle',
	q{SELECT awa.ring_is_idle('claim')});
isnt(filenode("lease_claims_$claim_slot"),
	$claims_fn, 'closed claim slot truncated');

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
# 7. A slot with a live job: prune reports skipped_active, rotation into it
#    skipped_busy, and the slot is never truncated.

my ($live_slot, $live_gen) = cursor('queue');
my $live_fn = filenode("ready_entries_$live_slot");
my $active0 = counter('prunes', 'queue', 'skipped_active');
my $busy0 = counter('rotations', 'queue', 'skipped_busy');
sql(
	qq{INSERT INTO awa.ready_entries (ready_slot, ready_generation, job_id, queue, priority,
	                                  kind, args, attempt, max_attempts, run_at)
	   VALUES ($live_slot, $live_gen, 500, 'q_live', 0, 'k', '{}', 1, 25, now())});
my $stall = ($live_slot + 15) % 16;
wait_until(
	'queue ring stalls in the slot before the live one',
	qq{SELECT c.slot = $stall
	          AND (m.prunes->'queue'->>'skipped_active')::bigint >= $active0 + 3
	          AND (m.rotations->'queue'->>'skipped_busy')::bigint >= $busy0 + 3
	     FROM awa.ring_cursor('queue') c, awa.maintenance_status m
	    WHERE m.database = 'postgres'});
is( status(
		q{(prunes->'queue'->>'last_reason') || '/' || (rotations->'queue'->>'last_blocker')}),
	'queue.open_jobs/ready_entries',
	'prune: skipped_active (queue.open_jobs); rotation: skipped_busy (ready_entries)');
my $active1 = counter('prunes', 'queue', 'skipped_active');
wait_until('prune keeps skipping the live slot',
	"SELECT (prunes->'queue'->>'skipped_active')::bigint >= $active1 + 5
	   FROM awa.maintenance_status WHERE database = 'postgres'");
is(filenode("ready_entries_$live_slot"),
	$live_fn, 'the live slot was never truncated');
is(sql("SELECT count(*) FROM awa.ready_entries_$live_slot WHERE job_id = 500"),
	'1', 'the live job is still there');
is(sql(q{SELECT slot FROM awa.ring_cursor('queue')}),
	$stall, 'the cursor did not move into the live slot');

# completing the job unblocks the ring
sql(
	qq{INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease, queue,
	                                 priority, state)
	   VALUES ($live_slot, $live_gen, 500, 1, 'q_live', 0, 'completed')});
wait_until('the completed slot is truncated',
	"SELECT pg_relation_filenode('awa.ready_entries_$live_slot') <> $live_fn");
wait_until('queue ring idle again', q{SELECT awa.ring_is_idle('queue')});

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
queue_closed_job('q_slow');
wait_until('the claim ring ticks ten more times',
	"SELECT " . ticks_expr('claim')
	  . " >= $cticks + 20 FROM awa.maintenance_status WHERE database = 'postgres'");
is(ring_ticks('queue'), $qticks, 'no queue tick at the 1h cadence');
is(sql(q{SELECT generation FROM awa.ring_cursor('queue')}),
	$slow_gen, 'queue ring not rotated despite traffic');

reload_with('RESET awa_bgw.queue_rotate_interval');
wait_until('back at 100 ms the queue ring rotates',
	"SELECT generation > $slow_gen FROM awa.ring_cursor('queue')");
wait_until('queue ring idle again', q{SELECT awa.ring_is_idle('queue')});

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
# 10. A failing step: the queue ledger is locked, rotate waits into
#     awa_bgw.step_timeout; the error is logged, counted and shown, and the
#     worker goes on.

reload_with(q{SET awa_bgw.step_timeout = '1s'});
my $errors0 = status('errors');
$log_offset = -s $node->logfile;

my $locker = $node->background_psql('postgres');
$locker->set_query_timer_restart;
$locker->query_safe(
	'BEGIN; LOCK TABLE awa.queue_ring_rotations IN ACCESS EXCLUSIVE MODE');

wait_until('the blocked steps fail and are counted',
	"SELECT errors >= $errors0 + 2 FROM awa.maintenance_status WHERE database = 'postgres'"
);
like(
	status('last_error'),
	qr/^(rotate|prune) of the queue ring: canceling statement due to statement timeout \(SQLSTATE 57014\)$/,
	'last_error names the step and the statement timeout');
is(status('last_error_at IS NOT NULL'), 't', 'last_error_at set');
ok( $node->wait_for_log(
		qr/WARNING:  awa_bgw: (rotate|prune) of the queue ring failed: canceling statement due to statement timeout/,
		$log_offset),
	'the failure is logged as a WARNING');
is(status('pid'), $worker_pid, 'the worker survived the errors');
my $claim_ticks = ring_ticks('claim');
wait_until('the other rings go on while the queue ring fails',
	"SELECT " . ticks_expr('claim')
	  . " > $claim_ticks FROM awa.maintenance_status WHERE database = 'postgres'");

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
	    WHERE pid = $new_pid AND binary_version = '0.7.0'
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
