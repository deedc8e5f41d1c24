# Copyright: the awa_bgw authors.
#
# The staged upgrade as a DBA runs it (docs/upgrade.md):
# 1. the catalog after 0.6 -> 0.7 equals a fresh 0.7's, and after 0.6 -> 0.7 -> flip
#    -> 0.8 a fresh 0.8's (pg_dump --schema-only --binary-upgrade, which dumps every
#    member object, with OIDs and dropped-column placeholders filtered out), after
#    0.8 -> 0.9 and after 0.6 -> 0.7 -> flip -> 0.8 -> 0.9 a fresh 0.9's; a 0.6
#    catalog differs (the comparison can fail); after 0.9 -> 0.10 and after 0.8 -> 0.10
#    (one UPDATE) a fresh 0.10's, with this cluster's mark of the xid space; the
#    internals moved to awa_internal keep their OIDs, privileges and comments;
# 2. the 0.7 library idles in needs_upgrade on a 0.6 schema and starts by itself after
#    ALTER EXTENSION ... UPDATE; in columns authority it rotates by the compat path;
#    awa_bgw.auto_flip = off keeps the authority; a fresh pre-flip runtime holds the
#    auto-flip back; once it is gone the leader flips after the stable period;
#    after UPDATE TO '0.8' the worker goes on;
# 3. pg_dump / pg_restore of a database with queued, deferred and running jobs.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode qw(status);
use Test::More;

my $node = AwaNode->create('upgrade', qq{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.fold_interval = '200ms'
awa_bgw.runtime_heartbeat_interval = '200ms'
awa_bgw.auto_flip = off
awa_bgw.auto_flip_stable_period = '2s'
});
$node->start;

# sql($db, $query): the database first, as nearly every call names one (status comes
# from t/AwaNode.pm)
sub sql { my ($db, $q) = @_; return $node->run_sql($q, $db); }

# ---- 1. catalogs -------------------------------------------------------------------
sub schema_dump
{
	my ($db) = @_;
	my ($out, $err) = run_command(
		[ 'pg_dump', '--schema-only', '--binary-upgrade', '-d', $node->connstr($db) ]);
	die "pg_dump $db: $err" if $err ne '';
	# OIDs, xids and the extension's member list differ between any two databases
	$out =~ s/^.*(binary_upgrade_set_next|binary_upgrade_create_empty_extension).*\n//mg;
	$out =~ s/^SET relfrozenxid.*\n//mg;
	$out =~ s/^WHERE oid = .*\n//mg;
	$out =~ s/^\\(un)?restrict .*\n//mg;
	$out =~ s/^-- Dumped (from|by) .*\n//mg;
	# the values of the sequences pg_dump keeps are data (a database with jobs has used them)
	$out =~ s/^SELECT pg_catalog\.setval\('awa\.[a-z_]+', \d+, (true|false)\);\n//mg;
	# columns dropped by the 0.8 contract survive as placeholders in a binary-upgrade dump
	$out =~ s/-- For binary upgrade, recreate dropped column\.\n.*?DROP COLUMN "[^"]*pg\.dropped[^"]*";\n\n?//gs;
	# (17 and later restore them with one UPDATE per table over a list of the columns)
	$out =~ s/-- For binary upgrade, recreate dropped columns\.\nUPDATE pg_catalog\.pg_attribute\n.*?AND attname = v\.dname;\n(?:\n|[^\n]*pg\.dropped[^\n]*\n)*//gs;
	$out =~ s/^.*pg\.dropped.*\n//mg;
	return $out;
}

sub config_tables
{
	return sql($_[0],
		q{SELECT string_agg(c::regclass || ' ' || w, ', ' ORDER BY c::regclass::text)
		    FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(c, w)
		   WHERE e.extname = 'awa_bgw'});
}

