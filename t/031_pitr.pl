# Copyright: the awa_bgw authors.
#
# Point-in-time recovery keeps every job (docs/storage.md §A.17, docs/operations.md
# "Backup, restore and moving a database"). A primary archives its WAL; a base backup
# is taken; then the worker turns the rings and prunes (the queue ring every 5 s, so that
# it does not wrap onto the slots the waiting jobs hold; the others at 200 ms),
# driven by a queue of its own, while jobs are enqueued from one session per shard, claimed, completed, failed, deferred and left
# running, up to a named restore point; after it, more jobs are enqueued and jobs that
# were waiting at the restore point are completed. The backup is restored with the
# archive to the restore point and promoted. Recovery keeps the cluster's system
# identifier and its xid counter: the mark is the cluster's own and nothing is rebased.
# The counts are those of the restore point; nothing enqueued after it exists; every job
# waiting at it (including those completed after it, on the timeline that was left) and
# every job running at it (rescued, attempt 2) is claimed exactly once, with the jobs
# enqueued on the new timeline (whose xids the old one had used after the restore point);
# nothing completed before it is claimed again; the failed job stays failed and the
# deferred one deferred; the rings turn.

use strict;
use warnings;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode qw();
use Test::More;
use Time::HiRes qw(time);

my $SETTINGS = qq{
awa_bgw.queue_rotate_interval = '5s'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '200ms'
};

# A ring turns only when it has traffic: jobs of queue 'churn' are enqueued, claimed and
# completed until the query $cond holds; one test
sub churn_until
{
	my ($node, $cond, $what) = @_;
	my $deadline = time() + 180;
	my $held = 0;
	while (!$held && time() < $deadline)
	{
		$node->run_sql(q{SELECT awa.enqueue('churn', 'c')});
		$node->run_sql(q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('churn', 100)});
		$held = $node->run_sql($cond) eq 't';
	}
	ok($held, $what) or die "gave up waiting: $what";
	return;
}

# $node's queue ring has turned $n generations beyond now
sub turns
{
	my ($node, $n) = @_;
	my $g = $node->run_sql("SELECT generation FROM awa.ring_cursor('queue')");
	return "SELECT generation >= $g + $n FROM awa.ring_cursor('queue')";
}

my $primary = AwaNode->create('primary', $SETTINGS, has_archiving => 1, allows_streaming => 1);
$primary->start;
$primary->create_extension_and_lead;
$primary->enqueue_sessions(32, 'pitr', 'base');
my $claim_complete = q{SELECT job_id FROM awa.claim('pitr', %d) c
                        WHERE awa.complete(c.job_id, c.run_lease)};
my %completed = $primary->job_id_set(sprintf($claim_complete, 8));
$primary->backup('base');

# ---- after the base backup, up to the restore point: the rings turn and prune ---------
$primary->enqueue_sessions(32, 'pitr', 'mid');
%completed = (%completed, $primary->job_id_set(sprintf($claim_complete, 8)));
$primary->run_sql(q{SELECT awa.enqueue('pitr', 'later', run_at => now() + interval '1 hour')});
$primary->run_sql(q{SELECT awa.enqueue('fragile', 'fails', max_attempts => 1)});
$primary->run_sql(q{SELECT awa.fail(job_id, run_lease, 'boom') FROM awa.claim('fragile', 1)});
my ($pruned) = $primary->worker_status("(prunes->'claim'->>'pruned')::bigint");
churn_until($primary, turns($primary, 3), 'the queue ring turns after the base backup');
churn_until($primary,
	"SELECT (prunes->'claim'->>'pruned')::bigint > $pruned FROM awa.maintenance_status"
	  . " WHERE database = 'postgres'", '... and the claim ring prunes');
# 4 attempts left running at the restore point, their deadline soon passed
my $running = $primary->run_sql(
	q{SELECT string_agg(job_id::text, ' ' ORDER BY job_id) FROM awa.claim('pitr', 4, '1 s')});
# what holds at the restore point (the rescue of the running attempts may come before
# it or after it: available + scheduled + running is the same either way)
my %waiting = $primary->job_id_set(
	q{SELECT DISTINCT job_id FROM awa.ready_entries WHERE queue = 'pitr' AND kind <> 'later'});
delete @waiting{ keys %completed, split / /, $running };
is(scalar(keys %waiting) . '/' . scalar(keys %completed), '44/16',
	'at the restore point: 44 jobs waiting, 16 completed (and 4 running)');
my $open_at_target = $primary->run_sql(q{SELECT available + scheduled + running
                                           FROM awa.queue_counts('pitr')});
