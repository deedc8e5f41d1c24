# Bad configuration around the worker: template databases (and databases closed to
# connections) named in awa_bgw.databases are skipped with one warning each, so
# CREATE DATABASE keeps working; a running worker whose database becomes a template is
# stopped.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('faults');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'awa_bgw'
max_worker_processes = 16
awa_bgw.databases = 'postgres, template1, template0, closed, tmpl'
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
awa_bgw.job_heartbeat_timeout = '1h'
});
$node->start;

#---------------------------------------------------------------------------
# helpers

sub sql
{
	my ($query, $db) = @_;
	return $node->safe_psql($db // 'postgres', $query);
}

sub wait_until
{
	my ($what, $query, $expected, $db) = @_;
	my $ok = $node->poll_query_until($db // 'postgres', $query, $expected);
	ok($ok, $what) or die "gave up waiting: $what";
	return;
}

sub wait_log
{
	my ($what, $re) = @_;
	ok($node->wait_for_log($re, 0), $what) or die "gave up waiting: $what";
	return;
}

sub count_in_log
{
	my ($re) = @_;
	my $log = slurp_file($node->logfile);
	my $n = () = $log =~ /$re/g;
	return $n;
}

sub status
{
	my ($expr) = @_;
	return sql("SELECT $expr FROM awa.maintenance_status WHERE database = 'postgres'");
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

$node->stop;
done_testing();
