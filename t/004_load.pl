
# Copyright: the awa_bgw authors.
#
# The queue under load with the worker running: 8 pgbench clients (4 producers, 4
# consumers) enqueue, claim and complete for 60 s while one job heartbeats through three
# wraps of every ring; some producers keep their transaction open a little after the
# enqueue, some roll it back.
# Every committed enqueue is completed exactly once (checked by job id), no rolled-back
# one is ever claimed, the counts match, the rings turn and are truncated, and no ring
# family ever sees an UPDATE or DELETE. Some consumers wait for work (awa.claim with
# wait) instead of polling, some complete each job and claim the next in one call
# (awa.complete_and_claim). On the default version (0.9: no producer lock,
# claims by snapshot windows).

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('load', qq{
awa_bgw.queue_rotate_interval = '200ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '500ms'
awa_bgw.job_heartbeat_timeout = '10min'
max_connections = 50
});
$node->start;
$node->create_extension_and_lead;
load_bench();

my $gen_sql = q{SELECT (SELECT generation FROM awa.queue_ring_rotations ORDER BY generation DESC LIMIT 1)
                    || ',' || (SELECT generation FROM awa.lease_ring_rotations ORDER BY generation DESC LIMIT 1)
                    || ',' || (SELECT generation FROM awa.claim_ring_rotations ORDER BY generation DESC LIMIT 1)};

# an abandoned attempt: claimed with a 1 s deadline and never finished; the worker's
# rescue closes it and the job comes back as attempt 2
sql("SELECT awa.enqueue('abandoned', 'lost worker')");
my ($abandoned_id, $abandoned_attempt, $abandoned_lease) = split /,/,
  sql("SELECT job_id || ',' || attempt || ',' || run_lease FROM awa.claim('abandoned', 1, '1 s')");
is("$abandoned_id,$abandoned_attempt", '1,1', 'abandoned job claimed (attempt 1)');

# the long job: claimed with no deadline, kept alive by heartbeats only
sql("SELECT awa.enqueue('long', 'slow')");   # job 2
my ($long_id, $long_attempt, $long_lease) = split /,/,
  sql("SELECT job_id || ',' || attempt || ',' || run_lease FROM awa.claim('long', 1, NULL)");
is("$long_id,$long_attempt", '2,1', 'long job claimed');
is(sql("SELECT awa.heartbeat(2, $long_lease)"), 't', 'and heartbeats');

# the load: 4 producer clients (each transaction a plain enqueue, one held open a
# little, or one rolled back, at random) and, in a pgbench of their own so that a
# waiting claim never holds up a producer, 4 consumer clients (polling or waiting)
my $load = start_load(60,
	producers => [
		4, '-f', 'bench/producer.sql@1', '-f', 't/load_producer_open.sql@1',
		'-f', 't/load_producer_rollback.sql@1'
	],
	consumers => [
		4, '-f', 'bench/consumer.sql@2', '-f', 'bench/consumer_wait.sql@1',
		'-f', 'bench/consumer_loop.sql@1'
	]);
finish_load($load);
note($load->{$_}{out}) for sort keys %$load;
# positive control: job ids were drawn by enqueues that rolled back (ids 1 and 2 are
# the abandoned and the long job)
cmp_ok(sql('SELECT (SELECT last_value FROM awa.job_id_seq) - 2 - (SELECT count(*) FROM bench.enqueued)'),
	'>', 100, 'enqueues rolled back during the load');

# the rescued job is claimable again as attempt 2 (after the retry backoff, 2 s);
# attempt 1 can no longer be completed
$node->poll_query_until('postgres',
	"SELECT EXISTS (SELECT 1 FROM awa.deferred_jobs WHERE job_id = 1 AND attempt = 2 AND last_error LIKE 'rescued: deadline passed%')"
	  . " OR EXISTS (SELECT 1 FROM awa.ready_entries WHERE job_id = 1 AND attempt = 2)")
  or die 'the abandoned attempt was not rescued';
is(sql("SELECT awa.complete(1, $abandoned_lease)"), 'f',
	'the rescued attempt cannot complete any more');
$node->poll_query_until('postgres',
	"SELECT EXISTS (SELECT 1 FROM awa.ready_entries WHERE job_id = 1 AND attempt = 2)")
  or die 'the rescued job was not promoted';
my ($again_id, $again_attempt, $again_lease) = split /,/,
  sql("SELECT job_id || ',' || attempt || ',' || run_lease FROM awa.claim('abandoned', 1)");
is("$again_id,$again_attempt", '1,2', 'the rescued job is claimed again as attempt 2');
isnt($again_lease, $abandoned_lease, 'attempt 2 has a token of its own');
is(sql("SELECT awa.complete(1, $again_lease)"), 't', 'attempt 2 completes');

