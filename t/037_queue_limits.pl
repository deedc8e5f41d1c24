
# Copyright: the awa_bgw authors.
#
# Running limits under load and across a crash (api/queue_limits.sql,
# src/dataplane/limits.c). A queue limited to 5 running attempts is consumed by 16
# pgbench clients for a minute, each claiming up to 2 jobs, holding them 50 ms and
# completing them; sampled while they run, the queue never has more than 5 attempts
# running (awa.queue_counts) nor more than 5 running or reserved in shared memory. Every
# job is completed exactly once. Then 3 attempts are left running and the server
# crashes (immediate stop): shared memory is new after the restart, the first claim
# counts the open attempts before it is served, and takes only the 2 places left. Last,
# the worker's rescue of an abandoned attempt frees its place, and past
# awa_bgw.max_limited_queues a limit is refused with 53400 until one is cleared, or
# until a database holding limited queues is dropped.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('limits', qq{
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.rescue_interval = '500ms'
awa_bgw.job_heartbeat_timeout = '10min'
max_connections = 40
});
$node->start;
$node->create_extension_and_lead;

my $jobs = 6000;
sql(q{CREATE TABLE lim_done (job_id bigint NOT NULL, client int NOT NULL)});
# one consumer step: claim up to 2 (committed: they run), hold them 50 ms, complete
sql(q{CREATE PROCEDURE lim_consume(p_client int) LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[];
    v_leases bigint[];
BEGIN
    SELECT array_agg(c.job_id), array_agg(c.run_lease) INTO v_ids, v_leases
      FROM awa.claim('lim', 2) c;
    COMMIT;
    IF v_ids IS NULL THEN
        PERFORM pg_sleep(0.01);
        RETURN;
    END IF;
    PERFORM pg_sleep(0.05);
    INSERT INTO lim_done SELECT b.job_id, p_client
      FROM awa.complete_batch(v_ids, v_leases) b;
    COMMIT;
END
$$});
sql(qq{SELECT count(awa.enqueue('lim', 'job', jsonb_build_object('n', g)))
         FROM generate_series(1, $jobs) g});
sql(q{SELECT awa.set_queue_limits('lim', 5)});

my $script = $node->basedir . '/lim_consume.sql';
open my $fh, '>', $script or die $!;
print $fh "CALL lim_consume(:client_id);\n";
close $fh;
my $load = start_load(60, consumers => [ 16, '-f', $script ]);

# sample while the load runs (until every job is done or the load's time is up)
my ($max_counted, $max_shared, $samples) = (0, 0, 0);
my $deadline = time() + 65;
while (time() < $deadline)
{
	my ($counted, $shared, $done) = split /\|/, sql(q{
		SELECT (SELECT running FROM awa.queue_counts('lim')),
		       (SELECT running + pending FROM awa_internal.queue_limit_state('lim')),
		       (SELECT count(*) FROM lim_done)});
	$samples++;
	$max_counted = $counted if $counted > $max_counted;
	$shared = 0 if !defined $shared || $shared eq q{};
	$max_shared = $shared if $shared > $max_shared;
	last if $done >= $jobs;
	usleep(50_000);
}
finish_load($load);
note("$samples samples: at most $max_counted running, $max_shared running + reserved");
# (each sample is a psql run: how many fit in the load's minute depends on the machine,
# so the check is only that sampling went on while it ran; that the consumers were seen
# running several attempts at once is checked below)
cmp_ok($samples, '>=', 5, 'the running count was sampled while the consumers ran');
cmp_ok($max_counted, '<=', 5, 'never more than 5 attempts running (awa.queue_counts)');
cmp_ok($max_shared, '<=', 5, 'never more than 5 running or reserved in shared memory');
cmp_ok($max_counted, '>=', 2, 'the consumers did run several attempts at once');

# what the load left (at 5 running and 50 ms a job the load cannot finish 6,000 in its
# minute on a busy machine): drained in one session, up to 5 at a time, completed at
# once, until nothing is available or running, with a generous deadline. (It was
# drained by one psql call per claim of 2, which on a loaded machine managed a few jobs
# a second and ran out of its two minutes with a hundred left.)
sql(q{CREATE PROCEDURE lim_drain() LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[];
    v_leases bigint[];
    v_deadline timestamptz := clock_timestamp() + interval '5 minutes';
BEGIN
    LOOP
        SELECT array_agg(c.job_id), array_agg(c.run_lease) INTO v_ids, v_leases
          FROM awa.claim('lim', 5) c;
        COMMIT;
        IF v_ids IS NULL THEN
            EXIT WHEN clock_timestamp() > v_deadline
                   OR (SELECT available + running FROM awa.queue_counts('lim')) = 0;
            PERFORM pg_sleep(0.01);
            CONTINUE;
        END IF;
        INSERT INTO lim_done SELECT b.job_id, 0 FROM awa.complete_batch(v_ids, v_leases) b;
        COMMIT;
    END LOOP;
END
$$});
$node->safe_psql('postgres', 'CALL lim_drain()', timeout => 400);
is(sql(q{SELECT count(*) || '/' || count(DISTINCT job_id) FROM lim_done}), "$jobs/$jobs",
	'every job completed exactly once');
is($node->queue_counts('lim'), "0/0/0/$jobs/0", 'the counts agree: all completed');
is(sql(q{SELECT running || '/' || pending FROM awa_internal.queue_limit_state('lim')}),
	'0/0', 'shared memory: nothing running, nothing reserved');

