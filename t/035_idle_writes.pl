# Copyright: the awa_bgw authors.
#
# An idle database (docs/operations.md, "When idle"), in two parts.
#
# What an idle worker writes. With every cadence short (the rings 100 ms, promote
# 100 ms, rescue 200 ms, the folds and purges 1 s, awa_bgw.idle_interval 1 s) and
# autovacuum off (so that no other process writes), after a little traffic has come and
# gone the worker sleeps on its idle cadences (maintenance_status.idle_since), and stays
# so over a stretch of at least 10 rescues and 20 passes of its loop (the database
# vacuumed first: see below). pg_waldump over
# the stretch shows no record but the server's own (rmgr Standby: the running
# transactions the checkpointer and bgwriter log; XLOG: checkpoints, switches): nothing
# of the worker's, not even its row of awa.runtime_instances, which 0.9 updated every
# 10 s (0.10: every awa_bgw.runtime_heartbeat_interval, an hour by default; the fleet
# gate reads a worker's liveness from shared memory). Positive control: the same dump
# over a stretch with one rescue due names the claim ring's state.
#
# What wakes it. With awa_bgw.idle_interval at an hour, so that only a wake can explain
# what follows: an enqueue's commit takes the worker off its idle cadences at once; a
# deferred job enqueued while it sleeps is promoted when it falls due; an attempt past
# its deadline is rescued; a prepared transaction that enqueued keeps the worker off its
# idle cadences until it ends (its COMMIT PREPARED, in another session, wakes no one),
# and its deferred job is promoted when due.
#
# Promotion under load. With jobs waiting and no consumer (not idle), promotion that
# found nothing due does not run on its cadence but waits for the next deferred job: it
# runs at most twice while the worker loops 30 times, and a deferred job enqueued
# meanwhile, a retry of awa.fail and a retry of the rescue are each promoted when due.

use strict;
use warnings;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('idle', qq{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '200ms'
awa_bgw.fold_interval = '1s'
awa_bgw.idle_interval = '1s'
autovacuum = off
max_prepared_transactions = 2
});
$node->start;
$node->create_extension_and_lead;

my $counters = q{SELECT s.rescue_runs || ' ' || m.ticks || ' ' || m.idle_since
                   FROM awa.worker_stats s, awa.maintenance_status m
                  WHERE s.database = 'postgres' AND m.database = 'postgres'};

# the relations of schema awa (tables, their indexes and TOAST) by file node
sub awa_relations
{
	my %rel;
	for my $row (split /\n/, sql(q{
		SELECT pg_relation_filenode(c.oid) || ' ' || coalesce(t.relname, c.relname)
		  FROM pg_class c
		  LEFT JOIN pg_index i ON i.indexrelid = c.oid
		  LEFT JOIN pg_class t ON t.oid = i.indrelid
		 WHERE c.relnamespace = 'awa'::regnamespace AND pg_relation_filenode(c.oid) <> 0
		UNION ALL
		SELECT pg_relation_filenode(c.reltoastrelid) || ' ' || c.relname
		  FROM pg_class c
		 WHERE c.relnamespace = 'awa'::regnamespace AND c.reltoastrelid <> 0}))
	{
		my ($node_id, $name) = split / /, $row;
		$rel{$node_id} = $name;
	}
	return \%rel;
}

# the records between two LSNs: [rmgr, the awa relations each names]
sub records_between
{
	my ($from, $to) = @_;
	my $db = sql(q{SELECT oid FROM pg_database WHERE datname = 'postgres'});
	my $rels = awa_relations();
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $from, '-e', $to ],
		'>', \$out, '2>', \$err);
	my @records;
	for my $line (split /\n/, $out)
	{
		my ($rmgr) = $line =~ /^rmgr: (\S+)/ or next;
		my %names;
		while ($line =~ m{rel \d+/$db/(\d+)}g)
		{
			$names{ $rels->{$1} } = 1 if $rels->{$1};
		}
		push @records, [ $rmgr, [ sort keys %names ], $line ];
	}
	return \@records;
}

# --- what an idle worker writes ------------------------------------------------------

# a little traffic, then wait until the worker sleeps idle and its folds have caught up
# (two fold passes, 1 s apart, after it went idle)
sql(q{SELECT count(awa.enqueue('idle', 'k')) FROM generate_series(1, 20)});
sql(q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('idle', 20)});
$node->wait_for('after the traffic, the worker sleeps on its idle cadences',
	q{SELECT idle_since IS NOT NULL FROM awa.maintenance_status WHERE database = 'postgres'});