# drain what is left, then check exactly-once by job id
my $drained = drain_bench(300);
ok($drained, 'the queue drained');

# the long job, still running, heartbeats while light traffic keeps every ring turning,
# until each has turned three wraps past this point (16 slots of the queue ring, 8 of
# the lease and claim rings); then it completes normally
my ($q0, $l0, $c0) = split /,/, sql($gen_sql);
my $bg = $node->background_psql('postgres');
my $beats_ok = 1;
my $wrapped = 0;
my $deadline = time() + 150;
while (!$wrapped && time() < $deadline)
{
	$beats_ok = 0
	  unless $bg->query_safe(
		"SELECT awa.heartbeat($long_id, $long_lease, '{\"alive\": true}')") eq 't';
	$bg->query_safe("SELECT awa.enqueue('tick', 'k'), pg_sleep(0.1)");
	$bg->query_safe("SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('tick', 10)");
	my ($q, $l, $c) = split /,/, $bg->query_safe($gen_sql);
	$wrapped = ($q - $q0 >= 48 && $l - $l0 >= 24 && $c - $c0 >= 24);
}
ok($wrapped, 'every ring turned three wraps while the long job ran');
ok($beats_ok, 'every heartbeat of the long job was accepted');
is($bg->query_safe("SELECT awa.complete($long_id, $long_lease)"),
	't', 'the long job completes normally after three wraps');
$bg->quit;

my $enqueued = sql('SELECT count(*) FROM bench.enqueued');
cmp_ok($enqueued, '>', 1000, "the producers enqueued $enqueued jobs");
is(sql('SELECT count(*) FROM bench.enqueued e WHERE NOT EXISTS (SELECT 1 FROM bench.completed c WHERE c.job_id = e.job_id)'),
	'0', 'every committed enqueue was completed');
is(sql('SELECT count(*) - count(DISTINCT job_id) FROM bench.claimed'),
	'0', 'no job was claimed twice');
is(sql('SELECT count(*) FROM bench.claimed c WHERE NOT EXISTS (SELECT 1 FROM bench.enqueued e WHERE e.job_id = c.job_id)'),
	'0', 'no rolled-back enqueue was ever claimed');
is(sql('SELECT count(*) - count(DISTINCT job_id) FROM bench.completed'),
	'0', 'no job was completed twice');
is(sql('SELECT count(*) FROM bench.completed c WHERE NOT EXISTS (SELECT 1 FROM bench.enqueued e WHERE e.job_id = c.job_id)'),
	'0', 'only enqueued jobs were completed');
is(sql('SELECT completed, failed FROM awa.queue_counts(\'bench\')'),
	"$enqueued|0", 'queue_counts matches the completions exactly');

# the rings turned and were truncated; the worker never failed a step
my $st = status("(prunes->'queue'->>'pruned')::int, (prunes->'claim'->>'pruned')::int, "
	  . "(prunes->'lease'->>'pruned')::int, errors, coalesce(last_error, '')");
my ($pq, $pc, $pl, $errors, $last_error) = split /\|/, $st;
cmp_ok($pq, '>', 10, "queue slots were truncated ($pq prunes)");
cmp_ok($pc, '>', 10, "claim slots were truncated ($pc prunes)");
cmp_ok($pl, '>', 0, "lease slots were truncated ($pl prunes)");
is($errors, '0', "no maintenance step failed $last_error");

# no UPDATE or DELETE on any ring family, nor on ring state and slot rows; positive
# control: the families and the ledgers took inserts (stats flushed by the worker and
# by this session)
sql('SELECT pg_stat_force_next_flush()');
$node->poll_query_until('postgres',
	"SELECT sum(n_tup_ins) > $enqueued FROM pg_stat_user_tables WHERE schemaname = 'awa' AND relname ~ '^ready_entries_[0-9]+\$'"
) or die 'statistics did not arrive';
my $ring_writes = sql(q{
SELECT sum(n_tup_upd + n_tup_del), sum(n_tup_ins) > 0
  FROM pg_stat_user_tables
 WHERE schemaname = 'awa'
   AND relname ~ '^(ready_entries|done_entries|lease_claims|lease_claim_closures|leases)_[0-9]+$'});
is($ring_writes, '0|t', 'ring families: inserts only, no UPDATE or DELETE');
my $control = sql(q{
SELECT sum(n_tup_upd + n_tup_del + n_dead_tup)
  FROM pg_stat_user_tables
 WHERE schemaname = 'awa' AND relname ~ '_ring_(state|slots)$'});
is($control, '0', 'ring state and slot rows: no update, delete or dead tuple');
cmp_ok(sql("SELECT sum(n_tup_ins) FROM pg_stat_user_tables WHERE schemaname = 'awa' AND relname ~ '_ring_rotations\$'"),
	'>', 100, 'the ledgers took the rotations');

$node->stop;
done_testing();
