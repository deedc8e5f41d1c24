
# Copyright: the awa_bgw authors.
#
# Claims that wake (docs/storage.md A.11), with the worker running. A claim waiting
# for work sleeps with no snapshot and no xid (pg_stat_activity, awa.horizon_pins);
# a rolled-back enqueue wakes no one; a committed one wakes the claimer waiting
# longest, which returns the job; of two waiting claimers and one job, one gets it and
# the other keeps waiting; pg_cancel_backend ends a waiting claim and frees its slot;
# a job the worker promotes wakes a claimer, also after the worker was restarted; a
# server restart ends the waiting sessions and the claimers that come back are woken; a
# claimer that found a lane with work busy looks again until it is free.

use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('wait', qq{
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.horizon_pin_min_age = '0'
});
$node->start;
$node->create_extension_and_lead;

# A claimer waiting up to 2 minutes in its own psql, as application_name $name;
# returns once its slot is armed.
sub start_waiter
{
	my ($name, $queue) = @_;
	my %w = (name => $name, out => '', err => '');
	$w{h} = IPC::Run::start(
		[
			'psql', '-X', '-At', '-d', $node->connstr('postgres') . " application_name=$name",
			'-c', "SELECT job_id || ':' || kind FROM awa.claim('$queue', 1, wait => '2 min')"
		],
		'>', \$w{out}, '2>', \$w{err});
	$node->poll_query_until('postgres',
		"SELECT EXISTS (SELECT 1 FROM awa.claim_waiters() w JOIN pg_stat_activity a USING (pid)"
		  . " WHERE a.application_name = '$name')")
	  or die "$name is not waiting";
	return \%w;
}

sub waiting
{
	my ($w) = @_;
	return sql("SELECT count(*) FROM awa.claim_waiters() w JOIN pg_stat_activity a USING (pid)"
		  . " WHERE a.application_name = '$w->{name}'");
}

# waits for the waiter's psql to end (its claim waits 2 minutes at most); its output
sub finish_waiter
{
	my ($w) = @_;
	$w->{h}->finish;
	chomp $w->{out};
	return $w->{out};
}

# 1. A waiting claimer holds no snapshot and no xid, and is no horizon pin.
sql(q{SELECT awa.register_queue('tw')});
my $a = start_waiter('waiter_a', 'tw');
is( sql(q{SELECT coalesce(backend_xmin::text, 'none') || ' ' || coalesce(backend_xid::text, 'none')
            || ' ' || wait_event_type FROM pg_stat_activity WHERE application_name = 'waiter_a'}),
	'none none Extension',
	'a waiting claimer holds no snapshot and no xid, and sleeps on its latch');
is(sql(q{SELECT count(*) FROM awa.horizon_pins_at('0') p
           JOIN pg_stat_activity a ON a.pid = p.pid WHERE a.application_name = 'waiter_a'}),
	'0', 'it is no horizon pin, even with min_age 0');

# 2. A rolled-back enqueue wakes no one (its wake-up would be set before ROLLBACK returns).
sql(q{BEGIN; SELECT awa.enqueue('tw', 'never'); ROLLBACK;});
is(sql(q{SELECT count(*) FILTER (WHERE woken) || '/' || count(*) FROM awa.claim_waiters()}),
	'0/1', 'a rollback woke no one: the claimer still waits, not woken');

# 3. A commit wakes it: it returns the job.
my $id = sql(q{SELECT awa.enqueue('tw', 'wake')});
is(finish_waiter($a), "$id:wake", 'a committed enqueue wakes the waiting claimer, which takes it');
is(sql('SELECT count(*) FROM awa.claim_waiters()'), '0', 'and it left its slot');

# 4. Two waiting claimers and one job: the one waiting longest gets it; the other keeps
#    waiting, and takes the next job.
my $b = start_waiter('waiter_b', 'tw');
my $c = start_waiter('waiter_c', 'tw');
$id = sql(q{SELECT awa.enqueue('tw', 'one')});
is(finish_waiter($b), "$id:one", 'of two waiting claimers, the one waiting longest takes the job');
$node->poll_query_until('postgres', q{SELECT bool_and(NOT woken) FROM awa.claim_waiters()})
  or die 'the other claimer did not settle';
is(waiting($c), '1', 'the other keeps waiting');
$id = sql(q{SELECT awa.enqueue('tw', 'two')});
is(finish_waiter($c), "$id:two", 'and takes the next job');

# 5. pg_cancel_backend ends a waiting claim and frees its slot.
my $d = start_waiter('waiter_d', 'tw');
is(sql(q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'waiter_d'}),
	't', 'cancel the waiting claim');
finish_waiter($d);
like($d->{err}, qr/canceling statement due to user request/, 'the waiting claim was canceled');
is(sql('SELECT count(*) FROM awa.claim_waiters()'), '0', 'and its slot is free');
$id = sql(q{SELECT awa.enqueue('tw', 'after cancel')});
is(sql(q{SELECT string_agg(job_id || ':' || kind, ',') FROM awa.claim('tw', 5)}),
	"$id:after cancel", 'the job committed after the cancel is claimed once, by the next claim');

# 6. The worker's commits wake claimers too (a deferred job promoted when due), also
#    after the worker was restarted while a claimer waited.
my $e = start_waiter('waiter_e', 'tw');
my $worker = sql(q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'awa_bgw worker'});
ok($worker > 0, 'the maintenance worker runs');
sql("SELECT pg_terminate_backend($worker)");
$node->poll_query_until('postgres',
	"SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'awa_bgw worker' AND pid <> $worker)"
	  . " AND (SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres')")
  or die 'the worker was not relaunched';
is(waiting($e), '1', 'the claimer waited through the worker restart');
$id = sql(q{SELECT awa.enqueue('tw', 'promoted', run_at => now() + interval '300 ms')});
is(finish_waiter($e), "$id:promoted", 'the worker promoting a due job wakes the claimer');

# 7. A server restart ends the waiting sessions; shared memory starts empty; claimers
#    that come back are woken as before.
my $f = start_waiter('waiter_f', 'tw');
$node->restart;
finish_waiter($f);
isnt($f->{h}->result(0), 0, 'the waiting session ended with the server');
is(sql('SELECT count(*) FROM awa.claim_waiters()'), '0', 'no waiter after the restart');
$node->poll_query_until('postgres',
	"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'no leader after the restart';
my $g = start_waiter('waiter_g', 'tw');
$id = sql(q{SELECT awa.enqueue('tw', 'after restart')});
is(finish_waiter($g), "$id:after restart", 'a claimer waiting after the restart is woken');
is(sql(q{SELECT available || '/' || running FROM awa.queue_counts('tw')}), '0/6',
	'every job was handed out once (none available; six running)');

# 8. A lane with work held by a session that is no claimer (as the worker's claim-ring
#    prune holds one while it carries the lane's position forward): the waiting claim
#    found it busy, so it looks again until the lane is free, since the holder's commit
#    wakes no one; it takes the job (found on 18 under load: it slept its whole wait).
my $bw = sql(q{SELECT awa.enqueue('tb', 'behind a busy lane')});
my $lane = sql("SELECT lane_id FROM awa.ready_entries WHERE job_id = $bw");
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
$holder->query_safe("SELECT awa_internal.private_xact_lock(awa_internal.claim_lock_key($lane))");
my $h = start_waiter('waiter_h', 'tb');
$holder->query_safe('COMMIT');
$holder->quit;
is(finish_waiter($h), "$bw:behind a busy lane",
	'a claimer that found the lane with work busy takes the job once the lane is free');

$node->stop;
done_testing();
