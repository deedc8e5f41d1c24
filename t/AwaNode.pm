
# Copyright: the awa_bgw authors.
#
# The scaffolding the TAP tests share: a PostgreSQL::Test::Cluster with awa_bgw
# preloaded for database postgres, and the few helpers every test wrote for itself
# (run a query, read a column of awa.maintenance_status, wait for a condition, wait
# for the worker to lead, count lines of the server log, load and drain the bench
# schema's queue, run pgbench loads). The plain helpers act on the node made last by
# AwaNode->create (a test with one node never names it); a test with several nodes
# calls the methods of each.

package AwaNode;

use strict;
use warnings;
use parent 'PostgreSQL::Test::Cluster';
use Exporter 'import';
use Scalar::Util qw(blessed);
# only slurp_file: the rest of what it exports (command_ok, run_log, ...) would shadow
# the node methods of the same names (PostgreSQL::Test::Cluster)
use PostgreSQL::Test::Utils qw(slurp_file);
use IPC::Run;
use Test::More;
use Time::HiRes qw(time);

our @EXPORT =
  qw(sql status wait_until wait_leader count_in_log load_bench drain_bench start_load finish_load
  enqueue_sessions claim_until);

# the node the plain helpers act on
my $current;

# wait_leader, count_in_log, load_bench and drain_bench are called either way: as a
# method of a node, or plainly, acting on the current node; _self takes the node off
# their arguments when it is there.
sub _self
{
	my ($args) = @_;
	return shift @$args
	  if blessed($args->[0]) && $args->[0]->isa('PostgreSQL::Test::Cluster');
	return $current;
}

# AwaNode->create($name, $settings, %init): an initialised node (not started, init()
# given %init; install_path among them goes to new()) with awa_bgw preloaded,
# maintaining database postgres unless $settings (postgresql.conf lines, added after)
# name awa_bgw.databases, with the worker's idle cadence at 1 s unless they name
# awa_bgw.idle_interval (the tests wait on conditions, and an idle worker's default
# 60 s between looks would stretch every wait that follows a quiet spell), and with
# each ring's rotate interval at 1 s unless they name it (the rings still turn by
# need, as by default; the default 60 s bound would make a test that waits for a
# slot to be pruned wait minutes).
sub create
{
	my ($class, $name, $settings, %init) = @_;
	# (install_path => DIR: a node of the PostgreSQL installed there, as new() takes it)
	my %new = map { $_ => delete $init{$_} } grep { exists $init{$_} } ('install_path');
	my $node = $class->new($name, %new);
	$settings //= '';
	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'awa_bgw'\n"
		  . ($settings =~ /^awa_bgw\.databases\s*=/m ? '' : "awa_bgw.databases = 'postgres'\n")
		  . ($settings =~ /^awa_bgw\.idle_interval\s*=/m ? '' : "awa_bgw.idle_interval = '1s'\n")
		  . join('',
			map { $settings =~ /^awa_bgw\.${_}_rotate_interval\s*=/m ? '' : "awa_bgw.${_}_rotate_interval = '1s'\n" }
			  qw(queue lease claim))
		  . $settings);
	$current = $node;
	return $node;
}

