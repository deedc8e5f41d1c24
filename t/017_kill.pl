# Copyright: the awa_bgw authors.
#
# The worker terminated in the middle of a step: a queue prune (after it read the slot's
# terminal counts, while it appends them), a fold (after it deleted the deltas, while it
# adds them to the rollups) and a claim-slot carry-forward (while it copies an open
# receipt into the current slot). Each is held there by a lock this test holds, then the
# worker is killed with pg_terminate_backend. The step's transaction rolls back whole
# (cursor = ledger, counts exact, the rows where they were), the launcher starts a new
# worker, which leads, and once the lock goes the step completes.
# Then the folds in bounded batches: a delta backlog far larger than one batch is folded
# over many short transactions, and the totals are exact.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('kill', q{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.job_heartbeat_timeout = '1h'
awa_bgw.fold_interval = '1h'
awa_bgw.step_timeout = '10min'
awa_bgw.horizon_pin_min_age = '1h'
awa_bgw.fold_batch_size = 100
});
$node->start;

sub worker_pid
{
	return sql(q{SELECT pid FROM awa.maintenance_status WHERE database = 'postgres'});
}

sub cursor_is_ledger
{
	my ($when) = @_;
	for my $ring ('queue', 'lease', 'claim')
	{
		is( sql("SELECT c.generation = (SELECT max(generation) FROM awa.${ring}_ring_rotations)
		           FROM awa.ring_cursor('$ring') c"),
			't', "$when: the $ring ring's cursor is its ledger's newest row");
	}
	return;
}

# Wait until the worker waits for the lock on $rel in the step $step (its statement
# matches $like), kill it, and wait until it is gone.
sub kill_worker_blocked_on
{
	my ($rel, $step, $like) = @_;
	my $old = worker_pid();
	wait_until("the worker is held by the lock on $rel in the $step",
		"SELECT count(*) = 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		  WHERE a.pid = $old AND NOT l.granted AND l.relation = '$rel'::regclass
		    AND a.wait_event_type = 'Lock' AND a.query LIKE '$like'");
	is(sql("SELECT pg_terminate_backend($old)"), 't', "the worker is terminated in the $step");
	wait_until('the worker is gone',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $old");
	return $old;
}

sub new_leader
{
	my ($old) = @_;
	wait_until('the launcher starts a new worker, which leads',
		"SELECT pid <> $old AND state = 'leader' FROM awa.maintenance_status
		  WHERE database = 'postgres'");
	return;
}

sql('CREATE EXTENSION awa_bgw');
wait_until('the worker leads',
	"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'");
my $holder = $node->background_psql('postgres');

#---------------------------------------------------------------------------
# 1. A queue prune killed while it appends the slot's terminal counts.

$holder->query_safe(
	'BEGIN; LOCK TABLE awa.queue_terminal_rollup_deltas IN SHARE MODE');
sql(q{SELECT awa.enqueue('k', 'job') FROM generate_series(1, 3)});
is(sql(q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('k', 3)}), '3',
	'three jobs completed');
# (the worker binds the ring's name as $1: the relation waited for says which ring)
my $old = kill_worker_blocked_on('awa.queue_terminal_rollup_deltas', 'queue prune',
	'%awa.prune(_awa_, $1)%');
cursor_is_ledger('prune killed');
is(sql(q{SELECT count(*) FROM awa.terminal_jobs WHERE queue = 'k'}), '3',
	'the slot was not truncated: its three done entries are there');
is(sql(q{SELECT count(*) FROM awa.queue_terminal_rollup_deltas WHERE queue = 'k'}), '0',
	'no delta was appended');
is(sql(q{SELECT completed FROM awa.queue_counts('k')}), '3', 'the count is exact');
new_leader($old);
$holder->query_safe('COMMIT');
wait_until('once the lock goes, the prune completes: the slot truncated, its counts in a delta',
	q{SELECT (SELECT count(*) FROM awa.terminal_jobs WHERE queue = 'k') = 0
	     AND (SELECT sum(pruned_completed_delta) FROM awa.queue_terminal_rollup_deltas
	           WHERE queue = 'k') = 3});
is(sql(q{SELECT completed FROM awa.queue_counts('k')}), '3', 'the count is still exact');

#---------------------------------------------------------------------------
# 2. A fold killed after deleting the deltas, while it adds them to the rollups.

$holder->query_safe('BEGIN; LOCK TABLE awa.queue_terminal_rollups IN SHARE MODE');
sql('SELECT pg_reload_conf()');    # the worker folds at once after a reload
$old = kill_worker_blocked_on('awa.queue_terminal_rollups', 'fold',
	'%fold_terminal_rollup_deltas%');
cursor_is_ledger('fold killed');
is(sql(q{SELECT sum(pruned_completed_delta) FROM awa.queue_terminal_rollup_deltas WHERE queue = 'k'}),
	'3', 'the deleted deltas are back');
is(sql(q{SELECT count(*) FROM awa.queue_terminal_rollups WHERE queue = 'k'}), '0',
	'nothing reached the rollups');
is(sql(q{SELECT completed FROM awa.queue_counts('k')}), '3', 'the count is exact');
new_leader($old);
$holder->query_safe('COMMIT');
wait_until('once the lock goes, the fold completes',
	q{SELECT NOT EXISTS (SELECT 1 FROM awa.queue_terminal_rollup_deltas WHERE queue = 'k')
	     AND (SELECT pruned_completed_count FROM awa.queue_terminal_rollups WHERE queue = 'k') = 3});
is(sql(q{SELECT completed FROM awa.queue_counts('k')}), '3', 'the count is still exact');

#---------------------------------------------------------------------------
# 3. A claim-slot prune killed while it carries an open receipt forward. The receipt
#    in slot X keeps the ring from turning into X, so once the cursor reaches X - 1,
#    prune of X copies it into X - 1: the test holds that child first.

my $job = sql(q{SELECT awa.enqueue('long', 'job')});
my $lease = sql(q{SELECT run_lease FROM awa.claim('long', 1, NULL)});
my ($slot, $child);
for my $try (1 .. 20)
{
	$slot = sql("SELECT claim_slot FROM awa.lease_claims WHERE job_id = $job");
	$child = 'awa.lease_claims_' . (($slot + 7) % 8);
	$holder->query_safe("BEGIN; LOCK TABLE $child IN SHARE MODE");
	last
	  if sql("SELECT claim_slot FROM awa.lease_claims WHERE job_id = $job") eq $slot;
	$holder->query_safe('ROLLBACK');    # carried before the lock: try the next slot
}
$old = kill_worker_blocked_on($child, 'claim prune', '%awa.prune(_awa_, $1)%');
cursor_is_ledger('carry-forward killed');
is(sql("SELECT string_agg(claim_slot::text, ',') FROM awa.lease_claims WHERE job_id = $job"),
	$slot, 'the receipt is where it was, once: the copy rolled back');
new_leader($old);
$holder->query_safe('COMMIT');
wait_until('once the lock goes, the receipt is carried forward and its old slot pruned',
	"SELECT count(*) = 1 AND bool_and(claim_slot <> $slot)
	   FROM awa.lease_claims WHERE job_id = $job");
is(sql("SELECT awa.complete($job, $lease)"), 't', 'the carried attempt completes');
cursor_is_ledger('after the three kills');
is(sql(q{SELECT errors FROM awa.maintenance_status WHERE database = 'postgres'}), '0',
	'the last worker failed no step');

#---------------------------------------------------------------------------
# 4. Folds in bounded batches: 5,000 delta rows with a batch of 100 are folded over at
#    least 50 transactions, and the totals are exact.

# the long job's outcome (its closure, docs/storage.md A.15) keeps the claim ring
# turning until its slot is pruned, which appends a delta row; wait for that (the
# queue and claim rings are idle again) and fold it by hand, so that the worker's fold
# below finds the bulk rows only
wait_until('the queue and claim rings are idle again: the long job\'s slots are pruned',
	q{SELECT awa_internal.ring_is_idle('queue') AND awa_internal.ring_is_idle('claim')});
for (1 .. 10)
{
	last if sql(q{SELECT count(*) FROM awa.queue_terminal_rollup_deltas}) eq '0';
	sql(q{SELECT awa.fold_terminal_rollup_deltas('awa')});
}
is(sql(q{SELECT count(*) FROM awa.queue_terminal_rollup_deltas}), '0',
	'no delta row is waiting before the backlog');
# (awa_bgw.fold_batch_size is 100 and fold_interval 1 hour: the worker folds only at
# its start and after a reload)
my ($runs0, $folded0) = split /\|/,
  sql(q{SELECT folds_run, rows_folded FROM awa.maintenance_status WHERE database = 'postgres'});
sql(q{INSERT INTO awa.queue_terminal_rollup_deltas (queue, priority, pruned_completed_delta,
                                                    pruned_failed_delta)
      SELECT 'bulk', (i % 3)::smallint, 2, i % 2 FROM generate_series(1, 5000) i});
is(sql(q{SELECT completed || '/' || failed FROM awa.queue_counts('bulk')}), '10000/2500',
	'the backlog counts before the fold');
is(sql(q{SELECT folded_rows FROM awa.fold_terminal_rollup_deltas('awa')}), '100',
	'a fold run by hand takes one batch');
sql('SELECT pg_reload_conf()');    # the worker folds at once after a reload
wait_until('the worker catches up with the backlog',
	q{SELECT NOT EXISTS (SELECT 1 FROM awa.queue_terminal_rollup_deltas)});
my ($runs, $folded) = split /\|/,
  sql(q{SELECT folds_run, rows_folded FROM awa.maintenance_status WHERE database = 'postgres'});
is($folded - $folded0, 4900, 'the worker folded the other 4,900 rows');
cmp_ok(($runs - $runs0) / 2, '>=', 49, 'in at least 49 passes of at most 100 rows');
is(sql(q{SELECT sum(pruned_completed_count) || '/' || sum(pruned_failed_count)
           FROM awa.queue_terminal_rollups WHERE queue = 'bulk'}),
	'10000/2500', 'the rollups hold the exact totals');
is(sql(q{SELECT completed || '/' || failed FROM awa.queue_counts('bulk')}), '10000/2500',
	'and the counts are unchanged');
is(sql(q{SELECT folds_stood_down || '/' || errors FROM awa.maintenance_status
          WHERE database = 'postgres'}), '0/0', 'no fold stood down or failed');

$holder->quit;
$node->stop;
done_testing();
