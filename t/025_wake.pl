
# Copyright: the awa_bgw authors.
#
# awa.wake(): with every cadence at an hour (the fixed cadence), a job enqueued leaves
# the queue ring unturned; awa.wake() makes the worker of the database run its steps at
# once, so the ring rotates within the poll's deadline (far less than the hour). It
# returns false in a database no worker maintains, and PUBLIC may not call it.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('wake', q{
awa_bgw.queue_rotate_interval = '1h'
awa_bgw.lease_rotate_interval = '1h'
awa_bgw.claim_rotate_interval = '1h'
awa_bgw.promote_interval = '1h'
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.rotate_fill = 0
});
# (rotate_fill 0: the rings at the fixed cadence, where a wake's ring step rotates a
# ring that holds rows whatever its interval; turning by need, it rotates only a ring
# that is due, docs/operations.md)
$node->start;

my $queue_ticks = q{(SELECT sum(value::bigint) FROM jsonb_each_text(rotations->'queue')
                      WHERE key <> 'last_blocker')};

sql('CREATE EXTENSION awa_bgw');
wait_leader('the worker leads');
# the worker's first queue rotate step has run (it found the ring idle); the next one
# is an hour away
wait_until('the first queue ring tick ran',
	"SELECT $queue_ticks > 0 FROM awa.maintenance_status WHERE database = 'postgres'");
my $ticks0 = status($queue_ticks);

sql(q{SELECT awa.enqueue('w', 'k')});
my $gen0 = sql(q{SELECT generation FROM awa.ring_cursor('queue')});
is(sql('SELECT awa.wake()'), 't', 'awa.wake() signals the worker of this database');
wait_until('after awa.wake() the queue ring rotates past the new job at once',
	"SELECT generation > $gen0 FROM awa.ring_cursor('queue')");
cmp_ok(status($queue_ticks), '>', $ticks0, 'the worker ran a queue ring step it was not due');

# a second wake: the promotion step runs too (a deferred job made due is promoted)
sql(q{SELECT awa.enqueue('w', 'later', run_at => now() + interval '1 s')});
$node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM awa.deferred_jobs WHERE run_at > now()})
  or die 'the deferred job did not come due';
is(sql(q{SELECT available FROM awa.queue_counts('w')}), '1',
	'the due deferred job is not promoted before a wake (promote_interval 1h)');
is(sql('SELECT awa.wake()'), 't', 'awa.wake() again');
wait_until('after awa.wake() the due deferred job is promoted',
	q{SELECT available = 2 FROM awa.queue_counts('w')});

# no worker in another database: false; PUBLIC may not call it
sql('CREATE DATABASE other');
sql('CREATE EXTENSION awa_bgw', 'other');
is(sql('SELECT awa.wake()', 'other'), 'f', 'awa.wake() is false where no worker runs');
sql('CREATE ROLE plain LOGIN');
my ($ret, $out, $err) =
  $node->psql('postgres', 'SET ROLE plain; SELECT awa.wake()');
like($err, qr/permission denied for (schema awa|function wake)/,
	'a role without a grant may not call awa.wake()');
is( sql(q{SELECT has_function_privilege('public', 'awa.wake()', 'EXECUTE')}),
	'f', 'PUBLIC has no EXECUTE on awa.wake()');

$node->stop;
done_testing();
