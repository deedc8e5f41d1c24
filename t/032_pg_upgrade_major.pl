# Copyright: the awa_bgw authors.
#
# pg_upgrade from an older PostgreSQL major to this one keeps every job
# (docs/operations.md, "Upgrading PostgreSQL"). Needs the older major installed beside
# this one, with awa_bgw built for it: AWA_BGW_UPGRADE_FROM names its installation
# (/usr/lib/postgresql/15: .ci/run sets it in its Debian 13 tree, which holds 15 from
# Debian 12 beside 17, the upgrade a Debian user makes); the test is skipped without it.
# (17 to 18 cannot be tested with Debian's packages today: see the same section.)
# The old cluster's worker runs while it holds jobs in every state (available, scheduled,
# retryable, running, completed, failed), a unique key, a schedule, a paused queue and a
# queue granted to a role. It is upgraded twice, with --copy and then with --link, each
# into a new cluster of this major whose worker runs from the first start: the worker
# rebases once (pg_upgrade gives the cluster a new system identifier) and leads; the
# counts, the pause and the grants are those of the old cluster; the unique key stands;
# the schedule fires; the paused queue gives nothing until it is resumed; the granted
# role enqueues and claims; the retryable and the deferred jobs wait, the failed one
# stays failed; every waiting job and every job that was running (rescued, attempt 2) is
# claimed exactly once, and no completed one; the rings turn.

use strict;
use warnings;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode qw();
use Test::More;
use Time::HiRes qw(time);

my $from = $ENV{AWA_BGW_UPGRADE_FROM} // '';
plan skip_all => 'AWA_BGW_UPGRADE_FROM names no older PostgreSQL installation with awa_bgw'
  unless $from ne '' && -x "$from/bin/postgres";

my $SETTINGS = qq{
awa_bgw.queue_rotate_interval = '1s'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '200ms'
};

# the settings and grants of every queue
my $queues_query = q{
	SELECT (SELECT string_agg(queue || ':' || paused || ':' || restricted, ' ' ORDER BY queue)
	          FROM awa.queue_settings)
	       || ' | ' || (SELECT string_agg(queue || ':' || grantee || ':' || privileges::text, ' '
	                                     ORDER BY queue, grantee)
	                      FROM awa.queue_grants)};

# ---- the old cluster ---------------------------------------------------------------
# every cluster with data checksums (18's initdb makes them by default, older ones do not;
# pg_upgrade needs both alike)
my @checksums = (extra => ['--data-checksums']);
my $old = AwaNode->create('old', $SETTINGS, install_path => $from, @checksums);
$old->start;
my $old_version = $old->run_sql('SHOW server_version_num');
$old->create_extension_and_lead;
$old->run_sql(q{CREATE ROLE tenant LOGIN; GRANT awa_producer, awa_consumer TO tenant});
$old->enqueue_sessions(32, 'up', 'waiting');
my $later = $old->run_sql(q{SELECT awa.enqueue('up', 'later', run_at => now() + interval '1 hour')});
# (the unique job has a queue of its own: a claim of 'up' takes from any of its shards,
# and a unique job claimed and completed frees its key a turn of the claim ring later)
my $unique = $old->run_sql(
	q{SELECT awa.enqueue('once', 'unique', unique_key => 'only-one', unique_for => '1 day')});
my @completed = $old->job_ids(q{SELECT job_id FROM awa.claim('up', 8) c
                                WHERE awa.complete(c.job_id, c.run_lease)});
my @retryable = $old->job_ids(q{SELECT job_id FROM awa.claim('up', 1) c
                                WHERE awa.fail(c.job_id, c.run_lease, 'later', '1 hour')});
$old->run_sql(q{SELECT awa.enqueue('fragile', 'fails', max_attempts => 1)});
$old->run_sql(q{SELECT awa.fail(job_id, run_lease, 'boom') FROM awa.claim('fragile', 1)});
$old->run_sql(q{SELECT awa.pause_queue('paused'); SELECT awa.enqueue('paused', 'held')});
$old->run_sql(q{SELECT awa.grant_queue('granted', 'tenant', '{enqueue,claim}')});
$old->run_sql(q{SELECT awa.schedule('yearly', '0 0 1 1 *', 'sched', 'yearly')});
my @running = $old->job_ids(q{SELECT job_id FROM awa.claim('up', 3, '1 s')});
my @waiting = $old->job_ids(q{SELECT job_id FROM awa.jobs('up', 'available', lim => 1000)});
is(scalar(@completed) . '/' . scalar(@retryable) . '/' . scalar(@running) . '/' . scalar(@waiting),
	'8/1/3/20', 'the old cluster: 8 completed, 1 retryable, 3 running, 20 waiting');
# (the 3 running attempts may be rescued already, their 1 s deadline passed: then their
# retries are scheduled)
is($old->run_sql(q{SELECT format('%s/%s/%s/%s', available, scheduled + running, completed, failed)
                     FROM awa.queue_counts('up')}),
	'20/5/8/0', '... counted so (the retryable and the deferred job scheduled, 3 running)');
