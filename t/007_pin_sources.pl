
# Copyright: the awa_bgw authors.
#
# Where a pin of the horizon can come from, beyond a client session (t/005_folds.pl):
#  - a physical replication slot fed by a streaming standby with hot_standby_feedback:
#    listed, but a healthy standby's fresh feedback does not pin; a long REPEATABLE READ
#    transaction on the standby holds the slot's xmin back, and it pins once older than
#    awa_bgw.horizon_pin_min_age (the folds stand down, naming the slot); when it ends
#    the folds run again. A slot whose standby went away keeps its xmin and pins too.
#  - a logical slot holding only catalog_xmin: listed, never pins;
#  - a prepared transaction older than min_age pins; COMMIT PREPARED releases it;
#  - autovacuum and the awa_bgw worker itself never count, caught while each holds a
#    snapshot; an ordinary client backend idle in transaction with an xid, checked in the
#    same statistics snapshot, is listed (and pins once old), so the check can fail.

use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;
use Time::HiRes qw(time sleep);

my $MIN_AGE = '3s';

my $node = AwaNode->create('pins', qq{
awa_bgw.queue_rotate_interval = '500ms'
awa_bgw.lease_rotate_interval = '500ms'
awa_bgw.claim_rotate_interval = '500ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.fold_interval = '500ms'
awa_bgw.horizon_pin_min_age = '$MIN_AGE'
max_prepared_transactions = 2
autovacuum_naptime = 1s
log_autovacuum_min_duration = 0
}, allows_streaming => 'logical');
$node->start;

# The row of awa.horizon_pins for one holder, as "t|reason" or "f|reason" ('' when not
# listed).
my $PIN_ROW = q{CASE WHEN pins THEN 't' ELSE 'f' END || '|' || reason};
sub pin_row
{
	my ($kind, $name) = @_;
	return sql("SELECT $PIN_ROW FROM awa.horizon_pins WHERE kind = '$kind' AND name = '$name'");
}

# Wait until the folds have run (two counted folds per tick) at least $ticks more times
# with nothing pinning, and no pin holder shown.
sub wait_folds_run
{
	my ($what, $ticks) = @_;
	my $run = status('folds_run');
	my $target = $run + 2 * $ticks;
	ok( $node->poll_query_until('postgres',
			"SELECT folds_run >= $target AND pin_holder IS NULL FROM awa.maintenance_status WHERE database = 'postgres'"
		),
		$what);
	return;
}

# Wait until the folds stand down again, naming $holder.
sub wait_stood_down
{
	my ($what, $holder) = @_;
	my $stood = status('folds_stood_down');
	ok( $node->poll_query_until('postgres',
			"SELECT folds_stood_down > $stood AND pin_holder = '$holder' FROM awa.maintenance_status WHERE database = 'postgres'"
		),
		$what)
	  or diag('pin holder: ' . status("coalesce(pin_holder, 'none')"));
	return;
}

