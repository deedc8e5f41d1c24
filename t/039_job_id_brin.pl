# Copyright: the awa_bgw authors.
#
# Ready entries found by job id through a BRIN index the worker summarizes (0.10,
# docs/storage.md A.21), under load. Enqueues fill a ready child over some seconds
# while the worker runs its summaries; then:
# - the worker has summarized the child's full ranges (pageinspect reads the revmap),
#   and has left the last, partial one alone;
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

# the load: 20,000 jobs of ~400 bytes, in 200 transactions over some seconds
my $lsn0 = sql('SELECT pg_current_wal_insert_lsn()');
sql(q{DO $$
BEGIN
    FOR b IN 1 .. 200 LOOP
        PERFORM awa.enqueue('brin', 'k', jsonb_build_object('b', b, 'i', i, 'pad', repeat('x', 300)))
           FROM generate_series(1, 100) i;
        COMMIT;
        PERFORM pg_sleep(0.02);
    END LOOP;
END $$});
my $blocks = sql("SELECT pg_relation_size('$child') / 8192");
my $full = int($blocks / 16);
note("the child holds $blocks blocks: $full full ranges");
cmp_ok($full, '>=', 20, 'the load filled many ranges');

# the worker summarizes the full ranges within a few of its runs, the partial one not
$node->wait_for('the worker summarized every full range',
	"SELECT split_part(($ranges), ' ', 1)::int >= $full");
my $lsn1 = sql('SELECT pg_current_wal_insert_lsn()');
my ($summarized, $open) = split / /, sql($ranges);
is($summarized, $full, 'exactly the full ranges are summarized');
is($open, $blocks % 16 ? 1 : 0, 'the partial last range is left unsummarized');

# what the load and the summaries wrote to BRIN and to btrees on job_id
my ($out, $err) = ('', '');
IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $lsn0, '-e', $lsn1 ],
	'>', \$out, '2>', \$err);
my $jobs = 20000;
my $updates = () = $out =~ /^rmgr: BRIN .*desc: (?:SAMEPAGE_UPDATE|UPDATE)/mg;
my $brin = () = $out =~ /^rmgr: BRIN /mg;
note("BRIN records over the load: $brin, of them summary updates: $updates");
cmp_ok($updates, '>=', $full, 'each summarize wrote its summary');
# a summarize writes one update (two when an insert meets its placeholder); an insert
# into a summarized range one more: a range left summarized by the index's build
# would add one a job in it (~50 here), one per job for each
cmp_ok($updates, '<', 2 * $full + 40,
	'the enqueues wrote no summary: the updates are of the order of the ranges, not the jobs');
my $job_btree = sql(q{SELECT count(*) FROM pg_index i
	JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
	WHERE i.indrelid = 'awa.ready_entries'::regclass AND am.amname = 'btree'
	  AND i.indnatts = 1 AND i.indkey[0] = (SELECT attnum FROM pg_attribute
	       WHERE attrelid = 'awa.ready_entries'::regclass AND attname = 'job_id')});
is($job_btree, '0', 'no btree on job_id to write');

# jobs are found by awa.job, in the summarized ranges (every 50th) and in the tail (the
# last 300): their state by the lookup, and their args
my ($looked, $found) = split / /, sql(q{
	SELECT count(*) || ' ' || count(*) FILTER (WHERE j.state = 'available'
	                                          AND (j.args ->> 'i')::int BETWEEN 1 AND 100)
	  FROM (SELECT min(job_id) AS lo, max(job_id) AS hi FROM awa.ready_entries) r,
	       generate_series(r.lo, r.hi) i, LATERAL awa.job(i) j
	 WHERE i % 50 = 0 OR i > r.hi - 300});
cmp_ok($looked, '>=', 600, "$looked jobs looked up");
is($found, $looked, 'awa.job finds each, in the summarized ranges and in the tail');

done_testing();
