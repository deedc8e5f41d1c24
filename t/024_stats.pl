# The cumulative counters of a database's maintenance (awa.worker_stats,
# awa.worker_ring_stats): they rise as the worker rotates, prunes, promotes,
# rescues and folds; they survive the worker's death and relaunch (they live in
# the extension's shared memory, by database); awa.stats_reset() zeroes them
# and sets stats_reset; a server restart zeroes them. Then every query of
# docs/monitoring/postgres_exporter.yml runs as a role that is only a member of
# pg_monitor and gives the columns its metrics name, and every metric that
# docs/monitoring/alerts.yml uses is one the exporter file defines.

use strict;
use warnings;

use CPAN::Meta::YAML;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('stats', q{
max_worker_processes = 16
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
awa_bgw.fold_interval = '300ms'
awa_bgw.rescue_interval = '200ms'
awa_bgw.horizon_pin_min_age = '60s'
});
$node->start;

sub stat_of
{
	my ($col) = @_;
	return sql("SELECT $col FROM awa.worker_stats WHERE database = 'postgres'");
}

# a round of job traffic: the queue ring turns only with rows in it, and every
# available job of the test's queues is claimed and completed (an unclaimed one
# would keep its slot from being pruned)
sub traffic
{
	sql(q{SELECT awa.enqueue('st', 'k') FROM generate_series(1, 3);
	      SELECT awa.complete(c.job_id, c.run_lease) FROM awa.claim('st', 100) c;
	      SELECT awa.complete(c.job_id, c.run_lease) FROM awa.claim('st_rescue', 100) c;});
	return;
}

sql('CREATE EXTENSION awa_bgw');
wait_leader('the worker leads');
is(stat_of('worker_starts'), '1', 'one worker start counted');
is(stat_of('leader_terms'), '1', 'one leader term counted');
my $reset0 = stat_of('stats_reset');
isnt($reset0, '', 'stats_reset is set from the first start');

#---------------------------------------------------------------------------
# 1. the counters rise with the work

traffic();
# a job due in a moment (promoted), one whose deadline passes (rescued)
sql(q{SELECT awa.enqueue('st', 'later', '{}', 0::smallint, now() + interval '300 ms')});
sql(q{SELECT awa.enqueue('st_rescue', 'k'); SELECT count(*) FROM awa.claim('st_rescue', 1, '1 ms')});
wait_until('the queue ring rotated and pruned',
	q{SELECT rotated > 0 AND pruned > 0 FROM awa.worker_ring_stats
	   WHERE database = 'postgres' AND ring = 'queue'});
# promoted: the job due later, then the rescued attempt's retry
wait_until('deferred jobs promoted and an attempt rescued',
	q{SELECT jobs_promoted >= 2 AND jobs_rescued >= 1 AND promote_runs > 0
	         AND rescue_runs > 0 FROM awa.worker_stats WHERE database = 'postgres'});
traffic();
wait_until('folds and the failed_jobs retention ran',
	q{SELECT folds_run > 0 AND purge_runs > 0 FROM awa.worker_stats
	   WHERE database = 'postgres'});
is( sql(q{SELECT (SELECT rotations FROM awa.worker_stats WHERE database = 'postgres')
	             >= 1 AND
	             (SELECT sum(rotated) FROM awa.worker_ring_stats
	               WHERE database = 'postgres') >= 1}),
	't', 'worker_stats.rotations sums the rings');
is(sql(q{SELECT count(*) FROM awa.worker_ring_stats WHERE database = 'postgres'}),
	'3', 'one row per ring');

#---------------------------------------------------------------------------
# 2. they survive the worker's death: the relaunched worker counts on

my $pid = status('pid');
my $rotated_before = sql(
	q{SELECT rotated FROM awa.worker_ring_stats WHERE database = 'postgres' AND ring = 'queue'});
my $promoted_before = stat_of('jobs_promoted');
is(sql("SELECT pg_terminate_backend($pid)"), 't', 'worker terminated');
wait_until('a new worker leads',
	qq{SELECT pid <> $pid AND state = 'leader' FROM awa.maintenance_status
	    WHERE database = 'postgres'});
is(stat_of('worker_starts'), '2', 'the relaunch counted as a second start');
is(stat_of('leader_terms'), '2', 'and a second leader term');
is(stat_of('stats_reset'), $reset0, 'stats_reset unchanged by the relaunch');
is( sql(
		qq{SELECT rotated >= $rotated_before FROM awa.worker_ring_stats
	        WHERE database = 'postgres' AND ring = 'queue'}),
	't', 'rotations kept across the relaunch');
is(sql("SELECT jobs_promoted >= $promoted_before FROM awa.worker_stats WHERE database = 'postgres'"),
	't', 'promotions kept across the relaunch');

#---------------------------------------------------------------------------
# 3. awa.stats_reset() zeroes them and sets stats_reset

