
# Copyright: the awa_bgw authors.
#
# A role with only CONNECT against the running worker (docs/storage.md A.2). It holds
# every advisory key it can compute (the rings' serializers, the lane registry, the
# enqueue and claim keys of the first lanes, the attempt keys of the first jobs), as
# int8 keys and as (int4, int4) pairs: the worker goes on rotating and pruning every
# ring, carrying open receipts forward, promoting and rescuing, and the API goes on.
# Then it takes the maintenance leader key while the worker is paused: the worker
# stays follower, and maintenance_status names the holder; once it lets go, the
# worker leads again.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;
use Time::HiRes qw(time sleep);

my $LEADER_KEY = '4708303813012965710';

my $node = AwaNode->create('hostile', qq{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '200ms'
awa_bgw.job_heartbeat_timeout = '1h'
});
$node->start;
$node->create_extension_and_lead;

sub counter
{
	my ($what, $ring, $outcome) = @_;
	return status("coalesce(($what->'$ring'->>'$outcome')::bigint, 0)");
}

sql('CREATE ROLE outsider LOGIN');
my $outsider = $node->background_psql('postgres', on_error_stop => 1,
	extra_params => [ '-U', 'outsider' ]);

# every key it can compute, held at session level (tried: the worker's own locks are
# never advisory, but a try cannot hang the test if one were)
my $held = $outsider->query_safe(
	q{WITH names(n) AS (
        SELECT 'awa.queue_storage.ring_rotation:awa:' || r
          FROM unnest(ARRAY['queue', 'lease', 'claim']) r
        UNION ALL SELECT 'awa.lane_registry'
        UNION ALL SELECT 'awa.enqueue:' || i FROM generate_series(1, 64) i
        UNION ALL SELECT 'awa.claim:' || i FROM generate_series(1, 64) i
        UNION ALL SELECT 'awa.attempt:' || j || ':' || l
                    FROM generate_series(1, 300) j, generate_series(1, 3) l),
    keys(k) AS (SELECT hashtextextended(n, 0) FROM names)
    SELECT count(*) FILTER (WHERE pg_try_advisory_lock(k))
         + count(*) FILTER (WHERE pg_try_advisory_lock((k >> 32)::int,
                                 ((k & 4294967295) - ((k & 2147483648) << 1))::int))
      FROM keys});
is($held, 2 * (3 + 1 + 64 + 64 + 900), 'the outsider holds every key it computed');

# traffic under the held keys: jobs run to completion, one claimed with a deadline
# that passes (rescue), one deferred for a second (promotion), one left running
# across wraps (carry-forward of its open receipt)
my $before_rot = counter('rotations', 'claim', 'rotated');
my $before_prune = counter('prunes', 'claim', 'pruned');
my $before_qprune = counter('prunes', 'queue', 'pruned');
my @run_ids = split /\n/,
  sql(q{SELECT awa.enqueue('h', 'run', jsonb_build_object('i', i)) FROM generate_series(1, 50) i});
my $later = sql(q{SELECT awa.enqueue('h', 'later', run_at => now() + interval '1 second')});
my $long = sql(q{SELECT job_id || ',' || run_lease FROM awa.claim('h', 1, NULL)});
my ($long_id, $long_lease) = split /,/, $long;
my $late = sql(q{SELECT job_id FROM awa.claim('h', 1, interval '1 millisecond')});

# Claims of 'h', each job completed at once, until every job of @want has been
# completed (a job id, or "id/attempt"), for at most 120 s. A claim may give fewer
# jobs than are available: it skips a lane whose claim lock is busy once it has taken
# from another (docs/storage.md A.3), and the worker's claim-ring prune holds a lane's
# claim lock while it carries the lane's position forward, as it does on every wrap
# here (the 50 jobs' lane keeps its position while the queue ring holds its entries).
# A claim may also take the retry, if it is ready. Returns whether all came; the
# completions of each job ("attempt" . "true" or "false") are kept in %completed.
my %completed;

