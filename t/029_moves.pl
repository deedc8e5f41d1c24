
# Copyright: the awa_bgw authors.
#
# Moving a database to another cluster keeps every job (docs/storage.md §A.17). The old
# cluster's xid counter stands in epoch 3, far from a new cluster's: ready entries and
# the claim windows of every lane carry xids of that space. Its database holds jobs
# available (enqueued from one session per shard, so that every lane holds work), claimed
# by many sessions (so that most lanes have a position), completed, running with a
# passed deadline, failed, deferred, one with a unique key, and a schedule. While a
# pg_dump is connected no slot is pruned; it is dumped twice (pg_dump, pg_dumpall), live (the worker turning
# the rings at 200 ms), and restored while the worker of the new cluster already runs:
#  - behind: a new cluster in epoch 0, restored with pg_dump -Fc / pg_restore -j 2;
#  - ahead: a new cluster in epoch 6, restored from pg_dumpall through psql.
# On each: the worker waits while the restore is half done (restore_pending), rebases
# once the source's mark is in and leads; the counts are those of the dump; a unique
# key still stands in the way of its duplicate; the schedule fires; then jobs are
# enqueued from one session per shard, and a drain claims every waiting job, every new
# one and every job that was running at the dump (rescued, attempt 2) exactly once, and
# no job completed before the dump; the failed job stays failed, the deferred one
# deferred; the rings turn. Then pg_upgrade of the first new cluster: the xid counter
# goes on, the system identifier is new, the worker rebases once, and every waiting and
# running job is claimed once.

use strict;
use warnings;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode qw();
use Test::More;
use Time::HiRes qw(time);

my $SETTINGS = qq{
awa_bgw.queue_rotate_interval = '200ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '200ms'
max_connections = 40
};

# a stopped, initialised node whose xid counter is in the given epoch
sub node_in_epoch
{
	my ($name, $epoch) = @_;
	my $node = AwaNode->create($name, $SETTINGS);
	command_ok([ 'pg_resetwal', '-e', $epoch, $node->data_dir ], "$name: xid epoch $epoch");
	$node->start;
	return $node;
}

# ---- the old cluster, in epoch 3 ------------------------------------------------------
my $old = node_in_epoch('old', 3);
$old->create_extension_and_lead;
$old->enqueue_sessions(96, 'moved', 'before');
# (the unique job has a queue of its own: a claim of 'moved' takes from any of its shards,
# and a unique job claimed and completed frees its key a turn of the claim ring later)
my $unique_id = $old->run_sql(
	q{SELECT awa.enqueue('once', 'unique', unique_key => 'only-one', unique_for => '1 day')});
$old->run_sql(q{SELECT awa.enqueue('moved', 'later', run_at => now() + interval '1 hour')});
$old->run_sql(q{SELECT awa.enqueue('fragile', 'fails', max_attempts => 1)});
$old->run_sql(q{SELECT awa.schedule('yearly', '0 0 1 1 *', 'sched', 'yearly')});
$old->run_sql(q{SELECT awa.fail(job_id, run_lease, 'boom') FROM awa.claim('fragile', 1)});

# 16 sessions each claim 2 and complete them: positions in most lanes. Each notes the
# jobs it completed (awa.jobs no longer lists a completed job once the claim ring has
# pruned its closure, which at these cadences may come before the dump).
$old->run_sql(q{CREATE TABLE completions (job_id bigint)});
my $claim_script = $old->basedir . '/claim2.sql';
open my $fh, '>', $claim_script or die $!;
print $fh "INSERT INTO completions SELECT c.job_id FROM awa.claim('moved', 2) c\n"
  . "  WHERE awa.complete(c.job_id, c.run_lease);\n";
close $fh;
$old->command_ok(
	[ 'pgbench', '-n', '-C', '-c', '1', '-t', '16', '-f', $claim_script, '-h', $old->host,
	  '-p', $old->port, 'postgres' ],
	'16 sessions claim and complete 2 jobs each');
