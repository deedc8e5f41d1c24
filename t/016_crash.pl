# Copyright: the awa_bgw authors.
#
# A server crash under load. Producers enqueue (each logging its job id in the same
# transaction), consumers claim and complete (some waiting for work, some heartbeating
# first), while the worker
# rotates and prunes every ring at short cadences; then the server stops in immediate
# mode in the middle of it and starts again. After recovery: every enqueue that
# committed is completed exactly once (attempts left open by the crash are rescued and
# retried), each ring's cursor is its ledger's newest row, every ring's prune target is
# never its current slot and the sealed slots drain, the worker leads and turns the
# rings again, and the shared memory that died with the server is rebuilt: a claim
# waiting after the restart is woken by a new enqueue.

use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = AwaNode->create('crash', qq{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '200ms'
awa_bgw.job_heartbeat_timeout = '3s'
awa_bgw.fold_interval = '1s'
awa_bgw.horizon_pin_min_age = '2s'
max_connections = 50
log_statement = 'none'
});
$node->start;

my @rings = ('queue', 'lease', 'claim');

# each ring's generation, comma-separated
sub generations
{
	return sql("SELECT " . join(" || ',' || ",
			map { "(SELECT generation FROM awa.ring_cursor('$_'))" } @rings)
		  . ' AS g');
}

sql('CREATE EXTENSION awa_bgw');
sql(slurp_file('bench/schema.sql'));
sql(q{ALTER DATABASE postgres SET bench.log = 'on'});
wait_until('the worker leads',
	"SELECT state FROM awa.maintenance_status WHERE database = 'postgres'", 'leader');

#---------------------------------------------------------------------------
# 1. The load, and the crash in the middle of it.

# 3 producer clients; 3 consumer clients (polling, waiting, or heartbeating first) in a
# pgbench of their own, so that a waiting claim never holds up a producer
my $load = start_load(600,
	producers => [ 3, '-f', 'bench/producer.sql' ],
	consumers => [
		3, '-f', 'bench/consumer.sql@2', '-f', 'bench/consumer_wait.sql@1',
		'-f', 't/load_consumer_heartbeat.sql@1'
	]);

my ($q0, $l0, $c0) = split /,/, generations();
wait_until('the load runs: jobs completed, every ring turned and was pruned, folds ran',
	"SELECT (SELECT count(*) FROM bench.completed) > 2000
	    AND (SELECT generation FROM awa.ring_cursor('queue')) > $q0 + 16
	    AND (SELECT generation FROM awa.ring_cursor('claim')) > $c0 + 8
	    AND (SELECT generation FROM awa.ring_cursor('lease')) > $l0 + 8
	    AND (SELECT (prunes->'queue'->>'pruned')::int > 0 AND (prunes->'claim'->>'pruned')::int > 0
	                AND folds_run > 0
	           FROM awa.maintenance_status WHERE database = 'postgres')");
ok($load->{$_}{h}->pumpable, "the load's $_ are still running") for sort keys %$load;

$node->stop('immediate');
for my $name (sort keys %$load)
{
	$load->{$name}{h}->finish;
	isnt($load->{$name}{h}->result(0), 0, "the load's $name lost their server");
}

#---------------------------------------------------------------------------
# 2. Recovery.

$node->start;
wait_until('a worker leads again after the restart',
	"SELECT state FROM awa.maintenance_status WHERE database = 'postgres'", 'leader');

# the cursor is the ledger's newest row in every ring
for my $ring (@rings)
{
	is( sql("SELECT c.generation = (SELECT max(generation) FROM awa.${ring}_ring_rotations)
	                AND c.slot = c.generation % awa_internal.ring_slot_count('$ring')
	           FROM awa.ring_cursor('$ring') c"),
		't', "$ring ring: after the crash its cursor is its ledger's newest row");
}

# a waiting claim after the restart: the waiter slots and the claim hints start empty
# and are rebuilt, so a new enqueue wakes it
sql(q{SELECT awa.register_queue('after')});
my ($wout, $werr) = ('', '');
my $waiter = IPC::Run::start(
	[
		'psql', '-X', '-At', '-d', $node->connstr('postgres') . ' application_name=waiter',
		'-c', q{SELECT job_id || ':' || kind || ':' || run_lease FROM awa.claim('after', 1, wait => '1 hour')}
	],
	'>', \$wout, '2>', \$werr);
wait_until('a claim waits for work after the restart',
	q{SELECT count(*) FROM awa.claim_waiters() w JOIN pg_stat_activity a USING (pid)
	   WHERE a.application_name = 'waiter'}, '1');
my $woken_id = sql(q{SELECT awa.enqueue('after', 'wake')});
my $woke = $node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'waiter'});
ok($woke, 'a new enqueue wakes the waiting claim') or $waiter->kill_kill;
$waiter->finish;
chomp $wout;
my ($w_id, $w_kind, $w_lease) = split /:/, $wout;
is("$w_id:$w_kind", "$woken_id:wake", 'which takes the new job');
# completed at once; should the rescue (job_heartbeat_timeout 3 s) close the attempt
# first on a slow machine, its retry is drained with the other queues below
sql("SELECT awa.complete($w_id, $w_lease)");