for my $db (qw(fresh07 up07 old06 fresh08 up08 fresh09 up09 up0609 fresh010 up010 up0810
	grants010))
{
	sql('postgres', "CREATE DATABASE $db");
}
sql('fresh07', "CREATE EXTENSION awa_bgw VERSION '0.7'");
sql('old06',   "CREATE EXTENSION awa_bgw VERSION '0.6'");
sql('up07',    "CREATE EXTENSION awa_bgw VERSION '0.6'");
sql('up07',    "ALTER EXTENSION awa_bgw UPDATE TO '0.7'");
sql('fresh08', "CREATE EXTENSION awa_bgw VERSION '0.8'");
sql('up08',    "CREATE EXTENSION awa_bgw VERSION '0.6'");
sql('up08',    "ALTER EXTENSION awa_bgw UPDATE TO '0.7'");
sql('up08',    "SELECT awa.flip_ring_authority('awa')");
sql('up08',    "ALTER EXTENSION awa_bgw UPDATE TO '0.8'");
sql('fresh09', "CREATE EXTENSION awa_bgw VERSION '0.9'");
sql('up09',    "CREATE EXTENSION awa_bgw VERSION '0.8'");
sql('up09',    "SELECT awa.enqueue('q', 'k') FROM generate_series(1, 3)");
sql('up09',    "ALTER EXTENSION awa_bgw UPDATE TO '0.9'");
sql('up0609',  "CREATE EXTENSION awa_bgw VERSION '0.6'");
sql('up0609',  "SELECT awa.enqueue('q', 'k') FROM generate_series(1, 3)");
sql('up0609',  "ALTER EXTENSION awa_bgw UPDATE TO '0.7'");
sql('up0609',  "SELECT awa.flip_ring_authority('awa')");
sql('up0609',  "ALTER EXTENSION awa_bgw UPDATE TO '0.9'");
sql('fresh010', "CREATE EXTENSION awa_bgw VERSION '0.10'");
sql('up010',   "CREATE EXTENSION awa_bgw VERSION '0.9'");
sql('up010',   "SELECT awa.enqueue('q', 'k') FROM generate_series(1, 3)");
sql('up010',   "SELECT count(*) FROM awa.claim('q', 1)");
sql('up010',   "ALTER EXTENSION awa_bgw UPDATE TO '0.10'");
sql('up0810',  "CREATE EXTENSION awa_bgw VERSION '0.8'");
sql('up0810',  "SELECT awa.enqueue('q', 'k') FROM generate_series(1, 3)");
sql('up0810',  "ALTER EXTENSION awa_bgw UPDATE TO '0.10'");

my $fresh07 = schema_dump('fresh07');
ok(length($fresh07) > 100000 && $fresh07 =~ /CREATE FUNCTION awa\.flip_ring_authority/,
	'the binary-upgrade dump lists the extension\'s member objects');
isnt(schema_dump('old06'), $fresh07, 'a 0.6 catalog differs from a fresh 0.7 (control)');
is(schema_dump('up07'), $fresh07, '0.6 -> 0.7: the catalog equals a fresh 0.7');
is(config_tables('up07'), config_tables('fresh07'), '... and so do the tables pg_dump keeps');
is(sql('up07', 'SELECT authority FROM awa.ring_cursor_authority'), 'columns',
	'... but for the authority (columns) ...');
is(sql('fresh07', 'SELECT authority FROM awa.ring_cursor_authority'), 'ledger',
	'... where a fresh install starts in ledger');
my $fresh08 = schema_dump('fresh08');
isnt($fresh08, $fresh07, 'a fresh 0.8 catalog differs from 0.7 (control)');
is(schema_dump('up08'), $fresh08, '0.6 -> 0.7 -> flip -> 0.8: the catalog equals a fresh 0.8');
is(config_tables('up08'), config_tables('fresh08'), '... and so do the tables pg_dump keeps');
my $fresh09 = schema_dump('fresh09');
isnt($fresh09, $fresh08, 'a fresh 0.9 catalog differs from 0.8 (control)');
is(schema_dump('up09'), $fresh09, '0.8 -> 0.9 with queued jobs: the catalog equals a fresh 0.9');
is(config_tables('up09'), config_tables('fresh09'), '... and so do the tables pg_dump keeps');
is(schema_dump('up0609'), $fresh09,
	'0.6 -> 0.7 -> flip -> 0.8 -> 0.9 (one UPDATE from 0.7): the catalog equals a fresh 0.9');
my $fresh010 = schema_dump('fresh010');
isnt($fresh010, $fresh09, 'a fresh 0.10 catalog differs from 0.9 (control)');
is(schema_dump('up010'), $fresh010, '0.9 -> 0.10 with queued jobs: the catalog equals a fresh 0.10');
is(config_tables('up010'), config_tables('fresh010'), '... and so do the tables pg_dump keeps');
my $mark_q = q{SELECT awa.xid_space_state() || ' ' || count(*)
                 || ' ' || bool_and(system_identifier = awa_internal.cluster_system_identifier())
                 FROM awa.xid_space};