sql('CREATE EXTENSION awa_bgw');
sql('CREATE TABLE prep (i int)');
$node->poll_query_until('postgres',
	"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not become leader';
note('server binaries: ' . sql("SELECT setting FROM pg_config WHERE name = 'BINDIR'"));

# A table whose autovacuum runs slowly (cost limit 1, 100 ms delays: minutes for this
# table), so that it is at work when it is looked for below.
sql(q{CREATE TABLE churn (id int PRIMARY KEY, v int)
        WITH (autovacuum_vacuum_threshold = 50, autovacuum_vacuum_scale_factor = 0,
              autovacuum_analyze_threshold = 50, autovacuum_analyze_scale_factor = 0,
              autovacuum_vacuum_cost_limit = 1, autovacuum_vacuum_cost_delay = 100)});
sql('INSERT INTO churn SELECT g, 0 FROM generate_series(1, 50000) g');
sql('UPDATE churn SET v = v + 1');

#---------------------------------------------------------------------------
# autovacuum and the worker itself never count; an ordinary backend does

# the control: a client backend idle in transaction holding a write xid
my $client = $node->background_psql('postgres');
$client->query_safe('BEGIN');
my $client_pid = $client->query_safe('SELECT pg_backend_pid()');
$client->query_safe('SELECT pg_current_xact_id()');

# One look, in one statistics snapshot: the holders awa.horizon_pins_at lists (filling
# the snapshot), then pg_stat_activity from the same snapshot. Returns
# "pids of $type processes holding an xmin or xid | how many rows the gate lists for
# them | whether the client backend is listed".
sub look
{
	my ($type) = @_;
	return sql(qq{BEGIN;
CREATE TEMP TABLE seen AS SELECT kind, pid, name FROM awa.horizon_pins_at('0 s');
SELECT coalesce(string_agg(a.pid::text, ',' ORDER BY a.pid), ''),
       (SELECT count(*) FROM seen s
         WHERE s.pid IN (SELECT pid FROM pg_stat_activity WHERE backend_type = '$type')),
       EXISTS (SELECT 1 FROM seen s WHERE s.pid = $client_pid AND s.kind = 'backend')
  FROM pg_stat_activity a
 WHERE a.backend_type = '$type' AND a.datname = current_database()
   AND (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL);
ROLLBACK});
}

# catch an autovacuum worker (the slow one on churn) while it holds a snapshot
my ($av_pids, $av_rows, $av_client) = ('', '', '');
my $deadline = time() + 120;
while (time() < $deadline)
{
	($av_pids, $av_rows, $av_client) = split /\|/, look('autovacuum worker');
	last if $av_pids ne '';
	sleep(0.2);
}
isnt($av_pids, '', 'an autovacuum worker was caught holding a snapshot or xid')
  or diag('no autovacuum worker seen with backend_xmin within 120 s: '
	  . sql(q{SELECT string_agg(pid || ' ' || backend_type || ' ' || coalesce(query, ''), '; ') FROM pg_stat_activity}));
is($av_rows, '0', "at that moment awa.horizon_pins lists no autovacuum worker (pids $av_pids)");
is($av_client, 't', 'while the client backend idle in transaction is listed in the same look');

# the worker: an ACCESS EXCLUSIVE lock on awa.deferred_jobs makes its next promotion step
# (every 250 ms) wait in a transaction that holds a snapshot. The locker itself holds
# neither an xid nor a snapshot while it sits idle in transaction.
my $worker_pid = status('pid');
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN');
my $locker_pid = $locker->query_safe('SELECT pg_backend_pid()');
$locker->query_safe('LOCK TABLE awa.deferred_jobs IN ACCESS EXCLUSIVE MODE');
ok( $node->poll_query_until('postgres',
		"SELECT backend_xmin IS NOT NULL AND $locker_pid = ANY (pg_blocking_pids(pid)) FROM pg_stat_activity WHERE pid = $worker_pid"
	),
	'the worker is caught waiting for the lock in a transaction that holds a snapshot');
my ($w_pids, $w_rows, $w_client) = split /\|/, look('awa_bgw worker');
is($w_pids, $worker_pid, '(and is seen so in the look)');
is($w_rows, '0', 'awa.horizon_pins lists no row for the worker');
is($w_client, 't', 'while the client backend idle in transaction is listed in the same look');
$locker->query_safe('ROLLBACK');
$locker->quit;

# the control pins once old enough, like any such session
ok( $node->poll_query_until('postgres',
		"SELECT pins AND reason = 'idle in transaction holding a write xid' FROM awa.horizon_pins WHERE pid = $client_pid"
	),
	'the client backend idle in transaction pins once older than min_age');
wait_stood_down('and stands the folds down', "backend $client_pid: idle in transaction holding a write xid");
$client->query_safe('COMMIT');
$client->quit;
wait_folds_run('after it ends the folds run again', 2);

#---------------------------------------------------------------------------
# a logical slot holds only catalog_xmin: listed, never a pin (not even with min_age 0)

sql("SELECT pg_create_logical_replication_slot('awa_logical', 'test_decoding')");
is(pin_row('slot', 'awa_logical'), 'f|catalog_xmin only (does not hold back user tables)',
	'a logical slot with only catalog_xmin is listed and does not pin');
is(sql("SELECT pins FROM awa.horizon_pins_at('0 s') WHERE kind = 'slot' AND name = 'awa_logical'"),
	'f', 'not even with min_age 0');
is(sql("SELECT xmin IS NULL AND catalog_xmin IS NOT NULL FROM pg_replication_slots WHERE slot_name = 'awa_logical'"),
	't', '(the slot has catalog_xmin and no xmin)');

# light queue traffic for the rest of the test, so that the rings turn (the gate dates a
# slot's xmin against the ring rotations)
my $ticker_sql = "$PostgreSQL::Test::Utils::tmp_check/ticker.sql";
append_to_file($ticker_sql, qq{SELECT awa.enqueue('tick', 'k');
SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('tick', 10);
});
my ($tick_out, $tick_err) = ('', '');
my $ticker = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '1', '-R', '20', '-T', '300', '-f', $ticker_sql,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$tick_out, '2>', \$tick_err);
wait_folds_run('the folds run with the logical slot in place', 2);

