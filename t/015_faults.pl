# Bad configuration around the worker: template databases (and databases closed to
# connections) named in awa_bgw.databases are skipped with one warning each, so
# CREATE DATABASE keeps working; a running worker whose database becomes a template is
# stopped. An awa_bgw.role that is not a superuser, or has no LOGIN, is said once, takes
# no leadership and runs no step, and the worker leads once the role is fixed and the
# configuration reloaded; the launcher starts no worker that could not log in.
# Database and role defaults that would break the steps (read-only, serializable,
# short timeouts, replica mode, another search_path) do not reach the worker, nor
# those that would make it JIT-compile its steps (pg_stat_statements counts none).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('faults', q{
max_worker_processes = 16
awa_bgw.databases = 'postgres, template1, template0, closed, tmpl'
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
awa_bgw.job_heartbeat_timeout = '1h'
shared_preload_libraries = 'awa_bgw, pg_stat_statements'
pg_stat_statements.track = 'all'
});
$node->start;

#---------------------------------------------------------------------------
# helpers (sql, status, wait_until and count_in_log come from t/AwaNode.pm)

sub wait_log
{
	my ($what, $re) = @_;
	ok($node->wait_for_log($re, 0), $what) or die "gave up waiting: $what";
	return;
}

# the databases that have an awa_bgw worker
my $workers_query = q{SELECT coalesce(string_agg(datname::text, ',' ORDER BY datname), 'none')
                        FROM pg_stat_activity WHERE backend_type = 'awa_bgw worker'};

# Restart the postgres worker and wait for its successor to lead: the launcher has
# been through at least two more passes (it notices the exit, then starts a worker).
sub restart_worker
{
	my $old = status('pid');
	sql("SELECT pg_terminate_backend($old)");
	wait_until("a new postgres worker leads (was $old)",
		"SELECT pid <> $old AND state = 'leader' FROM awa.maintenance_status
		  WHERE database = 'postgres'");
	return;
}

sub unfit_re
{
	my ($db, $why) = @_;
	return qr/awa_bgw: database "$db" listed in awa_bgw\.databases $why; not maintaining it/;
}

#---------------------------------------------------------------------------
# 1. Template databases and databases closed to connections are not maintained.

sql('CREATE EXTENSION awa_bgw');
sql('CREATE DATABASE tmpl');
sql('CREATE DATABASE closed ALLOW_CONNECTIONS false');
wait_until('the postgres worker leads',
	"SELECT state FROM awa.maintenance_status WHERE database = 'postgres'", 'leader');
wait_log('template1 is skipped with a warning', unfit_re('template1', 'is a template database'));
wait_log('template0 is skipped with a warning', unfit_re('template0', 'is a template database'));
wait_log('a database closed to connections is skipped with a warning',
	unfit_re('closed', 'does not allow connections'));
wait_until('workers run for postgres and tmpl only', $workers_query, 'postgres,tmpl');

sql('CREATE DATABASE made_from_template1');
pass('CREATE DATABASE works while awa_bgw.databases lists template1');

# a database that becomes a template: its worker is stopped, and it can be copied
sql('ALTER DATABASE tmpl IS_TEMPLATE true');
wait_log('a database that became a template is reported',
	unfit_re('tmpl', 'is a template database'));
wait_until('its worker is stopped', $workers_query, 'postgres');
sql('CREATE DATABASE made_from_tmpl TEMPLATE tmpl');
pass('CREATE DATABASE from it works');

# once per database, not once per launcher pass
restart_worker();
restart_worker();
is($node->safe_psql('postgres', $workers_query), 'postgres',
	'still no worker for the skipped databases');
my %why = (
	template1 => 'is a template database',
	template0 => 'is a template database',
	closed => 'does not allow connections',
	tmpl => 'is a template database');
is(count_in_log(unfit_re($_, $why{$_})), 1, "the warning for $_ was logged once")
  for sort keys %why;

#---------------------------------------------------------------------------
# 2. awa_bgw.role is not a superuser: said once, no leadership, no failing steps.

sql('CREATE ROLE awa_weak LOGIN');
sql('CREATE DATABASE other');
sql(q{ALTER SYSTEM SET awa_bgw.role = 'awa_weak'});
sql(q{ALTER SYSTEM SET awa_bgw.databases = 'postgres, other'});
$node->restart;

my $not_super =
  qr/the worker for database "postgres" does not maintain it: its role "awa_weak" is not a superuser/;
wait_log('the worker says its role is not a superuser', $not_super);
wait_until('the worker idles in state bad_role',
	"SELECT state FROM awa.maintenance_status WHERE database = 'postgres'", 'bad_role');
my $ticks = status('ticks');
wait_until('the worker goes round its loop five more times',
	"SELECT ticks >= $ticks + 5 FROM awa.maintenance_status WHERE database = 'postgres'");
is(count_in_log($not_super), 1, 'it said so once');
is(status('leader_since IS NULL AND errors = 0 AND last_error IS NULL'),
	't', 'it took no leadership and no step failed');
is(sql(q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
          AND classid::bigint = 4708303813012965710 >> 32
          AND objid::bigint = 4708303813012965710 & 4294967295}),
	'0', 'nobody holds the leader key');
is(count_in_log(qr/awa_bgw: [^\n]* failed: /), 0, 'no step failure was logged');

sql('ALTER ROLE awa_weak SUPERUSER');
$node->reload;
wait_until('after ALTER ROLE ... SUPERUSER and a reload, the worker leads',
	"SELECT state FROM awa.maintenance_status WHERE database = 'postgres'", 'leader');