is(sql('fresh010', $mark_q), 'own 1 true', '... a fresh 0.10 records this cluster\'s mark');
is(sql('up010', $mark_q), 'own 1 true', '... and so does the upgrade to 0.10');
# the group key (tables/groups.sql): the entries and the receipt written under 0.9 read
# '' (no group); the job claimed under 0.9 completes, the others are claimed under 0.10
is(sql('up010', q{SELECT (SELECT count(*) FILTER (WHERE group_key = '') || '/' || count(*)
                           FROM awa.ready_entries)
                  || ' ' || (SELECT count(*) FILTER (WHERE group_key = '') || '/' || count(*)
                               FROM awa.lease_claims)}),
	'3/3 1/1', '... the entries and the receipt of 0.9 are of no group');
is(sql('up010', "SELECT awa.complete(job_id, run_lease) FROM awa.lease_claims"), 't',
	'... the attempt claimed under 0.9 completes under 0.10');
is(sql('up010', "SELECT count(*) FROM awa.claim('q', 10)"), '2',
	'... and the jobs queued under 0.9 are claimed under 0.10');
is(sql('up010', "SELECT count(*) || ' ' || count(*) FILTER (WHERE group_key = '') FROM awa.lease_claims"),
	'3 3', '... their receipts of no group');
is(sql('up0609', "SELECT count(*) FROM awa.claim('q', 10)"), '3',
	'... and the jobs queued under 0.6 are claimed under 0.9');
is(schema_dump('up0810'), $fresh010,
	'0.8 -> 0.9 -> 0.10 (one UPDATE from 0.8, with queued jobs): the catalog equals a fresh 0.10');
is(sql('up0810', "SELECT count(*) FROM awa.claim('q', 10)"), '3',
	'... and the jobs queued under 0.8 are claimed under 0.10');

# a DBA's grants on 0.9's smallint forms pass to 0.10's int forms, which replace them
sql('grants010', "CREATE EXTENSION awa_bgw VERSION '0.9'");
sql('grants010', q{CREATE ROLE t010_app LOGIN;
  GRANT USAGE ON SCHEMA awa TO t010_app;
  GRANT EXECUTE ON FUNCTION
      awa.enqueue(text, text, jsonb, smallint, timestamptz, int, text, interval, text[]),
      awa.register_queue(text, smallint) TO t010_app WITH GRANT OPTION});
# (and on an internal, and every function's OID, privileges and comment, to compare)
sql('grants010', q{GRANT EXECUTE ON FUNCTION awa.ring_status_rows() TO t010_app;
  CREATE TABLE public.t010_before AS
  SELECT p.oid, p.proname, p.proacl::text AS acl, obj_description(p.oid, 'pg_proc') AS comment
    FROM pg_proc p WHERE p.pronamespace = 'awa'::regnamespace});
sql('grants010', "ALTER EXTENSION awa_bgw UPDATE TO '0.10'");
is(sql('grants010', q{SELECT string_agg(p.oid::regprocedure || ' ' || a.is_grantable, ', '
                                        ORDER BY p.oid::regprocedure::text)
                         FROM pg_proc p, aclexplode(p.proacl) a
                        WHERE p.pronamespace = 'awa'::regnamespace
                          AND a.grantee = 't010_app'::regrole}),
	'awa.enqueue(text,text,jsonb,integer,timestamp with time zone,integer,text,interval,text[]) true, '
	  . 'awa.register_queue(text,integer) true',
	'0.9 -> 0.10: a role granted the smallint forms holds the int forms, grant option and all');
is(sql('grants010', q{SET ROLE t010_app;
  SELECT awa.enqueue('g', 'k', priority => 5) > 0 AND awa.enqueue('g', 'k', '{}', 4::smallint) > 0}),
	't', '... and enqueues with priority => 5, and with a smallint as before');
