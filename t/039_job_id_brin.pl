# Copyright: the awa_bgw authors.
#
# Ready entries and receipts found by job id through BRIN indexes the worker summarizes
# (0.10, docs/storage.md A.21, A.22), under load. Eight clients fill a ready child and
# eight claim and complete into a receipts child over 20 seconds (the children grow by
# bulk extensions) while the worker runs its summaries; then, for each of the two:
# - the worker has summarized the child's ranges done filling (pageinspect reads the
#   revmap), and has left the last ones, which inserts still reach, alone;
# - the inserts wrote no summary of their own: over the load, pg_waldump counts BRIN
#   updates of a summary (each summarize writes one, a late insert into a summarized
#   range one more) of the order of the ranges summarized, not of the jobs (one a job
#   if inserts updated summaries), and no btree on job_id is written;
# - every job is found by awa.job, in a summarized range as in the tail; every claimed
#   job was completed once (its receipt found by each completion), and attempts claimed
#   before the load, whose receipts lie in summarized ranges, are completed after it.

use strict;
use warnings;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

# the queue and claim rings turn only by hand here, so that one child of each takes the
# whole load
my $node = AwaNode->create('brin', qq{
awa_bgw.queue_rotate_interval = '1h'
awa_bgw.claim_rotate_interval = '1h'
awa_bgw.rotate_fill = 0
autovacuum = off
});
$node->start;
$node->create_extension_and_lead;
sql('CREATE EXTENSION pageinspect');

# the current child of family $table in ring $ring and its BRIN index
sub brin_child
{
	my ($table, $ring) = @_;
	return split /\|/, sql(qq{
		SELECT format('awa.${table}_%s', c.slot), i.indexrelid::regclass
		  FROM awa.ring_cursor('$ring') c
		  JOIN pg_index i ON i.indrelid = format('awa.${table}_%s', c.slot)::regclass
		  JOIN pg_class x ON x.oid = i.indexrelid
		  JOIN pg_am am ON am.oid = x.relam AND am.amname = 'brin'});
}
my %fam = (ready => [ brin_child('ready_entries', 'queue'), 16 ],
	receipts => [ brin_child('lease_claims', 'claim'), 8 ]);
for my $f (sort keys %fam)
{
	ok($fam{$f}[1], "the current $f child $fam{$f}[0] has a BRIN index ($fam{$f}[1])");
}

# ranges of a child: [summarized, not summarized] of its revmap (a revmap entry is a
# summary's TID, or invalid: (0,0) when never set, (4294967295,0) when desummarized)
sub ranges_sql
{
	my ($child, $index, $per) = @{ $fam{ $_[0] } };
	return qq{
		SELECT count(*) FILTER (WHERE (pages::text::point)[1] <> 0) || ' ' ||
		       count(*) FILTER (WHERE (pages::text::point)[1] = 0)
		  FROM generate_series(0, (pg_relation_size('$child') / 8192 - 1) / $per) r,
		       LATERAL (SELECT pages FROM brin_revmap_data(get_raw_page('$index', 1))
		                 OFFSET r LIMIT 1) p};
}
sub ranges { return split / /, sql(ranges_sql($_[0])); }

# attempts held over the load: their receipts lie in the first ranges of the child,
# summarized before they are completed
sql(q{SELECT awa.enqueue('brin', 'held', jsonb_build_object('c', 0)) FROM generate_series(1, 20)});
my $held = sql(q{SELECT string_agg(job_id || ':' || run_lease, ' ') FROM awa.claim('brin', 20)});
is(scalar(my @h = split / /, $held), 20, 'twenty attempts held over the load');

# the load: 8 pgbench clients enqueue ~400-byte jobs at 300 a second for 20 s, and 8
# claim and complete them, one job a transaction each, so that both children grow by
# bulk extensions (empty pages ahead of the inserters) while the worker runs its
# summaries
my $script = $node->basedir . '/enqueue_padded.sql';
open my $fh, '>', $script or die $!;
print $fh "SELECT awa.enqueue('brin', 'k', jsonb_build_object('c', :client_id, 'pad', repeat('x', 300)));\n";
close $fh;
my $consume = $node->basedir . '/claim_complete.sql';
open $fh, '>', $consume or die $!;
print $fh "SELECT coalesce(max(job_id), 0) AS j, coalesce(max(run_lease), 0) AS l FROM awa.claim('brin', 1) \\gset\n";
print $fh "SELECT awa.complete(:j, :l) WHERE :j <> 0;\n";
close $fh;
my $lsn0 = sql('SELECT pg_current_wal_insert_lsn()');
finish_load($node->start_load(20, producers => [ 8, '-R', '300', '-f', $script ],
	consumers => [ 8, '-R', '250', '-f', $consume ]));
