# Copyright: the awa_bgw authors.
#
# What an idle worker writes (docs/operations.md, "What the worker costs"). With every
# cadence short (the rings 100 ms, promote 100 ms, rescue 200 ms, the folds and purges
# 1 s), after a little traffic has come and gone and the rings have stopped turning,
# the worker leads over an idle stretch of at least 20 rescues (counted by
# awa.worker_stats). pg_waldump over the stretch shows which relations were written:
# no record names a relation of schema awa but the fleet's awa.runtime_instances (its
# heartbeat still writes a row version per awa_bgw.runtime_heartbeat_interval, here
# 1 s); in particular not the claim ring's state, which each rescue locked before 0.10.
# Records that name no relation (commits, running transactions) or a catalog
# (autovacuum's, the statistics') are not the worker's writes to its tables and are not
# counted. Positive control: the same dump over a stretch with one rescue due names the
# claim ring's state.

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
awa_bgw.runtime_heartbeat_interval = '1s'
});
$node->start;
$node->create_extension_and_lead;

my $counters = q{SELECT rescue_runs || ' ' || rotations || ' ' || prunes
                   FROM awa.worker_stats WHERE database = 'postgres'};

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

# the awa relations that the WAL between two LSNs names, with how many records each
sub written_between
{
	my ($from, $to) = @_;
	my $db = sql(q{SELECT oid FROM pg_database WHERE datname = 'postgres'});
	my $rels = awa_relations();
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $from, '-e', $to ],
		'>', \$out, '2>', \$err);
	my %written;
	for my $line (split /\n/, $out)
	{
		my %seen;
		while ($line =~ m{rel \d+/$db/(\d+)}g)
		{
			my $name = $rels->{$1} or next;
			$written{$name}++ unless $seen{$name}++;
		}
	}
	return \%written;
}

# a little traffic, then wait until the rings have stopped turning: the counters of
# rotations and prunes unchanged over 5 rescues
sql(q{SELECT count(awa.enqueue('idle', 'k')) FROM generate_series(1, 20)});
sql(q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('idle', 20)});
my $quiet = 0;
my $deadline = time() + 180;
while (!$quiet && time() < $deadline)
{
	my ($r0, $rot0, $pr0) = split / /, sql($counters);
	$node->poll_query_until('postgres',
		"SELECT rescue_runs >= $r0 + 5 FROM awa.worker_stats WHERE database = 'postgres'")
	  or die 'the worker does not rescue';
	my (undef, $rot1, $pr1) = split / /, sql($counters);
	$quiet = $rot1 == $rot0 && $pr1 == $pr0;
}
ok($quiet, 'after the traffic, the rings stop turning');

# the idle stretch
my $lsn0 = sql('SELECT pg_current_wal_insert_lsn()');
my ($r0, $rot0, $pr0) = split / /, sql($counters);
$node->wait_for('the worker rescues 20 times over the idle stretch',
	"SELECT rescue_runs >= $r0 + 20 FROM awa.worker_stats WHERE database = 'postgres'");
my (undef, $rot1, $pr1) = split / /, sql($counters);
my $lsn1 = sql('SELECT pg_current_wal_insert_lsn()');
is("$rot1 $pr1", "$rot0 $pr0", 'no ring turned over the stretch');
my $idle = written_between($lsn0, $lsn1);
note("written while idle: " . join(', ', map { "$_ ($idle->{$_})" } sort keys %$idle));
cmp_ok($idle->{runtime_instances} // 0, '>', 0,
	'the fleet heartbeat wrote its row (the dump reads the stretch)');
is(join(' ', grep { $_ ne 'runtime_instances' } sort keys %$idle), '',
	'no other relation of schema awa was written while idle');

# positive control: the dump sees the claim ring's state when the ring has work (one
# receipt past its deadline: the rescue, and the rotations of the busy ring, take its
# serializer, a row lock on its state)
my $lsn2 = sql('SELECT pg_current_wal_insert_lsn()');
sql(q{SELECT awa.enqueue('late', 'k')});
sql(q{SELECT count(*) FROM awa.claim('late', 1, '1 ms')});
$node->wait_for('the late attempt is rescued',
	q{SELECT jobs_rescued >= 1 FROM awa.worker_stats WHERE database = 'postgres'});
my $lsn3 = sql('SELECT pg_current_wal_insert_lsn()');
my $busy = written_between($lsn2, $lsn3);
cmp_ok($busy->{claim_ring_state} // 0, '>', 0,
	'with a receipt due the claim ring\'s state is written (the dump sees it)');

$node->stop;
done_testing();
