
# Copyright: the awa_bgw authors.
#
# The staged upgrade with a mixed fleet (issue 5, DESIGN §6). The 0.7 library's worker
# idles on a 0.6 schema, saying once why; after ALTER EXTENSION ... UPDATE TO '0.7' it
# leads in compat (columns) authority beside a pre-ledger (0.6.2) rotator, under pgbench
# enqueue/claim/complete load. While the old rotator is fresh the flip is refused, the
# blockers name it and the auto-flip waits; both disciplines advance the columns and the
# ledger never runs ahead of them. Once the old rotator stops, the auto-flip flips after
# its stable period; the ledger carries on from the columns with no gap; a returning old
# rotator is fenced and changes nothing. Every enqueued job completes exactly once;
# then the contract (0.8) runs and the worker keeps leading.
#
# This test's own triggers (schema mixed, dropped before the contract) record every
# change of the cursor columns and which backend made it, and each ledger as the flip's
# transaction left it (the fold keeps trimming the ledgers to a wrap afterwards).

use strict;
use warnings;
use File::Temp qw(tempdir);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;
use Time::HiRes qw(usleep);

my $fresh_window = 4;     # awa_bgw.runtime_fresh_window, s
my $stable_period = 4;    # awa_bgw.auto_flip_stable_period, s
my $fold_ms = 500;        # awa_bgw.fold_interval
my $old_id = '00000000-0000-4000-8000-000000000062';    # the pre-ledger rotator

my $node = AwaNode->create('mixed', qq{
awa_bgw.queue_rotate_interval = '150ms'
awa_bgw.lease_rotate_interval = '150ms'
awa_bgw.claim_rotate_interval = '150ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.fold_interval = '${fold_ms}ms'
awa_bgw.runtime_heartbeat_interval = '500ms'
awa_bgw.runtime_fresh_window = '${fresh_window}s'
awa_bgw.auto_flip_stable_period = '${stable_period}s'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '1s'
awa_bgw.job_heartbeat_timeout = '10min'
max_connections = 50
});
$node->start;

sub log_count
{
	my ($re) = @_;
	return scalar(grep { /$re/ } split /\n/, slurp_file($node->logfile));
}

# polls $cond (a sub) every 0.1 s until it returns true or $secs pass
sub wait_for
{
	my ($secs, $cond) = @_;
	my $deadline = time() + $secs;
	while (time() < $deadline)
	{
		return 1 if $cond->();
		usleep(100_000);
	}
	return $cond->();
}

# polls a query every 0.1 s until it returns true, for up to 120 s (wall clock: psql
# itself is slow on a loaded machine)
sub poll { my ($query) = @_; return wait_for(120, sub { sql($query) eq 't' }); }

my @rings = ('queue', 'lease', 'claim');
my %slots = (queue => 16, lease => 8, claim => 8);