# $node->run_sql($query, $db): the query's output; dies on an error
sub run_sql
{
	my ($self, $query, $db) = @_;
	return $self->safe_psql($db // 'postgres', $query);
}

# $node->worker_status($expr): $expr read from the worker's row of maintenance_status
sub worker_status
{
	my ($self, $expr, $db) = @_;
	return $self->run_sql(
		"SELECT $expr FROM awa.maintenance_status WHERE database = 'postgres'", $db);
}

# $node->wait_for($what, $query, $expected, $db): one test that passes when $query
# returns $expected ('t' by default) before the deadline; dies otherwise, so that one
# missing event does not turn into a cascade of timeouts.
sub wait_for
{
	my ($self, $what, $query, $expected, $db) = @_;
	ok($self->poll_query_until($db // 'postgres', $query, $expected // 't'), $what)
	  or die "gave up waiting: $what";
	return;
}

# $node->create_extension_and_lead($db): CREATE EXTENSION, then wait (no test counted)
# until the worker of $db leads.
sub create_extension_and_lead
{
	my ($self, $db) = @_;
	$db //= 'postgres';
	$self->safe_psql($db, 'CREATE EXTENSION awa_bgw');
	$self->poll_query_until($db,
		"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = '$db'")
	  or die "the worker of database $db did not become leader";
	return;
}

# [$node->]wait_leader($what): one test, as wait_for, that passes once the worker of
# database postgres leads
sub wait_leader
{
	my $self = _self(\@_);
	my ($what) = @_;
	$self->wait_for($what,
		"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'");
	return;
}

# [$node->]count_in_log($re): how many times $re matches in the whole server log
sub count_in_log
{
	my $self = _self(\@_);
	my ($re) = @_;
	my $log = slurp_file($self->logfile);
	my $n = () = $log =~ /$re/g;
	return $n;
}

# [$node->]load_bench($db): the pgbench harness's schema (bench/schema.sql) in $db, with
# its logging of enqueued, claimed and completed job ids on (bench.log); the extension
# must be there already
sub load_bench
{
	my $self = _self(\@_);
	my ($db) = @_;
	$db //= 'postgres';
	$self->run_sql(slurp_file('bench/schema.sql'), $db);
	$self->run_sql("ALTER DATABASE $db SET bench.log = 'on'", $db);
	return;
}

# [$node->]drain_bench($secs, $db, $batch): consume the queue 'bench' in $db
# (bench.consume($batch), 1000 by default) until it has no available, running or
# scheduled job, for at most $secs seconds; true if it drained (the caller asserts it)
sub drain_bench
{
	my $self = _self(\@_);
	my ($secs, $db, $batch) = @_;
	$batch //= 1000;
	my $drained = 0;
	my $deadline = time() + $secs;
	while (!$drained && time() < $deadline)
	{
		$self->run_sql("CALL bench.consume($batch)", $db);
		$drained = $self->run_sql(
			"SELECT available = 0 AND running = 0 AND scheduled = 0 FROM awa.queue_counts('bench')",
			$db) eq 't';
	}
	return $drained;
}

# [$node->]start_load($secs, $name => [$clients, @args], ...): one pgbench process per
# role, each running its scripts (@args: -f files, -R ...) on $clients clients for
# $secs seconds against database postgres. Producers and consumers that wait for work
# are given roles of their own: a client that draws a waiting claim while the queue is
# empty would otherwise stop producing for the whole wait, and with every client there
# the load stalls itself. Returns { $name => { h, out, err } } for finish_load.
sub start_load
{
	my $self = _self(\@_);
	my ($secs, %roles) = @_;
	my %load;
	for my $name (sort keys %roles)
	{
		my ($clients, @args) = @{ $roles{$name} };
		my $run = { out => '', err => '' };
		$run->{h} = IPC::Run::start(
			[
				'pgbench', '-n', '-c', $clients, '-j', ($clients > 1 ? 2 : 1), '-T', $secs,
				@args, '-h', $self->host, '-p', $self->port, 'postgres'
			],
			'>', \$run->{out}, '2>', \$run->{err});
		$load{$name} = $run;
	}
	return \%load;
}

# finish_load($load): wait for every pgbench of start_load to end; one test per role
# that it ran to its end (exit 0)
sub finish_load
{
	my ($load) = @_;
	for my $name (sort keys %$load)
	{
		my $run = $load->{$name};
		$run->{h}->finish;
		is($run->{h}->result(0), 0, "pgbench $name ran to the end") or diag($run->{err});
	}
	return;
}

# [$node->]enqueue_sessions($n, $queue, $kind): $n enqueues of $kind into $queue, each
# from a connection of its own (consecutive backends fall on consecutive lane shards,
# so that every lane holds work); one test
sub enqueue_sessions
{
	my $self = _self(\@_);
	my ($n, $queue, $kind) = @_;
	my $script = $self->basedir . "/enqueue_${queue}_$kind.sql";
	open my $fh, '>', $script or die $!;
	print $fh "SELECT awa.enqueue('$queue', '$kind', jsonb_build_object('c', :client_id));\n";
	close $fh;
	$self->command_ok(
		[ 'pgbench', '-n', '-C', '-c', '1', '-t', $n, '-f', $script, '-h', $self->host,
		  '-p', $self->port, 'postgres' ],
		$self->name . ": $n enqueues of kind $kind, one session each");
	return;
}

# [$node->]claim_until($queue, $done, $secs): claim jobs of $queue (20 at a time) and
# complete each, until the query $done returns true, for at most $secs (120) seconds
# (rescued attempts come back after their retry's backoff). Returns (whether $done
# came true, { job_id => [ attempt . completed, ... ] }); the caller asserts both.
sub claim_until
{
	my $self = _self(\@_);
	my ($queue, $done, $secs) = @_;
	my %claimed;
	my $deadline = time() + ($secs // 120);
	my $finished = 0;
	while (!$finished && time() < $deadline)
	{
		for my $row (split /\n/, $self->run_sql(
				"SELECT job_id || ' ' || attempt || ' ' || awa.complete(job_id, run_lease)
				   FROM awa.claim('$queue', 20)"))
		{
			my ($id, $attempt, $ok) = split / /, $row;
			push @{ $claimed{$id} }, "$attempt$ok";
		}
		$finished = $self->run_sql($done) eq 't';
	}
	return ($finished, \%claimed);
}

# $node->queue_counts($queue): awa.queue_counts($queue) as
# "available/scheduled/running/completed/failed"
sub queue_counts
{
	my ($self, $queue) = @_;
	return $self->run_sql("SELECT format('%s/%s/%s/%s/%s', available, scheduled, running, "
		  . "completed, failed) FROM awa.queue_counts('$queue')");
}

# $node->job_ids($query): the job_id column of $query's rows, in job id order
sub job_ids
{
	my ($self, $query) = @_;
	return split / /, $self->run_sql(
		"SELECT coalesce(string_agg(job_id::text, ' ' ORDER BY job_id), '') FROM ($query) q");
}

# The same ids as a set: a list of (id => 1) pairs, to assign to a hash.
sub job_id_set
{
	my ($self, $query) = @_;
	return map { $_ => 1 } $self->job_ids($query);
}

sub sql        { return $current->run_sql(@_); }
sub status     { return $current->worker_status(@_); }
sub wait_until { return $current->wait_for(@_); }

1;