wait_log('and says so', qr/the role "awa_weak" of the worker for database "postgres" may maintain it now/);

#---------------------------------------------------------------------------
# 3. awa_bgw.role loses LOGIN: the running worker stands down, the launcher starts no
#    worker that could not connect; LOGIN back, and a worker starts and leads.

sql('ALTER ROLE awa_weak NOLOGIN');
$node->reload;
wait_until('without LOGIN the worker idles in state bad_role',
	"SELECT state FROM awa.maintenance_status WHERE database = 'postgres'", 'bad_role');
my $no_login = qr/awa_bgw: role "awa_weak" \(awa_bgw\.role\) has no LOGIN; starting no workers/;
wait_log('the launcher says it starts no workers', $no_login);
my $offset = -s $node->logfile;
sql(sprintf('SELECT pg_terminate_backend(%d)', status('pid')));
ok($node->wait_for_log(qr/worker for database "postgres" exited/, $offset),
	'the launcher notices the exit');
# the other database's worker keeps ticking: wait for three of its ticks, past the
# launcher's one-second back-off, while no worker runs for postgres
my $other_ticks =
  sql("SELECT ticks FROM awa.maintenance_status WHERE database = 'other'");
wait_until('the launcher had time to restart the worker',
	"SELECT ticks >= $other_ticks + 3 FROM awa.maintenance_status WHERE database = 'other'");
is(sql("SELECT count(*) FROM awa.maintenance_status WHERE database = 'postgres'"),
	'0', 'no worker runs for postgres');
is(count_in_log(qr/not permitted to log in/), 0, 'no worker failed to log in');
is(count_in_log($no_login), 1, 'the launcher said so once');

sql('ALTER ROLE awa_weak LOGIN');
wait_until('with LOGIN back, a worker starts and leads',
	"SELECT state FROM awa.maintenance_status WHERE database = 'postgres'", 'leader');

#---------------------------------------------------------------------------
# 4. Hostile defaults on the database and on the worker's role.

my $me = sql('SELECT current_user');
# the test's own sessions keep sane settings (a database-and-role setting wins)
sql(qq{ALTER ROLE "$me" IN DATABASE postgres SET default_transaction_read_only = off});
sql(qq{ALTER ROLE "$me" IN DATABASE postgres SET default_transaction_isolation = 'read committed'});
sql(qq{ALTER ROLE "$me" IN DATABASE postgres SET statement_timeout = 0});
sql(q{ALTER DATABASE postgres SET default_transaction_read_only = on});
sql(q{ALTER DATABASE postgres SET default_transaction_isolation = 'repeatable read'});
sql(q{ALTER DATABASE postgres SET statement_timeout = '1ms'});
sql(q{ALTER ROLE awa_weak SET default_transaction_read_only = on});
sql(q{ALTER ROLE awa_weak SET default_transaction_isolation = 'serializable'});
sql(q{ALTER ROLE awa_weak SET lock_timeout = '1ms'});
sql(q{ALTER ROLE awa_weak SET search_path = public});
sql(q{ALTER ROLE awa_weak SET session_replication_role = replica});
# every statement the worker runs would be JIT-compiled, at a cost far above its run
sql(q{ALTER DATABASE postgres SET jit_above_cost = 0});
sql(q{ALTER ROLE awa_weak SET jit = on});
is(sql(q{SELECT count(*) FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole
          WHERE r.rolname = 'awa_weak'}), '1', 'the worker role has its defaults');

my $old = status('pid');
sql("SELECT pg_terminate_backend($old)");
wait_until('a new worker leads under the hostile defaults',
	"SELECT pid <> $old AND state = 'leader' FROM awa.maintenance_status
	  WHERE database = 'postgres'");
sql(q{SELECT awa.enqueue('hostile', 'job', jsonb_build_object('i', i))
        FROM generate_series(1, 20) i});
sql(q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('hostile', 20)});
wait_until('it rotates and prunes every ring, and no step fails',
	q{SELECT (rotations->'queue'->>'rotated')::bigint >= 1
	     AND (rotations->'claim'->>'rotated')::bigint >= 1
	     AND (prunes->'queue'->>'pruned')::bigint >= 1
	     AND errors = 0
	   FROM awa.maintenance_status WHERE database = 'postgres'});
is(status('errors'), '0', 'no step failed');
is(count_in_log(qr/read-only transaction|lock timeout|statement timeout/), 0,
	'no read-only or timeout error was logged');

# What the worker ran as its role (its rotations, prunes and promotions, counted with
# pg_stat_statements.track = all) was never JIT-compiled.
# Where this server has no JIT provider nothing is ever compiled, and the check says
# nothing: it is skipped.
SKIP:
{
	skip 'no JIT provider on this server', 2
	  unless sql('SELECT pg_jit_available()') eq 't';
	sql('CREATE EXTENSION pg_stat_statements');
	my $worker_calls = q{FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
	                     WHERE r.rolname = 'awa_weak'
	                       AND s.query ~ 'awa\.(rotate|prune|promote_deferred)\('};
	wait_until('pg_stat_statements holds rotations, prunes and promotions the worker ran',
		"SELECT sum(calls) >= 10 $worker_calls");
	is(sql("SELECT sum(jit_functions) $worker_calls"), '0',
		'none of them was JIT-compiled, under jit_above_cost = 0 for its database');
	ok(sql(q{SELECT count(*) FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
	          WHERE r.rolname <> 'awa_weak' AND s.jit_functions > 0}) > 0,
		'while statements of this test were: the database default is in force');
}

$node->stop;
done_testing();
