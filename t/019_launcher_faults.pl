# Faults the launcher and an idle worker must ride out without flooding the log:
# 1. every background worker slot taken (max_worker_processes too small for the
#    listed databases): one warning with the hint, retries on a short back-off,
#    the database shown as no_worker_slot, and its worker starts once a slot frees;
# 2. a listed database without the extension: one warning with the CREATE EXTENSION
#    hint, a cheap re-check every second, maintenance as soon as the extension is
#    created; DROP EXTENSION under a running worker sends it back to waiting (the
#    same process, one more warning) and CREATE EXTENSION brings it back.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

# Two slots: the launcher's (static) and one dynamic worker. No logical replication
# launcher and no parallel workers, so nothing else takes a slot.
my $node = AwaNode->create('launcher_faults', q{
max_worker_processes = 2
max_logical_replication_workers = 0
max_parallel_workers = 0
max_parallel_workers_per_gather = 0
max_parallel_maintenance_workers = 0
awa_bgw.databases = 'postgres, db1'
awa_bgw.queue_rotate_interval = '200ms'
awa_bgw.lease_rotate_interval = '200ms'
awa_bgw.claim_rotate_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
});
$node->start;

#---------------------------------------------------------------------------
# helpers (sql, wait_until and count_in_log come from t/AwaNode.pm)

# a column of db's row in awa.maintenance_status (read from postgres: shared memory)
sub status_of
{
	my ($db, $expr) = @_;
	return sql("SELECT $expr FROM awa.maintenance_status WHERE database = '$db'");
}

# rotate steps of the queue ring run by db's worker, whatever their outcome
sub queue_rotate_steps
{
	my ($db) = @_;
	return status_of($db,
		q{(SELECT sum(value::bigint) FROM jsonb_each_text(rotations->'queue')
		    WHERE key <> 'last_blocker')});
}

my $no_slot_warning =
  qr/WARNING:  awa_bgw: could not start a worker for database "db1": no free background worker slot/;
my $no_slot_hint =
  qr/$no_slot_warning[^\n]*\n(?:[^\n]*\n){0,2}?[^\n]*HINT:  Raise max_worker_processes/;
my $slot_freed =
  qr/LOG:  awa_bgw: a background worker slot is free: started the worker for database "db1"/;
my $no_ext_warning =
  qr/WARNING:  awa_bgw: database "db1" is listed in awa_bgw\.databases but has no extension awa_bgw/;
# the warning about db1 followed (after its DETAIL) by the hint
my $no_ext_hint =
  qr/$no_ext_warning[^\n]*\n(?:[^\n]*\n){0,2}?[^\n]*HINT:  Run CREATE EXTENSION awa_bgw in that database/;
my $worker_exited = qr/awa_bgw: worker for database "[^"]*" exited/;

#---------------------------------------------------------------------------
# 1. No free background worker slot.

sql('CREATE EXTENSION awa_bgw');
wait_leader('the postgres worker leads (it has the one dynamic slot)');

sql('CREATE DATABASE db1');
wait_until(
	'db1 has no worker: shown as no_worker_slot, with no pid',
	q{SELECT state || ':' || (pid IS NULL) FROM awa.maintenance_status
	   WHERE database = 'db1'},
	'no_worker_slot:true');
like(status_of('db1', 'last_error'),
	qr/^no free background worker slot \(max_worker_processes = 2\)$/,
	'last_error says why');

# the launcher keeps trying (errors counts the failed attempts): over those
# attempts the warning was logged once
wait_until('the launcher retried at least four times',
	q{SELECT errors >= 4 FROM awa.maintenance_status WHERE database = 'db1'}, 't');
is(count_in_log($no_slot_warning), 1,
	'the missing slot is warned about once, not on every retry');
is(count_in_log($no_slot_hint), 1, 'with the hint to raise max_worker_processes');
is(sql(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'awa_bgw worker'}),
	'1', 'one worker runs (postgres)');