# the internals moved with ALTER FUNCTION ... SET SCHEMA: every function of 0.9 but the
# four retired smallint forms, leader_key_holders, window_claimables (dropped and
# created again: its result loses the entries' ready_generation,
# upgrade/0.9--0.10-claim.sql) and prune_locked (whose arguments changed: queue prune
# passes it the open attempts whose args it holds, tables/held_args.sql) keeps its OID,
# privileges (a DBA's grant on an internal too) and comment
is(sql('grants010', q{SELECT string_agg(b.proname, ' ' ORDER BY b.proname)
                        FROM public.t010_before b LEFT JOIN pg_proc p ON p.oid = b.oid
                       WHERE p.oid IS NULL}),
	'check_job enqueue leader_key_holders prune_locked register_queue schedule window_claimables',
	'0.9 -> 0.10: only the retired forms, leader_key_holders, window_claimables and prune_locked are gone');
is(sql('grants010', q{SELECT count(*) FILTER (WHERE p.pronamespace = 'awa_internal'::regnamespace)
                             || ' ' || count(*) FILTER (WHERE p.proacl::text IS DISTINCT FROM b.acl)
                        FROM public.t010_before b JOIN pg_proc p ON p.oid = b.oid}),
	'111 0', '... 111 of them are in awa_internal now, none with other privileges');
# (0.10 comments the four functions of awa that had none; no other comment changes)
is(sql('grants010', q{SELECT string_agg(b.proname || ':' || (b.comment IS NULL), ' '
                                        ORDER BY b.proname)
                        FROM public.t010_before b JOIN pg_proc p ON p.oid = b.oid
                       WHERE obj_description(p.oid, 'pg_proc') IS DISTINCT FROM b.comment}),
	'entry_unclaimed:true horizon_pins_at:true queue_stats_rows:true ring_slot_blocker:true',
	'... and the same comment, but on the four API functions 0.10 comments first');
is(sql('grants010', q{SELECT has_function_privilege('t010_app',
                                                    'awa_internal.ring_status_rows()', 'EXECUTE')}),
	't', '... and the DBA\'s grant on an internal is kept');

