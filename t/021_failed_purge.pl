# The failed_jobs retention keeps up with a flood of failures: a backlog of 30,000
# failed jobs past awa_bgw.failed_retention is purged in batches of
# awa_bgw.fold_batch_size rows, each its own transaction, several per pass of the
# worker and the next pass at once while rows remain (not one batch per
# fold_interval); rows younger than the retention are kept; a pin on the horizon
# stands the purge down; the batch is found through the failed_at index.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

# fold_interval 10 s: one batch of 1000 per interval (the old way) would need five
# minutes for the backlog, longer than the test's deadline
my $node = AwaNode->create('failed_purge', q{
max_worker_processes = 16
awa_bgw.leader_retry_interval = '200ms'
awa_bgw.fold_interval = '10s'
awa_bgw.fold_batch_size = 1000
awa_bgw.failed_retention = '1h'
awa_bgw.horizon_pin_min_age = '1s'
});
$node->start;

my $counts = q{SELECT count(*) FILTER (WHERE failed_at < now() - interval '1h') || '/'
                   || count(*) FILTER (WHERE failed_at >= now() - interval '1h')
                 FROM awa.failed_jobs};

sql('CREATE EXTENSION awa_bgw');
wait_leader('the worker leads');

#---------------------------------------------------------------------------
# 1. A pin on the horizon: idle in transaction with a write xid, older than 1 s.

my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
my $holder_pid = $holder->query_safe('SELECT pg_backend_pid()');
$holder->query_safe('SELECT pg_current_xact_id()');

# 30,000 failures two hours old (past the retention) and 500 fresh ones
sql(q{INSERT INTO awa.failed_jobs (job_id, queue, priority, kind, args, attempts,
                                   max_attempts, error, created_at, failed_at)
      SELECT g, 'q', 2, 'k', '{}', 3, 3, 'boom', now() - interval '3 hours',
             now() - interval '2 hours' - g * interval '1 ms'
        FROM generate_series(1, 30000) g;
      INSERT INTO awa.failed_jobs (job_id, queue, priority, kind, args, attempts,
                                   max_attempts, error, created_at, failed_at)
      SELECT g, 'q', 2, 'k', '{}', 3, 3, 'boom', now(), now()
        FROM generate_series(30001, 30500) g;
      ANALYZE awa.failed_jobs});

my $stood = status('folds_stood_down');
wait_until('the folds stand down for the pin',
	"SELECT folds_stood_down >= $stood + 2 AND pin_holder LIKE 'backend $holder_pid:%'
	   FROM awa.maintenance_status WHERE database = 'postgres'", 't');
is(sql($counts), '30000/500', 'nothing was purged under the pin');
is(status('failed_jobs_purged'), '0', 'no purge counted under the pin');

# the batch is found through the failed_at index: the plan of the function's DELETE
# (run by hand, ungated, and rolled back)
my $explain_from = -s $node->logfile;
sql(q{LOAD 'auto_explain';
      SET auto_explain.log_min_duration = 0;
      SET auto_explain.log_nested_statements = on;
      BEGIN;
      SELECT purged FROM awa_internal.purge_failed_jobs('awa');
      ROLLBACK;});
ok( $node->wait_for_log(
		qr/Query Text: DELETE FROM awa\.failed_jobs.*\n(?:.*\n)*?.*Index Scan using failed_jobs_failed_at_idx on failed_jobs x/,
		$explain_from),
	'the purge reads its batch through the failed_at index');
is(sql($counts), '30000/500', 'the hand-run batch was rolled back');

#---------------------------------------------------------------------------
# 2. The pin ends: the backlog is purged in batches, the fresh rows stay.

$holder->query_safe('COMMIT');
$holder->quit;
wait_until('the backlog past the retention is purged',
	q{SELECT count(*) FROM awa.failed_jobs WHERE failed_at < now() - interval '1h'}, '0');
is(sql($counts), '0/500', 'the rows younger than the retention are kept');
is(status('failed_jobs_purged'), '30000', 'the worker counts every purged row');
cmp_ok(status('purge_batches'), '>=', 30,
	'in at least 30 transactions of at most fold_batch_size (1000) rows');
is(status('errors'), '0', 'no step failed');

$node->stop;
done_testing();
