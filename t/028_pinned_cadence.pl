
# Copyright: the awa_bgw authors.
#
# Under a pinned horizon the rings turn slower: each prune's TRUNCATE writes pg_class row
# versions no vacuum can remove until the pin ends, so while the folds stand down a ring
# rotates (and prunes) at most once per awa_bgw.pinned_rotate_interval. With the rings at
# 100 ms, the folds at 500 ms and the pinned cadence at 2 s, under traffic:
#  - before the pin every ring turns at its own cadence (many rotations in 4 s);
#  - once the folds stand down under a REPEATABLE READ pin, each ring rotates at least
#    once and at most once per 2 s (plus one) over 10 s, and every job is still claimed;
#  - after the pin, once a fold has run, the rings turn at their own cadence again.

use strict;
use warnings;
use IPC::Run;
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
});
$node->start;
$node->create_extension_and_lead;
load_bench();

my @rings = qw(queue lease claim);

# the rotations of each ring over $secs seconds
sub rotations_over
{
	my ($secs) = @_;
	my $q = join ', ', map { "(SELECT max(generation) FROM awa.${_}_ring_rotations)" } @rings;
	my @g0 = split /\|/, sql("SELECT $q");
	sleep($secs);
	my @g1 = split /\|/, sql("SELECT $q");
	return map { $g1[$_] - $g0[$_] } 0 .. $#rings;
}

# traffic for the whole test: 50 jobs/s, claimed by a waiting consumer that heartbeats
my ($out, $err) = ('', '');
my $load = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '2', '-j', '2', '-T', '60', '-R', '50',
		'-f', 'bench/producer.sql@1', '-f', 't/load_consumer_heartbeat.sql@1',
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);
$node->poll_query_until('postgres', 'SELECT count(*) > 50 FROM bench.completed')
  or die 'the load did not start';

my @before = rotations_over(4);
cmp_ok($before[$_], '>=', 8, "before the pin the $rings[$_] ring turns at its cadence ($before[$_])")
  for 0 .. $#rings;

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
cmp_ok(sql('SELECT count(*) FROM bench.completed'), '>', $completed0 + 100,
	'under the pin jobs are still completed');
$pin->query_safe('COMMIT');
$pin->quit;

my $run = status('folds_run');
wait_until('a fold runs after the pin',
	"SELECT folds_run > $run FROM awa.maintenance_status WHERE database = 'postgres'");
# (the first rotation after it may still be one pinned cadence away: 2 s of the 4)
my @after = rotations_over(4);
cmp_ok($after[$_], '>=', 8, "after the pin the $rings[$_] ring turns at its cadence ($after[$_])")
  for 0 .. $#rings;

$load->finish;
is($load->result(0), 0, 'pgbench ran to the end') or diag($err);
$node->stop;
done_testing();