is($old->queue_counts('fragile'), '0/0/0/0/1', '... and one failed job');
is($old->queue_counts('once'), '1/0/0/0/0', '... and one unique job waiting');
my $queues = $old->run_sql($queues_query);
like($queues, qr/paused:true/, '... a paused queue');
like($queues, qr/granted:tenant/, '... and a granted one');
$old->stop;

# ---- each upgrade ------------------------------------------------------------------
sub upgrade
{
	my ($mode) = @_;
	my $new = AwaNode->create("new_$mode", $SETTINGS, @checksums);
	my $bindir = $new->config_data('--bindir');
	{
		local $ENV{PGHOST};
		ok(run_log(
				[ 'pg_upgrade', '--no-sync', "--$mode", '-b', "$from/bin", '-B', $bindir,
				  '-d', $old->data_dir, '-D', $new->data_dir, '-p', $old->port,
				  '-P', $new->port, '-s', $new->host ]),
			"pg_upgrade --$mode from $old_version")
		  or die "pg_upgrade --$mode failed";
	}
	$new->start;
	cmp_ok($new->run_sql('SHOW server_version_num'), '>', $old_version, "$mode: a newer major");
	$new->wait_for("$mode: the worker leads",
		q{SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'});
	$new->wait_for("$mode: the jobs are this cluster's", q{SELECT awa.xid_space_state() = 'own'});
	is($new->count_in_log(qr/rebased the jobs of database "postgres"/), 1,
		"$mode: the worker rebased once (a new system identifier)");
	# (the attempts running at the upgrade may be rescued already, their retries scheduled)
	is($new->run_sql(q{SELECT format('%s/%s/%s', available + scheduled + running, completed,
	                                 failed) FROM awa.queue_counts('up')}),
		'25/8/0', "$mode: the counts of the old cluster");
	is($new->queue_counts('fragile'), '0/0/0/0/1', "$mode: the failed job is still failed");
	is($new->run_sql($queues_query), $queues, "$mode: the pause and the grants are kept");
	is($new->run_sql(
			q{SELECT awa.enqueue('once', 'unique', unique_key => 'only-one', unique_for => '1 day')}),
		$unique, "$mode: the unique key still stands in the way of its duplicate");
	is($new->queue_counts('once'), '1/0/0/0/0', "$mode: ... which wrote nothing");
	is($new->run_sql(q{SELECT count(*) FROM awa.claim('paused', 10)}), 0,
		"$mode: the paused queue gives nothing");
	$new->run_sql(q{SELECT awa.resume_queue('paused')});
	is($new->run_sql(q{SELECT string_agg(kind, ',') FROM awa.claim('paused', 10)}), 'held',
		"$mode: ... until it is resumed");
	is($new->run_sql(q{SET ROLE tenant; SELECT awa.enqueue('granted', 'mine') > 0;
	                   SELECT string_agg(kind, ',') FROM awa.claim('granted', 10)}),
		"t\nmine", "$mode: the granted role enqueues and claims");
	$new->run_sql(q{UPDATE awa.job_schedules SET next_run_at = now() - interval '1 minute'
	                 WHERE name = 'yearly'});
	$new->wait_for("$mode: the schedule fires",
		q{SELECT last_job_id IS NOT NULL FROM awa.job_schedules WHERE name = 'yearly'});

	my ($done, $claimed) = $new->claim_until('up',
		q{SELECT available = 0 AND running = 0 AND scheduled = 2 FROM awa.queue_counts('up')});
	ok($done, "$mode: the queue drains (but for the retryable and the deferred job)");
	my @twice = grep { @{ $claimed->{$_} } > 1 } sort { $a <=> $b } keys %$claimed;
	is("@twice", '', "$mode: no job is claimed twice");
	is(join(' ', grep { $claimed->{$_} } @completed, @retryable, $later), '',
		"$mode: no completed, retryable or deferred job is claimed");
	is(join(' ', grep { !$claimed->{$_} } @waiting, @running), '',
		"$mode: every waiting and running job is claimed");
	is(join(' ', map { $claimed->{$_}[0] } @running), join(' ', ('2true') x 3),
		"$mode: the jobs running at the upgrade are rescued and completed as attempt 2");
	is($new->run_sql("SELECT state FROM awa.job($retryable[0])"), 'retryable',
		"$mode: the retryable job waits for its retry");
	is($new->queue_counts('up'), '0/2/0/31/0', "$mode: the counts are exact");
	# (an idle ring does not turn: the drain may have left it empty already, so one
	# more job, claimed, gives it work)
	my $g = $new->run_sql(q{SELECT generation FROM awa.ring_cursor('claim')});
	$new->run_sql(q{SELECT awa.enqueue('turn', 'k');
	                SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('turn')});
	$new->wait_for("$mode: the rings turn",
		"SELECT generation > $g FROM awa.ring_cursor('claim')");
	$new->stop;
	return;
}

upgrade('copy');
upgrade('link');

done_testing();
