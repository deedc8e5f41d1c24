# Copyright: the awa_bgw authors.
#
# Enqueue at REPEATABLE READ and SERIALIZABLE under load (docs/storage.md A.18), with the
# worker turning and pruning every ring every 200 ms: 4 serializable producers (each reads
# and writes an application table of its own, then enqueues, in one transaction), 4
# repeatable-read producers enqueueing batches (some roll back), 2 serializable producers
# of unique jobs (keys shared between them, so that they also wait on each other's key),
# each holding its snapshot for up to 300 ms before the enqueue, so that the ring turns
# under many of them; 4
# consumers that claim at READ COMMITTED and complete in a serializable transaction that
# also records the job in a table of their own (what they leave is drained at READ
# COMMITTED after the load). No producer transaction fails with a serialization error (pgbench
# counts them; a control run with a write skew on a shared table shows that it does);
# every committed enqueue is completed exactly once and no rolled-back one is claimed.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('isoload', qq{
awa_bgw.queue_rotate_interval = '200ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.promote_interval = '100ms'
max_connections = 50
max_pred_locks_per_transaction = 128
});
$node->start;
$node->create_extension_and_lead;
load_bench();
sql(join "\n", map {
	"CREATE TABLE bench.app_ser_$_ (n int); CREATE TABLE bench.app_rr_$_ (n int);"
	  . " CREATE TABLE bench.app_done_$_ (job_id bigint);"
	  . " CREATE TABLE bench.app_uq_$_ (job_id bigint);" } 0 .. 3);
sql('CREATE TABLE bench.app_shared (n int)');

# the scripts: the first statement takes the transaction's snapshot
my %scripts = (
	ser => q{\set d random(0, 300)
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT count(*) FROM bench.app_ser_:client_id;
SELECT pg_sleep(:d / 1000.0);
INSERT INTO bench.app_ser_:client_id VALUES (1);
SELECT bench.produce(1);
COMMIT;
},
	# a unique enqueue: its id (new, or the key's job still in the default states) is
	# recorded in the client's own table, read by nobody during the load
	ser_unique => q{\set d random(0, 300)
\set k random(1, 10)
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT count(*) FROM bench.app_uq_:client_id;
SELECT pg_sleep(:d / 1000.0);
INSERT INTO bench.app_uq_:client_id
SELECT awa.enqueue('bench', 'noop', '{"u": 1}', unique_key => 'k-' || :k);
COMMIT;
},
	rr_batch => q{\set d random(0, 300)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM bench.app_rr_:client_id;
SELECT pg_sleep(:d / 1000.0);
INSERT INTO bench.app_rr_:client_id VALUES (1);
SELECT bench.produce(8);
COMMIT;
},
	rr_rollback => q{BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM bench.app_rr_:client_id;
SELECT bench.produce(1);
ROLLBACK;
},
	# a claim at READ COMMITTED, then the work recorded and the job completed in one
	# serializable transaction (bench.finish logs the claim and the completion)
	ser_consumer => q{SELECT coalesce(max(job_id), 0) AS job_id, coalesce(max(run_lease), 0) AS run_lease
  FROM awa.claim('bench', 1, wait => '1 s') \gset
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT count(*) FROM bench.app_done_:client_id;
INSERT INTO bench.app_done_:client_id SELECT :job_id WHERE :job_id <> 0;
SELECT bench.finish(:job_id, :run_lease);
COMMIT;
},
	# the control: every client reads and writes one shared table (a write skew)
	skew => q{BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT count(*) FROM bench.app_shared;
SELECT pg_sleep(0.01);
INSERT INTO bench.app_shared VALUES (1);
COMMIT;
},
);
my %file;
for my $name (keys %scripts)
{
	$file{$name} = $node->basedir . "/iso_$name.sql";
	open my $fh, '>', $file{$name} or die $!;
	print $fh $scripts{$name};
	close $fh;
}

# pgbench's count of failed transactions (serialization failures, with --max-tries 1)
sub failed
{
	my ($out) = @_;
	return $out =~ /number of failed transactions: (\d+)/ ? $1 : 'none reported';
}