sub claim_until_completed
{
	my @want = @_;
	my $deadline = time() + 120;
	my $missing = sub {
		grep {
			my ($id, $attempt) = split m{/};
			!grep { !defined $attempt || $_ eq "${attempt}true" } @{ $completed{$id} // [] }
		} @want;
	};
	while ($missing->() && time() < $deadline)
	{
		my $rows = sql(q{SELECT job_id || ' ' || attempt || ' ' || awa.complete(job_id, run_lease)
		                   FROM awa.claim('h', 48)});
		for my $row (split /\n/, $rows)
		{
			my ($id, $attempt, $ok) = split / /, $row;
			push @{ $completed{$id} }, "$attempt$ok";
		}
		sleep 0.1 if $rows eq '';
	}
	return !$missing->();
}

# every job but the two claimed above (on a slow machine the deferred job can be
# promoted before those claims, and be one of them)
my @rest = grep { $_ != $long_id && $_ != $late } @run_ids, $later;
is(scalar(@rest), 49, 'the held and the rescued job are two of the 51');
ok(claim_until_completed(@rest), 'claims and completes go on');
is(join(',', map { join('+', @{ $completed{$_} }) } @rest),
	join(',', ('1true') x 49), 'each of them was claimed and completed once');

# the deferred job was claimed, so promoted: by the worker, as nothing else promotes
# (its first attempt: on a slow machine it is due before the claim with a 1 ms deadline
# above, which may take it, and then its rescued retry is a deferred row of attempt 2)
is(sql(q{SELECT count(*) FROM awa.deferred_jobs WHERE kind = 'later' AND attempt = 1}), '0',
	'the worker promotes a due deferred job');

# the attempt whose deadline passed: attempt 2, deferred by the backoff, then
# promoted (or already claimed and completed above)
if (!grep { $_ eq '2true' } @{ $completed{$late} // [] })
{
	$node->poll_query_until('postgres',
		"SELECT EXISTS (SELECT 1 FROM awa.deferred_jobs WHERE job_id = $late AND attempt = 2
		                   AND last_error LIKE 'rescued: deadline passed')
		     OR EXISTS (SELECT 1 FROM awa.ready_entries WHERE job_id = $late AND attempt = 2)")
	  or die 'the deadline-passed attempt was not rescued';
}
pass('the worker rescues an attempt whose deadline passed');

# the retry is run, so that no unclaimed entry keeps the queue ring's oldest slot from
# being pruned (on a starved machine it can land in the slot of the first jobs, before
# the ring has turned)
ok(claim_until_completed("$late/2"), 'the retry is claimed and completed');
is(join('+', @{ $completed{$late} }), '2true', 'once, as attempt 2');

$node->poll_query_until('postgres',
	"SELECT (rotations->'claim'->>'rotated')::bigint >= $before_rot + 20
	    AND (prunes->'claim'->>'pruned')::bigint >= $before_prune + 10
	    AND (prunes->'queue'->>'pruned')::bigint > $before_qprune
	   FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the rings did not turn and prune under the held keys';
pass('every ring rotates and prunes while the keys are held');
is(sql("SELECT awa.heartbeat($long_id, $long_lease) AND awa.complete($long_id, $long_lease)"),
	't', 'the long attempt was carried through the claim ring wraps and completes');

# the leader key: taken while the worker is paused, it keeps the worker follower
$node->append_conf('postgresql.conf', "awa_bgw.enabled = off\n");
$node->reload;
$node->poll_query_until('postgres',
	"SELECT state = 'disabled' FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not pause';
my $outsider_pid = $outsider->query_safe('SELECT pg_backend_pid()');
$node->poll_query_until('postgres',
	"SELECT NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
	                      AND classid::bigint = ${LEADER_KEY}::bigint >> 32
	                      AND objid::bigint = ${LEADER_KEY}::bigint & 4294967295)")
  or die 'the worker kept the leader key while paused';
is($outsider->query_safe("SELECT pg_try_advisory_lock($LEADER_KEY)"), 't',
	'the outsider takes the leader key');
$node->append_conf('postgresql.conf', "awa_bgw.enabled = on\n");
$node->reload;
$node->poll_query_until('postgres',
	"SELECT state = 'follower' AND leader_key_holder_pid = $outsider_pid
	        AND leader_key_holder LIKE 'pid $outsider_pid (role outsider, application %'
	   FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'maintenance_status did not name the foreign leader-key holder';
pass('the worker stays follower and maintenance_status names the holder');

$outsider->query_safe("SELECT pg_advisory_unlock($LEADER_KEY)");
$node->poll_query_until('postgres',
	"SELECT state = 'leader' AND leader_key_holder_pid IS NULL
	   FROM awa.maintenance_status WHERE database = 'postgres'")
  or die 'the worker did not lead again';
pass('once the key is free, the worker leads and no holder is shown');

$outsider->quit;
$node->stop;
done_testing();