# free the slot: stop maintaining postgres; db1's worker takes its slot
sql(q{ALTER SYSTEM SET awa_bgw.databases = 'db1'});
sql('SELECT pg_reload_conf()');
wait_until('the freed slot is taken by the worker of db1',
	q{SELECT string_agg(datname::text, ',') FROM pg_stat_activity
	   WHERE backend_type = 'awa_bgw worker'}, 'db1');
ok($node->wait_for_log($slot_freed, 0), 'the launcher logs that the worker started');
wait_until('db1 is no longer shown as no_worker_slot',
	q{SELECT count(*) FROM awa.maintenance_status WHERE state = 'no_worker_slot'}, '0');
is(count_in_log($no_slot_warning), 1, 'still one warning in all');

#---------------------------------------------------------------------------
# 2. db1 is listed but has no extension.

wait_until('the db1 worker waits for the extension',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'db1'},
	'waiting_for_extension');
my $pid = status_of('db1', 'pid');
ok($node->wait_for_log($no_ext_warning, 0), 'the missing extension is warned about');
my $ticks = status_of('db1', 'ticks');
wait_until('the waiting worker re-checks (its loop keeps ticking)',
	"SELECT ticks >= $ticks + 4 FROM awa.maintenance_status WHERE database = 'db1'", 't');
is(count_in_log($no_ext_warning), 1, 'once, not on every re-check');
is(count_in_log($no_ext_hint), 1, 'with the CREATE EXTENSION hint');
is(status_of('db1', 'errors'), '0', 'waiting is no error');
is(sql(q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
          AND database = (SELECT oid FROM pg_database WHERE datname = 'db1')}),
	'0', 'no leader lock taken without the extension');

sql('CREATE EXTENSION awa_bgw', 'db1');
wait_until('after CREATE EXTENSION the worker leads db1',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'db1'}, 'leader');
my $steps = queue_rotate_steps('db1');
wait_until('and runs its rotations',
	"SELECT (SELECT sum(value::bigint) FROM jsonb_each_text(rotations->'queue')
	          WHERE key <> 'last_blocker') >= $steps + 3
	   FROM awa.maintenance_status WHERE database = 'db1'", 't');
ok($node->wait_for_log(qr/awa_bgw: extension awa_bgw is installed in database "db1"/, 0),
	'the worker logs that the extension is there');

# DROP EXTENSION under the running worker, as a DBA would type it: a deadlock with
# a step is possible (each side then just retries), so try a bounded number of times
my ($dropped, $tries) = (0, 0);
while (!$dropped && $tries < 20)
{
	$tries++;
	my ($ret, $out, $err) =
	  $node->psql('db1', 'DROP EXTENSION awa_bgw', on_error_stop => 1);
	$dropped = ($ret == 0);
	die "DROP EXTENSION failed: $err" if !$dropped && $err !~ /deadlock detected/;
}
ok($dropped, "DROP EXTENSION with the worker running ($tries tries)");
wait_until('after DROP EXTENSION the worker waits for the extension again',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'db1'},
	'waiting_for_extension');
$ticks = status_of('db1', 'ticks');
wait_until('and keeps re-checking',
	"SELECT ticks >= $ticks + 4 FROM awa.maintenance_status WHERE database = 'db1'", 't');
is(count_in_log($no_ext_warning), 2, 'one more warning for the new absence, no flood');
is(status_of('db1', 'pid'), $pid, 'the same worker process (no crash loop)');
is(count_in_log($worker_exited), 0, 'no worker exited');

sql('CREATE EXTENSION awa_bgw', 'db1');
wait_until('CREATE EXTENSION again: the worker leads db1 again',
	q{SELECT state FROM awa.maintenance_status WHERE database = 'db1'}, 'leader');
$steps = queue_rotate_steps('db1');
wait_until('and rotates again',
	"SELECT (SELECT sum(value::bigint) FROM jsonb_each_text(rotations->'queue')
	          WHERE key <> 'last_blocker') >= $steps + 3
	   FROM awa.maintenance_status WHERE database = 'db1'", 't');
is(status_of('db1', 'pid'), $pid, 'still the same worker process');

$node->stop;
done_testing();
