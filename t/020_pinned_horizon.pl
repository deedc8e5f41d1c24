
# Copyright: the awa_bgw authors.
#
# The dead-tuple gate: what sets awa_bgw apart, checked on every run. A fresh install,
# the worker at its default cadences but two (the folds every 5 s and the pinned
# rotations every 3 s, so that each pin sees both happen several times), producers at
# about 200 jobs/s and waiting consumers; then, in the same database, a REPEATABLE READ
# snapshot held for 20 s, then an idle-in-transaction session holding an xid for 20 s
# (each longer while a fold has not stood down or a ring has not rotated twice under
# it: conditions polled, not timed). Throughout each pin:
#  - every ring keeps rotating (slower once the folds stand down: at most once per
#    awa_bgw.pinned_rotate_interval, t/028_pinned_cadence.pl);
#  - no control-plane relation (ring state, ring slots, ring_cursor_authority, the
#    rotation ledgers, the terminal rollups and their deltas) gains a dead tuple
#    (pgstattuple, from once the pin is older than awa_bgw.horizon_pin_min_age, when a
#    fold that started before it has ended, to just before it is released);
#  - the folds stand down (folds_stood_down grows, folds_run does not);
# after the pins the folds run again; over the whole run the ring state and slot
# tables see no UPDATE or DELETE; and every job enqueued is completed exactly once.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;
use Time::HiRes qw(time sleep);

my $PIN_SECS = 20;
my $MEASURE_FROM = 8;    # s into a pin: past min_age (5 s) and any fold begun before

