
# Copyright: the awa_bgw authors.
#
# Logical replication of the extension's tables is not supported (docs/storage.md
# §A.17): a subscriber applies another cluster's rows, transaction ids and all, while its
# own worker turns the same rings. A database where a table of schema awa is subscribed
# refuses, with 0A000 and a hint, every enqueue and claim (also in a session that had
# used the queue before the subscription: the subscription drops its verdict) and the
# worker's steps; once the table leaves the subscription, the queue works again. The
# publisher is not hurt.

use strict;
use warnings;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode qw();
use Test::More;

my $pub = AwaNode->create('publisher', '', allows_streaming => 'logical');
$pub->start;
$pub->create_extension_and_lead;
$pub->run_sql(q{SELECT awa.register_queue('replicated')});
$pub->run_sql('CREATE PUBLICATION awa_pub FOR TABLE awa.queue_lanes');

my $sub = AwaNode->create('subscriber', q{
awa_bgw.leader_retry_interval = '200ms'
});
$sub->start;
$sub->create_extension_and_lead;
# a session that used the queue before the subscription
my $session = $sub->background_psql('postgres', on_error_stop => 0);
like($session->query_safe(q{SELECT awa.enqueue('local', 'before')}), qr/^\d+$/,
	'the subscriber enqueues before it subscribes');

my $pub_conn = $pub->connstr('postgres');
$pub_conn =~ s/'/''/g;
$sub->run_sql("CREATE SUBSCRIPTION awa_sub CONNECTION '$pub_conn' PUBLICATION awa_pub");
$sub->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_subscription_rel WHERE srrelid = 'awa.queue_lanes'::regclass})
  or die 'the subscription did not take the table';

my ($ret, $out, $err) = $sub->psql('postgres', q{SELECT awa.enqueue('local', 'after')});
isnt($ret, 0, 'an enqueue on the subscriber is refused');
like($err, qr/table awa\.queue_lanes of awa_bgw is replicated into this database by a logical subscription/,
	'... naming the subscribed table');
like($err, qr/HINT:  Drop the extension's tables from the subscription/, '... with a hint');
($ret, $out, $err) = $sub->psql('postgres', q{SELECT * FROM awa.claim('local', 1)},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/0A000/, 'a claim is refused with 0A000 (feature_not_supported)');
# the session that had seen the space as its own sees the subscription too
$session->{stderr} = '';
my $r = $session->query(q{SELECT awa.enqueue('local', 'again')});
like($session->{stderr}, qr/logical subscription/,
	'a session that used the queue before is refused as well');
ok($sub->poll_query_until('postgres',
		q{SELECT last_error LIKE '%logical subscription%' FROM awa.maintenance_status
		   WHERE database = 'postgres'}),
	"the worker's check is refused and says why");

$sub->run_sql('DROP SUBSCRIPTION awa_sub');
like($sub->run_sql(q{SELECT awa.enqueue('local', 'after the subscription')}), qr/^\d+$/,
	'once the table leaves the subscription, the queue works again');
is($sub->run_sql(q{SELECT string_agg(kind, ',' ORDER BY job_id) FROM awa.claim('local', 10)}),
	'before,after the subscription', '... and its jobs are claimed');
like($pub->run_sql(q{SELECT awa.enqueue('replicated', 'k')}), qr/^\d+$/,
	'the publisher is not hurt');
$session->quit;
$sub->stop;
$pub->stop;
done_testing();