#---------------------------------------------------------------------------
# 3. Drain: attempts the crash left open are rescued and retried; then exactly once.

my $drained = 0;
my $deadline = time() + 240;
while (!$drained && time() < $deadline)
{
	sql('CALL bench.consume(1000)');
	$drained = sql(q{SELECT available = 0 AND running = 0 AND scheduled = 0
	                   FROM awa.queue_counts('bench')}) eq 't';
}
ok($drained, 'the queue drained after the restart');

# the worker turns the queue ring again (its counters restarted with it); after the
# drain, since a ring the crash left full turns only once its oldest slot's jobs are
# claimed
my ($q1, $l1, $c1) = split /,/, generations();
sql(q{SELECT awa.enqueue('tick', 'k')});
wait_until('the worker rotates after the restart',
	"SELECT (SELECT generation FROM awa.ring_cursor('queue')) > $q1
	    AND (rotations->'queue'->>'rotated')::int > 0
	   FROM awa.maintenance_status WHERE database = 'postgres'");

my $enqueued = sql('SELECT count(*) FROM bench.enqueued');
cmp_ok($enqueued, '>', 500, "the producers committed $enqueued enqueues");
is(sql('SELECT count(*) FROM bench.enqueued e
         WHERE NOT EXISTS (SELECT 1 FROM bench.completed c WHERE c.job_id = e.job_id)'),
	'0', 'every committed enqueue was completed');
is(sql('SELECT count(*) - count(DISTINCT job_id) FROM bench.completed'),
	'0', 'no job was completed twice');
is(sql('SELECT count(*) FROM bench.completed c
         WHERE NOT EXISTS (SELECT 1 FROM bench.enqueued e WHERE e.job_id = c.job_id)'),
	'0', 'only committed enqueues were completed');
is(sql(q{SELECT completed || '/' || failed FROM awa.queue_counts('bench')}),
	"$enqueued/0", 'queue_counts: completed exactly the committed enqueues, none failed');
is(sql(q{SELECT count(*) - count(DISTINCT job_id) FROM awa.terminal_jobs WHERE queue = 'bench'}),
	'0', 'no job has two terminal records');
is(sql(q{SELECT count(*) FROM awa.terminal_jobs t WHERE queue = 'bench'
           AND NOT EXISTS (SELECT 1 FROM bench.completed c WHERE c.job_id = t.job_id)}),
	'0', 'every terminal record is a logged completion');

#---------------------------------------------------------------------------
# 4. The rings after the drain: each turns to idle, every sealed slot pruned, prune never
#    aimed at a current slot, cursor = ledger.

# the side queues too: an available job (a retry of a rescued attempt) would keep its
# queue slot from being pruned
my $side = 0;
my $side_deadline = time() + 120;
while (!$side && time() < $side_deadline)
{
	sql("SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('$_', 100)")
	  for qw(after tick);
	$side = sql(q{SELECT sum(c.available + c.running + c.scheduled) = 0
	                FROM unnest(ARRAY['after', 'tick']) q, awa.queue_counts(q) c}) eq 't';
	sleep(0.2) unless $side;
}
ok($side, 'the side queues drained');
for my $ring (@rings)
{
	wait_until("$ring ring: every sealed slot is pruned",
		"SELECT sealed_slots_awaiting_prune = 0 FROM awa.ring_status WHERE ring = '$ring'");
	is( sql("SELECT c.generation = (SELECT max(generation) FROM awa.${ring}_ring_rotations)
	                AND o.slot IS DISTINCT FROM c.slot
	           FROM awa.ring_cursor('$ring') c
	           LEFT JOIN LATERAL awa_internal.ring_oldest_sealed(c.slot, c.generation,
	                                                    awa_internal.ring_slot_count('$ring')) o ON true"),
		't', "$ring ring: cursor is its ledger's newest row, and prune aims at a sealed slot");
}
is(status('errors'), '0', 'no maintenance step failed after the restart');

$node->stop;
done_testing();
