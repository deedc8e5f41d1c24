
# Copyright: the awa_bgw authors.
#
# Ordinary load never stands the folds down. With awa_bgw.horizon_pin_min_age at its
# default (5 s), 60 s of pgbench's built-in TPC-B (multi-statement transactions that sit
# idle in transaction holding a write xid between round trips) runs beside queue traffic
# (enqueue, claim, complete) while the rings turn every 200 ms and the folds run every
# second. Sampled every ~2 s during the run: no fold ever stood down, each ledger stays
# within one wrap plus what the rings can add between two folds, and the rollup delta
# table stays small. At the end the folds ran about once per interval, and every
# enqueued job was completed exactly once with awa.queue_counts matching.

use strict;
use warnings;
use IPC::Run;
use POSIX qw(ceil floor);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;
use Time::HiRes qw(time sleep);

my $FOLD_MS = 1000;      # awa_bgw.fold_interval
my $ROTATE_MS = 200;     # awa_bgw.{queue,lease,claim}_rotate_interval
my $LOAD_S = 60;         # length of both pgbench runs

my $node = AwaNode->create('fold_load', qq{
awa_bgw.queue_rotate_interval = '${ROTATE_MS}ms'
awa_bgw.lease_rotate_interval = '${ROTATE_MS}ms'
awa_bgw.claim_rotate_interval = '${ROTATE_MS}ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.fold_interval = '${FOLD_MS}ms'
awa_bgw.job_heartbeat_timeout = '10min'
max_connections = 50
});
$node->start;

is(sql('SHOW awa_bgw.horizon_pin_min_age'), '5s', 'horizon_pin_min_age is at its default');
sql('CREATE EXTENSION awa_bgw');
sql(slurp_file('bench/schema.sql'));
sql(q{ALTER DATABASE postgres SET bench.log = 'on'});
$node->poll_query_until('postgres',
	"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not become leader';

# the TPC-B tables (scale 1)
$node->command_ok([ 'pgbench', '-i', '-q', '-h', $node->host, '-p', $node->port, 'postgres' ],
	'pgbench -i');

my %slots = split /[|\n]/, sql('SELECT ring, slot_count FROM awa.ring_status');
is(join(',', map { $slots{$_} } qw(queue lease claim)), '16,8,8', 'slot counts');

# Bounds for the samples. The worker runs the folds and the ring steps in one loop, the
# fold first on a tick where both are due; each ring rotates at most once per
# rotate_interval, writing one ledger row, and the queue ring's prune appends at most one
# delta row per (queue, priority) with terminal jobs in the slot it truncates. So between
# two consecutive folds a ring adds at most ceil(fold/rotate) + 1 ledger rows, and the
# queue prune at most as many delta rows per key. A successful ledger fold leaves
# slot_count rows; a delta fold leaves none. The bounds allow twice that growth (two fold
# intervals' worth: a fold may commit between the three counts of one sample).
my $per_fold = ceil($FOLD_MS / $ROTATE_MS) + 1;
my %ledger_bound = map { $_ => $slots{$_} + 2 * $per_fold } keys %slots;
my $delta_keys = 1;      # only the queue 'bench', priority 0, has terminal jobs
my $delta_bound = 2 * $per_fold * $delta_keys;
note("bounds: ledgers $ledger_bound{queue}/$ledger_bound{lease}/$ledger_bound{claim}, deltas $delta_bound");

my $sample_sql = q{
SELECT s.folds_run, s.folds_stood_down, coalesce(s.pin_holder, ''),
       (SELECT count(*) FROM awa.queue_ring_rotations),
       (SELECT count(*) FROM awa.lease_ring_rotations),
       (SELECT count(*) FROM awa.claim_ring_rotations),
       (SELECT count(*) FROM awa.queue_terminal_rollup_deltas)
  FROM awa.maintenance_status s WHERE s.database = 'postgres'};

my ($run0, $stood0, $folded0, $trimmed0, $gen0) = split /\|/, sql(
	q{SELECT folds_run, folds_stood_down, rows_folded, rows_trimmed,
	         (SELECT max(generation) FROM awa.queue_ring_rotations)
	    FROM awa.maintenance_status WHERE database = 'postgres'});
is($stood0, '0', 'no fold stood down before the load');

# both loads at once: TPC-B with the built-in script, and producers + consumers of a queue
my ($tpcb_out, $tpcb_err, $queue_out, $queue_err) = ('', '', '', '');
my $t0 = time();
my $tpcb = IPC::Run::start(
	[ 'pgbench', '-c', '8', '-j', '2', '-T', $LOAD_S, '-h', $node->host, '-p', $node->port,
		'postgres' ],
	'>', \$tpcb_out, '2>', \$tpcb_err);
my $queue = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '4', '-j', '2', '-T', $LOAD_S,
		'-f', 'bench/producer.sql@1', '-f', 'bench/consumer.sql@1',
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$queue_out, '2>', \$queue_err);

