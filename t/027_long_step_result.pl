
# Copyright: the awa_bgw authors.
#
# A step's text result longer than the status field it is shown in is not cut
# silently: the worker reads it whole (by column name, as text) and the status keeps
# its start, cut at a character boundary and ended with "...". A pin holder of 300
# three-byte characters shows as its first 80 and the mark (a cut by bytes would land
# inside a character); a step's error of 600 characters shows in last_error as its
# start and the mark, while the server log has the whole message.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('long', q{
awa_bgw.fold_interval = '200ms'
awa_bgw.promote_interval = '200ms'
awa_bgw.leader_retry_interval = '200ms'
}, extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;

sql('CREATE EXTENSION awa_bgw');
wait_leader('the worker leads');
is(sql('SELECT getdatabaseencoding()'), 'UTF8', 'the database is UTF8');

#---------------------------------------------------------------------------
# a pin holder longer than the status field (255 bytes): 11 + 900 bytes

sql(q{CREATE OR REPLACE FUNCTION awa_internal.horizon_pin_holder(p_min_age interval) RETURNS text
      LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
      AS $$ SELECT 'backend 0: ' || repeat(chr(8364), 300) || ' END' $$});
my $stood = status('folds_stood_down');
wait_until('the folds stand down under the long pin',
	"SELECT folds_stood_down > $stood AND pin_holder IS NOT NULL
       FROM awa.maintenance_status WHERE database = 'postgres'");
is(status(q{pin_holder = 'backend 0: ' || repeat(chr(8364), 80) || '...'}), 't',
	'pin_holder keeps the start of the long pin, cut between characters, and marks the cut')
  or diag('pin_holder: ' . status('pin_holder'));
is(status('errors'), '0', 'no step failed on the long result');

#---------------------------------------------------------------------------
# a step's error longer than last_error: the log has all of it

sql(q{CREATE OR REPLACE FUNCTION awa.promote_deferred(p_schema text, OUT promoted bigint)
      LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
      AS $$ BEGIN RAISE EXCEPTION '%', 'long: ' || repeat('y', 600) || ' END'; END $$});
wait_until('the promotion fails with the long error',
	"SELECT last_error LIKE 'promotion of deferred jobs: long: %'
       FROM awa.maintenance_status WHERE database = 'postgres'");
is(status(q{last_error = 'promotion of deferred jobs: long: ' || repeat('y', 218) || '...'}),
	't', 'last_error keeps the start of the long error and marks the cut')
  or diag('last_error: ' . status('last_error'));
ok(count_in_log(qr/awa_bgw: promotion of deferred jobs failed: long: y{600} END/) > 0,
	'the log has the whole error');

$node->stop;
done_testing();