my ($folds) = sql(q{SELECT folds_run FROM awa.maintenance_status WHERE database = 'postgres'});
$node->wait_for('the folds run twice more',
	"SELECT folds_run >= $folds + 4 FROM awa.maintenance_status WHERE database = 'postgres'");
# the traffic's prunes left dead catalog rows (each TRUNCATE replaces pg_class rows), and
# with autovacuum off nothing removes them: the first reader of such a page, whoever it
# is, would prune it on access and write a record. Vacuumed now, before the stretch, so
# that a record in it can only come from something written during it.
sql('VACUUM');

# the idle stretch
my $lsn0 = sql('SELECT pg_current_wal_insert_lsn()');
my ($r0, $t0, $since0) = split / /, sql($counters), 3;
ok(defined $since0 && $since0 ne '', 'the stretch begins idle');
$node->wait_for('the worker rescues 10 times and loops 20 times over the idle stretch',
	"SELECT rescue_runs >= $r0 + 10 AND ticks >= $t0 + 20
	   FROM awa.worker_stats s, awa.maintenance_status m
	  WHERE s.database = 'postgres' AND m.database = 'postgres'");
my $lsn1 = sql('SELECT pg_current_wal_insert_lsn()');
my (undef, undef, $since1) = split / /, sql($counters), 3;
is($since1, $since0, 'the worker stayed on its idle cadences over the whole stretch');
my $idle = records_between($lsn0, $lsn1);
my @own = grep { $_->[0] ne 'Standby' && $_->[0] ne 'XLOG' } @$idle;
note('records over the idle stretch: ' . scalar(@$idle));
note("not the server's own: $_->[2]") for @own[ 0 .. ($#own < 4 ? $#own : 4) ];
is(scalar(@own), 0, "the idle stretch's WAL holds no record but the server's own");
is(join(' ', map { @{ $_->[1] } } @$idle), '', 'no relation of schema awa was written');
is( sql(q{SELECT i.live_instances || ' ' || (r.last_seen_at < now() - interval '10 s')
	        FROM awa.ring_authority_status('awa', 1) i, awa.runtime_instances r}),
	'1 true',
	'the worker\'s row, not written for the stretch, counts as live (from shared memory)');

# positive control: the dump sees the claim ring's state when the ring has work (one
# receipt past its deadline: the rescue, and the rotations of the busy ring, take its
# serializer, a row lock on its state)
my $lsn2 = sql('SELECT pg_current_wal_insert_lsn()');
sql(q{SELECT awa.enqueue('late', 'k')});
sql(q{SELECT count(*) FROM awa.claim('late', 1, '1 ms')});
$node->wait_for('the late attempt is rescued',
	q{SELECT jobs_rescued >= 1 FROM awa.worker_stats WHERE database = 'postgres'});
my $lsn3 = sql('SELECT pg_current_wal_insert_lsn()');
my %busy = map { $_ => 1 } map { @{ $_->[1] } } @{ records_between($lsn2, $lsn3) };
ok($busy{claim_ring_state}, 'with a receipt due the claim ring\'s state is written (the dump sees it)');
# the rescued job is retried: claim and complete it, so that the rings empty
$node->wait_for('the rescued job is claimable again',
	q{SELECT count(*) = 1 FROM awa.jobs('late', 'available')});
sql(q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('late', 1)});

# --- what wakes it --------------------------------------------------------------------

sql(q{ALTER SYSTEM SET awa_bgw.idle_interval = '1h'});
sql(q{SELECT pg_reload_conf()});
$node->wait_for('the reload is seen',
	q{SELECT setting = '3600000' FROM pg_settings WHERE name = 'awa_bgw.idle_interval'});
my $is_idle = q{SELECT idle_since IS NOT NULL FROM awa.maintenance_status
                 WHERE database = 'postgres'};
$node->wait_for('with an idle interval of an hour, the worker sleeps idle', $is_idle);

# an enqueue wakes it; claimed and completed, the rings empty and it sleeps again
my $id = sql(q{SELECT awa.enqueue('wake', 'k')});
$node->wait_for('an enqueue takes the worker off its idle cadences', $is_idle, 'f');
is(sql(q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('wake', 1)}), '1',
	'the job is claimed and completed');
$node->wait_for('then it sleeps idle again', $is_idle);

# a deferred job enqueued while it sleeps: promoted when it falls due
$id = sql(q{SELECT awa.enqueue('wake', 'k', run_at => clock_timestamp() + interval '2 s')});
$node->wait_for('the deferred job is promoted when due, though the worker had slept',
	"SELECT awa_internal.job_state($id) = 'available'");

# an attempt past its deadline: rescued
sql(q{SELECT count(*) FROM awa.claim('wake', 1, '1 s')});
$node->wait_for('the attempt past its deadline is rescued',
	"SELECT awa_internal.job_state($id) = 'retryable'");
sql("SELECT awa.cancel($id)");
$node->wait_for('the rings empty and the worker sleeps idle', $is_idle);

# a prepared transaction that enqueued: the worker does not sleep idle until it ends,
# and promotes its deferred job when due
my $ticks = q{SELECT ticks FROM awa.maintenance_status WHERE database = 'postgres'};
sql(q{BEGIN;
      SELECT awa.enqueue('wake', 'prepared', run_at => clock_timestamp() + interval '2 s');
      PREPARE TRANSACTION 'enq'});
$node->wait_for('a PREPARE takes the worker off its idle cadences', $is_idle, 'f');
my $t1 = sql($ticks);
$node->wait_for('the worker loops 10 times with the transaction prepared',
	"SELECT ticks >= $t1 + 10 FROM awa.maintenance_status WHERE database = 'postgres'");
is(sql($is_idle), 'f', 'and does not sleep idle meanwhile');
sql(q{COMMIT PREPARED 'enq'});
$node->wait_for('the prepared deferred job is promoted when due',
	q{SELECT count(*) = 1 FROM awa.jobs('wake', 'available')});

# --- promotion under load waits for the next deferred job ------------------------------
# With jobs waiting and no consumer the worker is not idle, and its rings keep their
# 100 ms cadences; promotion, finding nothing due, waits for the next deferred job's
# run_at or for a commit that writes one (the deferred flag), within
# awa_bgw.idle_interval: an hour here, so that only a wake explains a promotion.
sql(q{SELECT count(awa.enqueue('busy', 'k')) FROM generate_series(1, 3)});
$node->wait_for('with jobs waiting and no consumer the worker is not idle', $is_idle, 'f');
my $promotions = q{SELECT s.promote_runs || ' ' || m.ticks
                     FROM awa.worker_stats s, awa.maintenance_status m
                    WHERE s.database = 'postgres' AND m.database = 'postgres'};
my ($p0, $k0) = split / /, sql($promotions);
$node->wait_for('the busy worker loops 30 times',
	"SELECT ticks >= $k0 + 30 FROM awa.maintenance_status WHERE database = 'postgres'");
my ($p1) = split / /, sql($promotions);
cmp_ok($p1 - $p0, '<=', 2,
	'with nothing deferred, promotion ran at most twice in 30 loops (its cadence: 100 ms)');

# a deferred job enqueued meanwhile: its commit wakes promotion, promoted when due
$id = sql(q{SELECT awa.enqueue('later', 'k', run_at => clock_timestamp() + interval '2 s')});
$node->wait_for('a deferred job enqueued while promotion waits is promoted when due',
	"SELECT awa_internal.job_state($id) = 'available'");

# a retry with a backoff, written by awa.fail
my $claimed = q{SELECT job_id || ' ' || run_lease FROM awa.claim('later', 1)};
my ($jid, $lease) = split / /, sql($claimed);
is($jid, $id, 'the promoted job is claimed');
is(sql("SELECT awa.fail($jid, $lease, 'boom', retry_in => '1 s')"), 't', 'and failed with a retry in 1 s');
$node->wait_for('the retry is promoted when due',
	"SELECT awa_internal.job_state($id) = 'available'");

# a retry written by the worker's rescue (in SQL, which notes no deferred job): the rescue
# makes promotion due
($jid, $lease) = split / /, sql(q{SELECT job_id || ' ' || run_lease FROM awa.claim('later', 1, '1 s')});
is($jid, $id, 'the retry is claimed with a deadline of 1 s');
$node->wait_for('the attempt past its deadline is rescued',
	"SELECT awa_internal.job_state($id) = 'retryable'");
$node->wait_for('and its retry promoted when its backoff ends',
	"SELECT awa_internal.job_state($id) = 'available'");

$node->stop;
done_testing();
