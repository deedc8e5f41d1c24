
# Copyright: the awa_bgw authors.
#
# Prune held off by a long reader. Under producers and waiting consumers, a session
# reads the queue ring's ready entries and stays idle in its transaction: it holds
# ACCESS SHARE on every ready child, so the queue ring's prune cannot have the
# ACCESS EXCLUSIVE it needs to TRUNCATE a sealed slot. Then:
#  - the worker's queue prune reports blocked (lock_timeout) within its
#    awa_bgw.prune_lock_timeout, and awa.maintenance_status names the reader's pid
#    (prune_blocked_by);
#  - producers and consumers keep going (enqueued and completed counts rise);
#  - no session but the worker is ever seen waiting on a lock of a relation in schema
#    awa for longer than a generous bound (prune's lock request gives way after
#    prune_lock_timeout, and whatever queued behind it goes on);
# once the reader ends, the slot that was held is pruned, prune_blocked_by clears, and
# every job enqueued is completed exactly once.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $SAMPLE_SECS = 9;
my $WAIT_BOUND = 5;    # s; prune_lock_timeout is 100 ms

my $node = AwaNode->create('prune_blocked', q{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.prune_lock_timeout = '100ms'
awa_bgw.leader_retry_interval = '200ms'
max_connections = 30
});
$node->start;

sql('CREATE EXTENSION awa_bgw');
load_bench();
wait_leader('the worker leads');

# the load: 2 producers at 100 jobs/s in all, 2 waiting consumers; long enough for
# every phase below (each waits for its condition, not for the clock)
my $load = start_load(60,
	producers => [ 2, '-R', '100', '-f', 'bench/producer.sql' ],
	consumers => [ 2, '-f', 'bench/consumer_wait.sql' ]);
wait_until('the load runs', 'SELECT count(*) > 200 FROM bench.completed');
wait_until('the queue ring has been pruned under the load',
	q{SELECT (prunes->'queue'->>'pruned')::bigint > 0 FROM awa.maintenance_status
	   WHERE database = 'postgres'});

# the long reader: a report over the ready entries, left idle in its transaction
my $reader = $node->background_psql('postgres');
my $reader_pid = $reader->query_safe('SELECT pg_backend_pid()');
$reader->query_safe('BEGIN');
$reader->query_safe('SELECT count(*) FROM awa.ready_entries');
is( sql(qq{SELECT count(DISTINCT relation) = (SELECT count(*) FROM pg_inherits
                                               WHERE inhparent = 'awa.ready_entries'::regclass)
             FROM pg_locks WHERE pid = $reader_pid AND mode = 'AccessShareLock' AND granted
              AND relation IN (SELECT inhrelid FROM pg_inherits
                                WHERE inhparent = 'awa.ready_entries'::regclass)}),
	't', 'the reader holds ACCESS SHARE on every ready child');

my $blocked0 = status(q{(prunes->'queue'->>'blocked')::bigint});
my $pruned0 = status(q{(prunes->'queue'->>'pruned')::bigint});
wait_until('the queue prune reports blocked (lock_timeout)',
	qq{SELECT (prunes->'queue'->>'blocked')::bigint > $blocked0
	          AND prunes->'queue'->>'last_reason' = 'lock_timeout'
	     FROM awa.maintenance_status WHERE database = 'postgres'});
wait_until('maintenance_status names the reader as what blocks the queue prune',
	qq{SELECT prune_blocked_by->'queue' \@> '[$reader_pid]'
	     FROM awa.maintenance_status WHERE database = 'postgres'});

# while the reader holds: the API goes on, and nothing but the worker waits long on a
# lock of schema awa. A procedure samples pg_locks (waitstart) every 10 ms for a
# while, committing between samples; three such windows, the counts checked after each.
sql(q{
CREATE PROCEDURE public.sample_lock_waits(p_secs float8, p_worker int,
                                          INOUT longest float8 DEFAULT 0,
                                          INOUT seen int DEFAULT 0,
                                          INOUT worker_seen int DEFAULT 0)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    w float8;
BEGIN
    WHILE clock_timestamp() < t0 + make_interval(secs => p_secs) LOOP
        SELECT max(extract(epoch FROM clock_timestamp() - l.waitstart)) INTO w
          FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
         WHERE NOT l.granted AND l.locktype = 'relation'
           AND c.relnamespace = 'awa'::regnamespace AND l.pid <> p_worker;
        IF w IS NOT NULL THEN
            seen := seen + 1;
            longest := greatest(longest, w);
        END IF;
        -- the control: the worker's own wait for prune's ACCESS EXCLUSIVE
        IF EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                    WHERE NOT l.granted AND l.locktype = 'relation' AND l.pid = p_worker
                      AND c.relnamespace = 'awa'::regnamespace) THEN
            worker_seen := worker_seen + 1;
        END IF;
        COMMIT;
        PERFORM pg_sleep(0.01);
    END LOOP;
END $$});
my $worker_pid = status('pid');
my $sampler = $node->background_psql('postgres');
my ($longest, $seen, $worker_seen) = (0, 0, 0);
for my $window (1 .. 3)
{
	my ($e0, $d0) = (sql('SELECT count(*) FROM bench.enqueued'),
		sql('SELECT count(*) FROM bench.completed'));
	my ($l, $s, $w) = split /\|/,
	  $sampler->query_safe("CALL public.sample_lock_waits($SAMPLE_SECS / 3.0, $worker_pid)");
	$longest = $l if $l > $longest;
	$seen += $s;
	$worker_seen += $w;
	my ($e1, $d1) = (sql('SELECT count(*) FROM bench.enqueued'),
		sql('SELECT count(*) FROM bench.completed'));
	cmp_ok($e1, '>', $e0, "window $window: producers made progress ($e0 -> $e1 enqueued)");
	cmp_ok($d1, '>', $d0, "window $window: consumers made progress ($d0 -> $d1 completed)");
}
$sampler->quit;
cmp_ok($worker_seen, '>', 0,
	"the sampler saw the worker wait for prune's locks ($worker_seen samples)");
