# Periodic jobs run by the maintenance worker: a due schedule is enqueued exactly
# once by the leader; a worker killed while its schedule step waits, and a server
# crashed and restarted with fire times missed, neither lose nor double a run (the
# policy: one catch-up run, then the next fire time after now).
#
# The test drives time: a schedule is made due by setting its next_run_at in the
# past, and the schedules fire yearly ('0 0 1 1 *'), so no real fire time falls
# within the test. "Exactly once" is checked after a later check of the worker has
# run: a sentinel schedule made due afterwards has fired, and schedules are checked
# in one transaction each time, so a run enqueued twice would be there by then.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('schedules', q{
max_worker_processes = 16
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
awa_bgw.job_heartbeat_timeout = '1h'
});
$node->start;

# wait until the worker leads (one test, named $what); its pid
sub leader
{
	my ($what) = @_;
	wait_leader($what);
	return status('pid');
}

# jobs of a kind (an entry carried forward keeps its job id)
sub jobs_of
{
	my ($kind) = @_;
	return sql("SELECT count(DISTINCT job_id) FROM awa.ready_entries WHERE kind = '$kind'");
}

# a yearly schedule of kind $name on queue 'sched', made due at $due (an SQL expression)
sub due_schedule
{
	my ($name, $due) = @_;
	sql(qq{SELECT awa.schedule('$name', '0 0 1 1 *', 'sched', '$name');
	       UPDATE awa.job_schedules SET next_run_at = $due WHERE name = '$name'});
	return;
}

# A later check of the worker has run: a sentinel made due now has fired.
my $sentinels = 0;

sub checked_again
{
	my $name = 'sentinel' . ++$sentinels;
	due_schedule($name, q{now() - interval '1 minute'});
	wait_until("a later check of the schedules ran ($name fired)",
		qq{SELECT last_job_id IS NOT NULL FROM awa.job_schedules WHERE name = '$name'});
	return;
}

# the schedule fired once: one job of its kind, the schedule's last job, next run ahead
sub fired_once
{
	my ($name, $what) = @_;
	checked_again();
	is(jobs_of($name), '1', "$what: exactly one job enqueued");
	is( sql(qq{SELECT s.last_job_id = e.job_id AND s.next_run_at > now()
	                  AND s.next_run_at = awa.cron_next(s.cron, s.last_run_at, s.timezone)
	             FROM awa.schedules s
	             JOIN awa.ready_entries e ON e.kind = s.kind WHERE s.name = '$name'}),
		't', "$what: the schedule names the job, its next run is the next fire time");
	return;
}

sql('CREATE EXTENSION awa_bgw');
my $pid = leader('the worker leads');

#---------------------------------------------------------------------------
# 1. A schedule made due is enqueued by the worker, once.

due_schedule('plain', q{now() - interval '1 day'});
wait_until('the worker enqueues the due run',
	q{SELECT last_job_id IS NOT NULL FROM awa.job_schedules WHERE name = 'plain'});
fired_once('plain', 'a due schedule');

#---------------------------------------------------------------------------
# 2. The worker is killed while its schedule step waits (the table locked by a
#    superuser session that made the schedule due): the new worker fires the run,
#    once.

my $locker = $node->background_psql('postgres');
$locker->query_safe(q{BEGIN; LOCK TABLE awa.job_schedules IN EXCLUSIVE MODE});
$locker->query_safe(q{SELECT awa.schedule('killed', '0 0 1 1 *', 'sched', 'killed')});
$locker->query_safe(
	q{UPDATE awa.job_schedules SET next_run_at = now() - interval '1 day' WHERE name = 'killed'});
wait_until('the worker waits in its schedule step',
	qq{SELECT wait_event_type = 'Lock' AND query LIKE '%fire_due_schedules%'
	     FROM pg_stat_activity WHERE pid = $pid});
is(sql("SELECT pg_terminate_backend($pid)"), 't', 'the waiting worker is terminated');
$locker->query_safe('COMMIT');
$locker->quit;
my $new_pid = leader('a new worker leads');
isnt($new_pid, $pid, '... a new process');
wait_until('the new worker enqueues the run',
	q{SELECT last_job_id IS NOT NULL FROM awa.job_schedules WHERE name = 'killed'});
fired_once('killed', 'after the worker was killed');

#---------------------------------------------------------------------------
# 3. Fire times missed while the server was down: maintenance is switched off, the
#    schedule made due three years back (three fire times missed), the server
#    crashes and comes back with maintenance on: one catch-up run, then the next
#    fire time.

$node->append_conf('postgresql.conf', 'awa_bgw.enabled = off');
$node->reload;
wait_until('maintenance is off',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'postgres'}, 'disabled');
due_schedule('missed', q{now() - interval '3 years'});
is( sql(q{SELECT awa.cron_next(cron, next_run_at, timezone) < now()
	         FROM awa.job_schedules WHERE name = 'missed'}),
	't', 'more than one of its fire times has passed');
is(jobs_of('missed'), '0', 'nothing enqueued while maintenance is off');
$node->stop('immediate');
$node->append_conf('postgresql.conf', 'awa_bgw.enabled = on');
$node->start;
leader('the worker leads after the crash');
wait_until('the worker enqueues the catch-up run',
	q{SELECT last_job_id IS NOT NULL FROM awa.job_schedules WHERE name = 'missed'});
fired_once('missed', 'after missed fire times');
is(jobs_of('plain') . jobs_of('killed'), '11', 'the earlier runs are neither lost nor repeated');

#---------------------------------------------------------------------------
# 4. A clean restart with nothing due enqueues nothing; unschedule stops a schedule.

my $before = sql(q{SELECT count(DISTINCT job_id) FROM awa.ready_entries WHERE queue = 'sched'});
$node->restart;
leader('the worker leads after a restart');
checked_again();
is( sql(q{SELECT count(DISTINCT job_id) FROM awa.ready_entries WHERE queue = 'sched'}),
	$before + 1, 'only the sentinel fired after the restart');
is(sql(q{SELECT awa.unschedule('plain')}), 't', 'unschedule');
is(sql(q{SELECT count(*) FROM awa.schedules WHERE name = 'plain'}), '0', 'the schedule is gone');
is(status('errors'), '0', 'no step failed');

$node->stop;
done_testing();