# ---- 2. the worker across the upgrade ------------------------------------------------
my $log_offset = -s $node->logfile;
sql('postgres', "CREATE EXTENSION awa_bgw VERSION '0.6'");
$node->poll_query_until('postgres',
	"SELECT state = 'needs_upgrade' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker does not say needs_upgrade on a 0.6 schema';
$node->wait_for_log(qr/ALTER EXTENSION awa_bgw UPDATE/, $log_offset);
pass('on 0.6 the worker idles in needs_upgrade and names ALTER EXTENSION ... UPDATE');
my $gen06 = sql('postgres', 'SELECT generation FROM awa.queue_ring_state');
sql('postgres', "SELECT awa.enqueue('u', 'k') FROM generate_series(1, 5)");

sql('postgres', "ALTER EXTENSION awa_bgw UPDATE TO '0.7'");
$node->poll_query_until('postgres',
	"SELECT state = 'leader' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not start after the upgrade';
pass('after ALTER EXTENSION ... UPDATE the worker leads by itself');
is($gen06, '0', 'nothing rotated the 0.6 schema');

# compat rotation: the columns advance, the slot rows are stamped, the ledger follows
$node->poll_query_until('postgres',
	q{SELECT s.generation >= 3
	     AND (SELECT max(generation) FROM awa.queue_ring_rotations) <= s.generation
	     AND EXISTS (SELECT 1 FROM awa.queue_ring_slots WHERE generation >= 3)
	    FROM awa.queue_ring_state s})
  or die 'no compat rotation';
pass('in columns authority the leader rotates by the compat path (columns, slot stamps)');
$node->poll_query_until('postgres',
	q{SELECT (SELECT max(generation) FROM awa.queue_ring_rotations) = s.generation
	    FROM awa.queue_ring_state s})
  or die 'the ledger does not follow the columns';
pass('the ledger follows the columns');

# auto_flip = off: the authority stays
$node->poll_query_until('postgres',
	"SELECT auto_flip = 'off' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'auto_flip off is not shown';
my $folds = status('folds_run');
$node->poll_query_until('postgres',
	"SELECT folds_run >= $folds + 15 FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the folds do not run';
is(sql('postgres', 'SELECT authority FROM awa.ring_cursor_authority'), 'columns',
	'with awa_bgw.auto_flip = off the authority stays columns (15 fold ticks)');

# a fresh pre-flip runtime holds the auto-flip back
sql('postgres',
	q{INSERT INTO awa.runtime_instances (instance_id, name, version, last_seen_at)
	  VALUES ('00000000-0000-0000-0000-0000000000aa', 'old maintenance', '0.6.2', now())});
$node->append_conf('postgresql.conf', "awa_bgw.auto_flip = on\n");
$node->reload;
$node->poll_query_until('postgres',
	"SELECT auto_flip LIKE 'waiting: 1 fresh runtime(s) not flip-aware%'
	   FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the blocker is not shown';
$folds = status('folds_run');
$node->poll_query_until('postgres',
	"SELECT folds_run >= $folds + 20 FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the folds do not run';
is(sql('postgres', 'SELECT authority FROM awa.ring_cursor_authority'), 'columns',
	'a fresh pre-flip runtime holds the auto-flip back (20 fold ticks, 4 s > the stable period)');
is(status('auto_flip_window_since IS NULL'), 't', 'no stable window while it is fresh');

# it goes: the window opens, and the leader flips once it has lasted the stable period
$log_offset = -s $node->logfile;
sql('postgres', q{DELETE FROM awa.runtime_instances WHERE name = 'old maintenance'});
$node->poll_query_until('postgres',
	"SELECT auto_flip = 'stable window open' AND auto_flip_window_since IS NOT NULL
	   FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the stable window did not open';
pass('with every fresh runtime flip-aware (the worker itself) the stable window opens');
$node->poll_query_until('postgres', 'SELECT authority = \'ledger\' FROM awa.ring_cursor_authority')
  or die 'no auto-flip';
$node->wait_for_log(qr/auto-flipped the ring cursor authority of database "postgres"/,
	$log_offset);
pass('the leader auto-flipped after the stable period, and logged it');
$node->poll_query_until('postgres',
	"SELECT auto_flip IN ('flipped', 'ledger') FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the flip is not shown';
is( sql('postgres',
		q{SELECT count(*) FROM awa.queue_ring_state WHERE current_slot = -1 AND generation = -1}),
	'1',
	'the columns are poisoned');
is( sql('postgres',
		q{SELECT count(*) = max(generation) - min(generation) + 1 FROM awa.queue_ring_rotations}),
	't',
	'the ledger has no gap');

# the jobs enqueued on 0.6 complete; the ledger rotates on (a ring turns while it holds
# rows and the next slot is free: the 0.6 jobs sat unclaimed in slot 0 until now, so
# the queue ring had stopped one wrap after them, as it must)
my $g = sql('postgres', 'SELECT max(generation) FROM awa.queue_ring_rotations');
is(sql('postgres', "SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('u', 10)"),
	'5', 'the jobs enqueued on 0.6 are claimed and completed after the flip');
is(sql('postgres', "SELECT available || '/' || completed FROM awa.queue_counts('u')"),
	'0/5', 'counts exact');
$node->poll_query_until('postgres',
	"SELECT max(generation) > $g FROM awa.queue_ring_rotations")
  or die 'no rotation after the flip';
pass('the leader rotates the ledger after the flip');

# the contract, and the worker goes on
sql('postgres', "ALTER EXTENSION awa_bgw UPDATE TO '0.8'");
$g = sql('postgres', 'SELECT max(generation) FROM awa.queue_ring_rotations');
sql('postgres', "SELECT awa.enqueue('v', 'k')");
$node->poll_query_until('postgres',
	"SELECT max(generation) > $g + 2 FROM awa.queue_ring_rotations")
  or die 'no rotation on 0.8';
is(status('state'), 'leader', 'on 0.8 the worker leads and rotates');
is(sql('postgres', "SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('v', 10)"),
	'1', 'a job enqueued on 0.8 is claimed and completed');
is(sql('postgres', "SELECT available || '/' || completed FROM awa.queue_counts('u')"),
	'0/5', 'the counts of the older queue are still exact');
is(status('errors'), '0', 'no maintenance step failed across the upgrade');

# ---- 3. pg_dump / pg_restore with jobs in every state --------------------------------
sql('postgres', 'CREATE DATABASE dumped');
sql('dumped', 'CREATE EXTENSION awa_bgw');
# Every lane of priority 0 first gets a position with a lower snapshot (a lane claimed
# from twice), so that the jobs enqueued below sit above it. A claim reads a ready child
# only if the child's txid bound reaches the lower snapshot (docs/storage.md A.12): in
# the restored and the copied databases no enqueue has raised any bound, and their jobs
# must be read all the same. (Each psql is a new backend: its shard, pid % 8, varies.)
my $lanes_placed = q{SELECT count(DISTINCT l.lane_id) FROM awa.queue_lanes l
                       JOIN awa.lease_claims c USING (lane_id)
                      WHERE l.queue = 'd' AND l.priority = 0 AND c.win_lo IS NOT NULL};
my $warmed = 0;
while (sql('dumped', $lanes_placed) ne '8')
{
	die 'the lanes of queue d did not all get a position' if ++$warmed > 3000;
	sql('dumped', q{SELECT awa.enqueue('d', 'warm')});
	sql('dumped', q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('d', 1)});
}
pass('every lane of queue d has a position with a lower snapshot');
sql('dumped',
	q{SELECT awa.enqueue('d', 'k', jsonb_build_object('n', g), (g % 3)::smallint)
	    FROM generate_series(1, 30) g});
sql('dumped', q{SELECT awa.enqueue('d', 'later', '{}', 0::smallint, now() + interval '1 hour')});
sql('dumped', q{SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('d', 5)});
my $running = sql('dumped',
	q{SELECT string_agg(job_id || ':' || run_lease, ' ') FROM awa.claim('d', 2)});
sql('dumped', q{SELECT awa.rotate('awa', 'queue'), awa.rotate('awa', 'claim')});
sql('dumped', q{SELECT awa.enqueue('d', 'k2') FROM generate_series(1, 3)});
my $counts_q = q{SELECT format('%s/%s/%s/%s/%s', available, scheduled, running, completed, failed)
                   FROM awa.queue_counts('d')};
my $counts = sql('dumped', $counts_q);
is($counts, "26/1/2/" . (5 + $warmed) . "/0",
	'the dumped database: available, scheduled, running, completed');
my $last_id = sql('dumped', 'SELECT last_value FROM awa.job_id_seq');

my $dumpfile = $node->basedir . '/dumped.dump';
command_ok([ 'pg_dump', '-Fc', '-f', $dumpfile, '-d', $node->connstr('dumped') ], 'pg_dump');
sql('postgres', 'CREATE DATABASE restored');
command_ok([ 'pg_restore', '-d', $node->connstr('restored'), $dumpfile ], 'pg_restore');
is(sql('restored', $counts_q), $counts, 'the restored database has the same counts');
is( sql('restored', 'SELECT * FROM awa.ring_cursor(\'queue\')'),
	sql('dumped',   'SELECT * FROM awa.ring_cursor(\'queue\')'),
	'... the same queue cursor');
# the same jobs, priority 0 first (FIFO holds within a lane; across the shards of a
# priority the order depends on the claiming session, so compare sets per priority)
my $claim_q = q{SELECT string_agg(format('%s:%s:%s', job_id, kind, priority), ' '
                                  ORDER BY priority, job_id)
                         || ' sorted=' || bool_and(prev IS NULL OR prev <= priority)
                  FROM (SELECT lag(priority) OVER (ORDER BY ord) AS prev, *
                          FROM awa.claim('d', 100) WITH ORDINALITY AS c(job_id, run_lease,
                               queue, kind, args, priority, attempt, max_attempts,
                               created_at, claimed_at, deadline_at, ord)) c};
# a database copied from it is read whole too (a new database: no enqueue of its own)
sql('postgres', 'CREATE DATABASE copied TEMPLATE dumped');
is(sql('copied', $counts_q), $counts, 'a database copied from it has the same counts');
my $copied_claimed = sql('copied', $claim_q);
my $claimed = sql('restored', $claim_q);
my $dumped_claimed = sql('dumped', $claim_q);
is($copied_claimed, $dumped_claimed, '... and hands out the same jobs');
like($claimed, qr/ sorted=true$/, 'the restored database hands out priority 0 first');
is($claimed, $dumped_claimed, '... and the same jobs as the dumped one');
for my $att (split / /, $running)
{
	my ($id, $lease) = split /:/, $att;
	is(sql('restored', "SELECT awa.complete($id, $lease)"), 't',
		"the attempt running at dump time ($id) completes in the restored database");
}
is(sql('restored', qq{SELECT nextval('awa.job_id_seq') > $last_id}), 't',
	'new job ids continue after the dumped ones');

$node->stop;
done_testing();