#---------------------------------------------------------------------------
# a physical slot fed by a streaming standby with hot_standby_feedback

sql("SELECT pg_create_physical_replication_slot('awa_standby', true)");
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->append_conf(
	'postgresql.conf', q{
primary_slot_name = 'awa_standby'
hot_standby_feedback = on
wal_receiver_status_interval = 1s
});
$standby->start;
$node->wait_for_catchup($standby);

# the standby feeds back a fresh xmin (its oldest running xid) every second: the slot
# is listed with it, but it is not a pin and the folds go on
ok( $node->poll_query_until('postgres',
		"SELECT $PIN_ROW = 'f|younger than min_age'
		   FROM awa.horizon_pins WHERE kind = 'slot' AND name = 'awa_standby'"),
	'the standby slot is listed with its fresh feedback xmin, not pinning')
  or diag(pin_row('slot', 'awa_standby'));
is(sql("SELECT xmin IS NOT NULL FROM pg_replication_slots WHERE slot_name = 'awa_standby'"),
	't', '(the slot holds an xmin)');
wait_folds_run('the folds run while a healthy standby feeds back', 2);

# a long REPEATABLE READ transaction on the standby holds the slot's xmin back
my $sb = $standby->background_psql('postgres');
$sb->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$sb->query_safe('SELECT count(*) FROM pg_class');
my $t_held = time();
wait_stood_down('the held-back slot stands the folds down, named as the holder',
	'slot awa_standby: replication slot holds xmin');
cmp_ok(time() - $t_held, '>=', 3, 'no sooner than min_age after the standby took its snapshot');
is(pin_row('slot', 'awa_standby'), 't|replication slot holds xmin', 'awa.horizon_pins says it pins');
is(sql("SELECT awa.horizon_pinned('$MIN_AGE')"), 't', 'horizon_pinned() is true');

$sb->query_safe('COMMIT');
wait_folds_run('when the standby transaction ends, the folds run again', 2);
is(pin_row('slot', 'awa_standby'), 'f|younger than min_age', 'the slot no longer pins');

# a standby that goes away leaves its slot's xmin behind: it pins once old enough
$sb->quit;
$standby->stop;
wait_stood_down('the slot of a stopped standby pins once its xmin is old',
	'slot awa_standby: replication slot holds xmin');
sql("SELECT pg_drop_replication_slot('awa_standby')");
wait_folds_run('dropping the slot releases the horizon', 2);

#---------------------------------------------------------------------------
# a prepared transaction

sql("BEGIN; INSERT INTO prep VALUES (1); PREPARE TRANSACTION 'awa_prep'");
is(sql("SELECT $PIN_ROW FROM awa.horizon_pins_at('1 hour') WHERE kind = 'prepared' AND name = 'awa_prep'"),
	'f|younger than min_age', 'a prepared transaction is listed; younger than min_age it does not pin');
wait_stood_down('a prepared transaction older than min_age stands the folds down',
	'prepared awa_prep: prepared transaction');
is(pin_row('prepared', 'awa_prep'), 't|prepared transaction', 'awa.horizon_pins says it pins');
sql("COMMIT PREPARED 'awa_prep'");
wait_folds_run('COMMIT PREPARED releases the horizon', 2);
is(sql('SELECT count(*) FROM prep'), '1', '(the prepared transaction committed)');

#---------------------------------------------------------------------------

$ticker->kill_kill;
sql("SELECT pg_drop_replication_slot('awa_logical')");
is(status('errors'), '0', 'no maintenance step failed');
$node->stop;
done_testing();