# the crash: 3 attempts left running, then an immediate stop
sql(q{SELECT count(awa.enqueue('lim', 'after', jsonb_build_object('n', g)))
        FROM generate_series(1, 10) g});
is(sql(q{CREATE TABLE lim_held AS SELECT job_id, run_lease FROM awa.claim('lim', 3);
         SELECT count(*) FROM lim_held}), '3', '3 attempts running before the crash');
$node->stop('immediate');
$node->start;
$node->poll_query_until('postgres', 'SELECT true') or die 'the server did not come back';
is(sql(q{SELECT count(*) FROM awa_internal.queue_limit_state('lim')}), '0',
	'after the restart shared memory holds no count for the queue');
is(sql(q{SELECT count(*) FROM awa.claim('lim', 10)}), '2',
	'the first claim after the crash counted the 3 running attempts: it takes 2 of 10');
is(sql(q{SELECT running || '/' || pending || '/' || ready
           FROM awa_internal.queue_limit_state('lim')}), '5/0/true',
	'shared memory: 5 running once rebuilt');
is(sql(q{SELECT count(*) FROM awa.claim('lim', 10)}), '0', 'a claim at the limit takes nothing');
is(sql(q{SELECT count(*) FILTER (WHERE awa.complete(job_id, run_lease)) FROM lim_held}), '3',
	'the attempts of before the crash complete');
is(sql(q{SELECT count(*) FROM awa.claim('lim', 10)}), '3', 'and their 3 places are free again');
is($node->queue_counts('lim'), "2/0/5/" . ($jobs + 3) . "/0", 'counts after the crash');

# the worker's rescue (in SQL, awa_internal.close_attempts) frees room too: a limit of 1,
# its one attempt claimed with a 1 s deadline and abandoned
sql(q{SELECT awa.set_queue_limits('resc', 1)});
sql(q{SELECT count(awa.enqueue('resc', 'job', jsonb_build_object('n', g)))
        FROM generate_series(1, 2) g});
is(sql(q{SELECT count(*) FROM awa.claim('resc', 2, '1 s')}), '1', 'a limit of 1: one claimed');
is(sql(q{SELECT count(*) FROM awa.claim('resc', 2)}), '0', 'and nothing more');
wait_until('the rescue of the abandoned attempt frees its place',
	q{SELECT count(*) = 1 FROM awa.claim('resc', 2)});
is(sql(q{SELECT running || '/' || pending FROM awa_internal.queue_limit_state('resc')}), '1/0',
	'shared memory: the rescued attempt left, the new one runs');

# the shared table of limited queues is full at awa_bgw.max_limited_queues: 'lim' and
# 'resc' have their entries, a third limit is refused (nothing written) until one is
# cleared
$node->append_conf('postgresql.conf', "awa_bgw.max_limited_queues = 2\n");
$node->restart;
$node->wait_leader;
is(sql(q{SELECT count(*) FROM awa.claim('lim', 1)}) + sql(q{SELECT count(*) FROM awa.claim('resc', 1)}),
	'0', 'after the restart the two limited queues have their entries (both at their limit)');
my ($rc, $out, $err) = $node->psql('postgres', q{SELECT awa.set_queue_limits('third', 3)},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/53400/, 'a third limited queue: 53400');
like($err, qr/awa\.clear_queue_limits/, 'whose hint says to clear a limit');
is(sql(q{SELECT count(*) FROM awa.queue_settings WHERE queue = 'third' AND max_running IS NOT NULL}),
	'0', 'and nothing was written');
sql(q{SELECT awa.clear_queue_limits('resc')});
sql(q{SELECT awa.set_queue_limits('third', 3)});
is(sql(q{SELECT running || '/' || pending || '/' || ready
           FROM awa_internal.queue_limit_state('third')}), '0/0/false',
	'once a limit is cleared its place takes another queue');

# the places of a dropped database's queues come back: nothing runs in a dropped
# database to give them back, so a full table takes them back before refusing
sql(q{SELECT awa.clear_queue_limits('third')});
my $lim_state = sql(q{SELECT running || '/' || pending || '/' || ready
                        FROM awa_internal.queue_limit_state('lim')});
$node->safe_psql('postgres', 'CREATE DATABASE gone');
$node->safe_psql('gone', 'CREATE EXTENSION awa_bgw');
$node->safe_psql('gone', q{SELECT awa.set_queue_limits('elsewhere', 1)});
($rc, $out, $err) = $node->psql('postgres', q{SELECT awa.set_queue_limits('fourth', 3)});
like($err, qr/too many queues with a running or rate limit/,
	'the table is full again: the other database holds the freed place');
$node->safe_psql('postgres', 'DROP DATABASE gone WITH (FORCE)');
sql(q{SELECT awa.set_queue_limits('fourth', 3)});
is(sql(q{SELECT running || '/' || pending || '/' || ready
           FROM awa_internal.queue_limit_state('fourth')}), '0/0/false',
	'once that database is dropped, its place takes another queue');
is(sql(q{SELECT running || '/' || pending || '/' || ready
           FROM awa_internal.queue_limit_state('lim')}), $lim_state,
	"and the queue of this database that kept its place keeps its count ($lim_state)");

$node->stop;
done_testing();
