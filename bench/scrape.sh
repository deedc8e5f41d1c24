#!/usr/bin/env bash
# What one scrape of awa.queue_stats costs with many queues (docs/monitoring.md "Cost").
#
#   bash bench/scrape.sh [queues] [queues-with-work] [jobs]   (default 10000 200 5000)
#
# Starts a throwaway PostgreSQL 15 (awa_bgw preloaded) on 127.0.0.1:${BENCH_PORT:-5601}
# in a temp dir, as user postgres when run as root; registers the queues in one
# transaction (awa.register_queue: every shard of priority 0), enqueues the jobs
# round-robin into the first queues-with-work queues, ANALYZEs, and times five scrapes
# (SELECT count(*) FROM awa.queue_stats) with psql's \timing. Needs make install.
set -euo pipefail

queues=${1:-10000}
busy=${2:-200}
jobs=${3:-5000}
port=${BENCH_PORT:-5601}
bin=${PGBIN:-/usr/lib/postgresql/15/bin}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ "$(id -u)" -eq 0 ]; then run_as=(runuser -u postgres --); else run_as=(); fi

work=$(mktemp -d /tmp/awa_scrape.XXXXXX)
[ "$(id -u)" -eq 0 ] && chown postgres "$work"
. "$here/cluster.sh"
cluster_init "$work" "$port" postgres <<CONF
awa_bgw.max_queues = $((queues > 10000 ? queues : 10000))
CONF
"${run_as[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w start >/dev/null
trap '"${run_as[@]}" "$bin/pg_ctl" -D "$work/data" -m fast stop >/dev/null; rm -rf "$work"' EXIT

psql=("${run_as[@]}" "$bin/psql" -X -q -At -h "$work" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1)
"${psql[@]}" -c 'CREATE EXTENSION awa_bgw'
"${psql[@]}" -c "SELECT count(awa.register_queue('q' || i)) FROM generate_series(1, $queues) i" >/dev/null
"${psql[@]}" -c "SELECT count(awa.enqueue('q' || (i % $busy + 1), 'k')) FROM generate_series(1, $jobs) i" >/dev/null
"${psql[@]}" -c 'ANALYZE'
echo "queues $queues, lanes $("${psql[@]}" -c 'SELECT count(*) FROM awa.queue_lanes'), jobs $jobs in $busy queues"
for i in 1 2 3 4 5; do
    "${psql[@]}" -c '\timing on' -c 'SELECT count(*) FROM awa.queue_stats' | sed -n 's/^Time: /scrape: /p'
done
