# A hot standby: its worker runs, reports in_recovery in
# awa.maintenance_status (shared memory, readable on the standby), takes no
# leader lock and runs no maintenance; its rings change only by replay. After
# promotion the same worker becomes leader and rotates and prunes.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = q{
shared_preload_libraries = 'awa_bgw'
max_worker_processes = 16
awa_bgw.databases = 'postgres'
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
};

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $conf);
$primary->start;

#---------------------------------------------------------------------------
# helpers

sub wait_until
{
	my ($node, $what, $query, $expected) = @_;
	my $ok = $node->poll_query_until('postgres', $query, $expected);
	ok($ok, $what) or die "gave up waiting: $what";
	return;
}

sub status
{
	my ($node, $expr) = @_;
	return $node->safe_psql('postgres',
		"SELECT $expr FROM awa.maintenance_status WHERE database = 'postgres'");
}

my $state_query =
  q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'};

# every outcome counter of every ring, and the errors
my $activity_query = q{
	SELECT string_agg(r.key || '.' || c.key || '=' || c.value, ' ' ORDER BY r.key, c.key)
	       || ' errors=' || min(m.errors)
	  FROM awa.maintenance_status m,
	       LATERAL (SELECT 'rotate.' || key AS key, value FROM jsonb_each(m.rotations)
	                UNION ALL
	                SELECT 'prune.' || key, value FROM jsonb_each(m.prunes)) r,
	       LATERAL jsonb_each_text(r.value) c
	 WHERE m.database = 'postgres' AND c.key NOT IN ('last_blocker', 'last_reason')};

my $ledger_query = q{
	SELECT string_agg(ring || ':' || generation || ':' || slot, ',' ORDER BY ring, generation)
	  FROM (SELECT 'claim' AS ring, generation, slot FROM awa.claim_ring_rotations
	        UNION ALL SELECT 'lease', generation, slot FROM awa.lease_ring_rotations
	        UNION ALL SELECT 'queue', generation, slot FROM awa.queue_ring_rotations) l};

my $next_job = 1;

# A closed job in the queue ring's current slot; then wait until the worker
# has rotated past it and pruned it (one wrap of the ring).
sub queue_round
{
	my ($node) = @_;
	my $id = $next_job++;
	# the ring is idle, so its cursor stays put until the insert commits;
	# read the slot's relfilenode before the worker can truncate it
	my ($cur, $gen) = split /\|/,
	  $node->safe_psql('postgres',
		q{SELECT slot, generation FROM awa.ring_cursor('queue')});
	my $fn = $node->safe_psql('postgres',
		"SELECT pg_relation_filenode('awa.ready_entries_$cur')");
	my $slot = $node->safe_psql(
		'postgres',
		qq{WITH c AS MATERIALIZED (SELECT slot, generation FROM awa.ring_cursor('queue')),
		   r AS (INSERT INTO awa.ready_entries (ready_slot, ready_generation, job_id, queue,
		                                        priority, kind, args, attempt, max_attempts, run_at)
		         SELECT slot, generation, $id, 'q', 0, 'k', '{}', 1, 25, now() FROM c)
		   INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease, queue,
		                                 priority, state)
		   SELECT slot, generation, $id, 1, 'q', 0, 'completed' FROM c
		   RETURNING ready_slot});
	is($slot, $cur, $node->name . ": job inserted into the current slot $cur");
	wait_until(
		$node,
		$node->name . ': queue ring rotates past generation ' . $gen
		  . " and truncates slot $slot",
		qq{SELECT c.generation > $gen
		          AND pg_relation_filenode('awa.ready_entries_$slot') <> $fn
		          AND awa.ring_is_idle('queue')
		     FROM awa.ring_cursor('queue') c});
	return;
}

#---------------------------------------------------------------------------
# 1. Primary: extension created, worker leads. Standby from a base backup,
#    with the same configuration (copied with the data directory).

