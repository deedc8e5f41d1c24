# Copyright: the awa_bgw authors.
#
# Ready entries found by job id through a BRIN index the worker summarizes (0.10,
# docs/storage.md A.21), under load. Eight clients fill a ready child over 20 seconds
# (the child grows by bulk extensions) while the worker runs its summaries; then:
# - the worker has summarized the child's ranges done filling (pageinspect reads the
#   revmap), and has left the last ones, which enqueues still reach, alone;
# - the enqueues wrote no summary of their own: over the load, pg_waldump counts BRIN
#   updates of a summary (each summarize writes one, a late insert into a summarized
#   range one more) of the order of the ranges summarized, not of the jobs (one a job
#   if inserts updated summaries), and no btree on job_id is written;
# - every job is found by awa.job, in a summarized range as in the tail.

use strict;
use warnings;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

# the queue ring turns only by hand here, so that one child takes the whole load
my $node = AwaNode->create('brin', qq{
awa_bgw.queue_rotate_interval = '1h'
awa_bgw.rotate_fill = 0
autovacuum = off
});
$node->start;
$node->create_extension_and_lead;
sql('CREATE EXTENSION pageinspect');

my ($child, $index) = split /\|/, sql(q{
	SELECT format('awa.ready_entries_%s', c.slot), i.indexrelid::regclass
	  FROM awa.ring_cursor('queue') c
	  JOIN pg_index i ON i.indrelid = format('awa.ready_entries_%s', c.slot)::regclass
	  JOIN pg_class x ON x.oid = i.indexrelid
	  JOIN pg_am am ON am.oid = x.relam AND am.amname = 'brin'});
ok($index, "the current ready child $child has a BRIN index ($index)");

# ranges of 16 pages: [summarized, not summarized] of the child's revmap
# (a revmap entry is a summary's TID, or invalid: (0,0) when never set, (4294967295,0)
# when desummarized)
my $ranges = qq{SELECT count(*) FILTER (WHERE (pages::text::point)[1] <> 0) || ' ' ||
                       count(*) FILTER (WHERE (pages::text::point)[1] = 0)
                  FROM generate_series(0, (pg_relation_size('$child') / 8192 - 1) / 16) r,
                       LATERAL (SELECT pages FROM brin_revmap_data(get_raw_page('$index', 1))
                                 OFFSET r LIMIT 1) p};

# the load: 8 pgbench clients enqueue ~400-byte jobs at 300 a second for 20 s, and 8
# claim and complete them (bench/consumer.sql), so that the child grows by bulk
# extensions (empty pages ahead of the inserters) while the worker runs its summaries
my $script = $node->basedir . '/enqueue_padded.sql';
open my $fh, '>', $script or die $!;
print $fh "SELECT awa.enqueue('brin', 'k', jsonb_build_object('c', :client_id, 'pad', repeat('x', 300)));\n";
close $fh;
my $lsn0 = sql('SELECT pg_current_wal_insert_lsn()');
load_bench();
finish_load($node->start_load(20, producers => [ 8, '-R', '300', '-f', $script ],
	consumers => [ 8, '-R', '300', '-f', 'bench/consumer.sql' ]));
my $jobs = sql('SELECT count(*) FROM awa.ready_entries');
my $blocks = sql("SELECT pg_relation_size('$child') / 8192");
my $full = int($blocks / 16);
note("$jobs jobs; the child holds $blocks blocks: $full full ranges");
cmp_ok($full, '>=', 10, 'the load filled many ranges');

# the worker summarizes, within a few of its runs, each range done filling: one after
# which a whole range has been started (the inserters fill the pages the free-space map
# hands out about in block order); the last ones, which enqueues may still reach, not
my $done = $full - 3;
$node->wait_for('the worker summarized the ranges done filling',
	"SELECT split_part(($ranges), ' ', 1)::int >= $done");
my $lsn1 = sql('SELECT pg_current_wal_insert_lsn()');
my ($summarized, $open) = split / /, sql($ranges);
note("ranges summarized: $summarized, not: $open");
cmp_ok($open, '>=', 1, 'the last ranges are left unsummarized');

# what the load and the summaries wrote to BRIN and to btrees on job_id
my ($out, $err) = ('', '');
IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $lsn0, '-e', $lsn1 ],
	'>', \$out, '2>', \$err);
my $updates = () = $out =~ /^rmgr: BRIN .*desc: (?:SAMEPAGE_UPDATE|UPDATE)/mg;
my $brin = () = $out =~ /^rmgr: BRIN /mg;
note("BRIN records over the load: $brin, of them summary updates: $updates");
cmp_ok($updates, '>=', $summarized, 'each summarize wrote its summary');
# a summarize writes one update (two when an insert meets its placeholder); an insert
# into a summarized range one more: a range summarized while inserters still fill it
# (or left summarized by the index's build) adds one a job that reaches it
cmp_ok($updates, '<', 2 * $summarized + 20,
	'the enqueues wrote no summary: the updates are of the order of the ranges, not the jobs');
my $job_btree = sql(q{SELECT count(*) FROM pg_index i
	JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
	WHERE i.indrelid = 'awa.ready_entries'::regclass AND am.amname = 'btree'
	  AND i.indnatts = 1 AND i.indkey[0] = (SELECT attnum FROM pg_attribute
	       WHERE attrelid = 'awa.ready_entries'::regclass AND attname = 'job_id')});
is($job_btree, '0', 'no btree on job_id to write');

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