my $jobs = sql('SELECT count(*) FROM awa.ready_entries');
my %full;
for my $f (sort keys %fam)
{
	my ($child, $index, $per) = @{ $fam{$f} };
	my $blocks = sql("SELECT pg_relation_size('$child') / 8192");
	$full{$f} = int($blocks / $per);
	note("$f: the child holds $blocks blocks: $full{$f} full ranges of $per");
	cmp_ok($full{$f}, '>=', 10, "the load filled many $f ranges");
}
note("$jobs jobs enqueued");

# the worker summarizes, within a few of its runs, each range done filling: one after
# which a whole range has been started (the inserters fill the pages the free-space map
# hands out about in block order); the last ones, which inserts may still reach, not
for my $f (sort keys %fam)
{
	my $done = $full{$f} - 3;
	$node->wait_for("the worker summarized the $f ranges done filling",
		"SELECT split_part((" . ranges_sql($f) . "), ' ', 1)::int >= $done");
}
# the ranges summarized, counted before the end of the WAL read below, so that the WAL
# holds each summary counted (a run may add some in between: the bound below allows it)
my %counted = map { $_ => [ ranges($_) ] } keys %fam;
my $lsn1 = sql('SELECT pg_current_wal_insert_lsn()');

# what the load and the summaries wrote to BRIN and to btrees on job_id
my ($out, $err) = ('', '');
IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $lsn0, '-e', $lsn1 ],
	'>', \$out, '2>', \$err);
for my $f (sort keys %fam)
{
	my ($summarized, $open) = @{ $counted{$f} };
	note("$f ranges summarized: $summarized, not: $open");
	cmp_ok($open, '>=', 1, "the last $f ranges are left unsummarized");
	my $node_of = sql("SELECT pg_relation_filenode('$fam{$f}[1]')");
	my $updates = () = $out =~ m{^rmgr: BRIN .*desc: (?:SAMEPAGE_UPDATE|UPDATE).* rel \d+/\d+/$node_of }mg;
	note("$f: BRIN summary updates over the load: $updates");
	cmp_ok($updates, '>=', $summarized, "each $f summarize wrote its summary");
	# a summarize writes one update (two when an insert meets its placeholder); an
	# insert into a summarized range one more: a range summarized while inserters still
	# fill it (or left summarized by the index's build) adds one a job that reaches it
	cmp_ok($updates, '<', 2 * $summarized + 20,
		"the $f inserts wrote no summary: the updates are of the order of the ranges, not the jobs");
}
my $job_btree = sql(q{SELECT count(*) FROM pg_index i
	JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
	WHERE i.indrelid IN ('awa.ready_entries'::regclass, 'awa.lease_claims'::regclass)
	  AND am.amname = 'btree'
	  AND i.indkey[0] = (SELECT attnum FROM pg_attribute
	       WHERE attrelid = i.indrelid AND attname = 'job_id')});
is($job_btree, '0', 'no btree on job_id to write, on ready entries or receipts');

# the held attempts: their receipts, in summarized ranges, are found by a heartbeat and
# by their completion; a second completion finds the closure and changes nothing
my $ok = 0;
for my $a (@h)
{
	my ($j, $l) = split /:/, $a;
	$ok++ if sql("SELECT awa.complete($j, $l) AND NOT awa.complete($j, $l)") eq 't';
}
is($ok, 20, 'the attempts held over the load are completed once each');
# every job the consumers claimed was completed (its receipt found), once: none is left
# running, and the completions equal the claims
is(sql(q{SELECT running || ' ' || failed FROM awa.queue_counts('brin')}), '0 0',
	'no claimed job is left running or failed: each completion found its receipt');
cmp_ok(sql(q{SELECT completed FROM awa.queue_counts('brin')}), '>=', 1000,
	'the consumers completed many jobs');

# jobs are found by awa.job, in the summarized ranges (every 50th) and in the tail (the
# last 300): their state, and their args from the ready entry
my ($looked, $found) = split / /, sql(q{
	SELECT count(*) || ' ' || count(*) FILTER (WHERE j.state IN ('available', 'running', 'completed')
	                                          AND (j.args ->> 'c')::int BETWEEN 0 AND 7)
	  FROM (SELECT min(job_id) AS lo, max(job_id) AS hi FROM awa.ready_entries) r,
	       generate_series(r.lo, r.hi) i, LATERAL awa.job(i) j
	 WHERE i % 50 = 0 OR i > r.hi - 300});
cmp_ok($looked, '>=', 400, "$looked jobs looked up");
is($found, $looked, 'awa.job finds each, in the summarized ranges and in the tail');

done_testing();
