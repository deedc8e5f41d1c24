
# Copyright: the awa_bgw authors.
#
# Under a pinned horizon the rings turn slower: each prune's TRUNCATE writes pg_class row
# versions no vacuum can remove until the pin ends, so while the folds stand down a ring
# rotates (and prunes) at most once per awa_bgw.pinned_rotate_interval. With the rings at
# 100 ms, the folds at 500 ms and the pinned cadence at 2 s, under traffic:
#  - before the pin every ring turns at its own cadence (8 rotations sooner than the
#    pinned cadence would allow);
#  - once the folds stand down under a REPEATABLE READ pin, each ring rotates at least
#    once and at most once per 2 s (plus one) over 10 s, and every job is still claimed;
#  - after the pin, once a fold has run, the rings turn at their own cadence again.

use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $PINNED_S = 2;
my $node = AwaNode->create(
	'pinned_cadence', qq{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.fold_interval = '500ms'
awa_bgw.pinned_rotate_interval = '${PINNED_S}s'
awa_bgw.horizon_pin_min_age = '1s'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.finished_job_window = 0
});
$node->start;
# (finished_job_window 0: the window's default 10 s would hold the claim ring's turns
# to about 10 s / 6 once it is full, docs/storage.md A.19; this file measures the
# cadence itself)
$node->create_extension_and_lead;
load_bench();

my @rings = qw(queue lease claim);

# the SQL of a ring's newest generation
sub generation_sql
{
	my ($ring) = @_;
	return "(SELECT max(generation) FROM awa.${ring}_ring_rotations)";
}

# each ring's newest generation
sub generations
{
	return split /\|/, sql('SELECT ' . join ', ', map { generation_sql($_) } @rings);
}

# Every ring turns at its own cadence, not at the pinned one: each makes 8 rotations
# (polled, with the harness's generous deadline) sooner than the pinned cadence would
# allow them, 7 x 2 s after a first rotation that may itself be up to 2 s away. At the
# rings' 100 ms it takes about a second; a slow machine is not a failure, a ring still
# held to the pinned cadence is.
sub turns_at_own_cadence
{
	my ($when) = @_;
	my @g0 = generations();
	my $t0 = time;
	my $cond = join ' AND ', map { generation_sql($rings[$_]) . " >= $g0[$_] + 8" } 0 .. $#rings;
	ok($node->poll_query_until('postgres', "SELECT $cond"), "$when every ring rotates 8 times")
	  or return;
	my $took = time - $t0;
	cmp_ok($took, '<', 7 * $PINNED_S,
		sprintf("$when the rings turn faster than the pinned cadence (8 rotations in %.1f s)", $took));
	return;
}

# the rotations of each ring over $secs seconds
sub rotations_over
{
	my ($secs) = @_;
	my @g0 = generations();
	sleep($secs);
	my @g1 = generations();
	return map { $g1[$_] - $g0[$_] } 0 .. $#rings;
}

# traffic for the whole test: 2 producers at 50 jobs/s in all, and 2 consumers, in a
# pgbench of their own, that wait for work and heartbeat the attempt they took; a
# consumer's wait never holds up a producer, so the load cannot stall itself
my $load = start_load(60,
	producers => [ 2, '-R', '50', '-f', 'bench/producer.sql' ],
	consumers => [ 2, '-f', 't/load_consumer_heartbeat.sql' ]);
$node->poll_query_until('postgres', 'SELECT count(*) > 50 FROM bench.completed')
  or die 'the load did not start';

turns_at_own_cadence('before the pin');

my $pin = $node->background_psql('postgres');
$pin->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$pin->query_safe('SELECT count(*) FROM pg_class');
my $stood = status('folds_stood_down');
wait_until('the folds stand down under the pin',
	"SELECT folds_stood_down >= $stood + 2 FROM awa.maintenance_status
	  WHERE database = 'postgres'");
my $completed0 = sql('SELECT count(*) FROM bench.completed');
my @pinned = rotations_over(10);
for (0 .. $#rings)
{
	cmp_ok($pinned[$_], '>=', 1, "under the pin the $rings[$_] ring still rotates ($pinned[$_])");
	cmp_ok($pinned[$_], '<=', 10 / $PINNED_S + 1,
		"under the pin the $rings[$_] ring rotates at most once per ${PINNED_S} s");
}
ok(!grep({ !$_->{h}->pumpable } values %$load), 'the load ran through the pin');
cmp_ok(sql('SELECT count(*) FROM bench.completed'), '>', $completed0 + 100,
	'under the pin jobs are still completed');
$pin->query_safe('COMMIT');
$pin->quit;

my $run = status('folds_run');
wait_until('a fold runs after the pin',
	"SELECT folds_run > $run FROM awa.maintenance_status WHERE database = 'postgres'");
turns_at_own_cadence('after the pin');

finish_load($load);
$node->stop;
done_testing();
