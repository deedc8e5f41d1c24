
# Copyright: the awa_bgw authors.
#
# 0.8 -> 0.9, 0.7 -> 0.9 (through the 0.8 contract) and 0.9 -> 0.10 under load, with
# the worker running and jobs in every state: available, running (one with a deadline
# the upgrade outlives: rescued after it), deferred, completed, failed, cancelled.
# pgbench producers and consumers (some rolling back) run while ALTER EXTENSION ...
# UPDATE is issued: the upgrade takes its locks by retrying (never closing a deadlock
# cycle, holding a session up for at most one short try) and goes through at the
# first lull, here when the load ends. A call held up by the upgrade's locks when it
# commits may fail once (the function it was running was replaced under it; its
# transaction rolls back and writes nothing), so the clients of that phase may stop;
# a consumer whose claim had committed and whose complete failed retries the complete,
# as an application does. Then the load runs again, on the new version, with no client
# failing. Afterwards: every committed enqueue is completed exactly once, by job id;
# every job of the earlier states ends where it should; the worker maintains the new
# version.

use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode qw(load_bench drain_bench);
use Test::More;

my $node = AwaNode->create('up09', qq{
awa_bgw.databases = 'postgres,seven,nine'
awa_bgw.queue_rotate_interval = '200ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '300ms'
awa_bgw.job_heartbeat_timeout = '10min'
max_connections = 60
max_worker_processes = 16
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE seven');

# sql($db, $query): the database first, as every call names one (load_bench and
# drain_bench come from t/AwaNode.pm)
sub sql { my ($db, $q) = @_; return $node->run_sql($q, $db); }

# one database per starting version, the same story in each: 0.8 and 0.7 to 0.9, and
# 0.9 to 0.10, whose update takes the ring families, the lanes, deferred_jobs and
# failed_jobs (sql-src/upgrade/lock-tables.sql) to add the group key to four tables
$node->safe_psql('postgres', 'CREATE DATABASE nine');
for my $case ([ 'postgres', '0.8', '0.9' ], [ 'seven', '0.7', '0.9' ], [ 'nine', '0.9', '0.10' ])
{
	my ($db, $from, $to) = @$case;
	sql($db, "CREATE EXTENSION awa_bgw VERSION '$from'");
	load_bench($db);
	$node->poll_query_until($db,
		"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = '$db'")
	  or die "no leader in $db";

	# the earlier states, in queue 'st': jobs 1-6
	sql($db, q{SELECT awa.enqueue('st', 'k' || i, max_attempts => 1) FROM generate_series(1, 6) i});
	sql($db, q{SELECT awa.enqueue('st', 'deferred', run_at => now() + interval '1 hour')});   # 7
	# each attempt's run_lease: the attempt number before 0.9, a token from 0.9 on
	my %lease = map { split /:/ } split /\n/,
	  sql($db, q{SELECT job_id || ':' || run_lease FROM awa.claim('st', 3, NULL) ORDER BY job_id});
	is(join(',', sort keys %lease), '1,2,3', "$db: jobs 1-3 claimed under $from");
	is(sql($db, "SELECT awa.complete(1, $lease{1})::text || awa.fail(2, $lease{2}, 'gave up')::text
	                     || awa.cancel(4)::text"),
		'truetruetrue', "$db: 1 completed, 2 failed (no attempts left), 4 cancelled");
	# job 5 claimed with a deadline that passes during the load: rescued later
	is(sql($db, q{SELECT job_id FROM awa.claim('st', 1, interval '3 seconds')}), '5',
		"$db: job 5 claimed with a short deadline");

	# the load, with the upgrade issued in the middle of it
	my @load = (
		'pgbench', '-n', '-c', '6', '-j', '2',
		'-f', 'bench/producer.sql@2', '-f', 'bench/consumer.sql@2',
		'-f', 't/load_producer_rollback.sql@1',
		'-h', $node->host, '-p', $node->port, $db);
	my ($out, $err) = ('', '');
	my $pgbench = IPC::Run::start([ @load, '-T', '12' ], '>', \$out, '2>', \$err);
	$node->poll_query_until($db, 'SELECT count(*) > 200 FROM bench.completed')
	  or die "$db: no load before the upgrade";
	sql($db, "ALTER EXTENSION awa_bgw UPDATE TO '$to'");
	my $at_upgrade = sql($db, 'SELECT last_value FROM awa.job_id_seq');
	pass("$db: ALTER EXTENSION awa_bgw UPDATE TO '$to' issued under load went through");
	$pgbench->finish;
	note("pgbench across the upgrade: exit " . $pgbench->result(0) . "\n$out\n$err");
	# a consumer whose claim committed before the upgrade and whose complete then failed
	# (the function was replaced under it) retries the complete, as an application
	# does on an error: the lease taken under the old version completes under $to
	my ($orphans, $retried) = split /,/, sql($db, q{
		WITH o AS (SELECT job_id, run_lease FROM bench.claimed c
		            WHERE NOT EXISTS (SELECT 1 FROM bench.completed d WHERE d.job_id = c.job_id)),
		     done AS (INSERT INTO bench.completed
		              SELECT job_id, run_lease FROM o WHERE awa.complete(job_id, run_lease)
		              RETURNING job_id)
		SELECT (SELECT count(*) FROM o) || ',' || (SELECT count(*) FROM done)});
	is($retried, $orphans,
		"$db: every claim whose complete failed across the upgrade completes on retry ($orphans)");
	is(sql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw'}), $to,
		"$db: at $to");
	# the errors counted once the worker has finished a step begun on $to (a step in
	# flight at the upgrade's commit has ended by then)
	my $ticks = sql($db, q{SELECT (rotations->'claim'->>'rotated')::bigint
	                         + (rotations->'claim'->>'skipped_idle')::bigint
	                         + (rotations->'claim'->>'skipped_busy')::bigint
	                         FROM awa.maintenance_status WHERE database = current_database()});
	$node->poll_query_until($db,
		"SELECT (rotations->'claim'->>'rotated')::bigint
		        + (rotations->'claim'->>'skipped_idle')::bigint
		        + (rotations->'claim'->>'skipped_busy')::bigint > $ticks + 1
		   FROM awa.maintenance_status WHERE database = current_database()")
	  or die "$db: the worker does not step on $to";
	my $errors_at_new = sql($db,
		q{SELECT errors FROM awa.maintenance_status WHERE database = current_database()});
	# the same load on $to
	($out, $err) = ('', '');
	$pgbench = IPC::Run::start([ @load, '-T', '6' ], '>', \$out, '2>', \$err);
	$pgbench->finish;
	is($pgbench->result(0), 0, "$db: the load runs on $to") or diag("pgbench: $out\n$err");
	cmp_ok(sql($db, "SELECT count(*) FROM bench.enqueued WHERE job_id > $at_upgrade"),
		'>', 100, "$db: the producers went on after the upgrade");

	# drain the load's queue, then exactly-once by job id
	my $drained = drain_bench(300, $db, 500);
	ok($drained, "$db: the load's queue drained");
	is(sql($db, 'SELECT count(*) FROM bench.enqueued e WHERE NOT EXISTS '
			  . '(SELECT 1 FROM bench.completed c WHERE c.job_id = e.job_id)'),
		'0', "$db: every committed enqueue was completed");
	is(sql($db, 'SELECT (SELECT count(*) - count(DISTINCT job_id) FROM bench.claimed) || \',\' '
			  . '|| (SELECT count(*) - count(DISTINCT job_id) FROM bench.completed)'),
		'0,0', "$db: no job claimed or completed twice");
	is(sql($db, 'SELECT count(*) FROM bench.claimed c WHERE NOT EXISTS '
			  . '(SELECT 1 FROM bench.enqueued e WHERE e.job_id = c.job_id)'),
		'0', "$db: nothing but committed enqueues was claimed");
	is(sql($db, q{SELECT completed FROM awa.queue_counts('bench')}),
		sql($db, 'SELECT count(*) FROM bench.enqueued'), "$db: the counts are exact");

	# the earlier states: 3 still running completes; 6 waiting is claimed once; 5 was
	# rescued (out of attempts: failed); 7 still deferred
	$node->poll_query_until($db,
		q{SELECT EXISTS (SELECT 1 FROM awa.failed_jobs WHERE job_id = 5 AND error LIKE 'rescued:%')})
	  or die "$db: job 5 was not rescued";
	pass("$db: the attempt whose deadline passed across the upgrade was rescued");
	is(sql($db, "SELECT awa.complete(3, $lease{3})"), 't',
		"$db: job 3, running across the upgrade, completes");
	is(sql($db, q{SELECT string_agg(job_id::text, ',') FROM awa.claim('st', 10)}), '6',
		"$db: job 6, waiting across the upgrade, is claimed once");
	is(sql($db, q{SELECT count(*) FROM awa.claim('st', 10)}), '0', "$db: and nothing else");
	is(sql($db, q{SELECT available || ',' || scheduled || ',' || running || ',' || completed
	                     || ',' || failed FROM awa.queue_counts('st')}),
		'0,1,1,2,2', "$db: st: job 7 scheduled, 6 running, 1 and 3 completed, 2 and 5 failed");
	# a step in flight when the upgrade committed may have failed once (logged, counted,
	# the worker goes on); none fails on $to
	is(sql($db, q{SELECT errors FROM awa.maintenance_status WHERE database = current_database()}),
		$errors_at_new, "$db: no maintenance step failed on $to");
	my $rotated = sql($db, q{SELECT (rotations->'queue'->>'rotated')::int
	                           FROM awa.maintenance_status WHERE database = current_database()});
	sql($db, q{SELECT awa.enqueue('tick', 'k')});
	$node->poll_query_until($db,
		"SELECT (rotations->'queue'->>'rotated')::int > $rotated
		   FROM awa.maintenance_status WHERE database = current_database()")
	  or die "$db: the worker does not rotate $to";
	pass("$db: the worker rotates $to");
}

$node->stop;
done_testing();
