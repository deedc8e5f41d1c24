# Copyright: the awa_bgw authors.
#
# Rings that turn by need (0.10; docs/operations.md, "Rings that turn by need"): with
# awa_bgw.rotate_fill at 4 blocks and every *_rotate_interval at an hour, so that no
# rotation here can come from the interval:
#  - a trickle (a job enqueued and claimed, its entry and receipt in the current slots,
#    below the fill) turns no ring while the worker's loop passes many times;
#  - a backlog that fills the queue ring's current slot turns it, and the ring then
#    turns through its empty slots (drain);
#  - no ring turns by need before its current slot is awa_bgw.rotate_min_age old (the
#    rotation ledgers: every two consecutive rotations at least that far apart);
#  - with the intervals at 2 s (the bound on a slot's age), once every job is done the
#    rings drain back to idle and the worker sleeps (maintenance_status.idle_since).
# And every job enqueued is completed exactly once. Last, at the fixed 200 ms cadence,
# the finished-job window: each finished job stays visible at least that long.

use strict;
use warnings;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;
use Time::HiRes qw(time sleep);

my $MIN_AGE_S = 1.5;    # longer than the worker's 1 s check, so that it shows
my $node = AwaNode->create('need', qq{
awa_bgw.rotate_fill = 4
awa_bgw.rotate_min_age = '1500ms'
awa_bgw.queue_rotate_interval = '1h'
awa_bgw.lease_rotate_interval = '1h'
awa_bgw.claim_rotate_interval = '1h'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.idle_interval = '1s'
});
$node->start;
$node->create_extension_and_lead;

sub generation
{
	my ($ring) = @_;
	return sql("SELECT max(generation) FROM awa.${ring}_ring_rotations");
}