# sample every ~2 s while the load runs
my ($samples, $bad_stood, $bad_ledger, $bad_delta) = (0, 0, 0, 0);
my %max = (queue => 0, lease => 0, claim => 0, delta => 0);
while (time() < $t0 + $LOAD_S)
{
	sleep(2);
	$tpcb->pump_nb;
	$queue->pump_nb;
	my ($run, $stood, $pin, $lq, $ll, $lc, $d) = split /\|/, sql($sample_sql);
	$samples++;
	$max{queue} = $lq if $lq > $max{queue};
	$max{lease} = $ll if $ll > $max{lease};
	$max{claim} = $lc if $lc > $max{claim};
	$max{delta} = $d if $d > $max{delta};
	if ($stood != $stood0)
	{
		$bad_stood++;
		diag(sprintf('%.1f s: folds stood down (%s), pin holder: %s', time() - $t0, $stood, $pin));
	}
	if ($lq > $ledger_bound{queue} || $ll > $ledger_bound{lease} || $lc > $ledger_bound{claim})
	{
		$bad_ledger++;
		diag(sprintf('%.1f s: ledger rows %s/%s/%s', time() - $t0, $lq, $ll, $lc));
	}
	if ($d > $delta_bound)
	{
		$bad_delta++;
		diag(sprintf('%.1f s: %s rollup delta rows', time() - $t0, $d));
	}
}
$tpcb->finish;
$queue->finish;
my $elapsed = time() - $t0;
is($tpcb->result(0), 0, 'TPC-B pgbench ran to the end') or diag($tpcb_err);
is($queue->result(0), 0, 'queue pgbench ran to the end') or diag($queue_err);
note($tpcb_out);
note($queue_out);
my ($tpcb_xacts) = $tpcb_out =~ /number of transactions actually processed: (\d+)/;
cmp_ok($tpcb_xacts // 0, '>', 100, 'TPC-B transactions ran');
note("max sampled: ledgers $max{queue}/$max{lease}/$max{claim}, deltas $max{delta}");

cmp_ok($samples, '>=', floor($LOAD_S / 2 / 2), "sampled $samples times during the load");
is($bad_stood, 0, 'no fold stood down at any sample');
is($bad_ledger, 0, 'every ledger stayed within its bound at every sample');
is($bad_delta, 0, 'the rollup delta table stayed within its bound at every sample');

my ($run1, $stood1, $folded1, $trimmed1, $gen1, $errors, $last_error) = split /\|/, sql(
	q{SELECT folds_run, folds_stood_down, rows_folded, rows_trimmed,
	         (SELECT max(generation) FROM awa.queue_ring_rotations), errors,
	         coalesce(last_error, '')
	    FROM awa.maintenance_status WHERE database = 'postgres'});
is($stood1, $stood0, 'folds_stood_down did not move during the whole run');

# each fold tick runs two counted folds (the rollup deltas, the ledgers)
my $ticks = ($run1 - $run0) / 2;
my $expected = $elapsed * 1000 / $FOLD_MS;
note(sprintf('%d fold ticks in %.1f s (%.0f intervals)', $ticks, $elapsed, $expected));
cmp_ok($ticks, '>=', floor($expected / 3), 'the folds ran about once per fold interval');

# positive controls: the rings turned past a wrap, and the folds did real work
cmp_ok($gen1 - $gen0, '>', 3 * $slots{queue}, 'the queue ring turned more than three wraps');
cmp_ok($max{queue}, '>=', $slots{queue}, 'the queue ledger held a full wrap when sampled');
cmp_ok($folded1, '>', $folded0, 'the folds drained rollup deltas');
cmp_ok($trimmed1, '>', $trimmed0, 'the folds trimmed ledger rows');
is($errors, '0', "no maintenance step failed $last_error");

# drain what is left of the queue, then check exactly-once by job id
my $drained = 0;
my $drain_deadline = time() + 300;
while (!$drained && time() < $drain_deadline)
{
	sql('CALL bench.consume(1000)');
	$drained = sql(
		"SELECT available = 0 AND running = 0 AND scheduled = 0 FROM awa.queue_counts('bench')"
	) eq 't';
}
ok($drained, 'the queue drained');

my $enqueued = sql('SELECT count(*) FROM bench.enqueued');
cmp_ok($enqueued, '>', 1000, "the producers enqueued $enqueued jobs");
is(sql('SELECT count(*) FROM bench.enqueued e WHERE NOT EXISTS (SELECT 1 FROM bench.completed c WHERE c.job_id = e.job_id)'),
	'0', 'every committed enqueue was completed');
is(sql('SELECT count(*) - count(DISTINCT job_id) FROM bench.completed'),
	'0', 'no job was completed twice');
is(sql('SELECT count(*) FROM bench.completed c WHERE NOT EXISTS (SELECT 1 FROM bench.enqueued e WHERE e.job_id = c.job_id)'),
	'0', 'only enqueued jobs were completed');
is(sql("SELECT completed || ',' || failed FROM awa.queue_counts('bench')"),
	"$enqueued,0", 'queue_counts matches the completions exactly');

# once the traffic stops the folds catch up: no delta left, every ledger at one wrap,
# and the counts are still exact, now from the rollups alone
$node->poll_query_until('postgres',
	qq{SELECT NOT EXISTS (SELECT 1 FROM awa.queue_terminal_rollup_deltas)
	     AND (SELECT count(*) FROM awa.queue_ring_rotations) <= $slots{queue}
	     AND (SELECT count(*) FROM awa.lease_ring_rotations) <= $slots{lease}
	     AND (SELECT count(*) FROM awa.claim_ring_rotations) <= $slots{claim}})
  or die 'the folds did not catch up after the load';
pass('after the load the deltas are drained and the ledgers are at one wrap');
is(sql("SELECT completed FROM awa.queue_counts('bench')"), $enqueued, 'counts still exact');

# TPC-B's own bookkeeping is consistent (the load did what it says)
is(sql(qq{SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(delta) FROM pgbench_history)
	        AND (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT sum(delta) FROM pgbench_history)
	        AND (SELECT count(*) FROM pgbench_history) >= $tpcb_xacts}),
	't', 'TPC-B balances match its history');
is(status('folds_stood_down'), $stood0, 'still no fold stood down');

$node->stop;
done_testing();