# 6 attempts left running, their deadline soon passed
my $running = $old->run_sql(
	q{SELECT string_agg(job_id::text, ' ' ORDER BY job_id) FROM awa.claim('moved', 6, '1 s')});
my $completed_before = $old->run_sql(q{SELECT string_agg(job_id::text, ' ' ORDER BY job_id)
                                         FROM completions});
# (the 6 may be rescued already on a slow machine, their retries scheduled or promoted:
# each is running, retryable or available again, and the sum stays exact)
is($old->run_sql(q{SELECT format('%s/%s/%s', available + scheduled + running, completed, failed)
                     FROM awa.queue_counts('moved')}),
	'65/32/0', 'the old cluster: 58 available, 1 deferred and 6 running, 32 completed');
is($old->run_sql(qq{SELECT count(*) FROM unnest('{@{[ join ',', split / /, $running ]}}'::bigint[]) j
                     WHERE (SELECT state FROM awa.job(j)) IN ('running', 'retryable', 'available')}),
	'6', '... the 6 running, or rescued into a retry');
is(scalar(my @c = split / /, $completed_before), 32, '... the 32 that the sessions noted');
is($old->queue_counts('fragile'), '0/0/0/0/1', '... and the failed job');
cmp_ok($old->run_sql(q{SELECT count(DISTINCT lane_id) FROM awa.ready_entries WHERE queue = 'moved'}),
	'>=', 8, 'every lane shard holds work');
cmp_ok($old->run_sql(q{SELECT count(DISTINCT lane_id) FROM awa.lease_claims
                        WHERE queue = 'moved' AND win_hi IS NOT NULL}),
	'>=', 6, 'most lanes have a claim position');
cmp_ok($old->run_sql(q{SELECT min(txid) FROM awa.ready_entries WHERE queue = 'moved'}),
	'>', 3 * 2**32, 'the entries carry xids of epoch 3');

# No slot is truncated while a pg_dump is connected: its snapshot predates the prune and
# it would read a truncated child empty (docs/storage.md A.17). A session that names
# itself so holds every prune off, and the dumps below are taken with the worker
# turning the rings at 200 ms (the claim ring turns and prunes: it holds running receipts).
my $dumper = $old->background_psql('postgres');
$dumper->query_safe(q{SET application_name = 'pg_dump'});
ok($old->poll_query_until('postgres',
		q{SELECT prunes->'claim'->>'last_reason' = 'pg_dump' FROM awa.maintenance_status}),
	'while a pg_dump is connected a due prune stands down (reason pg_dump)');
my ($pruned, $blocked) = split /\|/, $old->worker_status(
	"prunes->'claim'->>'pruned', (prunes->'claim'->>'blocked')::int");
ok($old->poll_query_until('postgres',
		"SELECT (prunes->'claim'->>'blocked')::int >= $blocked + 3 FROM awa.maintenance_status"),
	'... again and again');
is($old->worker_status("prunes->'claim'->>'pruned'"), $pruned, '... and no claim slot is pruned');
$dumper->quit;

my $dump_c = $old->basedir . '/moved.dump';
my $dump_all = $old->basedir . '/all.sql';
# as a DBA runs them: pg_dump and pg_restore name their sessions, which the harness's
# PGAPPNAME would hide (the worker knows them by it)
delete $ENV{PGAPPNAME};
$old->command_ok([ 'pg_dump', '-Fc', '-f', $dump_c, '-d', $old->connstr('postgres') ],
	'pg_dump -Fc of the live database');
$old->command_ok([ 'pg_dumpall', '-f', $dump_all, '-d', $old->connstr('postgres') ],
	'pg_dumpall of the live cluster');
my %all_before = map { $_ => 1 } split / /, $old->run_sql(
	q{SELECT string_agg(DISTINCT job_id::text, ' ') FROM awa.ready_entries WHERE queue = 'moved'});