cmp_ok($longest, '<', $WAIT_BOUND,
	"no backend but the worker waited on a lock in schema awa for $WAIT_BOUND s "
	  . "(longest wait seen ${longest} s, $seen samples with a waiter)");
is(status(q{(prunes->'queue'->>'pruned')::bigint}), $pruned0,
	'no queue slot was pruned while the reader held the ready children');
ok(status(q{(prunes->'queue'->>'blocked')::bigint}) > $blocked0 + 5,
	'the queue prune kept reporting blocked');

# the slot prune wanted: the oldest sealed queue slot and its generation
my ($slot, $gen) = split /\|/, sql(q{
	SELECT o.slot || '|' || o.generation
	  FROM awa.ring_cursor('queue') c,
	       awa_internal.ring_oldest_sealed(c.slot, c.generation, awa_internal.ring_slot_count('queue')) o});
ok(defined $gen && $gen =~ /^\d+$/, "the queue ring has a sealed slot ($slot, generation $gen)");
# its entries, by their highest job id: entries carry no generation (0.10), and once the
# slot is pruned the ring may enter it again and new entries (higher job ids) land there
my $top = sql("SELECT max(job_id) FROM awa.ready_entries WHERE ready_slot = $slot");
ok($top =~ /^\d+$/, 'the held slot still holds its entries');

$reader->query_safe('COMMIT');
$reader->quit;
wait_until("once the reader is gone the held slot $slot (generation $gen) is pruned",
	qq{SELECT NOT EXISTS (SELECT 1 FROM awa.ready_entries
	                       WHERE ready_slot = $slot AND job_id <= $top)
	     AND (SELECT (prunes->'queue'->>'pruned')::bigint > $pruned0
	            FROM awa.maintenance_status WHERE database = 'postgres')});
wait_until('prune_blocked_by clears once a queue prune is no longer blocked',
	q{SELECT prune_blocked_by IS NULL OR NOT prune_blocked_by ? 'queue'
	    FROM awa.maintenance_status WHERE database = 'postgres'});

finish_load($load);

# drain, then exactly-once by job id
my $drained = drain_bench(120);
ok($drained, 'the queue drained');
my $enqueued = sql('SELECT count(*) FROM bench.enqueued');
cmp_ok($enqueued, '>', 1000, "the producers enqueued $enqueued jobs");
is(sql('SELECT count(*) FROM bench.enqueued e WHERE NOT EXISTS (SELECT 1 FROM bench.completed c WHERE c.job_id = e.job_id)'),
	'0', 'every enqueued job was completed');
is(sql('SELECT count(*) - count(DISTINCT job_id) FROM bench.completed'),
	'0', 'no job was completed twice');
is(sql("SELECT completed, failed FROM awa.queue_counts('bench')"),
	"$enqueued|0", 'queue_counts matches the completions exactly');
is(status('errors'), '0', 'no maintenance step failed');

# by hand: the function the worker asks names the sessions on a slot's children. The
# worker is disabled first: a prune or rotation of its own would hold or await a lock on
# a child of these slots for a moment and be named too (seen once in CI).
$node->append_conf('postgresql.conf', 'awa_bgw.enabled = off');
$node->reload;
wait_until('the worker is disabled for the by-hand check',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'}, 'disabled');
my $holder = $node->background_psql('postgres');
my $holder_pid = $holder->query_safe('SELECT pg_backend_pid()');
$holder->query_safe('BEGIN');
$holder->query_safe('LOCK TABLE awa.done_entries_3 IN ACCESS SHARE MODE');
is(sql("SELECT awa.ring_slot_lock_holders('queue', 3)"), "{$holder_pid}",
	'awa.ring_slot_lock_holders names a session holding a child of the slot');
is(sql("SELECT awa.ring_slot_lock_holders('queue', 4)"), '{}', 'and not on another slot');
$holder->query_safe('COMMIT');
$holder->quit;
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', "SELECT awa.ring_slot_lock_holders('queue', 16)");
like($stderr, qr/slot 16 is not a slot of the queue ring/, 'a slot out of range is refused');

$node->stop;
done_testing();