# ---- a trickle: below the fill, nothing turns ------------------------------------------
my $trickle = sql(q{SELECT awa.enqueue('need', 'trickle', '{}')});
my ($t_job, $t_lease) = split /\|/, sql(q{SELECT job_id, run_lease FROM awa.claim('need')});
is($t_job, $trickle, 'the trickle job is claimed');
my ($q0, $c0) = (generation('queue'), generation('claim'));
my $ticks0 = status('ticks');
wait_until('the worker passes its loop 30 times', "SELECT ticks >= $ticks0 + 30
	  FROM awa.maintenance_status WHERE database = 'postgres'");
is(generation('queue') . ' ' . generation('claim'), "$q0 $c0",
	'below the fill, before the interval, neither the queue nor the claim ring turned');
is(status('idle_since IS NULL'), 't', '... and the worker is not idle: its rings hold rows');
is(status('errors'), '0', '... and every rotate step ran (none failed)');

# ---- a backlog fills the queue ring's current slot: it turns, then drains ---------------
sql(q{SELECT count(*) FROM awa.enqueue_batch('need',
        (SELECT jsonb_agg(jsonb_build_object('kind', 'bulk',
                                             'args', jsonb_build_object('pad', repeat('x', 200))))
           FROM generate_series(1, 400)))});
cmp_ok(sql(q{SELECT pg_relation_size('awa.ready_entries_' || min(ready_slot)) / 8192
               FROM awa.ready_entries WHERE kind = 'bulk'}), '>=', 4,
	'the backlog fills its queue slot past 4 blocks');
wait_until('the queue ring turns by fill (its interval is an hour)',
	'SELECT max(generation) > ' . $q0 . ' FROM awa.queue_ring_rotations');
wait_until('... then through its empty slots (drain)',
	'SELECT max(generation) >= ' . ($q0 + 4) . ' FROM awa.queue_ring_rotations');

# ---- the jobs completed -------------------------------------------------------------
sql("SELECT awa.complete($t_job, $t_lease)");
my %completed;
my $deadline = time() + 180;
while (keys %completed < 400 && time() < $deadline)
{
	$completed{$_}++ for split /\n/, sql(q{
		SELECT c.job_id FROM awa.claim('need', 100) c
		 WHERE awa.complete(c.job_id, c.run_lease)});
}
$completed{$t_job}++;
is(scalar(keys %completed), 401, 'every job was claimed and completed');
is(scalar(grep { $_ != 1 } values %completed), 0, '... each once');

# ---- intervals of 2 s: the rings drain back to idle ---------------------------------
$node->append_conf('postgresql.conf', qq{
awa_bgw.queue_rotate_interval = '2s'
awa_bgw.lease_rotate_interval = '2s'
awa_bgw.claim_rotate_interval = '2s'
});
$node->reload;
wait_until('once every job is done, the rings drain back to idle and the worker sleeps',
	"SELECT idle_since IS NOT NULL FROM awa.maintenance_status WHERE database = 'postgres'");
is(sql(q{SELECT awa_internal.ring_is_idle('queue') AND awa_internal.ring_is_idle('claim')
                AND awa_internal.ring_is_idle('lease')}), 't', '... every ring empty');
is(sql(q{SELECT completed FROM awa.queue_counts('need')}), '401',
	'queue_counts: 401 completed');
for my $ring (qw(queue claim))
{
	my ($n, $gap) = split /\|/, sql(qq{
		SELECT count(*), coalesce(min(extract(epoch FROM b.rotated_at - a.rotated_at)), 0)
		  FROM awa.${ring}_ring_rotations a
		  JOIN awa.${ring}_ring_rotations b ON b.generation = a.generation + 1});
	cmp_ok($n, '>', 0, "the $ring ring turned $n times");
	cmp_ok($gap, '>=', $MIN_AGE_S,
		"... none of them before its slot was awa_bgw.rotate_min_age old (shortest gap $gap s)");
}
# ---- the finished-job window (docs/storage.md A.19) -----------------------------------
# The claim ring at a 200 ms cadence would prune a finished job's slot within about
# 1.6 s; with awa_bgw.finished_job_window at 4 s, each job stays visible at least 4 s
# after it finished, by the server's clock, read in the same statement as awa.job:
# one completed at once, and one completed after its receipt's slot had been sealed for
# six turns (next in line for prune, where a closure would go before 0.10).
my $WINDOW_S = 4;
$node->append_conf('postgresql.conf', qq{
awa_bgw.rotate_fill = 0
awa_bgw.queue_rotate_interval = '200ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.finished_job_window = '${WINDOW_S}s'
});
$node->reload;
wait_until('the settings are reloaded (the worker\'s window is 4 s or its default 10 s)',
	"SELECT setting = '4000' FROM pg_settings WHERE name = 'awa_bgw.finished_job_window'");
my %held;
for my $kind (qw(quick slow))
{
	my $id = sql("SELECT awa.enqueue('window', '$kind', '{}')");
	my ($job, $lease) = split /\|/, sql(q{SELECT job_id, run_lease FROM awa.claim('window')});
	is($job, $id, "the $kind job is claimed");
	$held{$kind} = [ $job, $lease ];
}
# one look at a finished job: whether its record is gone, and whether it went before
# the window had passed since it finished (by the server's clock, in one statement)
my %finished;
my %early;
sub look
{
	my ($kind) = @_;
	my ($job, $at) = ($held{$kind}[0], $finished{$kind});
	my ($n, $age) = split /\|/, sql(qq{
		SELECT (SELECT count(*) FROM awa.job($job)),
		       extract(epoch FROM clock_timestamp() - '$at'::timestamptz)});
	$early{$kind} = $age if $n == 0 && $age < $WINDOW_S && !defined $early{$kind};
	return $n == 0;
}
sub finish
{
	my ($kind) = @_;
	my ($job, $lease) = @{ $held{$kind} };
	is(sql("SELECT awa.complete($job, $lease)"), 't', "the $kind job is completed");
	$finished{$kind} = sql("SELECT finished_at FROM awa.job($job)");
	isnt($finished{$kind}, '', "the $kind job shows finished at once");
}
finish('quick');
my $c_gen = generation('claim');
my $w_deadline = time() + 180;
my %gone;
# the slow job's receipt slot sealed for six turns (next in line for prune), looking at
# the quick job all along
while (generation('claim') < $c_gen + 6 && time() < $w_deadline)
{
	$gone{quick} ||= look('quick');
	sleep(0.1);
}
cmp_ok(generation('claim'), '>=', $c_gen + 6, 'the slow job\'s receipt slot sealed for six turns');
finish('slow');
while (!($gone{quick} && $gone{slow}) && time() < $w_deadline)
{
	$gone{$_} ||= look($_) for qw(quick slow);
	sleep(0.1);
}
for my $kind (qw(quick slow))
{
	ok($gone{$kind}, "the $kind job's record is pruned in the end");
	is($early{$kind}, undef, "... not before the window had passed since it finished");
}
is(status('errors'), '0', 'no maintenance step failed');

$node->stop;
done_testing();
