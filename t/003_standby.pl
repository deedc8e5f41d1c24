# A hot standby: its worker runs, reports in_recovery in
# awa.maintenance_status (shared memory, readable on the standby), takes no
# leader lock and runs no maintenance; its rings change only by replay. After
# promotion the same worker becomes leader and rotates and prunes, its mark of the
# xid space its own (nothing is rebased). Ring
# traffic is made through the job API (enqueue, claim, complete).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $primary = AwaNode->create('primary', q{
max_worker_processes = 16
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
}, allows_streaming => 1);
$primary->start;

#---------------------------------------------------------------------------
# helpers: two nodes, so the methods of t/AwaNode.pm (wait_for, worker_status,
# wait_leader) on each

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

my $counts_query = q{
	SELECT available || '|' || scheduled || '|' || running || '|' || completed || '|' || failed
	  FROM awa.queue_counts('q')};

# A job enqueued, then claimed and completed, through the API (a job is
# claimable once its enqueue has committed): its ready entry is claimed, so the
# slot may be pruned, and its outcome is its closure, in the claim ring (docs/storage.md
# A.15: no done entry). Meanwhile another
# session holds the queue ring's rotation lock, the ledger's private-lock
# serializer of DESIGN 3.1, so that the worker cannot rotate the ring between
# the two transactions).
# Then wait until the worker has rotated past the slot and truncated it (one
# wrap of the ring), and until the claim ring, which held the job's receipt,
# is idle too. Idleness is the worker's own finding: only the worker removes
# ring rows, so its check cannot race a prune carrying a receipt from one
# claim slot into another, and an idle ring with no traffic stays idle: after
# this nothing moves.
sub queue_round
{
	my ($node) = @_;
	# the ring is idle, so its cursor stays put until the job is written;
	# read the slot's relfilenode before the worker can truncate it
	my ($cur, $gen) = split /\|/,
	  $node->safe_psql('postgres',
		q{SELECT slot, generation FROM awa.ring_cursor('queue')});
	my $fn = $node->safe_psql('postgres',
		"SELECT pg_relation_filenode('awa.ready_entries_$cur')");
	my $holder = $node->background_psql('postgres');
	$holder->query_safe('BEGIN');
	$holder->query_safe(
		q{SELECT awa_internal.private_xact_lock(hashtextextended('awa.queue_storage.ring_rotation:awa:queue', 0))});
	my $out = $node->safe_psql(
		'postgres',
		q{SELECT awa.enqueue('q', 'k') AS job \gset
BEGIN;
SELECT coalesce(string_agg(job_id || ':' || attempt, ','), 'none') AS claimed,
       coalesce(max(run_lease), 0) AS lease
  FROM awa.claim('q', 10, '1 hour') \gset
SELECT awa.complete(:job, :lease) AS completed \gset
SELECT (SELECT string_agg(DISTINCT ready_slot::text, ',') FROM awa.ready_entries
         WHERE job_id = :job)
       || '|' || (SELECT string_agg(awa_internal.closure_state(outcome_code, state), ',')
                    FROM awa.lease_claim_closures WHERE job_id = :job)
          || ':' || (SELECT count(*) FROM awa.done_entries WHERE job_id = :job)
       || '|' || (:'claimed' = :job || ':1') || '|' || :'completed';
COMMIT;});
	$holder->query_safe('COMMIT');
	$holder->quit;
	my ($slot, $outcome, $claimed, $completed) = split /\|/, $out;
	is("$slot|$claimed|$completed", "$cur|true|t",
		$node->name . ": job enqueued into the current slot $cur, claimed, completed");
	is($outcome, 'completed:0',
		$node->name . ': its completion is its closure (state completed), no done entry');
	$node->wait_for(
		$node->name . ': queue ring rotates past generation ' . $gen
		  . " and truncates slot $slot",
		qq{SELECT c.generation > $gen
		          AND pg_relation_filenode('awa.ready_entries_$slot') <> $fn
		          AND awa_internal.ring_is_idle('queue')
		     FROM awa.ring_cursor('queue') c});
	my $cond = join ' AND ', map {
		my $n = $node->worker_status("(rotations->'$_'->>'skipped_idle')::bigint");
		"(rotations->'$_'->>'skipped_idle')::bigint >= $n + 2"
	} qw(queue claim);
	$node->wait_for($node->name . ': the worker finds the queue and claim rings idle',
		"SELECT $cond FROM awa.maintenance_status WHERE database = 'postgres'");
	return;
}

#---------------------------------------------------------------------------
# 1. Primary: extension created, worker leads. Standby from a base backup,
#    with the same configuration (copied with the data directory).

$primary->safe_psql('postgres', 'CREATE EXTENSION awa_bgw');
$primary->wait_leader('primary worker leads');

$primary->backup('base');
my $standby = AwaNode->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'standby is in recovery');
is( $standby->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'awa_bgw', 'standby preloads awa_bgw');

