
# Copyright: the awa_bgw authors.
#
# The example clients (examples/README.md) against a server with the worker running:
# the Python producer (psycopg 3) and the Node producer (node-postgres) each write
# orders and enqueue their jobs in application transactions, every tenth rolled back on
# purpose; two Python workers and two Node workers claim with a wait, heartbeat, fail
# and retry, and complete in batches, writing an application receipt per job in the
# statement that completes it. Twice: straight to the server, then through a PgBouncer
# in transaction mode whose pool has fewer server connections than there are waiting
# claimers. In each phase the workers are sent SIGTERM while a slow job runs (they exit
# 0, having finished what they held), and are started again.
#
# Asserted: every committed job is completed exactly once (one receipt per job id, the
# receipts' job ids are exactly the committed ones, and awa.queue_counts counts as
# many completions and nothing failed or left); a rolled-back job never exists
# (awa.job finds nothing) and its order neither; the slow jobs (10 s, past the 8 s
# heartbeat timeout, which a never-heartbeated control attempt shows is enforced) and
# every other job completed on their first attempt, the flaky ones on their second;
# psycopg prepared its statements when straight to the server (its default
# prepare_threshold), and through PgBouncer when psycopg's documented conditions hold
# (PgBouncer 1.22 or later with max_prepared_statements, psycopg 3.2, libpq 17);
# otherwise (Debian 12: PgBouncer 1.18, psycopg 3.1) the clients run
# with AWA_PREPARE_THRESHOLD=none and nothing is prepared.
#
# Needs /usr/bin/python3 with psycopg 3, node on PATH with pg in
# examples/node/node_modules (npm install in examples/node), and /usr/sbin/pgbouncer:
# skipped without them, failed without them when CI=true (but in a CI tree whose Debian
# suite could not install them: .ci/pgtree, AWA_BGW_CLIENTS_OPTIONAL).

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;
use IPC::Run;
use JSON::PP;
use POSIX qw(WNOHANG);
use Time::HiRes qw(time sleep);

