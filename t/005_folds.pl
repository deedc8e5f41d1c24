
# Copyright: the awa_bgw authors.
#
# The leader's horizon-gated folds: they run on awa_bgw.fold_interval, drain the rollup
# deltas and trim the ledgers to one wrap; an idle-in-transaction session holding a
# write xid, once older than awa_bgw.horizon_pin_min_age, stands them down (counted,
# with the holder shown in awa.maintenance_status); when it ends, the next fold catches
# up. Counts stay exact throughout.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('folds', qq{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.fold_interval = '300ms'
awa_bgw.horizon_pin_min_age = '1s'
awa_bgw.pinned_rotate_interval = '300ms'
});
# (pinned_rotate_interval short: the ledgers must grow past a wrap under the pin, 17
# rotations, which at its default of 10 s took most of this test's two minutes; the
# pinned cadence itself is t/028's)
$node->start;
$node->create_extension_and_lead;

# some finished jobs, so that prune appends rollup deltas as the queue ring turns
sub run_jobs
{
	my ($n) = @_;
	sql("SELECT awa.enqueue('f', 'k') FROM generate_series(1, $n)");
	sql("SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('f', $n)");
}

# 1. folds run with nothing pinning: the deltas are drained, the ledgers kept to a wrap
run_jobs(20);
$node->poll_query_until('postgres',
	q{SELECT (SELECT completed FROM awa.queue_counts('f')) = 20
	     AND NOT EXISTS (SELECT 1 FROM awa.queue_terminal_rollup_deltas)
	     AND (SELECT pruned_completed_count FROM awa.queue_terminal_rollups WHERE queue = 'f') = 20})
  or die 'the deltas were not folded';
pass('the leader folded the deltas into the rollups; counts exact');
cmp_ok(status('folds_run'), '>', 0, 'folds are counted');
is(status('folds_stood_down'), '0', 'and none stood down');

# 2. a pin: idle in transaction holding a write xid, older than 1 s
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
my $holder_pid = $holder->query_safe('SELECT pg_backend_pid()');
$holder->query_safe('SELECT pg_current_xact_id()');
my $stood = status('folds_stood_down');
$node->poll_query_until('postgres',
	"SELECT folds_stood_down > $stood AND pin_holder LIKE 'backend $holder_pid: idle in transaction holding a write xid'
	   FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the folds did not stand down';
pass('the folds stand down for the pin, and name its holder');

# traffic during the pin: deltas and ledger rows accumulate, counts stay exact
my $ledger_before = sql('SELECT count(*) FROM awa.queue_ring_rotations');
run_jobs(20);
$node->poll_query_until('postgres',
	q{SELECT EXISTS (SELECT 1 FROM awa.queue_terminal_rollup_deltas WHERE queue = 'f')})
  or die 'no delta was appended';
is(sql("SELECT completed FROM awa.queue_counts('f')"), '40',
	'counts exact while the deltas wait (rollups + unfolded deltas)');
$node->poll_query_until('postgres',
	"SELECT count(*) > 16 FROM awa.queue_ring_rotations")
  or die 'the queue ledger did not grow past one wrap';
pass('the queue ledger grows past one wrap while the folds stand down');
my $stood2 = status('folds_stood_down');
$node->poll_query_until('postgres',
	"SELECT folds_stood_down > $stood2 FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'no further stand-down';
ok(sql(q{SELECT EXISTS (SELECT 1 FROM awa.queue_terminal_rollup_deltas WHERE queue = 'f')}) eq 't',
	'the deltas are still there: nothing was folded under the pin');

# 3. the pin ends: the next fold drains the deltas and trims every ledger to one wrap
$holder->query_safe('COMMIT');
$holder->quit;
$node->poll_query_until('postgres',
	q{SELECT NOT EXISTS (SELECT 1 FROM awa.queue_terminal_rollup_deltas)
	     AND (SELECT count(*) FROM awa.queue_ring_rotations) <= 16
	     AND (SELECT count(*) FROM awa.lease_ring_rotations) <= 8
	     AND (SELECT count(*) FROM awa.claim_ring_rotations) <= 8})
  or die 'the folds did not catch up';
pass('after the pin the deltas are drained and the ledgers are back to one wrap');
is(sql("SELECT completed FROM awa.queue_counts('f')"), '40', 'counts still exact');
is(status("coalesce(pin_holder, 'none')"), 'none', 'no pin holder shown any more');
is(status('errors'), '0', 'no maintenance step failed');

$node->stop;
done_testing();