is($open_at_target, 44 + 4 + 1, '... 49 open, with the deferred one');
is($primary->queue_counts('fragile'), '0/0/0/0/1', '... and the failed job');
my $target_xid = $primary->run_sql('SELECT pg_current_xact_id()');
$primary->run_sql(q{SELECT pg_create_restore_point('target')});

# ---- after the restore point: work the recovered cluster must not see ----------------
$primary->enqueue_sessions(16, 'pitr', 'lost');
my %completed_after = $primary->job_id_set(sprintf($claim_complete, 10));
is(scalar(keys %completed_after), 10, 'after it, 10 jobs are claimed and completed');
# 5,000 xids more, one per transaction, so that the recovered cluster's worker (which
# assigns xids of its own from its promotion on) stays far below what the old timeline
# used after the target: the check below needs a gap its passes cannot fill (CI once saw
# the worker pass 19 xids before the read)
$primary->run_sql(q{DO $$ BEGIN FOR i IN 1 .. 5000 LOOP
                        PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$});
my $sysid = $primary->run_sql('SELECT awa_internal.cluster_system_identifier()');
my $last_xid = $primary->run_sql('SELECT pg_current_xact_id()');
my $walfile = $primary->run_sql('SELECT pg_walfile_name(pg_switch_wal())');
$primary->wait_for('the WAL up to now is archived',
	"SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver");
$primary->stop;

# ---- the backup, recovered to the restore point and promoted ---------------------------
my $pitr = AwaNode->new('pitr');
$pitr->init_from_backup($primary, 'base', has_restoring => 1, standby => 0);
$pitr->append_conf('postgresql.conf', qq{
recovery_target_name = 'target'
recovery_target_action = 'promote'
});
$pitr->start;
$pitr->wait_for('recovery reaches the restore point and promotes',
	'SELECT NOT pg_is_in_recovery()');
$pitr->wait_for('the worker leads',
	q{SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'});
is($pitr->run_sql('SELECT awa_internal.cluster_system_identifier()'), $sysid,
	'PITR keeps the system identifier');
my $xid = $pitr->run_sql('SELECT pg_current_xact_id()');
ok($xid > $target_xid && $xid < $last_xid,
	"... and the xid counter: it goes on from the restore point's ($target_xid < $xid < $last_xid)");
is($pitr->run_sql('SELECT awa.xid_space_state()'), 'own', 'the mark is the cluster\'s own');
is($pitr->count_in_log(qr/rebased the jobs/), 0, '... and nothing is rebased');
is($pitr->run_sql(q{SELECT available + scheduled + running || '/' || completed
                      FROM awa.queue_counts('pitr')}),
	"$open_at_target/16", 'the counts are those of the restore point');
is($pitr->run_sql(q{SELECT count(*) FROM awa.ready_entries WHERE kind = 'lost'}), 0,
	'nothing enqueued after the restore point exists');
is($pitr->queue_counts('fragile'), '0/0/0/0/1', 'the failed job is still failed');

# the new timeline: its xids are those the old one used after the restore point
$pitr->enqueue_sessions(32, 'pitr', 'new');
my %new = $pitr->job_id_set(q{SELECT DISTINCT job_id FROM awa.ready_entries WHERE kind = 'new'});
my ($done, $claimed) = $pitr->claim_until('pitr',
	q{SELECT available = 0 AND running = 0 AND scheduled = 1 FROM awa.queue_counts('pitr')});
ok($done, 'the queue drains (but for the deferred job)');
my @twice = grep { @{ $claimed->{$_} } > 1 } sort { $a <=> $b } keys %$claimed;
is("@twice", '', 'no job is claimed twice');
my @again = grep { $claimed->{$_} } sort { $a <=> $b } keys %completed;
is("@again", '', 'no job completed before the restore point is claimed again');
my %expected = (%waiting, %new, map { $_ => 1 } split / /, $running);
my @missing = grep { !$claimed->{$_} } sort { $a <=> $b } keys %expected;
is("@missing", '', 'every job waiting or running at the restore point, and every new one, is claimed');
is(scalar(keys %$claimed), 44 + 4 + 32, '... and nothing else');
# (the claims after the restore point also took jobs enqueued after it)
my @rewound = grep { $waiting{$_} } sort { $a <=> $b } keys %completed_after;
cmp_ok(scalar(@rewound), '>', 0, 'jobs waiting at the restore point were completed after it');
is(join(' ', grep { !$claimed->{$_} } @rewound), '', '... and are claimed again');
is(join(' ', map { $claimed->{$_}[0] } split / /, $running), join(' ', ('2true') x 4),
	'the jobs running at the restore point are rescued and completed as attempt 2');
is($pitr->queue_counts('pitr'), '0/1/0/' . (16 + 80) . '/0', 'the counts are exact');
churn_until($pitr, turns($pitr, 2), 'the rings turn');
$pitr->stop;

done_testing();