my $python = '/usr/bin/python3';
my $pgbouncer = '/usr/sbin/pgbouncer';
my ($node_js) = grep { -x "$_/node" } split /:/, ($ENV{PATH} // '');
$node_js = "$node_js/node" if defined $node_js;

my @missing;
push @missing, "$python with psycopg 3 (python3-psycopg)"
  unless -x $python && system("$python -c 'import psycopg' >/dev/null 2>&1") == 0;
push @missing, 'node on PATH (nodejs)' unless $node_js;
push @missing, 'pg in examples/node/node_modules (npm install in examples/node)'
  unless $node_js
  && system(qq{'$node_js' -e "require('./examples/node/node_modules/pg')" >/dev/null 2>&1}) == 0;
push @missing, "$pgbouncer (pgbouncer)" unless -x $pgbouncer;
if (@missing)
{
	my $why = 'missing: ' . join(', ', @missing);
	plan skip_all => $why
	  unless ($ENV{CI} // '') =~ /^(true|1|yes)$/i && !$ENV{AWA_BGW_CLIENTS_OPTIONAL};
	fail("the example clients can run (CI=true): $why");
	done_testing();
	exit;
}

my $N = 300;              # orders per producer and phase
my $POOL = 2;             # PgBouncer's server connections
my @produce = ('--rollback-every', 10, '--slow-every', 97, '--slow-seconds', 10,
	'--flaky-every', 7);

my $node = AwaNode->create('clients', qq{
awa_bgw.job_heartbeat_timeout = '8s'
awa_bgw.rescue_interval = '500ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.leader_retry_interval = '200ms'
log_statement = 'all'
max_connections = 40
});
$node->start;
$node->create_extension_and_lead;
$node->run_sql(slurp_file('examples/schema.sql'));
my $user = getpwuid($<);

# ---- processes: each one this test starts is stopped at its end ----------------------
my @procs;

END
{
	local $?;
	for my $p (grep { !defined $_->{status} } @procs)
	{
		kill 'KILL', $p->{pid};
		waitpid($p->{pid}, 0);
	}
}

# spawn($name, \%env, @command): started with %env added, its output in $name.log
sub spawn
{
	my ($name, $env, @cmd) = @_;
	my $log = $node->basedir . "/$name.log";
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log or POSIX::_exit(126);
		open STDERR, '>&', \*STDOUT or POSIX::_exit(126);
		@ENV{ keys %$env } = values %$env;
		exec(@cmd) or POSIX::_exit(127);
	}
	my $p = { name => $name, pid => $pid, log => $log };
	push @procs, $p;
	return $p;
}

# its exit status once it has ended, within $secs; undef if it is still running
sub wait_exit
{
	my ($p, $secs) = @_;
	my $deadline = time() + $secs;
	while (!defined $p->{status} && time() < $deadline)
	{
		if (waitpid($p->{pid}, WNOHANG) == $p->{pid})
		{
			$p->{status} = $?;
		}
		else
		{
			sleep 0.1;
		}
	}
	return $p->{status};
}

# one test: $p ended by itself (or after SIGTERM) with exit status 0
sub exited_0
{
	my ($p, $secs, $what) = @_;
	my $status = wait_exit($p, $secs);
	is($status, 0, $what) or diag("$p->{name}: " . slurp_file($p->{log}));
	return;
}

# ---- the clients -----------------------------------------------------------------------
sub start_workers
{
	my ($phase, $gen, $env) = @_;
	my %w = (%$env, AWA_WAIT => '2 s', AWA_HEARTBEAT => '1', AWA_BATCH => '5');
	return (
		(map { spawn("$phase-py$_-$gen", { %w, AWA_WORKER => "$phase-py$_" }, $python,
			'examples/python/worker.py') } 1 .. 2),
		(map { spawn("$phase-node$_-$gen", { %w, AWA_WORKER => "$phase-node$_" }, $node_js,
			'examples/node/worker.js') } 1 .. 2));
}

sub stop_workers
{
	my ($phase, @workers) = @_;
	kill 'TERM', map { $_->{pid} } @workers;
	exited_0($_, 180, "$phase: $_->{name} exits 0 on SIGTERM") for @workers;
	return;
}

# the job ids a producer printed (its last line: JSON)
sub produced
{
	my ($p) = @_;
	my ($line) = grep { /^\{/ } reverse split /\n/, slurp_file($p->{log});
	return decode_json($line // '{}');
}

my (@committed, @rolled_back, %flaky, @slow);

sub array { return "'{" . join(',', @_) . "}'::bigint[]"; }

# the statements the server ran as prepared ones (named) since log offset $from
sub named_executes
{
	my ($from) = @_;
	my $log = slurp_file($node->logfile, $from);
	my $n = () = $log =~ /\bexecute (?!<unnamed>)[^\s:]+:/g;
	return $n;
}

# One phase: workers started first (with nothing to do, each waits in awa.claim), then
# the producers; SIGTERM to the workers while a slow job runs, new workers, everything
# drained, SIGTERM again. $checks->() runs once the first workers wait.
sub phase
{
	my ($phase, $env, $waiting, $checks) = @_;
	my $total = @committed;
	my @workers = start_workers($phase, 'a', $env);
	$node->wait_for("$phase: $waiting claims wait in the server",
		"SELECT count(*) = $waiting FROM awa.claim_waiters()");
	$checks->() if $checks;

	my @producers = (
		spawn("$phase-producer-py", $env, $python, 'examples/python/producer.py', $N, @produce,
			'--customer', "$phase-py"),
		spawn("$phase-producer-node", $env, $node_js, 'examples/node/producer.js', $N, @produce,
			'--customer', "$phase-node"));

	my $slow_running = "SELECT job_id FROM awa.jobs('orders', 'running', lim => 1000) WHERE args ? 'sleep_s'";
	$node->wait_for("$phase: a slow job is running", "SELECT count(*) > 0 FROM ($slow_running) s");
	my @held = $node->job_ids($slow_running);
	stop_workers($phase, @workers);
	is($node->run_sql(q{SELECT running FROM awa.queue_counts('orders')}), '0',
		"$phase: the stopped workers left no attempt running");
	is($node->run_sql('SELECT count(*) FROM app_receipts WHERE job_id = ANY (' . array(@held) . ')'),
		scalar(@held), "$phase: the slow jobs held at SIGTERM (@held) were finished and completed");

	@workers = start_workers($phase, 'b', $env);
	for my $p (@producers)
	{
		exited_0($p, 600, "$phase: $p->{name} ran to its end");
		my $out = produced($p);
		push @committed, @{ $out->{committed} // [] };
		push @rolled_back, @{ $out->{rolled_back} // [] };
		push @slow, @{ $out->{slow} // [] };
		$flaky{$_} = 1 for @{ $out->{flaky} // [] };
	}
	cmp_ok(scalar(@committed) - $total, '>=', 2 * $N * 0.85, "$phase: the producers committed their orders");
	$node->wait_for("$phase: every job is done",
		"SELECT (SELECT count(*) FROM app_receipts) >= " . scalar(@committed)
		  . ' AND available + scheduled + running = 0 FROM awa.queue_counts(\'orders\')');
	stop_workers($phase, @workers);
	is($node->run_sql("SELECT count(DISTINCT worker) FROM app_receipts WHERE worker LIKE '$phase-%'"),
		'4', "$phase: each of the four workers completed jobs");
	return;
}

# ---- a control: an attempt that sends no heartbeat is rescued -------------------------
$node->run_sql(q{SELECT awa.enqueue('control', 'never heartbeated')});
my ($control, $control_lease) = split /\|/,
  $node->run_sql(q{SELECT job_id, run_lease FROM awa.claim('control', 1, NULL)});

# ---- phase 1: straight to the server ---------------------------------------------------
my %direct = (PGHOST => $node->host, PGPORT => $node->port, PGDATABASE => 'postgres',
	PGUSER => $user);
my $offset = -s $node->logfile;
phase('direct', \%direct, 4);
cmp_ok(named_executes($offset), '>', 0,
	'direct: psycopg ran prepared statements (its default prepare_threshold)');
$node->wait_for('control: the attempt that sent no heartbeat was rescued (job_heartbeat_timeout 8 s)',
	"SELECT attempt = 2 FROM awa.job($control)");
is($node->run_sql("SELECT awa.complete($control, $control_lease)"), 'f',
	'control: the rescued attempt cannot complete');

# ---- phase 2: through PgBouncer in transaction mode -------------------------------------
# What holds what: a waiting claim is one statement, so it holds a server connection of
# the pool for its whole wait, transaction mode or not. Four workers wait with a pool
# of two: two claims wait in the server, the other two clients wait in PgBouncer for a
# connection, and so do the heartbeats, completions and the producers' transactions
# until a waiting claim returns (a commit into the queue wakes it at once, else after
# its 2 s). Work still flows, only slower; pool_size should cover the waiting claimers
# plus the producers' concurrency (docs/usage.md, "Drivers and poolers").
#
# Prepared statements: PgBouncer carries protocol-level prepared statements in
# transaction mode from 1.21 on, with max_prepared_statements; psycopg supports that
# from its 3.2 with PgBouncer 1.22 or later and libpq 17 (which lets it deallocate by
# protocol). Anything older (Debian 12: PgBouncer 1.18, psycopg 3.1.7, libpq 15) would
# find a statement prepared on one server connection missing on the next: the clients
# run with AWA_PREPARE_THRESHOLD=none there.
my ($bouncer_version) = `$pgbouncer --version` =~ /(\d+\.\d+(?:\.\d+)?)/;
my ($psycopg_version, $libpq_version) = split ' ',
  `$python -c 'import psycopg; print(psycopg.__version__, psycopg.pq.version())'`;
my $at_least = sub {
	my ($have, $want) = @_;
	my @h = split /\./, $have;
	my @w = split /\./, $want;
	return ($h[0] <=> $w[0] || ($h[1] // 0) <=> ($w[1] // 0)) >= 0;
};
my $carries_prepared = $at_least->($bouncer_version, '1.22')
  && $at_least->($psycopg_version, '3.2') && $libpq_version >= 170000;
note("PgBouncer $bouncer_version, psycopg $psycopg_version, libpq $libpq_version: "
	  . ($carries_prepared
		? 'max_prepared_statements carries psycopg\'s prepared statements'
		: 'AWA_PREPARE_THRESHOLD=none through PgBouncer'));
my $bdir = PostgreSQL::Test::Utils::tempdir_short();
my $bport = 6432;
open my $ini, '>', "$bdir/pgbouncer.ini" or die $!;
print $ini qq{[databases]
postgres = host=@{[ $node->host ]} port=@{[ $node->port ]} dbname=postgres

[pgbouncer]
listen_addr =
listen_port = $bport
unix_socket_dir = $bdir
auth_type = trust
auth_file = $bdir/users.txt
admin_users = $user
pool_mode = transaction
default_pool_size = $POOL
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 100
logfile = $bdir/pgbouncer.log
pidfile = $bdir/pgbouncer.pid
} . ($carries_prepared ? "max_prepared_statements = 100\n" : '');
close $ini;
open my $users, '>', "$bdir/users.txt" or die $!;
print $users qq{"$user" ""\n};
close $users;
my $bouncer = spawn('pgbouncer', {}, $pgbouncer, "$bdir/pgbouncer.ini");
my $up = time() + 60;
sleep 0.1 while !-S "$bdir/.s.PGSQL.$bport" && time() < $up;
ok(-S "$bdir/.s.PGSQL.$bport", "PgBouncer $bouncer_version listens on its unix socket only");

# SHOW POOLS of the admin console: the row of database postgres, by column
sub pools
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'psql', '-X', '-A', '-h', $bdir, '-p', $bport, '-U', $user, '-d', 'pgbouncer',
		'-c', 'SHOW POOLS' ], '>', \$out, '2>', \$err);
	my ($head, @rows) = split /\n/, $out;
	my @cols = split /\|/, $head // '';
	for my $row (@rows)
	{
		my %r;
		@r{@cols} = split /\|/, $row;
		return \%r if ($r{database} // '') eq 'postgres';
	}
	return {};
}

my %bounced = (%direct, PGHOST => $bdir, PGPORT => $bport,
	($carries_prepared ? () : (AWA_PREPARE_THRESHOLD => 'none')));
$offset = -s $node->logfile;
phase('pgbouncer', \%bounced, $POOL, sub {
	my $seen = 0;
	my $deadline = time() + 60;
	while (!$seen && time() < $deadline)
	{
		my $p = pools();
		$seen = ($p->{cl_waiting} // 0) >= 1 && ($p->{sv_active} // 0) == $POOL;
		sleep 0.2 unless $seen;
	}
	ok($seen, "pgbouncer: the $POOL server connections are held by waiting claims, other clients wait in PgBouncer");
	is($node->run_sql(q{SELECT count(*) FROM pg_stat_activity
	                     WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()}),
		$POOL, "pgbouncer: the server has $POOL client sessions for four workers");
});
if ($carries_prepared)
{
	cmp_ok(named_executes($offset), '>', 0,
		"pgbouncer: psycopg's prepared statements ran through PgBouncer $bouncer_version");
}
else
{
	is(named_executes($offset), 0,
		"pgbouncer: nothing prepared through PgBouncer $bouncer_version (AWA_PREPARE_THRESHOLD=none)");
}
kill 'TERM', $bouncer->{pid};
ok(defined wait_exit($bouncer, 60), 'PgBouncer stops');

# ---- exactly once ----------------------------------------------------------------------
my $committed = array(@committed);
my $n = scalar @committed;
cmp_ok(scalar(@rolled_back), '>=', 4 * $N / 10 - 4, 'the producers rolled back orders with their jobs');
is($node->run_sql('SELECT count(*) FROM app_orders'), $n, 'the orders are the committed ones');
is($node->run_sql("SELECT count(*) FROM unnest($committed) c(job_id)
                    WHERE (SELECT count(*) FROM app_receipts r WHERE r.job_id = c.job_id) <> 1"),
	'0', "each of the $n committed jobs has exactly one receipt");
is($node->run_sql("SELECT count(*) FROM app_receipts WHERE job_id <> ALL ($committed)"),
	'0', 'no receipt for any other job');
is($node->run_sql('SELECT count(*) - count(DISTINCT job_id) FROM app_receipts'),
	'0', 'no job was completed twice');
is($node->queue_counts('orders'), "0/0/0/$n/0",
	"awa.queue_counts: $n completed, nothing failed, waiting or running");
is($node->run_sql('SELECT count(*) FROM unnest(' . array(@rolled_back) . ') r(job_id), awa.job(r.job_id)'),
	'0', 'no rolled-back job exists (awa.job finds none of them)');
cmp_ok(scalar(@slow), '>=', 8, 'slow jobs ran (' . scalar(@slow) . ')');
cmp_ok(scalar(keys %flaky), '>=', 100, 'flaky jobs ran (' . scalar(keys %flaky) . ')');
is($node->run_sql("SELECT count(*) FROM app_receipts
                    WHERE attempt <> CASE WHEN job_id = ANY (" . array(keys %flaky) . ') THEN 2 ELSE 1 END'),
	'0', 'the flaky jobs completed on their second attempt, every other job (the slow ones '
	  . 'kept alive by heartbeats) on its first: none was rescued');

$node->stop;
done_testing();
