# Copyright: the awa_bgw authors.
#
# The worker's memory does not grow with its passes: what one pass of the loop allocates
# (step SQL, heartbeat names, results) lives in a context reset after the pass, and a
# step gives its caller's memory context back when its transaction ends. Measured as the
# bytes used in the worker's TopMemoryContext (pg_log_backend_memory_contexts), the least
# of ten samples after a warm-up and again after many more passes with a fast heartbeat; before the
# per-pass context, every heartbeat left its quoted name there.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FindBin;
use lib $FindBin::RealBin;
use AwaNode;
use Test::More;

my $node = AwaNode->create('memory', q{
awa_bgw.queue_rotate_interval = '100ms'
awa_bgw.lease_rotate_interval = '100ms'
awa_bgw.claim_rotate_interval = '100ms'
awa_bgw.leader_retry_interval = '100ms'
awa_bgw.runtime_heartbeat_interval = '100ms'
awa_bgw.promote_interval = '100ms'
awa_bgw.rescue_interval = '100ms'
awa_bgw.fold_interval = '100ms'
log_min_messages = 'log'
});
$node->start;
$node->create_extension_and_lead;

sub ticks { return sql("SELECT ticks FROM awa.maintenance_status WHERE database = 'postgres'"); }

# some traffic, so that every kind of step has work now and then
sub traffic
{
	sql("SELECT awa.enqueue('m', 'k') FROM generate_series(1, 20)");
	sql("SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('m', 20)");
}

# bytes used in the worker's TopMemoryContext, from the log lines the server writes: the
# least of ten samples. A sample taken inside one of the worker's transactions also
# counts what the transaction holds in TopMemoryContext for its time (its resource
# owners); one taken between two transactions does not, and a leak shows in every
# sample. (Which one a sample is cannot be read off the dump of every major: from 18 on,
# TopTransactionContext stays between transactions.)
sub top_used
{
	my $pid = sql("SELECT pid FROM awa.maintenance_status WHERE database = 'postgres'");
	my $least;
	for my $try (1 .. 10)
	{
		my $offset = -s $node->logfile;
		sql("SELECT pg_log_backend_memory_contexts($pid)");
		$node->wait_for_log(qr/Grand total: /, $offset);
		my $log = slurp_file($node->logfile, $offset);
		# (the root is level 0 before 18, level 1 from 18 on)
		$log =~ /level: [01]; TopMemoryContext: [^\n]* (\d+) used/
		  or die 'no TopMemoryContext line';
		$least = $1 if !defined $least || $1 < $least;
	}
	return $least;
}

# wait until the worker has made $n more passes of its loop, with some traffic
sub passes
{
	my ($n) = @_;
	my $target = ticks() + $n;
	traffic();
	$node->poll_query_until('postgres',
		"SELECT ticks >= $target FROM awa.maintenance_status WHERE database = 'postgres'")
	  or die "the worker did not make $n passes";
}

passes(100);    # warm-up: caches, prepared state, the first folds
my $before = top_used();
passes(300);
my $after = top_used();
note("TopMemoryContext used: $before bytes after warm-up, $after after 300 more passes");

# 300 passes with a heartbeat each leaked about 19 kB before (a quoted name each);
# caches live in their own contexts, so a steady worker stays within one block
cmp_ok($after - $before, '<', 8192,
	"the worker's TopMemoryContext does not grow with its passes ($before -> $after)");

$node->stop;
done_testing();
