
# Copyright: the awa_bgw authors.
#
# The scaffolding the TAP tests share: a PostgreSQL::Test::Cluster with awa_bgw
# preloaded for database postgres, and the few helpers every test wrote for itself
# (run a query, read a column of awa.maintenance_status, wait for a condition, wait
# for the worker to lead). The plain helpers act on the node made last by
# AwaNode->create (a test with one node never names it); a test with several nodes
# calls the methods of each.

package AwaNode;

use strict;
use warnings;
use parent 'PostgreSQL::Test::Cluster';
use Exporter 'import';
use Test::More;

our @EXPORT = qw(sql status wait_until);

# the node the plain helpers act on
my $current;

# AwaNode->create($name, $settings, %init): an initialised node (not started, init()
# given %init) with awa_bgw preloaded, maintaining database postgres unless $settings
# (postgresql.conf lines, added after) name awa_bgw.databases.
sub create
{
	my ($class, $name, $settings, %init) = @_;
	my $node = $class->new($name);
	$settings //= '';
	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'awa_bgw'\n"
		  . ($settings =~ /^awa_bgw\.databases\s*=/m ? '' : "awa_bgw.databases = 'postgres'\n")
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

sub sql        { return $current->run_sql(@_); }
sub status     { return $current->worker_status(@_); }
sub wait_until { return $current->wait_for(@_); }

1;
