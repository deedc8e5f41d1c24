
# Copyright: the awa_bgw authors.
#
# The maintenance leader forgets the keys of unique jobs the data plane no longer holds
# (awa.purge_unique_keys, once per fold_interval), and stands down while the horizon is
# pinned, so awa.unique_keys is insert-only for the length of a pin:
#  - unique jobs completed: once the rings have pruned their records, their keys go;
#  - under a REPEATABLE READ pin (the rings kept at 100 ms: pinned_rotate_interval):
#    jobs completed and their records pruned, the keys stay
#    (and no row of the table is deleted) while the folds stand down, pass after pass;
#  - the pin ends: the keys go.

use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = AwaNode->create(
	'unique_purge', q{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.fold_interval = '200ms'
awa_bgw.pinned_rotate_interval = '100ms'
awa_bgw.horizon_pin_min_age = '1s'
awa_bgw.leader_retry_interval = '200ms'
});
$node->start;
$node->create_extension_and_lead;

# n unique jobs of a queue, claimed and completed; their job ids
sub unique_jobs_done
{
	my ($queue, $n) = @_;
	my $ids = sql(
		"SELECT string_agg(awa.enqueue('$queue', 'w', unique_key => 'k' || i)::text, ',')
		   FROM generate_series(1, $n) i");
	# (counted before the jobs complete: after, the worker may forget them at once)
	is(keys_of($ids), $n, "a key per unique job of $queue");
	my $done = sql(
		"SELECT count(*) FILTER (WHERE awa.complete(c.job_id, c.run_lease))
		   FROM awa.claim('$queue', $n) c");
	is($done, $n, "$n unique jobs of $queue completed");
	return $ids;
}

sub keys_of { return sql("SELECT count(*) FROM awa.unique_keys WHERE job_id IN ($_[0])"); }

# unpinned: the keys go once the jobs' records are pruned
my $first = unique_jobs_done('plain', 30);
wait_until('the jobs completed first: their records pruned, their keys forgotten',
	"SELECT count(*) = 0 FROM awa.unique_keys WHERE job_id IN ($first)");

# pinned: the records go, the keys stay
my $pin = $node->background_psql('postgres');
$pin->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$pin->query_safe('SELECT count(*) FROM pg_class');
wait_until('the pin is genuine', "SELECT awa.horizon_pinned('1s')");
my $deleted = sql(
	"SELECT n_tup_del FROM pg_stat_user_tables WHERE relid = 'awa.unique_keys'::regclass");
my $pinned = unique_jobs_done('pinned', 20);
wait_until('under the pin the rings still turn: the records of the jobs are pruned',
	"SELECT bool_and(awa_internal.job_state(j) IS NULL)
	   FROM unnest('{$pinned}'::bigint[]) j");
my $stood = status('folds_stood_down');
wait_until('the folds stood down three more times',
	"SELECT folds_stood_down >= $stood + 3 FROM awa.maintenance_status
	  WHERE database = 'postgres'");
is(keys_of($pinned), '20', 'under the pin, the keys of pruned jobs are kept');
is( sql("SELECT n_tup_del FROM pg_stat_user_tables
		  WHERE relid = 'awa.unique_keys'::regclass"),
	$deleted, 'no row of awa.unique_keys deleted under the pin');
is(sql("SELECT count(*) FROM awa.horizon_pins WHERE pins"), '1', 'one pin, the reader');

# the pin ends: the keys go
$pin->query_safe('COMMIT');
$pin->quit;
wait_until('after the pin, the keys of the pruned jobs are forgotten',
	"SELECT count(*) = 0 FROM awa.unique_keys WHERE job_id IN ($pinned)");
is(sql("SELECT count(*) FROM awa.unique_keys"), '0', 'no key left');

$node->stop;
done_testing();