# ---------------------------------------------------------------------------------
# 1. a 0.6 schema: the 0.7 library's worker waits for the upgrade and says so once
# ---------------------------------------------------------------------------------
sql("CREATE EXTENSION awa_bgw VERSION '0.6'");
poll(
	"SELECT state = 'needs_upgrade' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not stand in needs_upgrade';
my $hint_re = qr/ALTER EXTENSION awa_bgw UPDATE TO '0\.7'/;   # from 0.6: the oldest maintained
wait_for(60, sub { log_count($hint_re) >= 1 })
  or die 'the worker did not log the upgrade hint';
my $worker_pid = status('pid');

# data at 0.6, so that the run also carries jobs across the upgrade
sql(slurp_file('bench/schema.sql'));
sql(q{ALTER DATABASE postgres SET bench.log = 'on'});
sql('SELECT bench.produce(1) FROM generate_series(1, 20)');
sql('SELECT bench.produce(32)');

# several worker ticks (its state_change in pg_stat_activity moves once a tick), then
# count again: the hint was logged once, and the worker maintained nothing
my %ticks;
wait_for(60,
	sub {
		$ticks{ sql("SELECT state_change FROM pg_stat_activity WHERE pid = $worker_pid") } = 1;
		return keys(%ticks) >= 5;
	}) or die 'the worker did not tick';
is(log_count($hint_re), 1, "needs_upgrade: one log line names ALTER EXTENSION awa_bgw UPDATE TO '0.7', over 5 worker ticks");
is(log_count(qr/has extension awa_bgw at a version this library does not maintain/),
	1, 'and one line says why the worker waits');
is(status('state || \',\' || pid'), "needs_upgrade,$worker_pid", 'the worker still waits, same process');
is(sql('SELECT generation FROM awa.queue_ring_state') . ','
	  . sql('SELECT count(*) FROM awa.runtime_instances'),
	'0,0', 'and it touched nothing: the queue ring has not turned, no heartbeat row');

# ---------------------------------------------------------------------------------
# 2. the old fleet: a pre-ledger rotator for all three rings, a few times a second (it
#    runs until step 4); it turns the 0.6 rings. Then expand, live: the worker starts
#    by itself, in columns authority. (The rotator's heartbeat is fresh at the upgrade:
#    with no older runtime fresh, the auto-flip would flip one stable period later.)
# ---------------------------------------------------------------------------------
my $dir = tempdir(CLEANUP => 1);
my ($host, $port) = ($node->host, $node->port);
my $rot_stop = "$dir/rotator.stop";
my $load_stop = "$dir/load.stop";
# whatever happens, the background loops end with the test
my ($rotator, $load);
END
{
	local $?;
	if (defined $rot_stop)
	{
		system('touch', $rot_stop, $load_stop);
		for my $h (grep { defined } $rotator, $load)
		{
			eval { $h->finish; 1 } or eval { $h->kill_kill };
		}
	}
}
$rotator = IPC::Run::start(
	[
		'bash', '-c', q{
		while [ ! -e "$1" ]; do
			for r in queue lease claim; do
				PGAPPNAME='pre-ledger rotator' psql -X -q -v ON_ERROR_STOP=1 -h "$2" -p "$3" \
					-d postgres -v ring=$r -v instance="$4" -f test/pre_ledger_rotator.sql \
					|| { echo "pre-ledger rotator failed on the $r ring" >&2; exit 1; }
			done
			echo round
			sleep 0.1
		done}, 'rotator', $rot_stop, $host, $port, $old_id
	],
	'>', "$dir/rotator.out", '2>', "$dir/rotator.err");
sub rotator_rounds { my $n = () = slurp_file("$dir/rotator.out") =~ /^round$/mg; return $n; }
wait_for(120, sub { rotator_rounds() >= 3 }) or die 'the pre-ledger rotator does not run';
is(sql('SELECT (SELECT generation FROM awa.queue_ring_state) > 0
           AND (SELECT generation FROM awa.lease_ring_state) > 0
           AND (SELECT generation FROM awa.claim_ring_state) > 0'),
	't', 'on 0.6 the pre-ledger rotator turns every ring');
is(status('state'), 'needs_upgrade', 'the worker still waits');

sql("ALTER EXTENSION awa_bgw UPDATE TO '0.7'");
poll(
	"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not lead after the upgrade';
is(status('pid'), $worker_pid, 'after ALTER EXTENSION ... UPDATE the same worker leads');
is(sql('SELECT authority FROM awa.ring_cursor_authority'), 'columns', 'authority is columns');
is(log_count(qr/HINT:.*$hint_re/), 1, 'the upgrade hint was not logged again');

# this test's own record of every change of the cursor columns, and of the ledgers at
# the flip
sql(q{
CREATE SCHEMA mixed;
CREATE TABLE mixed.cursor_log (id bigserial PRIMARY KEY, ring text NOT NULL,
    old_slot int, old_gen bigint, new_slot int, new_gen bigint, backend text);
CREATE FUNCTION mixed.log_cursor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO mixed.cursor_log (ring, old_slot, old_gen, new_slot, new_gen, backend)
    VALUES (TG_ARGV[0], OLD.current_slot, OLD.generation, NEW.current_slot, NEW.generation,
            CASE WHEN current_setting('application_name') = 'pre-ledger rotator'
                 THEN 'pre-ledger'
                 ELSE (SELECT backend_type FROM pg_catalog.pg_stat_activity
                        WHERE pid = pg_backend_pid()) END);
    RETURN NULL;
END $$;
CREATE TRIGGER mixed_log AFTER UPDATE OF current_slot, generation ON awa.queue_ring_state
    FOR EACH ROW EXECUTE FUNCTION mixed.log_cursor('queue');
CREATE TRIGGER mixed_log AFTER UPDATE OF current_slot, generation ON awa.lease_ring_state
    FOR EACH ROW EXECUTE FUNCTION mixed.log_cursor('lease');
CREATE TRIGGER mixed_log AFTER UPDATE OF current_slot, generation ON awa.claim_ring_state
    FOR EACH ROW EXECUTE FUNCTION mixed.log_cursor('claim');
-- each ledger as the flip's transaction leaves it (its newest row, its extent)
CREATE TABLE mixed.ledgers_at_flip (ring text PRIMARY KEY, slot int, generation bigint,
    min_generation bigint, n bigint);
CREATE FUNCTION mixed.snapshot_ledgers() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['queue', 'lease', 'claim'] LOOP
        EXECUTE format('INSERT INTO mixed.ledgers_at_flip SELECT $1, '
                       '(SELECT slot FROM awa.%1$I ORDER BY generation DESC LIMIT 1), '
                       'max(generation), min(generation), count(*) FROM awa.%1$I',
                       r || '_ring_rotations') USING r;
    END LOOP;
    RETURN NULL;
END $$;
CREATE TRIGGER mixed_snapshot AFTER UPDATE ON awa.ring_cursor_authority
    FOR EACH ROW WHEN (OLD.authority = 'columns' AND NEW.authority = 'ledger')
    EXECUTE FUNCTION mixed.snapshot_ledgers();
});

# a long job, claimed without deadline and heartbeating once: its lease is carried
# forward, so the lease ring is never idle and the worker rotates it too
sql("SELECT awa.enqueue('long', 'slow')");
my ($long_id, $long_lease) = split /,/,
  sql("SELECT job_id || ',' || run_lease FROM awa.claim('long', 1, NULL)");
is(sql("SELECT awa.heartbeat($long_id, $long_lease)"), 't', 'the long job heartbeats');

# ---------------------------------------------------------------------------------
# 3. the mixed fleet: the pre-ledger rotator beside the worker in compat authority,
#    under pgbench load (in 2 s segments, each ending cleanly)
# ---------------------------------------------------------------------------------
$load = IPC::Run::start(
	[
		'bash', '-c', q{
		while [ ! -e "$1" ]; do
			pgbench -n -c 4 -j 2 -T 2 -f bench/producer.sql@1 -f bench/consumer.sql@1 \
				-h "$2" -p "$3" postgres || { echo "pgbench segment failed" >&2; exit 1; }
		done}, 'load', $load_stop, $host, $port
	],
	'>', "$dir/load.out", '2>', "$dir/load.err");

# the old rotator is fresh: it is named as a blocker, the auto-flip waits
poll(
	"SELECT auto_flip LIKE 'waiting: 1 fresh runtime(s) not flip-aware%'
	    AND EXISTS (SELECT 1 FROM awa.ring_authority_blockers('awa', $fresh_window)
	                 WHERE instance_id = '$old_id')
	   FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the auto-flip did not wait for the pre-ledger rotator';
is(sql("SELECT instance_id || '|' || name || '|' || version || '|' || coalesce(binary_version, 'NULL') || '|' || reason FROM awa.ring_authority_blockers('awa')"),
	"$old_id|pre-ledger rotator|0.6.2|NULL|no binary_version: a pre-0.7 runtime",
	'ring_authority_blockers lists the pre-ledger rotator, and only it');
my ($rc, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT awa.flip_ring_authority('awa')");
isnt($rc, 0, 'a manual flip fails while the pre-ledger rotator is fresh');
like($err,
	qr/ERROR:  55000: 1 fresh runtime\(s\) are not known to be flip-aware \(>= 0\.7\.0\); refusing to flip/,
	'with SQLSTATE 55000 and the reason');
is(sql('SELECT authority FROM awa.ring_cursor_authority'), 'columns', 'authority stays columns');

# for at least 12 fold ticks (a fold tick comes no sooner than fold_interval after the
# previous one, so 12 ticks outlast the stable period), and until both disciplines have
# advanced every ring's columns: each sample is one statement (one snapshot)
my $sample_sql = q{
SELECT a.authority, m.auto_flip, m.auto_flip_window_since IS NULL, m.folds_run,
       bool_and(l.led <= l.col AND l.slot = l.col % l.n)
  FROM awa.ring_cursor_authority a, awa.maintenance_status m,
       (SELECT (SELECT max(generation) FROM awa.queue_ring_rotations) led, generation col,
               current_slot slot, 16 n FROM awa.queue_ring_state
        UNION ALL
        SELECT (SELECT max(generation) FROM awa.lease_ring_rotations), generation,
               current_slot, 8 FROM awa.lease_ring_state
        UNION ALL
        SELECT (SELECT max(generation) FROM awa.claim_ring_rotations), generation,
               current_slot, 8 FROM awa.claim_ring_state) l
 WHERE m.database = 'postgres'
 GROUP BY 1, 2, 3, 4};
my $both_sql = q{
SELECT count(*) FROM (SELECT ring FROM mixed.cursor_log GROUP BY ring
                      HAVING count(*) FILTER (WHERE backend = 'pre-ledger') > 0
                         AND count(*) FILTER (WHERE backend = 'awa_bgw worker') > 0) r};
sub bench_counts { return sql('SELECT (SELECT count(*) FROM bench.enqueued) || \',\' || (SELECT count(*) FROM bench.completed)'); }
my $folds0 = status('folds_run');
my $counts_mixed = bench_counts();
my $sampler = $node->background_psql('postgres');
$sampler->query_safe('SET jit = off');    # the cross join's default estimates would JIT it
my ($samples, $bad_samples, $first_bad) = (0, 0, '');
my $enough = 0;
wait_for(
	180,
	sub {
		my ($auth, $verdict, $no_window, $folds, $ledger_ok) = split /\|/, $sampler->query_safe($sample_sql);
		$samples++;
		unless ($auth eq 'columns'
			&& $verdict =~ /^waiting: 1 fresh runtime\(s\) not flip-aware/
			&& $no_window eq 't'
			&& $ledger_ok eq 't')
		{
			$bad_samples++;
			$first_bad ||= "$auth|$verdict|$no_window|$ledger_ok";
		}
		# folds_run counts the rollup fold and the ledger fold of each tick
		$enough = $folds >= $folds0 + 2 * 12 && $sampler->query_safe($both_sql) == 3;
		return $enough || $bad_samples;
	});
$sampler->quit;
ok($enough, 'both disciplines advanced every ring while 12 fold ticks passed');
is($bad_samples, 0,
	"in all $samples samples: authority columns, the auto-flip waiting with no window open, "
	  . 'the ledger never ahead of the columns, slot = generation mod slot_count')
  or diag("first bad sample: $first_bad");
note(sql(q{SELECT string_agg(ring || ': ' || backend || ' ' || n, ', ' ORDER BY ring, backend)
             FROM (SELECT ring, backend, count(*) n FROM mixed.cursor_log GROUP BY 1, 2) c}));

# ---------------------------------------------------------------------------------
# 4. the old rotator stops: the ledger catches up with the columns by compat rotations,
#    then the auto-flip flips once the stable period has passed
# ---------------------------------------------------------------------------------
system('touch', $rot_stop);
$rotator->finish;
my $counts_stop = bench_counts();
is($rotator->result(0), 0, 'the pre-ledger rotator ran without a failure')
  or diag(slurp_file("$dir/rotator.err"));
my $rounds = rotator_rounds();
cmp_ok($rounds, '>', 10, "the pre-ledger rotator ran $rounds rounds of the three rings");
my $old_seen = sql("SELECT last_seen_at FROM awa.runtime_instances WHERE instance_id = '$old_id'");

# each ring's columns and ledger in one snapshot, until each ring has been seen level
# (from then on only compat rotations move it, and they keep it level) or the flip came
my %level;
wait_for(
	120,
	sub {
		my ($auth, @eq) = split /\|/, sql(q{
SELECT a.authority,
       (SELECT max(generation) FROM awa.queue_ring_rotations) = q.generation,
       (SELECT max(generation) FROM awa.lease_ring_rotations) = l.generation,
       (SELECT max(generation) FROM awa.claim_ring_rotations) = c.generation
  FROM awa.ring_cursor_authority a, awa.queue_ring_state q, awa.lease_ring_state l,
       awa.claim_ring_state c});
		return 1 if $auth ne 'columns';
		for my $i (0 .. 2) { $level{ $rings[$i] } = 1 if $eq[$i] eq 't'; }
		return keys(%level) == 3;
	});
is(join(',', sort keys %level), 'claim,lease,queue',
	'before the flip, compat rotations bring every ring\'s ledger level with its columns');

my $window_since;
wait_for(120,
	sub {
		my ($verdict, $since, $auth) = split /\|/,
		  sql("SELECT m.auto_flip, coalesce(m.auto_flip_window_since::text, ''), a.authority
		         FROM awa.maintenance_status m, awa.ring_cursor_authority a
		        WHERE m.database = 'postgres'");
		$window_since = $since if $verdict eq 'stable window open';
		return defined $window_since || $auth eq 'ledger';
	});
ok(defined $window_since, 'the stable window opened once the old rotator went stale');
poll("SELECT authority = 'ledger' FROM awa.ring_cursor_authority")
  or die 'the auto-flip did not flip';
pass('the auto-flip flipped to ledger authority');
my $counts_flip = bench_counts();
like(status('auto_flip'), qr/^(flipped|ledger)$/, 'maintenance_status shows the flip');
wait_for(30, sub { log_count(qr/auto-flipped the ring cursor authority of database "postgres" from columns to ledger/) == 1 });
is(log_count(qr/auto-flipped the ring cursor authority of database "postgres" from columns to ledger/),
	1, 'the log has the auto-flipped line');
my $flipped_at = sql('SELECT flipped_at FROM awa.ring_cursor_authority');
is(sql("SELECT '$flipped_at'::timestamptz > '$old_seen'::timestamptz + interval '$fresh_window s'"),
	't', "the flip came after the old rotator's last heartbeat had gone stale");
is(sql("SELECT '$flipped_at'::timestamptz >= '$window_since'::timestamptz + interval '$stable_period s'"),
	't', 'and at least one stable period after the window opened');

# the cursor the columns held when the flip poisoned them; the ledger carries on from it
# (one snapshot per ring)
for my $r (@rings)
{
	my ($poisons, $cut, $at_flip, $now, $columns, $changes) = split /\|/, sql(qq{
WITH p AS (SELECT old_slot, old_gen FROM mixed.cursor_log
            WHERE ring = '$r' AND new_gen = -1 ORDER BY id LIMIT 1)
SELECT (SELECT count(*) || ',' || string_agg(backend, ',') FROM mixed.cursor_log
         WHERE ring = '$r' AND new_gen = -1),
       (SELECT old_slot || ',' || old_gen FROM p),
       (SELECT slot || ',' || generation || ',' || (n = generation - min_generation + 1)::int
          FROM mixed.ledgers_at_flip WHERE ring = '$r'),
       (SELECT (count(*) = max(generation) - min(generation) + 1)::int
               || ',' || (max(generation) >= (SELECT old_gen FROM p))::int
               || ',' || (bool_and(slot = generation % $slots{$r}))::int
          FROM awa.${r}_ring_rotations),
       (SELECT current_slot || ',' || generation || ','
               || (SELECT count(*) FROM awa.${r}_ring_slots WHERE generation <> -1)
          FROM awa.${r}_ring_state),
       (SELECT count(*) FILTER (WHERE new_gen <> old_gen + 1 OR new_slot <> new_gen % $slots{$r})
               || ',' || (count(*) = count(DISTINCT new_gen))::int
               || ',' || (max(new_gen) = (SELECT old_gen FROM p))::int
          FROM mixed.cursor_log WHERE ring = '$r' AND new_gen >= 0)});
	is($poisons, '1,awa_bgw worker', "$r ring: poisoned once, by the worker's flip");
	is($at_flip, "$cut,1",
		"$r ring: at the flip the ledger was gap-free and its newest row was the columns' last cursor ($cut)");
	is($now, '1,1,1', "$r ring: since then the ledger has gone on from there, with no gap");
	is($columns, '-1,-1,0', "$r ring: the columns and the slot generations read -1");
	# every change of the columns before the poison advanced it by one, each generation once
	is($changes, '0,1,1',
		"$r ring: every column change before the flip advanced the cursor by one, no generation twice");
}

# ---------------------------------------------------------------------------------
# 5. the old rotator comes back once: fenced, loudly, and nothing changes. Its target is
#    slot 0 (the poisoned columns read -1), and it skips a busy slot; so it is sent to the
#    lease ring once that ring is empty: the long job completes (its lease is no longer
#    carried forward), the worker turns the ring until every slot is pruned, and then
#    nothing writes there (the load does not heartbeat). The worker is paused meanwhile,
#    so that the ledgers must be exactly as they were.
# ---------------------------------------------------------------------------------
is(sql("SELECT awa.complete($long_id, $long_lease)"), 't', 'the long job completes');
poll("SELECT awa.ring_is_idle('lease')")
  or die 'the lease ring did not empty';
sql('ALTER SYSTEM SET awa_bgw.enabled = off');
$node->reload;
poll(
	"SELECT state = 'disabled' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not pause';
my $fence_ring = 'lease';
is(sql("SELECT awa.ring_slot_blocker('lease', 0) IS NULL"), 't', 'slot 0 of the lease ring is empty');
my $snapshot_sql = q{
SELECT (SELECT string_agg(slot || ':' || generation, ' ' ORDER BY generation) FROM awa.queue_ring_rotations)
    || ' / ' || (SELECT string_agg(slot || ':' || generation, ' ' ORDER BY generation) FROM awa.lease_ring_rotations)
    || ' / ' || (SELECT string_agg(slot || ':' || generation, ' ' ORDER BY generation) FROM awa.claim_ring_rotations)
    || ' / ' || (SELECT string_agg(current_slot || ',' || generation, ' ') FROM
                   (SELECT current_slot, generation FROM awa.queue_ring_state UNION ALL
                    SELECT current_slot, generation FROM awa.lease_ring_state UNION ALL
                    SELECT current_slot, generation FROM awa.claim_ring_state) s)
    || ' / ' || (SELECT count(*) FROM awa.queue_ring_slots WHERE generation <> -1)
             + (SELECT count(*) FROM awa.lease_ring_slots WHERE generation <> -1)
             + (SELECT count(*) FROM awa.claim_ring_slots WHERE generation <> -1)
    || ' / ' || (SELECT count(*) FROM mixed.cursor_log)};
my $before = sql($snapshot_sql);
my ($fout, $ferr) = ('', '');
my $fenced_ok = IPC::Run::run(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose',
		'-h', $host, '-p', $port, '-d', 'postgres',
		'-v', "ring=$fence_ring", '-v', "instance=$old_id", '-f', 'test/pre_ledger_rotator.sql'
	],
	'>', \$fout, '2>', \$ferr);
ok(!$fenced_ok, "the returning pre-ledger rotator ($fence_ring ring) exits with a failure");
like($ferr,
	qr/ERROR:  55000: pre-ledger ring cursor update rejected after the ledger-authority flip/,
	'its stderr has the 55000 fence error');
like($ferr, qr/${fence_ring}_ring_state: \(current_slot, generation\) \(-1, -1\) -> \(0, 0\)/,
	'rejecting its UPDATE of the poisoned columns');
is(sql($snapshot_sql), $before, 'the ledgers, the columns and the slot generations are unchanged');
# its heartbeat made it fresh again: the contract refuses meanwhile (one transaction, so
# that the blocker seen fresh is fresh for the upgrade's own check)
($rc, $out, $err) = $node->psql('postgres', qq{\\set VERBOSITY verbose
BEGIN;
SELECT count(*) = 1 AS fresh FROM awa.ring_authority_blockers('awa', $fresh_window) \\gset
\\if :fresh
ALTER EXTENSION awa_bgw UPDATE TO '0.8';
\\else
\\echo stale
\\endif
ROLLBACK;});
SKIP:
{
	skip 'the returned rotator went stale before the check (a very slow machine)', 1
	  if $out eq 'stale';
	like($err,
		qr/ERROR:  55000: awa_bgw 0\.8 drops the compat cursor columns, but 1 fresh runtime\(s\) are pre-flip/,
		'0.7 -> 0.8 is refused while the returned rotator is fresh');
}
sql('ALTER SYSTEM RESET awa_bgw.enabled');
$node->reload;
poll(
	"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not lead again';

# ---------------------------------------------------------------------------------
# 6. stop the load and drain: every job enqueued in the whole run completed once
# ---------------------------------------------------------------------------------
my $counts_end = bench_counts();
system('touch', $load_stop);
$load->finish;
is($load->result(0), 0, 'every pgbench segment ran to its end without an error')
  or diag(slurp_file("$dir/load.err"));
my $segments = () = slurp_file("$dir/load.out") =~ /number of transactions actually processed/g;
note("$segments pgbench segments");
my $drained = wait_for(
	300,
	sub {
		sql('CALL bench.consume(1000)');
		return sql("SELECT available = 0 AND running = 0 AND scheduled = 0 FROM awa.queue_counts('bench')")
		  eq 't';
	});
ok($drained, 'the queue drained');
my $enqueued = sql('SELECT count(*) FROM bench.enqueued');
sub grew { my @a = split /,/, $_[0]; my @b = split /,/, $_[1]; return ($b[0] > $a[0] && $b[1] > $a[1]) ? 1 : 0; }
is(grew($counts_mixed, $counts_stop) . grew($counts_flip, $counts_end), '11',
	"jobs were enqueued and completed beside the pre-ledger rotator ($counts_mixed -> $counts_stop) "
	  . "and after the flip ($counts_flip -> $counts_end)");
cmp_ok($enqueued, '>', 500, "$enqueued jobs were enqueued across the run");
my @once = split /\|/, sql(q{
SELECT (SELECT count(*) FROM bench.enqueued e
         WHERE NOT EXISTS (SELECT 1 FROM bench.completed c WHERE c.job_id = e.job_id)),
       (SELECT count(*) - count(DISTINCT job_id) FROM bench.enqueued),
       (SELECT count(*) - count(DISTINCT job_id) FROM bench.claimed),
       (SELECT count(*) - count(DISTINCT job_id) FROM bench.completed),
       (SELECT count(*) FROM bench.completed c
         WHERE NOT EXISTS (SELECT 1 FROM bench.enqueued e WHERE e.job_id = c.job_id)),
       (SELECT available || ',' || scheduled || ',' || running || ',' || completed || ',' || failed
          FROM awa.queue_counts('bench'))});
is($once[0], '0', 'every enqueued job was completed');
is($once[1], '0', 'no job id was enqueued twice');
is($once[2], '0', 'no job was claimed twice');
is($once[3], '0', 'no job was completed twice');
is($once[4], '0', 'only enqueued jobs were completed');
is($once[5], "0,0,0,$enqueued,0", 'queue_counts is exact');
is(sql('SELECT count(*) FROM mixed.cursor_log') + 0, (split / \/ /, $before)[5],
	'no column change since the flip');
is(status('errors') . ' ' . status("coalesce(last_error, '')"), '0 ', 'no maintenance step failed');

# ---------------------------------------------------------------------------------
# 7. contract: once the old rotator's row is stale, 0.7 -> 0.8 runs; the worker leads on
# ---------------------------------------------------------------------------------
sql('DROP SCHEMA mixed CASCADE');    # its triggers name the columns 0.8 drops
poll(
	"SELECT count(*) = 0 FROM awa.ring_authority_blockers('awa', $fresh_window)")
  or die 'the old rotator did not go stale';
sql("ALTER EXTENSION awa_bgw UPDATE TO '0.8'");
is(sql("SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw'"), '0.8', 'the contract to 0.8 ran');
is(sql(q{SELECT count(*) FROM pg_attribute WHERE attrelid = 'awa.queue_ring_state'::regclass
          AND attname IN ('current_slot', 'generation') AND NOT attisdropped}),
	'0', 'the compat columns are gone');
my ($q0, $c0) = split /\|/, sql('SELECT (SELECT max(generation) FROM awa.queue_ring_rotations), (SELECT max(generation) FROM awa.claim_ring_rotations)');
my $grew = wait_for(
	120,
	sub {
		sql("SELECT awa.enqueue('tick', 'k')");
		sql("SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('tick', 10)");
		return sql("SELECT (SELECT max(generation) FROM awa.queue_ring_rotations) >= $q0 + 3
		               AND (SELECT max(generation) FROM awa.claim_ring_rotations) >= $c0 + 3") eq 't';
	});
ok($grew, 'on 0.8 the worker rotates on: the queue and claim ledgers grow');
is(status("state || ',' || pid"), "leader,$worker_pid", 'the same worker still leads');
is(status('errors'), '0', 'no maintenance step failed on 0.8');

$node->stop;
done_testing();