my $node = AwaNode->create('pinned', qq{
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.fold_interval = '5s'
awa_bgw.pinned_rotate_interval = '3s'
max_connections = 30
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION awa_bgw');
$node->safe_psql('postgres', 'CREATE EXTENSION pgstattuple');
$node->safe_psql('postgres', slurp_file('bench/schema.sql'));
$node->safe_psql('postgres', q{ALTER DATABASE postgres SET bench.log = 'on'});
$node->poll_query_until('postgres',
	"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not become leader';
# the authority is the ledger before the load (a flip during a pin would be an UPDATE)
$node->poll_query_until('postgres', "SELECT awa_internal.ring_authority() = 'ledger'")
  or die 'the authority did not flip to the ledger';

my @rings = qw(queue lease claim);
my @control = (
	'awa.ring_cursor_authority',
	'awa.queue_terminal_rollups',
	'awa.queue_terminal_rollup_deltas',
	map { ("awa.${_}_ring_state", "awa.${_}_ring_slots", "awa.${_}_ring_rotations") } @rings);

sub generations
{
	return map {
		sql("SELECT generation FROM awa.${_}_ring_rotations ORDER BY generation DESC LIMIT 1")
	} @rings;
}

# dead tuples per control-plane relation, "rel=n" joined
sub dead_tuples
{
	return join ' ',
	  map { "$_=" . sql("SELECT dead_tuple_count FROM pgstattuple('$_')") } @control;
}

# the load, for the whole test: 2 producers at 200 jobs/s in all, 2 waiting consumers
# (half their calls heartbeat the attempt before completing it: the lease ring turns)
my $run_secs = 10 + 2 * ($PIN_SECS + 10) + 20;
my $load = start_load($run_secs,
	producers => [ 2, '-R', '200', '-f', 'bench/producer.sql' ],
	consumers => [ 2, '-f', 'bench/consumer_wait.sql@1', '-f', 't/load_consumer_heartbeat.sql@1' ]);
$node->poll_query_until('postgres', 'SELECT count(*) > 500 FROM bench.completed')
  or die 'the load did not start';

# for each ring, whether it has rotated fewer than $n times between @$from and @$to
sub pairwise_behind
{
	my ($from, $to, $n) = @_;
	return map { $to->[$_] - $from->[$_] < $n } 0 .. $#$from;
}

# one pin: begun by $begin in a session of its own, held $PIN_SECS s (or until a fold
# stood down and every ring rotated twice under it), then ended
sub pin
{
	my ($kind, $begin) = @_;
	my $session = $node->background_psql('postgres');
	$session->query_safe($_) for @$begin;
	my $t0 = time();
	sleep(0.2) while time() - $t0 < $MEASURE_FROM;

	my @gen0 = generations();
	my $dead0 = dead_tuples();
	my ($run0, $stood0) = (status('folds_run'), status('folds_stood_down'));
	# the pin is held $PIN_SECS at least, and until a fold has stood down and each ring
	# has rotated twice since the readings above (on a slow machine they take a while),
	# within the load's run
	my $deadline = time() + $PIN_SECS + 40;
	sleep(0.5)
	  while time() < $deadline
	  && (time() - $t0 < $PIN_SECS
		|| status('folds_stood_down') <= $stood0
		|| grep { $_ } pairwise_behind(\@gen0, [ generations() ], 2));
	my ($run1, $stood1) = (status('folds_run'), status('folds_stood_down'));
	my $dead1 = dead_tuples();
	my @gen1 = generations();
	$session->query_safe('COMMIT');
	$session->quit;

	is($dead1, $dead0, "$kind pin: no control-plane relation gained a dead tuple");
	for my $i (0 .. $#rings)
	{
		# under the pin a ring rotates at most once per pinned_rotate_interval (3 s) once
		# the folds stand down, and at least that often: the pin lasts until 2 are seen
		cmp_ok($gen1[$i] - $gen0[$i], '>=', 2,
			"$kind pin: the $rings[$i] ring kept rotating (" . ($gen1[$i] - $gen0[$i]) . ' rotations)');
	}
	cmp_ok($stood1, '>', $stood0, "$kind pin: the folds stood down");
	is($run1, $run0, "$kind pin: no fold ran");
	return $run1;
}

pin('REPEATABLE READ',
	[ 'BEGIN ISOLATION LEVEL REPEATABLE READ', 'SELECT count(*) FROM pg_class' ]);
# between the pins the folds catch up (the REPEATABLE READ one's deltas are folded)
my $run_between = status('folds_run');
$node->poll_query_until('postgres',
	"SELECT folds_run > $run_between FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the folds did not run after the first pin';
my $run_after = pin('idle-in-transaction xid',
	[ 'BEGIN', 'SELECT pg_current_xact_id()' ]);
ok( $node->poll_query_until('postgres',
		"SELECT folds_run > $run_after FROM awa.maintenance_status WHERE database = 'postgres'"),
	'the folds ran again after the pins');

finish_load($load);

# drain, then exactly-once by job id
my $drained = 0;
my $deadline = time() + 120;
while (!$drained && time() < $deadline)
{
	sql('CALL bench.consume(1000)');
	$drained =
	  sql("SELECT available = 0 AND running = 0 AND scheduled = 0 FROM awa.queue_counts('bench')")
	  eq 't';
}
ok($drained, 'the queue drained');
my $enqueued = sql('SELECT count(*) FROM bench.enqueued');
cmp_ok($enqueued, '>', 5000, "the producers enqueued $enqueued jobs");
is(sql('SELECT count(*) FROM bench.enqueued e WHERE NOT EXISTS (SELECT 1 FROM bench.completed c WHERE c.job_id = e.job_id)'),
	'0', 'every enqueued job was completed');
is(sql('SELECT count(*) - count(DISTINCT job_id) FROM bench.completed'),
	'0', 'no job was completed twice');
is(sql("SELECT completed, failed FROM awa.queue_counts('bench')"),
	"$enqueued|0", 'queue_counts matches the completions exactly');
is(status('errors'), '0', 'no maintenance step failed');

# no UPDATE or DELETE on ring state and slot rows over the whole run (statistics
# flushed by the worker; positive control: the ledgers' inserts arrived)
my $gens = 0;
$gens += $_ for generations();
$node->poll_query_until('postgres',
	"SELECT sum(n_tup_ins) >= $gens FROM pg_stat_user_tables WHERE schemaname = 'awa' AND relname ~ '_ring_rotations\$'"
) or die 'statistics did not arrive';
is(sql(q{SELECT sum(n_tup_upd + n_tup_del) FROM pg_stat_user_tables
          WHERE schemaname = 'awa' AND relname ~ '_ring_(state|slots)$'}),
	'0', 'ring state and slot tables: no UPDATE or DELETE');

$node->stop;
done_testing();