$old->stop;

# Claim and complete queue 'moved' until nothing is available or running and only the
# deferred job is left: one test; returns { job_id => [ attempt . completed, ... ] }.
sub drain
{
	my ($node, $name) = @_;
	my ($done, $claimed) = $node->claim_until('moved',
		q{SELECT available = 0 AND running = 0 AND scheduled = 1 FROM awa.queue_counts('moved')});
	ok($done, "$name: the queue drained (but for the deferred job)");
	return %$claimed;
}

# ---- each new cluster --------------------------------------------------------------
sub move_to
{
	my ($name, $epoch, $restore) = @_;
	my $node = node_in_epoch($name, $epoch);
	# the worker already runs: it waits for the extension (read from the server log:
	# the status view is the extension's)
	$node->wait_for_log(qr/has no extension awa_bgw; waiting for it/);
	$node->command_ok($restore->($node), "$name: the restore");
	$node->poll_query_until('postgres',
		q{SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'})
	  or die "$name: the worker does not lead after the restore";
	is($node->run_sql('SELECT awa.xid_space_state()'), 'own',
		"$name: the worker rebased the restored jobs into this cluster's xid space");
	# (a rescued attempt's retry, attempt 2, is a new entry of this cluster)
	is($node->run_sql(q{SELECT count(*) FILTER (WHERE txid <> '0') || '/' || count(*)
	                      FROM awa.ready_entries WHERE attempt = 1 AND queue = 'moved'}),
		'0/58', "$name: every restored waiting entry reads txid 0");
	cmp_ok($node->count_in_log(qr/rebased the jobs of database "postgres"/), '==', 1,
		"$name: once");
	# the attempts running at the dump may be rescued already (their retries scheduled
	# or promoted): 58 waiting, 6 running, 1 deferred
	is($node->run_sql(q{SELECT format('%s/%s/%s', available + scheduled + running,
	                                  completed, failed) FROM awa.queue_counts('moved')}),
		'65/32/0', "$name: the counts of the dump");
	is($node->queue_counts('fragile'), '0/0/0/0/1', "$name: the failed job is still failed");
	is($node->run_sql(
			q{SELECT awa.enqueue('once', 'unique', unique_key => 'only-one', unique_for => '1 day')}),
		$unique_id, "$name: the unique key still stands in the way of its duplicate");
	is($node->queue_counts('once'), '1/0/0/0/0', "$name: ... which wrote nothing");
	# (and the unique job is done with: a job left waiting keeps its queue slot from
	# being pruned, and the queue ring stops turning once it wraps round to it)
	is($node->run_sql(q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('once', 10)}),
		'1', "$name: ... and is claimed and completed once");

	$node->run_sql(q{UPDATE awa.job_schedules SET next_run_at = now() - interval '1 minute'
	                  WHERE name = 'yearly'});
	ok($node->poll_query_until('postgres',
			q{SELECT last_job_id IS NOT NULL FROM awa.job_schedules WHERE name = 'yearly'}),
		"$name: the schedule fires on the new cluster");
	is($node->run_sql(q{SELECT string_agg(kind, ',') FROM awa.claim('sched', 10)}), 'yearly',
		"$name: ... and its job is claimed");

	$node->enqueue_sessions(96, 'moved', 'after');
	my $after = $node->run_sql(
		q{SELECT string_agg(job_id::text, ' ') FROM awa.ready_entries WHERE kind = 'after'});
	my %claimed = drain($node, $name);
	my @twice = grep { @{ $claimed{$_} } > 1 } keys %claimed;
	is("@twice", '', "$name: no job was claimed twice");
	my @completed_again = grep { $claimed{$_} } split / /, $completed_before;
	is("@completed_again", '', "$name: no job completed before the dump was claimed again");
	my %expected = (%all_before, map { $_ => 1 } split / /, $after);
	delete $expected{$_} for split / /, $completed_before;
	my @missing = grep { !$claimed{$_} } sort { $a <=> $b } keys %expected;
	is("@missing", '', "$name: every waiting, running and new job was claimed");
	is(scalar(keys %claimed), 58 + 6 + 96, "$name: 58 waiting, 6 rescued, 96 new");
	is(join(' ', map { $claimed{$_}[0] } split / /, $running), join(' ', ('2true') x 6),
		"$name: the jobs running at the dump were rescued and completed as attempt 2");
	is($node->queue_counts('moved'), '0/1/0/' . (32 + 160) . '/0', "$name: the counts are exact");

	# (an idle ring does not turn: the drain may have left it empty already, so one
	# more job, claimed and completed, gives it work)
	my $g0 = $node->run_sql(q{SELECT generation FROM awa.ring_cursor('queue')});
	$node->run_sql(q{SELECT awa.enqueue('turn', 'k');
	                 SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('turn')});
	ok($node->poll_query_until('postgres',
			"SELECT generation > $g0 FROM awa.ring_cursor('queue')"),
		"$name: the rings turn");
	return $node;
}

my $behind = move_to('behind', 0, sub {
	my ($node) = @_;
	return [ 'pg_restore', '-j', '2', '-d', $node->connstr('postgres'), $dump_c ];
});
move_to('ahead', 6, sub {
	my ($node) = @_;
	# (the only error is the role that runs it, which exists already)
	return [ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-f', $dump_all ];
})->stop;

# ---- pg_upgrade keeps the xid counter (and gives the cluster a new system identifier:
# the worker rebases once, which keeps every job) ----------------------------------
$behind->enqueue_sessions(16, 'moved', 'upgrade');
my $up_running = $behind->run_sql(
	q{SELECT string_agg(job_id::text, ' ' ORDER BY job_id) FROM awa.claim('moved', 2, '1 s')});
my $xid_before = $behind->run_sql('SELECT pg_current_xact_id()');
my $sysid_before = $behind->run_sql('SELECT awa_internal.cluster_system_identifier()');
$behind->stop;
my $up = AwaNode->create('upgraded', $SETTINGS);
my $bindir = $up->config_data('--bindir');
{
	local $ENV{PGHOST};
	command_ok(
		[ 'pg_upgrade', '--no-sync', '-b', $bindir, '-B', $bindir, '-d', $behind->data_dir,
		  '-D', $up->data_dir, '-p', $behind->port, '-P', $up->port, '-s', $up->host ],
		'pg_upgrade of the restored cluster');
}
$up->start;
cmp_ok($up->run_sql('SELECT pg_current_xact_id()::text::bigint'), '>', $xid_before,
	'pg_upgrade: the xid counter goes on from the old cluster\'s');
isnt($up->run_sql('SELECT awa_internal.cluster_system_identifier()'), $sysid_before,
	'pg_upgrade: ... under a new system identifier');
$up->poll_query_until('postgres',
	q{SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'})
  or die 'pg_upgrade: the worker does not lead';
$up->poll_query_until('postgres', q{SELECT awa.xid_space_state() = 'own'})
  or die 'pg_upgrade: the mark is not this cluster\'s';
cmp_ok($up->count_in_log(qr/rebased the jobs of database "postgres"/), '==', 1,
	'pg_upgrade: the worker rebased once');
my %up_claimed = drain($up, 'pg_upgrade');
my @up_twice = grep { @{ $up_claimed{$_} } > 1 } keys %up_claimed;
is("@up_twice", '', 'pg_upgrade: no job was claimed twice');
is(scalar(keys %up_claimed), 16, 'pg_upgrade: 14 waiting and 2 rescued jobs');
is(join(' ', map { $up_claimed{$_}[0] } split / /, $up_running), '2true 2true',
	'pg_upgrade: the jobs running at the upgrade were rescued and completed as attempt 2');
$up->stop;

done_testing();