$primary->safe_psql('postgres', 'CREATE EXTENSION awa_bgw');
wait_until($primary, 'primary worker leads', $state_query, 'leader');

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'standby is in recovery');
is( $standby->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'awa_bgw', 'standby preloads awa_bgw');

#---------------------------------------------------------------------------
# 2. Standby: the worker runs and says in_recovery.

wait_until($standby, 'standby worker reports in_recovery',
	$state_query, 'in_recovery');
my $standby_pid = $standby->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity
	   WHERE backend_type = 'awa_bgw worker' AND datname = 'postgres'});
like($standby_pid, qr/^\d+$/, 'standby has an awa_bgw worker for postgres');
is(status($standby, 'pid'), $standby_pid, 'its status row carries its pid');
is( $standby->safe_psql('postgres',
		q{SELECT count(*) FROM awa.maintenance_status}),
	'1', 'the standby\'s view shows the standby\'s own worker only');
is(status($standby, 'leader_since IS NULL'), 't', 'no leader_since on the standby');
my $since = status($standby, 'state_since');
like($standby->safe_psql('postgres', $activity_query),
	qr/^(\S+=0 )+errors=0$/, 'standby worker has run no maintenance and had no error');

#---------------------------------------------------------------------------
# 3. Traffic on the primary: the primary rotates and prunes; the standby's
#    ledger follows by replay only, and its worker stays idle.

queue_round($primary);    # slot 0: one rotation
queue_round($primary);    # slot 1: a full wrap of the ring
$primary->wait_for_catchup($standby);
my $primary_ledger = $primary->safe_psql('postgres', $ledger_query);
like($primary_ledger, qr/queue:16:0$/, 'the primary rotated the queue ring');
is($standby->safe_psql('postgres', $ledger_query),
	$primary_ledger, 'the standby\'s ledgers equal the primary\'s');
is($standby->safe_psql('postgres', $state_query),
	'in_recovery', 'standby worker still in_recovery');
is(status($standby, 'pid'), $standby_pid, 'the same standby worker');
is(status($standby, 'state_since'), $since, 'its state never changed');
like($standby->safe_psql('postgres', $activity_query),
	qr/^(\S+=0 )+errors=0$/, 'standby worker ran no rotate or prune and had no error');
is( $standby->safe_psql('postgres',
		q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'}),
	'0', 'no advisory (leader) lock taken on the standby');
is( $standby->safe_psql('postgres',
		"SELECT count(*) FROM awa.runtime_instances WHERE pid = $standby_pid"),
	'0', 'the standby worker wrote no heartbeat row');

#---------------------------------------------------------------------------
# 4. Promote: the standby's worker leads and maintains the rings.

$primary->stop;
$standby->promote;
wait_until($standby, 'promoted', 'SELECT pg_is_in_recovery()', 'f');
wait_until($standby, 'after promotion the worker becomes leader',
	$state_query, 'leader');
is(status($standby, 'pid'), $standby_pid, 'the same worker process, no restart');
is( $standby->safe_psql('postgres',
		q{SELECT string_agg(pid::text, ',') FROM pg_locks
		   WHERE locktype = 'advisory' AND granted
		     AND classid::bigint = (4708303813012965710::bigint >> 32)
		     AND objid::bigint = (4708303813012965710::bigint & 4294967295)}),
	$standby_pid, 'it holds the leader lock');

queue_round($standby);
ok(status($standby, q{(rotations->'queue'->>'rotated')::bigint}) >= 1,
	'promoted worker counts its rotations');
ok(status($standby, q{(prunes->'queue'->>'pruned')::bigint}) >= 1,
	'promoted worker counts its prunes');
is(status($standby, 'errors'), '0', 'no error on the promoted worker');
wait_until(
	$standby,
	'promoted worker heartbeats',
	"SELECT count(*) FROM awa.runtime_instances
	  WHERE pid = $standby_pid AND binary_version = '0.7.0'", '1');

done_testing();
