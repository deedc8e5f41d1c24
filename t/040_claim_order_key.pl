# Copyright: the awa_bgw authors.
#
# The claim-order key across xid epochs (0.10, docs/proposals/claim_order_key.md,
# src/dataplane/claimkey.c). The ready children's index keys an entry's xid by its low
# 32 bits, so a read of a window finds rows of other epochs too, and the window's
# range of xids may span epochs: each read is cut at the epoch boundaries and keeps only
# the rows whose full txid is in the span. A cluster made to start in epoch 2
# (pg_resetwal -e 2) holds real entries of one lane (one session's enqueues) and
# entries written as superuser with chosen xids: in epoch 0 and 1, with the same low
# bits as a real one, and in epoch 3.
# - The lane's first window starts at xid 0 and so spans three epochs: its claim takes
#   the entries of epochs 0 and 1 and the real ones, in xid order, and not the one of
#   epoch 3 (never visible).
# - The next window starts at the first one's snapshot: of three entries written since
#   into the lane, one with the writer's own xid (F), one with F's low bits but an xid of
#   epoch 1 (G: visible in that snapshot, so behind the lane's position, as an old
#   entry written late is) and one of epoch 3, only F is taken; without the test of the
#   full txid G would be, since its key falls in the window's range and its xid is
#   visible in the window's end.

use strict;
use warnings;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('epochs', qq{
awa_bgw.queue_rotate_interval = '1h'
awa_bgw.claim_rotate_interval = '1h'
});
command_ok([ 'pg_resetwal', '-e', '2', '-D', $node->data_dir ],
	'the next xid epoch set to 2');
$node->start;
$node->create_extension_and_lead;
is(sql(q{SELECT pg_current_xact_id()::text::numeric / 4294967296 >= 2}), 't',
	'xids are in epoch 2');

# an entry like job p_like's, as superuser into its child: job id p_job, xid p_txid, a
# new lane_seq, args {"name": p_name}
sql(q{
CREATE FUNCTION public.craft(p_like bigint, p_job bigint, p_txid numeric, p_name text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_child text;
BEGIN
    SELECT format('awa.ready_entries_%s', ready_slot) INTO STRICT v_child
      FROM awa.ready_entries WHERE job_id = p_like;
    EXECUTE format('INSERT INTO %1$s SELECT (jsonb_populate_record(r, jsonb_build_object('
                   '''job_id'', $1, ''txid'', $2::text, ''lane_seq'', nextval(''awa.lane_seq''), '
                   '''args'', jsonb_build_object(''name'', $3)))).* FROM %1$s r WHERE r.job_id = $4',
                   v_child)
      USING p_job, p_txid, p_name, p_like;
END $$});

# one session: its enqueues go to one lane; each its own transaction
sub enqueue_names
{
	my @names = @_;
	my $out = sql(join('', map {
		"SELECT awa.enqueue('epochs', 'k', jsonb_build_object('name', '$_'));\n" } @names)
		. "SELECT string_agg(job_id::text || ':' || txid::text, ' ' ORDER BY job_id) FROM awa.ready_entries"
		. " WHERE queue = 'epochs' AND args ->> 'name' IN ('" . join("', '", @names) . "');");
	return (split /\n/, $out)[-1];    # the last statement's (the enqueues print their ids)
}
my %ids;
for (split / /, enqueue_names('A', 'B'))
{
	my ($id, $txid) = split /:/;
	$ids{ scalar(keys %ids) == 0 ? 'A' : 'B' } = [ $id, $txid ];
}
my ($a_id, $a_txid) = @{ $ids{A} };
is(sql(q{SELECT count(DISTINCT lane_id) FROM awa.ready_entries WHERE queue = 'epochs'}), '1',
	'the two jobs are in one lane');

# D in epoch 0, E in epoch 1 with A's low bits, Z in epoch 3 with A's low bits
sql("SELECT public.craft($a_id, 900000001, 5, 'D'),
            public.craft($a_id, 900000002, $a_txid - 4294967296, 'E'),
            public.craft($a_id, 900000003, $a_txid + 4294967296, 'Z')");
is(sql(q{SELECT count(DISTINCT awa_internal.xid_lo(txid)) FROM awa.ready_entries
          WHERE args ->> 'name' IN ('A', 'E', 'Z')}), '1', 'A, E and Z share their key');

# the lane's first window, [0, now): epochs 0, 1 and 2 in xid order; Z never visible
is(sql(q{SELECT string_agg(c.args ->> 'name', ',' ORDER BY c.ordinality)
           FROM awa.claim('epochs', 10) WITH ORDINALITY c}),
	'D,E,A,B', 'the first window takes the entries of epochs 0, 1 and 2 in xid order, not epoch 3');

# the next window, in A's lane: F enqueued (it commits after the first window's end)
# by a session whose shard is A's lane's (pid % 8: sessions are tried until one is),
# then G with F's low bits in epoch 1 (visible in the first window's end: behind the
# lane's position) and H in epoch 3
my $lane = sql("SELECT lane_id FROM awa.ready_entries WHERE job_id = $a_id");
my $f_id = '';
for (my $try = 0; $f_id eq '' && $try < 200; $try++)
{
	$f_id = sql(qq{SELECT awa.enqueue('epochs', 'k', '{"name": "F"}')
	                WHERE (SELECT min(lane_id) FROM awa.queue_lanes
	                        WHERE queue = 'epochs' AND shard = pg_backend_pid() % 8) = $lane});
}
isnt($f_id, '', "F enqueued into A's lane");
sql("SELECT public.craft($f_id, 900000005, txid::text::numeric - 4294967296, 'G'),
            public.craft($f_id, 900000006, txid::text::numeric + 4294967296, 'H')
       FROM awa.ready_entries WHERE job_id = $f_id");
is(sql(q{SELECT count(DISTINCT lane_id) || ' ' || count(DISTINCT awa_internal.xid_lo(txid))
           FROM awa.ready_entries WHERE args ->> 'name' IN ('A', 'F', 'G', 'H')}), '1 2',
	'F, G and H are in A\'s lane, and share their key');
is(sql(q{SELECT string_agg(args ->> 'name', ',' ORDER BY job_id) FROM awa.claim('epochs', 10)}),
	'F', 'the next window takes F alone: not the entry of epoch 1 that shares its key');
is(sql(q{SELECT string_agg(args ->> 'name', ',') FROM awa.claim('epochs', 10)}), '',
	'nothing more to take');

done_testing();