# the control first: the count is read, and a write skew does fail
my $control = start_load(8, skew => [ 4, '--max-tries=1', '-f', $file{skew} ]);
finish_load($control);
cmp_ok(failed($control->{skew}{out}), '>', 0,
	'control: serializable transactions with a write skew on a shared table fail, counted');

my $gen0 = sql('SELECT max(generation) FROM awa.queue_ring_rotations');
my $load = start_load(30,
	ser => [ 4, '--max-tries=1', '-f', $file{ser} ],
	rr => [ 4, '--max-tries=1', '-f', "$file{rr_batch}\@3", '-f', "$file{rr_rollback}\@1" ],
	ser_unique => [ 2, '--max-tries=1', '-f', $file{ser_unique} ],
	ser_consumers => [ 4, '--max-tries=1', '-f', $file{ser_consumer} ]);
finish_load($load);
note($load->{$_}{out}) for sort keys %$load;
is(failed($load->{ser}{out}), 0, 'no serializable producer failed');
is(failed($load->{rr}{out}), 0, 'no repeatable-read producer failed');
is(failed($load->{ser_unique}{out}), 0, 'no serializable unique producer failed');
is(failed($load->{ser_consumers}{out}), 0, 'no serializable completion failed');
cmp_ok(sql('SELECT max(generation) FROM awa.queue_ring_rotations') - $gen0, '>', 20,
	'the queue ring turned under the producers');

ok(drain_bench(300), 'the queue drained');
# the unique jobs join the jobs enqueued: each id once, however many enqueues returned it
my $uq_all = join(' UNION ALL ', map { "SELECT job_id FROM bench.app_uq_$_" } 0 .. 1);
my ($uq_calls, $uq_jobs) = split /\|/, sql("SELECT count(*), count(DISTINCT job_id) FROM ($uq_all) u");
cmp_ok($uq_jobs, '>', 0, "the unique producers enqueued $uq_jobs jobs");
cmp_ok($uq_jobs, '<', $uq_calls, "... in $uq_calls enqueues: a key's job in its states was returned again");
sql("INSERT INTO bench.enqueued SELECT DISTINCT job_id FROM ($uq_all) u");
my $enqueued = sql('SELECT count(*) FROM bench.enqueued');
cmp_ok($enqueued, '>', 200, "the producers enqueued $enqueued jobs");
my $app_rows = sql('SELECT ' . join(' + ', map { "(SELECT count(*) FROM bench.app_ser_$_) + 8 * (SELECT count(*) FROM bench.app_rr_$_)" } 0 .. 3)) + $uq_jobs;
is($enqueued, $app_rows,
	'the jobs are exactly those of the committed transactions (one per serializable one, 8 per batch, one per unique job)');
is(sql('SELECT count(*) FROM bench.enqueued e WHERE NOT EXISTS (SELECT 1 FROM bench.completed c WHERE c.job_id = e.job_id)'),
	'0', 'every committed enqueue was completed');
is(sql('SELECT count(*) - count(DISTINCT job_id) FROM bench.completed'),
	'0', 'no job was completed twice');
my $ser_done = sql('SELECT ' . join(' + ', map { "(SELECT count(*) FROM bench.app_done_$_)" } 0 .. 3));
cmp_ok($ser_done, '>', 0, "$ser_done jobs were completed in serializable transactions");
is(sql('SELECT count(*) FROM ('
	  . join(' UNION ALL ', map { "SELECT job_id FROM bench.app_done_$_" } 0 .. 3)
	  . ') d WHERE NOT EXISTS (SELECT 1 FROM bench.completed c WHERE c.job_id = d.job_id)'),
	'0', '... each of them completed (its record committed with its completion)');
is(sql('SELECT count(*) - count(DISTINCT job_id) FROM bench.claimed'),
	'0', 'no job was claimed twice');
is(sql('SELECT count(*) FROM bench.claimed c WHERE NOT EXISTS (SELECT 1 FROM bench.enqueued e WHERE e.job_id = c.job_id)'),
	'0', 'no rolled-back enqueue was ever claimed');
is(sql(q{SELECT completed, failed FROM awa.queue_counts('bench')}), "$enqueued|0",
	'queue_counts matches the completions exactly');
my ($errors, $last_error) = split /\|/, status("errors, coalesce(last_error, '')");
is($errors, '0', "no maintenance step failed $last_error");

$node->stop;
done_testing();