# paused first, so that nothing counts between the reset and the reads
sql(q{ALTER SYSTEM SET awa_bgw.enabled = off; SELECT pg_reload_conf();});
wait_until('the worker pauses',
	q{SELECT state = 'disabled' FROM awa.maintenance_status WHERE database = 'postgres'});
is(sql('SELECT awa.stats_reset()'), 't', 'stats_reset() found this database');
is( sql(
		qq{SELECT worker_starts = 0 AND leader_terms = 0 AND promote_runs = 0
	             AND jobs_promoted = 0 AND rescue_runs = 0 AND jobs_rescued = 0
	             AND folds_run = 0 AND folds_stood_down = 0 AND rows_folded = 0
	             AND rows_trimmed = 0 AND purge_runs = 0 AND purges_stood_down = 0
	             AND failed_jobs_purged = 0 AND step_errors = 0 AND rotations = 0
	             AND prunes = 0 AND stats_reset > '$reset0'
	        FROM awa.worker_stats WHERE database = 'postgres'}),
	't', 'every worker counter zeroed, stats_reset moved on');
my $reset1 = stat_of('stats_reset');
is( sql(
		qq{SELECT bool_and(stats_reset = '$reset1' AND rotated + rotate_skipped_idle
	                       + rotate_skipped_busy + rotate_lost_cas + pruned + prune_noop
	                       + prune_already_pruned + prune_blocked + prune_skipped_active = 0)
	        FROM awa.worker_ring_stats WHERE database = 'postgres'}),
	't', 'every ring counter zeroed, with the same stats_reset');
sql(q{ALTER SYSTEM RESET awa_bgw.enabled; SELECT pg_reload_conf();});
wait_leader('the worker leads again');
traffic();
wait_until('they count again after the reset',
	q{SELECT rotated > 0 FROM awa.worker_ring_stats
	   WHERE database = 'postgres' AND ring = 'queue'});

#---------------------------------------------------------------------------
# 4. a server restart zeroes them (nothing is written to disk)

$pid = status('pid');
sql("SELECT pg_terminate_backend($pid)");
wait_until('a new worker leads again',
	qq{SELECT pid <> $pid AND state = 'leader' FROM awa.maintenance_status
	    WHERE database = 'postgres'});
is(stat_of('worker_starts'), '1', 'one start since the reset');
$node->restart;
wait_leader('the worker leads after the restart');
is(stat_of('worker_starts'), '1', 'the restart began the count again');
is(stat_of('leader_terms'), '1', 'leader terms too');
is(sql(qq{SELECT stats_reset > '$reset1' FROM awa.worker_stats WHERE database = 'postgres'}),
	't', 'stats_reset is the new start');

#---------------------------------------------------------------------------
# 5. the monitoring files: every exporter query runs as a pg_monitor member
# and yields the columns its metrics name; every alert uses metrics it defines

traffic();
sql(q{CREATE ROLE awa_exporter LOGIN; GRANT pg_monitor TO awa_exporter;});
my $dir = $ENV{TESTDIR} // '.';
my $exporter = CPAN::Meta::YAML->read("$dir/docs/monitoring/postgres_exporter.yml")
  or die CPAN::Meta::YAML->errstr;
my $alerts = CPAN::Meta::YAML->read("$dir/docs/monitoring/alerts.yml")
  or die CPAN::Meta::YAML->errstr;
my %metrics;
for my $ns (sort keys %{ $exporter->[0] })
{
	my $spec = $exporter->[0]{$ns};
	my @cols = map { (keys %$_)[0] } @{ $spec->{metrics} };
	my ($rc, $out, $err) = $node->psql(
		'postgres',
		"SET ROLE awa_exporter;\n\\pset footer off\n\\pset tuples_only off\n"
		  . "\\pset format unaligned\n$spec->{query}",
		extra_params => [ '-X', '-v', 'ON_ERROR_STOP=1' ]);
	is($rc, 0, "exporter query $ns runs as a pg_monitor member")
	  or diag($err);
	my ($header) = split /\n/, $out // '';
	my %got = map { $_ => 1 } split /\|/, $header // '';
	is_deeply([ grep { !$got{$_} } @cols ], [], "$ns: every metric column is there");
	my @rows = split /\n/, $out // '';
	cmp_ok(scalar(@rows) - 1, '>=', 1, "$ns: it returns rows");
	$metrics{"${ns}_$_"} = 1 for @cols;
}
for my $rule (map { @{ $_->{rules} } } @{ $alerts->[0]{groups} })
{
	my @used = $rule->{expr} =~ /\b(awa_[a-z_]+)\b/g;
	ok(@used, "alert $rule->{alert} uses awa metrics");
	is_deeply([ grep { !$metrics{$_} } @used ],
		[], "alert $rule->{alert}: every metric it uses is exported");
}

$node->stop;
done_testing();