#---------------------------------------------------------------------------
# 2. Standby: the worker runs and says in_recovery.

$standby->wait_for('standby worker reports in_recovery',
	$state_query, 'in_recovery');
my $standby_pid = $standby->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity
	   WHERE backend_type = 'awa_bgw worker' AND datname = 'postgres'});
like($standby_pid, qr/^\d+$/, 'standby has an awa_bgw worker for postgres');
is($standby->worker_status('pid'), $standby_pid, 'its status row carries its pid');
is( $standby->safe_psql('postgres',
		q{SELECT count(*) FROM awa.maintenance_status}),
	'1', 'the standby\'s view shows the standby\'s own worker only');
is($standby->worker_status('leader_since IS NULL'), 't', 'no leader_since on the standby');
my $since = $standby->worker_status('state_since');
like($standby->safe_psql('postgres', $activity_query),
	qr/^(\S+=0 )+errors=0$/, 'standby worker has run no maintenance and had no error');

#---------------------------------------------------------------------------
# 3. Traffic on the primary: the primary rotates and prunes; the standby's
#    ledger follows by replay only, and its worker stays idle.

queue_round($primary);    # slot 0: one rotation
queue_round($primary);    # slot 1: a full wrap of the ring
# The primary's worker goes on (a ledger also sheds its oldest generations), so the
# ledgers are compared at a moment the primary's stayed the same across the standby's
# catch-up and read: read the primary's, catch up, read the standby's, and read the
# primary's again; a change between the two reads of the primary means another try.
my ($primary_ledger, $standby_ledger, $stable);
for my $try (1 .. 50)
{
	$primary_ledger = $primary->safe_psql('postgres', $ledger_query);
	$primary->wait_for_catchup($standby);
	$standby_ledger = $standby->safe_psql('postgres', $ledger_query);
	$stable = $primary->safe_psql('postgres', $ledger_query) eq $primary_ledger;
	last if $stable;
}
ok($stable, 'the primary\'s ledgers stayed the same across one of the reads');
like($primary_ledger, qr/queue:16:0$/, 'the primary rotated the queue ring');
is($standby_ledger, $primary_ledger, 'the standby\'s ledgers equal the primary\'s');
is($primary->safe_psql('postgres', $counts_query),
	'0|0|0|2|0', 'primary: two jobs completed in queue q');
is($standby->safe_psql('postgres', $counts_query),
	'0|0|0|2|0', 'the standby reads the same counts from the replayed data plane');
is($standby->safe_psql('postgres', $state_query),
	'in_recovery', 'standby worker still in_recovery');
is($standby->worker_status('pid'), $standby_pid, 'the same standby worker');
is($standby->worker_status('state_since'), $since, 'its state never changed');
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
$standby->wait_for('promoted', 'SELECT pg_is_in_recovery()', 'f');
$standby->wait_leader('after promotion the worker becomes leader');
is($standby->worker_status('pid'), $standby_pid, 'the same worker process, no restart');
is( $standby->safe_psql('postgres',
		q{SELECT string_agg(pid::text, ',') FROM pg_locks
		   WHERE locktype = 'advisory' AND granted
		     AND classid::bigint = (4708303813012965710::bigint >> 32)
		     AND objid::bigint = (4708303813012965710::bigint & 4294967295)}),
	$standby_pid, 'it holds the leader lock');

queue_round($standby);
ok($standby->worker_status(q{(rotations->'queue'->>'rotated')::bigint}) >= 1,
	'promoted worker counts its rotations');
ok($standby->worker_status(q{(prunes->'queue'->>'pruned')::bigint}) >= 1,
	'promoted worker counts its prunes');
ok($standby->worker_status(q{(prunes->'claim'->>'pruned')::bigint}) >= 1,
	'promoted worker prunes the claim ring (the job\'s receipt)');
is($standby->safe_psql('postgres', $counts_query),
	'0|0|0|3|0', 'promoted: the third job is counted with the replayed two');
is($standby->worker_status('errors'), '0', 'no error on the promoted worker');
# a physical replica is the same cluster: its rows keep their transaction ids, and the
# mark recorded on the primary is its own (docs/storage.md A.17); nothing is rebased
is( $standby->safe_psql('postgres',
		q{SELECT awa.xid_space_state() || ' ' || bool_and(system_identifier = awa_internal.cluster_system_identifier())
		    FROM awa.xid_space}),
	'own true', 'promoted: the mark of the xid space is this cluster\'s');
is($standby->count_in_log(qr/rebased the jobs of database/), 0, 'promoted: nothing was rebased');
my ($default_version) = slurp_file('awa_bgw.control') =~ /^default_version = '([0-9.]+)'/m
  or die 'no default_version in awa_bgw.control';
$standby->wait_for(
	'promoted worker heartbeats',
	"SELECT count(*) FROM awa.runtime_instances
	  WHERE pid = $standby_pid AND binary_version = '$default_version.0'", '1');

done_testing();
