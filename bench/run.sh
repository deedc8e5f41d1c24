#!/usr/bin/env bash
# Throughput of awa_bgw beside a SKIP LOCKED baseline, in one run on one server.
#
#   bash bench/run.sh [seconds-per-cell] [clients]      (default 30 s, 4 clients)
#
# Starts a throwaway PostgreSQL (15 unless PGBIN=/usr/lib/postgresql/NN/bin names another;
# awa_bgw preloaded, synchronous_commit = on, the worker at its default 1 s cadences) on 127.0.0.1:${BENCH_PORT:-5498} in a temp dir,
# as user postgres when run as root. Cells, each on an empty queue:
#   enqueue        pgbench producers only                    jobs/s = tps x batch
#   claim+complete pgbench consumers draining a backlog      jobs/s = completions / s
#   end-to-end     producers and consumers at once            jobs/s = completions / s
# each unbatched (1 job per call) and batched (32 per call), for awa_bgw and for the
# baseline. Prints a markdown table. Then one more cell, at its own client count:
#   enqueue in an open transaction   ${BENCH_TX_CLIENTS:-32} clients, each transaction
#                  BEGIN; one enqueue; SELECT pg_sleep(0.01); COMMIT;
#                  (producer_tx.sql / skip_producer_tx.sql)   jobs/s = tps
# printed as a second table with the ratio awa_bgw / baseline.
# Then the wake cell (awa_bgw only): ${BENCH_WAKE_CLAIMERS:-4} claimers waiting
# (awa.claim with wait, wake_consumer.sql) while one producer enqueues at
# ${BENCH_WAKE_RATE:-100} jobs/s (wake_producer.sql, pgbench -R): the time from each
# enqueue's commit to the return of the claim that took it, p50 / p99 / max; and 100
# claimers waiting on a queue no one enqueues into (idle_waiter.sql, each call waiting
# ${BENCH_IDLE_WAIT:-10} s): the CPU their backends use (from /proc), and how many of
# them hold a snapshot (pg_stat_activity); beside it, the same for 100 clients that each
# sleep as long and then run SELECT 1 (idle_baseline.sql), the floor on this machine.
# BENCH_CELLS=tx runs only the open-transaction cell, main only the first table, wake
# only the wake cell (default all):
#   BENCH_CELLS=tx bash bench/run.sh 20
# BENCH_CELLS=e2e runs only the end-to-end cells (unbatched, batched 32, and the loop in
# two shapes, each beside the baseline's unbatched consumers: loop, awa_bgw's consumers
# complete each job and claim the next in one statement and one commit,
# awa.complete_and_claim in consumer_loop_stmt.sql; loop_call, the same step in one CALL
# of a PL/pgSQL procedure per job, consumer_loop_call.sql, as the baseline's consumer is
# one CALL of bench.skip_consume(1) per job),
# ${BENCH_ROUNDS:-5} rounds, the two systems in alternating order from round to round
# (awa_bgw first in odd rounds), each side after a CHECKPOINT on a fresh queue; prints
# every round and the median of the per-round ratios (how the targets are judged:
# one run's ratio varies more than the difference between the systems).
# BENCH_CELLS=wal measures WAL bytes per completed job, end-to-end (unbatched and batched
# 32) for both systems: each side after a CHECKPOINT on a fresh queue, pg_current_wal_lsn()
# before and after, divided by the jobs completed meanwhile (everything the server wrote
# counts: the worker's rotations and prunes, checkpoints' full-page images), then, per
# side, the kinds of WAL record it wrote, from pg_waldump --stats=record.
# BENCH_CELLS=cost measures what a job costs the server and what the idle worker costs
# (issue 33; not part of all, which it would make ~7 minutes longer):
#   at a fixed rate: producers (cost_producer.sql / skip_cost_producer.sql, one enqueue or
#   INSERT of a 100-byte payload) and consumers (consumer.sql / skip_consumer.sql: claim,
#   COMMIT, complete, COMMIT), each ${BENCH_COST_CLIENTS:-8} pgbench clients at -R 200 and
#   then -R 1000 jobs/s, ${BENCH_COST_SECS:-60} s per side, each side after a CHECKPOINT on
#   a fresh queue, ${BENCH_COST_ROUNDS:-1} round(s) (awa_bgw first at 200 and the baseline
#   first at 1000 in odd rounds, the other way in even ones; every round printed, then the
#   medians and the median of the rounds' ratios): server CPU per
#   completed job (utime + stime from /proc/PID/stat of the postmaster and every child,
#   backends, the awa_bgw worker and launcher, autovacuum, checkpointer, walwriter, ...,
#   plus the postmaster's cutime + cstime for the children that exit meanwhile; sampled
#   before and after without connecting) and, of it, the awa_bgw worker's, WAL bytes per completed job
#   (pg_current_wal_insert_lsn(), one short connection at each end), the WAL records that
#   name pg_class's file (pg_waldump) per hour, and the jobs completed per second;
#   With BENCH_COST_SLICES=N (default 1), each round runs the two sides of a rate on
#   fresh queues after one CHECKPOINT in N alternating windows of BENCH_COST_SECS / N s
#   each (the round's first side first), and sums each side's windows: the two systems
#   then meet the same moments of a noisy machine. The awa_bgw worker's CPU in the
#   baseline's windows is counted as awa_bgw's; the WAL of a window is its side's.
#   the idle minute: after the rate cells, a fresh queue, ANALYZE and VACUUM, the worker
#   leading and no client connected, ${BENCH_COST_IDLE_SECS:-60} s of server CPU and WAL
#   (sampled the same way); then the server restarted with shared_preload_libraries = ''
#   (the extension still created, its library not loaded), the same again; both scaled
#   to a minute, and the difference (what the extension adds per minute).
#   Then, per window, the record kinds that wrote the most, from pg_waldump --stats=record,
#   and the records naming pg_class by kind (rate windows) or the relations named by the
#   most records (idle windows): the rate windows of round 1, or of every round with
#   BENCH_COST_RECORDS=all.
#   The cost cell runs last and leaves the server without the library.
# BENCH_CELLS=limits (awa_bgw only; issue 34) measures what limits that do not bind cost
# a claim: claim+complete draining a backlog (as in the main table's cell, unbatched and
# batched 32), on a queue without limits and on one with max_running 1,000,000 and a
# rate of 1,000,000 per second (burst 1,000,000) set by awa.set_queue_limits, each
# side on a fresh queue after a CHECKPOINT, ${BENCH_ROUNDS:-5} rounds in alternating
# order; prints every round and the median of limited / unlimited.
# BENCH_CELLS=cpu measures the server CPU of a job's own path, without the waits of a
# rated load: per side, on a fresh queue after a CHECKPOINT, one pgbench client runs
# ${BENCH_CPU_JOBS:-5000} transactions of the producer (cost_producer.sql /
# skip_cost_producer.sql), then as many of the consumer (consumer.sql /
# skip_consumer.sql), each a window of server CPU as in the cost cell but for the
# awa_bgw worker's (whose fixed cost the cost cell measures; the connection's start
# included, the same for both); ${BENCH_ROUNDS:-5} rounds in alternating order,
# every round printed, then the medians of the per-job CPU and of the rounds' ratios.
# BENCH_AWA_VERSION=0.8 measures that extension version (default: the default version).
# BENCH_CONF='awa_bgw.rotate_fill = 1024' adds settings (lines) to the server's
# postgresql.conf.
# BENCH_PROTOCOL=prepared runs the clients of the main, e2e, wal and open-transaction
# cells with pgbench -M prepared (each statement parsed and planned once per
# connection, as drivers that prepare do) instead of the simple protocol (the
# default), for both systems alike.
# Needs pgbench (postgresql-NN) and make install.
set -euo pipefail

secs=${1:-30}
clients=${2:-4}
port=${BENCH_PORT:-5498}
cells=${BENCH_CELLS:-all}
create_ext="CREATE EXTENSION awa_bgw${BENCH_AWA_VERSION:+ VERSION '$BENCH_AWA_VERSION'}"
tx_clients=${BENCH_TX_CLIENTS:-32}
case "$cells" in all|main|tx|wake|e2e|wal|cost|limits|cpu) ;; *) echo "BENCH_CELLS must be all, main, tx, wake, e2e, wal, cost, limits or cpu" >&2; exit 2;; esac
rounds=${BENCH_ROUNDS:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${PGBIN:-/usr/lib/postgresql/15/bin}
if [ "$(id -u)" -eq 0 ]; then run_as=(runuser -u postgres --); else run_as=(); fi

work=$(mktemp -d /tmp/awa_bench.XXXXXX)
cp "$here"/*.sql "$work"/
[ "$(id -u)" -eq 0 ] && chown -R postgres "$work"
. "$here/cluster.sh"
cluster_init "$work" "$port" postgres <<CONF
shared_buffers = '256MB'
max_connections = 150
synchronous_commit = on
${BENCH_CONF:-}
CONF
"${run_as[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w start >/dev/null
trap '"${run_as[@]}" "$bin/pg_ctl" -D "$work/data" -m fast stop >/dev/null || true; rm -rf "$work"' EXIT

psql=("${run_as[@]}" env PGOPTIONS="-c client_min_messages=warning" "$bin/psql" -X -q -At -h "$work" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1)
"${psql[@]}" -c "$create_ext"
"${psql[@]}" -f "$work/schema.sql" >/dev/null

pgb() {   # pgbench for $secs seconds with the given script files; prints tps
          # (PGB_CLIENTS overrides $clients)
    "${run_as[@]}" "$bin/pgbench" -n -M "${BENCH_PROTOCOL:-simple}" -c "${PGB_CLIENTS:-$clients}" -j 2 -T "$secs" -h "$work" -p "$port" \
        -U postgres "$@" postgres 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}
reset_queues() {   # a fresh install of both queues (the worker rides through it; the
                   # drop can deadlock with a worker step, so it is tried again)
    local try
    for try in 1 2 3; do
        "${psql[@]}" -c 'DROP SCHEMA IF EXISTS bench CASCADE' -c 'DROP EXTENSION IF EXISTS awa_bgw' \
                     -c 'DROP SCHEMA IF EXISTS awa CASCADE' -c "$create_ext" >/dev/null \
            && break
        [ "$try" = 3 ] && return 1
        sleep 1
    done
    "${psql[@]}" -f "$work/schema.sql" >/dev/null
}
awa_done()  { "${psql[@]}" -c "SELECT completed FROM awa.queue_counts('bench')"; }
skip_done() { "${psql[@]}" -c "SELECT pg_stat_force_next_flush()" >/dev/null
              "${psql[@]}" -c "SELECT n_tup_del FROM pg_stat_user_tables WHERE relid = 'bench.skip_jobs'::regclass"; }
rate() { awk -v a="$1" -v b="$2" -v s="$secs" 'BEGIN { printf "%.0f", (b - a) / s }'; }
mul()  { awk -v t="$1" -v m="$2" 'BEGIN { printf "%.0f", t * m }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
tck=$(getconf CLK_TCK)
server_ticks() {   # CPU ticks the server has used: the postmaster's own and its reaped
                   # children's (cutime, cstime: the backends and autovacuum workers that
                   # have exited), plus every live child's (utime, stime). A child reaped
                   # while its siblings are read would be counted twice or not at all: the
                   # read is repeated until the postmaster's reaped total stayed the same
    local pm own0 own1 kids
    pm=$(head -1 "$work/data/postmaster.pid")
    own1=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$pm/stat")
    while :; do
        own0=$own1
        kids=$( { cat /proc/[0-9]*/stat 2>/dev/null || true; } |
                awk -v pm="$pm" '{ sub(/^.*\) /, "") } $2 == pm { t += $12 + $13 } END { print t + 0 }')
        own1=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$pm/stat")
        [ "$own0" = "$own1" ] && break
    done
    echo $((own1 + kids))
}
worker_ticks() {   # CPU ticks of the live awa_bgw workers (the worker of this database;
                   # one that exits meanwhile is in the reaped total only)
    local f p t=0
    for f in /proc/[0-9]*/cmdline; do
        { IFS= read -r -d '' p <"$f"; } 2>/dev/null || continue
        case $p in "postgres: awa_bgw worker"*) ;; *) continue;; esac
        p=${f%/cmdline}
        t=$((t + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}
median() {   # of its arguments (numbers; "-" sorts first)
    printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }';
}

if [ "$cells" = all ] || [ "$cells" = main ]; then
echo "| cell | batch | awa_bgw jobs/s | SKIP LOCKED jobs/s |"
echo "|---|---|---|---|"
for batch in 1 32; do
    sfx=$([ "$batch" = 32 ] && echo _batch || echo)

    reset_queues
    a=$(mul "$(pgb -f "$work/producer$sfx.sql")" "$batch")
    b=$(mul "$(pgb -f "$work/skip_producer$sfx.sql")" "$batch")
    echo "| enqueue | $batch | $a | $b |"

    # claim+complete drains a backlog, made by $clients concurrent producers (so it is
    # spread over the lanes, as concurrent application sessions spread it); pgbench
    # picks one of the two producer scripts per transaction, so 400 transactions per
    # client and second make ~200 batches of 32 per client and second of the cell for
    # each system: neither drains it before the cell ends below ~6,400 x clients jobs/s
    # (with 100 the batched cell of both systems was capped at 1,600 x clients jobs/s)
    reset_queues
    "${run_as[@]}" "$bin/pgbench" -n -c "$clients" -j 2 -t $((secs * 400)) -h "$work" -p "$port" -U postgres \
        -f "$work/producer_batch.sql" -f "$work/skip_producer_batch.sql" postgres >/dev/null 2>&1
    # the baseline's claim is planned on its table's statistics: give it fresh ones for
    # the backlog, as autovacuum would in time (awa_bgw's claim is not planned)
    "${psql[@]}" -c 'ANALYZE bench.skip_jobs'
    s0=$(awa_done); pgb -f "$work/consumer$sfx.sql" >/dev/null; s1=$(awa_done)
    t0=$(skip_done); pgb -f "$work/skip_consumer$sfx.sql" >/dev/null; t1=$(skip_done)
    echo "| claim+complete | $batch | $(rate "$s0" "$s1") | $(rate "$t0" "$t1") |"

    reset_queues
    s0=$(awa_done); pgb -f "$work/producer$sfx.sql@1" -f "$work/consumer$sfx.sql@1" >/dev/null; s1=$(awa_done)
    t0=$(skip_done); pgb -f "$work/skip_producer$sfx.sql@1" -f "$work/skip_consumer$sfx.sql@1" >/dev/null; t1=$(skip_done)
    echo "| end-to-end | $batch | $(rate "$s0" "$s1") | $(rate "$t0" "$t1") |"
done
echo
echo "($secs s per cell, $clients clients, $(nproc) cores, synchronous_commit = on; $(date -u +%F))"
fi

if [ "$cells" = e2e ]; then
e2e_side() {   # e2e_side awa|skip sfx: completions/s of one side on a fresh queue
    local p c n0 n1 done_fn
    if [ "$1" = awa ]; then p=producer$2; c=consumer$2; done_fn=awa_done
    else p=skip_producer$2; c=skip_consumer$2; done_fn=skip_done; fi
    # the loops: awa_bgw's consumers complete and claim in one commit per job, in one
    # statement (loop: consumer_loop_stmt.sql) or in one CALL of a PL/pgSQL procedure
    # (loop_call: consumer_loop_call.sql, bench.consume_next, the shape of the baseline's
    # CALL bench.skip_consume(1)), the job held kept in pgbench variables from one
    # transaction to the next; the baseline's consumers and both sides' producers as in
    # the unbatched cell
    case $2 in
        _loop|_loop_call)
            p=${p%$2}
            if [ "$1" = skip ]; then c=skip_consumer
            elif [ "$2" = _loop ]; then c=consumer_loop_stmt; else c=consumer_loop_call; fi;;
    esac
    reset_queues
    "${psql[@]}" -c CHECKPOINT >/dev/null
    n0=$($done_fn); pgb -D j=0 -D l=0 -f "$work/$p.sql@1" -f "$work/$c.sql@1" >/dev/null; n1=$($done_fn)
    rate "$n0" "$n1"
}
echo "| round | batch | order | awa_bgw jobs/s | SKIP LOCKED jobs/s | awa_bgw / baseline |"
echo "|---|---|---|---|---|---|"
ratios1=(); ratios32=(); ratiosl=(); ratiosc=()
for r in $(seq 1 "$rounds"); do
    for batch in 1 32 loop loop_call; do
        case $batch in 32) sfx=_batch;; loop*) sfx=_$batch;; *) sfx=;; esac
        if [ $((r % 2)) = 1 ]; then
            a=$(e2e_side awa "$sfx"); b=$(e2e_side skip "$sfx"); order="awa_bgw first"
        else
            b=$(e2e_side skip "$sfx"); a=$(e2e_side awa "$sfx"); order="baseline first"
        fi
        q=$(ratio "$a" "$b")
        case $batch in 1) ratios1+=("$q");; 32) ratios32+=("$q");; loop) ratiosl+=("$q");; *) ratiosc+=("$q");; esac
        echo "| $r | $batch | $order | $a | $b | $q |"
    done
done
echo
echo "median awa_bgw / baseline: end-to-end unbatched $(median "${ratios1[@]}"), batched 32 $(median "${ratios32[@]}"), loop $(median "${ratiosl[@]}"), loop_call $(median "${ratiosc[@]}")"
echo "($secs s per side, $clients clients, $rounds rounds, $(nproc) cores, synchronous_commit = on; $(date -u +%F))"
fi

if [ "$cells" = limits ]; then
drain_side() {   # drain_side none|limited sfx: completions/s draining a backlog
    local n0 n1
    reset_queues
    # the backlog, by $clients concurrent producers (spread over the lanes): 5,000 jobs
    # per second of the cell unbatched, 50,000 batched (more than either drains)
    local per=$([ "$2" = _batch ] && echo 50000 || echo 5000)
    "${run_as[@]}" "$bin/pgbench" -n -c "$clients" -j 2 -t $((secs * per / 32 / clients + 1)) -h "$work" -p "$port" \
        -U postgres -f "$work/producer_batch.sql" postgres >/dev/null 2>&1
    if [ "$1" = limited ]; then
        "${psql[@]}" -c "SELECT awa.set_queue_limits('bench', max_running => 1000000,
                             rate => 1000000, rate_per => '1 second', burst => 1000000)" >/dev/null
    fi
    "${psql[@]}" -c CHECKPOINT >/dev/null
    n0=$(awa_done); pgb -f "$work/consumer$2.sql" >/dev/null; n1=$(awa_done)
    rate "$n0" "$n1"
}
echo "| round | batch | order | no limit jobs/s | limits that do not bind jobs/s | limited / none |"
echo "|---|---|---|---|---|---|"
lr1=(); lr32=()
for r in $(seq 1 "$rounds"); do
    for batch in 1 32; do
        sfx=$([ "$batch" = 32 ] && echo _batch || echo)
        if [ $((r % 2)) = 1 ]; then
            a=$(drain_side none "$sfx"); b=$(drain_side limited "$sfx"); order="none first"
        else
            b=$(drain_side limited "$sfx"); a=$(drain_side none "$sfx"); order="limited first"
        fi
        q=$(ratio "$b" "$a")
        if [ "$batch" = 1 ]; then lr1+=("$q"); else lr32+=("$q"); fi
        echo "| $r | $batch | $order | $a | $b | $q |"
    done
done
echo
echo "median limited / none: claim+complete unbatched $(median "${lr1[@]}"), batched 32 $(median "${lr32[@]}")"
echo "($secs s per side, $clients clients, $rounds rounds, $(nproc) cores, synchronous_commit = on; $(date -u +%F))"
fi

if [ "$cells" = wal ]; then
# the WAL of a run is kept until its records are counted (below)
"${psql[@]}" -c "ALTER SYSTEM SET wal_keep_size = '8GB'" -c 'SELECT pg_reload_conf()' >/dev/null
spans=()
wal_side() {   # wal_side awa|skip sfx: WAL bytes per completed job of one side, in
               # res; the side's name, WAL range and jobs are appended to spans
    local p c n0 n1 l0 l1 done_fn
    if [ "$1" = awa ]; then p=producer$2; c=consumer$2; done_fn=awa_done
    else p=skip_producer$2; c=skip_consumer$2; done_fn=skip_done; fi
    reset_queues
    "${psql[@]}" -c CHECKPOINT >/dev/null
    n0=$($done_fn); l0=$("${psql[@]}" -c 'SELECT pg_current_wal_lsn()')
    pgb -f "$work/$p.sql@1" -f "$work/$c.sql@1" >/dev/null
    l1=$("${psql[@]}" -c 'SELECT pg_current_wal_lsn()'); n1=$($done_fn)
    spans+=("$1$2 $l0 $l1 $((n1 - n0))")
    res=$("${psql[@]}" -c "SELECT round(pg_wal_lsn_diff('$l1', '$l0') / nullif($n1 - $n0, 0))
                                || ' B (' || $n1 - $n0 || ' jobs)'")
}
echo "| batch | awa_bgw WAL per job | SKIP LOCKED WAL per job |"
echo "|---|---|---|"
for batch in 1 32; do
    sfx=$([ "$batch" = 32 ] && echo _batch || echo)
    wal_side awa "$sfx"; a=$res
    wal_side skip "$sfx"; b=$res
    echo "| $batch | $a | $b |"
done
echo
echo "($secs s per side, $clients clients, end-to-end, $(nproc) cores, synchronous_commit = on; $(date -u +%F))"
# where each side's bytes go: pg_waldump --stats=record over exactly its run, per
# completed job, the record kinds that write at least 1 B per job (records, bytes
# without the 8-byte alignment between records, which the totals above include)
for span in "${spans[@]}"; do
    read -r side l0 l1 n <<<"$span"
    echo
    echo "$side, $n jobs: record kind | records per job | bytes per job"
    "${run_as[@]}" "$bin/pg_waldump" -p "$work/data/pg_wal" -s "$l0" -e "$l1" --stats=record 2>/dev/null |
        awk -v n="$n" '{ gsub(/\([^)]*\)/, "") }   # columns: kind, N, record, FPI, combined
                       $1 ~ /\// && $5 / n >= 1 { printf "%s | %.2f | %.0f\n", $1, $2 / n, $5 / n }' |
        sort -t'|' -k3 -rn
done
fi

if [ "$cells" = all ] || [ "$cells" = tx ]; then
    # enqueue in an open transaction: each pgbench transaction is BEGIN; one enqueue
    # (awa.enqueue into queue bench_tx / a plain INSERT into bench.skip_jobs);
    # pg_sleep(0.01); COMMIT, as an application that enqueues inside its own business
    # transaction; jobs/s = tps (one job per transaction)
    if [ "$cells" = all ]; then echo; fi
    reset_queues
    "${psql[@]}" -c "SELECT awa.register_queue('bench_tx')" >/dev/null
    a=$(PGB_CLIENTS=$tx_clients pgb -f "$work/producer_tx.sql")
    b=$(PGB_CLIENTS=$tx_clients pgb -f "$work/skip_producer_tx.sql")
    echo "| cell | clients | awa_bgw jobs/s | SKIP LOCKED jobs/s | awa_bgw / baseline |"
    echo "|---|---|---|---|---|"
    echo "| enqueue in an open transaction | $tx_clients | $(mul "$a" 1) | $(mul "$b" 1) | $(ratio "$a" "$b") |"
    echo
    echo "($secs s per side, $tx_clients clients, $(nproc) cores, synchronous_commit = on; $(date -u +%F))"
fi

if [ "$cells" = all ] || [ "$cells" = wake ]; then
    # wake: claimers that wait, and one producer at a fixed rate
    if [ "$cells" = all ]; then echo; fi
    reset_queues
    "${psql[@]}" -c "SELECT awa.register_queue('wake'), awa.register_queue('idle')" >/dev/null
    wake_claimers=${BENCH_WAKE_CLAIMERS:-4}
    "${run_as[@]}" "$bin/pgbench" -n -c "$wake_claimers" -j 2 -T "$((secs + 2))" -h "$work" -p "$port" \
        -U postgres -f "$work/wake_consumer.sql" postgres >/dev/null 2>&1 &
    waiters=$!
    sleep 1
    "${run_as[@]}" "$bin/pgbench" -n -c 1 -R "${BENCH_WAKE_RATE:-100}" -T "$secs" -h "$work" -p "$port" \
        -U postgres -f "$work/wake_producer.sql" postgres >/dev/null 2>&1
    wait "$waiters"
    echo "| wake-up latency, ms | jobs | p50 | p99 | max | p99 from before the commit |"
    echo "|---|---|---|---|---|---|"
    "${psql[@]}" -F ' | ' -c "
        SELECT '| after the commit', count(*),
               round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
               round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2),
               round(max(ms)::numeric, 2),
               round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms_before)::numeric, 2) || ' |'
          FROM (SELECT extract(epoch FROM g.got_at - s.after_commit) * 1000 AS ms,
                       extract(epoch FROM g.got_at - s.before_commit) * 1000 AS ms_before
                  FROM bench.wake_sent s JOIN bench.wake_got g USING (job_id)) x"
    echo
    echo "(${BENCH_WAKE_RATE:-100} jobs/s offered for $secs s, $wake_claimers waiting claimers; a negative"
    echo " time after the commit: the claim returned before the producer's next statement ran)"

    # idle: 100 claimers waiting for a queue that gets nothing, for $secs s, each waiting
    # ${BENCH_IDLE_WAIT:-10} s per call; then the floor beside it: 100 clients each
    # sleeping as long in pgbench and then running SELECT 1 (idle_baseline.sql), the
    # cost of a backend that wakes for one statement that often. CPU time of the
    # backends from /proc/PID/schedstat (ns; a tick count is too coarse for bursts of a
    # few ms).
    idle_wait=${BENCH_IDLE_WAIT:-10}
    idle_cpu() {    # script pattern -> "backends cpu% most-holding-a-snapshot"
        local script=$1 pattern=$2 pids held=0 c0 c1 t0 t1 h
        "${run_as[@]}" "$bin/pgbench" -n -c 100 -j 2 -T "$((secs + 4))" -h "$work" -p "$port" \
            -U postgres -D idle_wait="$idle_wait" -f "$work/$script" postgres >/dev/null 2>&1 &
        local bench=$!
        sleep 2
        pids=$("${psql[@]}" -c "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity
                                  WHERE application_name = 'pgbench' AND query LIKE '$pattern'")
        ns() { local t=0 p; for p in $pids; do
                   t=$((t + $(awk '{ print $1 }' "/proc/$p/schedstat" 2>/dev/null || echo 0))); done
               echo "$t"; }
        c0=$(ns); t0=$(date +%s.%N)
        for _ in $(seq "$secs"); do
            h=$("${psql[@]}" -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'
                                   AND query LIKE '$pattern' AND backend_xmin IS NOT NULL")
            [ "$h" -gt "$held" ] && held=$h
            sleep 1
        done
        c1=$(ns); t1=$(date +%s.%N)
        wait "$bench"
        echo "$(echo "$pids" | wc -w) $(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" \
            'BEGIN { printf "%.2f", (b - a) / 1e9 / (e - s) * 100 }') $held"
    }
    read -r n_w cpu_w held_w < <(idle_cpu idle_waiter.sql '%wait =>%')
    read -r n_b cpu_b held_b < <(idle_cpu idle_baseline.sql '%')
    echo
    echo "| 100 idle clients, $secs s | backends | CPU, % of one core | most holding a snapshot at once |"
    echo "|---|---|---|---|"
    echo "| waiting claimers (awa.claim, wait => $idle_wait s) | $n_w | $cpu_w | $held_w |"
    echo "| baseline: \\sleep $idle_wait s, then SELECT 1 | $n_b | $cpu_b | $held_b |"
    echo
    echo "(each calls again when its call returns; $(nproc) cores; $(date -u +%F))"
fi

if [ "$cells" = cpu ]; then
cpu_jobs=${BENCH_CPU_JOBS:-5000}
ticks_of() {   # ticks_of SCRIPT: server CPU ms, but the awa_bgw worker's, of one client
               # running it cpu_jobs times
    local c0 c1 k0 k1
    c0=$(server_ticks); k0=$(worker_ticks)
    "${run_as[@]}" "$bin/pgbench" -n -c 1 -t "$cpu_jobs" -h "$work" -p "$port" -U postgres \
        -f "$work/$1.sql" postgres >/dev/null 2>&1 || { echo "pgbench $1 failed" >&2; return 1; }
    k1=$(worker_ticks); c1=$(server_ticks)
    echo $(((c1 - c0 - (k1 - k0)) * 1000 / tck))
}
cpu_side() {   # cpu_side awa|skip: "producer-ms consumer-ms" on a fresh queue
    local pre=
    [ "$1" = skip ] && pre=skip_
    reset_queues
    "${psql[@]}" -c VACUUM -c CHECKPOINT >/dev/null
    echo "$(ticks_of "${pre}cost_producer") $(ticks_of "${pre}consumer")"
}
per() { awk -v a="$1" -v n="$cpu_jobs" 'BEGIN { printf "%.3f", a / n }'; }
declare -a rp rc rt ap ac sp sc
echo "| round | first | awa_bgw producer ms/job | consumer | SKIP LOCKED producer | consumer | ratio producer | consumer | job |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 1 ]; then a=$(cpu_side awa); b=$(cpu_side skip); first=awa
    else b=$(cpu_side skip); a=$(cpu_side awa); first=skip; fi
    read -r a1 a2 <<<"$a"; read -r b1 b2 <<<"$b"
    ap+=("$(per "$a1")"); ac+=("$(per "$a2")"); sp+=("$(per "$b1")"); sc+=("$(per "$b2")")
    rp+=("$(ratio "$a1" "$b1")"); rc+=("$(ratio "$a2" "$b2")"); rt+=("$(ratio $((a1 + a2)) $((b1 + b2)))")
    echo "| $r | $first | ${ap[-1]} | ${ac[-1]} | ${sp[-1]} | ${sc[-1]} | ${rp[-1]} | ${rc[-1]} | ${rt[-1]} |"
done
echo "| median | | $(median "${ap[@]}") | $(median "${ac[@]}") | $(median "${sp[@]}") | $(median "${sc[@]}") | $(median "${rp[@]}") | $(median "${rc[@]}") | $(median "${rt[@]}") |"
echo
echo "($cpu_jobs jobs per side and round, one client, $rounds rounds, $(nproc) cores, synchronous_commit = on; $(date -u +%F))"
fi

if [ "$cells" = cost ]; then
# what a job costs the server, at a fixed rate, and what the idle worker costs (issue 33)
cost_secs=${BENCH_COST_SECS:-60}
idle_secs=${BENCH_COST_IDLE_SECS:-60}
cost_clients=${BENCH_COST_CLIENTS:-8}
cost_rounds=${BENCH_COST_ROUNDS:-1}
cost_slices=${BENCH_COST_SLICES:-1}
rated_secs=$((cost_secs / cost_slices))
[ "$rated_secs" -ge 5 ] || { echo "BENCH_COST_SECS / BENCH_COST_SLICES must be at least 5 s" >&2; exit 2; }
# the WAL of every window is kept until its records are counted (at the end)
"${psql[@]}" -c "ALTER SYSTEM SET wal_keep_size = '8GB'" -c 'SELECT pg_reload_conf()' >/dev/null
# pg_class's file in this database: the records naming it are its writes
dboid=$("${psql[@]}" -c "SELECT oid FROM pg_database WHERE datname = current_database()")
pgclass_rel=$("${psql[@]}" -c "SELECT 'rel ' || coalesce(nullif(c.reltablespace, 0), d.dattablespace) || '/'
                                        || d.oid || '/' || pg_relation_filenode('pg_class') || ' '
                                   FROM pg_class c, pg_database d
                                  WHERE c.oid = 'pg_class'::regclass AND d.datname = current_database()")
dump() { { "${run_as[@]}" "$bin/pg_waldump" -p "$work/data/pg_wal" -s "$1" -e "$2" 2>/dev/null || true; }; }
kinds() {   # the records on stdin (pg_waldump lines) by kind: "Heap/UPDATE 12, ..."
    awk '{ k = $2 "/" $0; sub(/\/.*desc: /, "/", k); sub(/ .*/, "", k); n[k]++ }
         END { for (k in n) print n[k], k }' | sort -rn | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 } END { print "" }'
}
relations() {   # the relations the records on stdin name, the 8 named by the most
                # records: "records tablespace/database/filenode"
    awk '{ split("", seen); s = $0
           while (match(s, /rel [0-9]+\/[0-9]+\/[0-9]+/)) {
               r = substr(s, RSTART + 4, RLENGTH - 4); s = substr(s, RSTART + RLENGTH)
               if (!(r in seen)) { seen[r] = 1; n[r]++ } } }
         END { for (r in n) print n[r], r }' | sort -rn | awk 'NR <= 8'
}
relname() {   # tablespace/database/filenode -> the relation's name, if it is in this database
    local spc db fn
    IFS=/ read -r spc db fn <<<"$1"
    if [ "$db" = "$dboid" ] || [ "$db" = 0 ]; then
        "${psql[@]}" -c "SELECT coalesce(pg_filenode_relation(CASE WHEN $spc = 1663 THEN 0 ELSE $spc END,
                                                             $fn)::regclass::text, '$1')"
    else echo "$1"; fi
}
insert_lsn() { "${psql[@]}" -c 'SELECT pg_current_wal_insert_lsn()'; }
now() { date +%s.%N; }
cost_spans=()
declare -A span_jobs span_secs   # of each window's span: the jobs completed, its seconds
window() {   # window NAME CMD...: runs CMD between the samples (CPU from /proc, then one
             # short connection for the LSN; at the end the same in reverse order);
             # sets w_ms (server CPU), w_worker_ms (of it, the awa_bgw worker's),
             # w_wal (bytes), w_secs (elapsed) and appends the window's WAL range to
             # cost_spans
    local name=$1 c0 c1 k0 k1 l0 l1 t0 t1
    shift
    t0=$(now); c0=$(server_ticks); k0=$(worker_ticks); l0=$(insert_lsn)
    "$@"
    l1=$(insert_lsn); k1=$(worker_ticks); c1=$(server_ticks); t1=$(now)
    w_ms=$(((c1 - c0) * 1000 / tck))
    w_worker_ms=$(((k1 - k0) * 1000 / tck))
    w_wal=$("${psql[@]}" -c "SELECT pg_wal_lsn_diff('$l1', '$l0')::bigint")
    w_secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    cost_spans+=("$name $l0 $l1")
}
rated() {   # rated PRODUCER CONSUMER RATE: both pgbench, -R RATE each, for rated_secs s
    local prod
    "${run_as[@]}" "$bin/pgbench" -n -c "$cost_clients" -j 2 -R "$3" -T "$rated_secs" -h "$work" -p "$port" \
        -U postgres -f "$work/$1.sql" postgres >"$work/producer.out" 2>&1 &
    prod=$!
    "${run_as[@]}" "$bin/pgbench" -n -c "$cost_clients" -j 2 -R "$3" -T "$rated_secs" -h "$work" -p "$port" \
        -U postgres -f "$work/$2.sql" postgres >"$work/consumer.out" 2>&1 \
        || { cat "$work/consumer.out" >&2; return 1; }
    wait "$prod" || { cat "$work/producer.out" >&2; return 1; }
}
side_window() {   # side_window awa|skip RATE NAME: one window of the side's rated load,
                  # named NAME; sets sw_jobs to the jobs it completed
    local p c n0 n1 done_fn
    if [ "$1" = awa ]; then p=cost_producer; c=consumer; done_fn=awa_done
    else p=skip_cost_producer; c=skip_consumer; done_fn=skip_rows_done; fi
    n0=$($done_fn)
    window "$3" rated "$p" "$c" "$2"
    n1=$($done_fn)
    sw_jobs=$((n1 - n0))
    span_jobs["$3"]=$sw_jobs; span_secs["$3"]=$w_secs
}
cost_side() {   # cost_side awa|skip RATE [SPAN-SUFFIX]: one side on a fresh queue after
                # a CHECKPOINT; sets res to "CPU-ms WAL-bytes jobs-completed window-secs
                # worker-CPU-ms"
    reset_queues
    # the catalogs the reset churned are vacuumed now, not by autovacuum in the window
    "${psql[@]}" -c VACUUM -c CHECKPOINT >/dev/null
    side_window "$1" "$2" "$1@$2${3:-}"
    res="$w_ms $w_wal $sw_jobs $w_secs $w_worker_ms"
}
cost_pair() {   # cost_pair RATE SPAN-SUFFIX FIRST SECOND: both sides at once on fresh
                # queues after one CHECKPOINT, in cost_slices windows each of
                # cost_secs / cost_slices s, alternating (FIRST, SECOND, FIRST, ...);
                # sets res_awa and res_skip as cost_side sets res. The awa_bgw worker's
                # CPU in the baseline's windows is moved to awa_bgw's; the WAL of a
                # window is its side's (the worker's in the baseline's windows included)
    local i side name
    local -A ms wal n secs wk
    reset_queues
    "${psql[@]}" -c VACUUM -c CHECKPOINT >/dev/null
    for side in awa skip; do ms[$side]=0; wal[$side]=0; n[$side]=0; secs[$side]=0; wk[$side]=0; done
    for i in $(seq "$cost_slices"); do
        for side in "$3" "$4"; do
            # the first window of a side is named as cost_side names it (its records
            # are listed); the others carry /sI
            name="$side@$1$2"; [ "$i" = 1 ] || name="$side@$1${2:-/r1}s$i"
            side_window "$side" "$1" "$name"
            ms[$side]=$((ms[$side] + w_ms)); wal[$side]=$((wal[$side] + w_wal))
            n[$side]=$((n[$side] + sw_jobs)); wk[$side]=$((wk[$side] + w_worker_ms))
            secs[$side]=$(awk -v a="${secs[$side]}" -v b="$w_secs" 'BEGIN { printf "%.1f", a + b }')
        done
    done
    res_awa="$((ms[awa] + wk[skip])) ${wal[awa]} ${n[awa]} ${secs[awa]} $((wk[awa] + wk[skip]))"
    res_skip="$((ms[skip] - wk[skip])) ${wal[skip]} ${n[skip]} ${secs[skip]} 0"
}
skip_rows_done() {   # the baseline's completions, exactly: on a fresh table, the rows
                     # inserted (its id sequence) less the rows left
    "${psql[@]}" -c "SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END
                               FROM bench.skip_jobs_id_seq) - count(*) FROM bench.skip_jobs"; }
per_job() { awk -v a="$1" -v n="$2" -v f="$3" 'BEGIN { if (n > 0) printf f, a / n; else print "-" }'; }
leader() { "${psql[@]}" -c "SELECT state FROM awa.maintenance_status WHERE database = current_database()"; }
wait_leader() {   # polls the worker's state until it leads (at most 60 s)
    for _ in $(seq 300); do
        [ "$(leader)" = leader ] && return 0
        sleep 0.2
    done
    echo "the awa_bgw worker did not lead within 60 s (state: $(leader))" >&2
    return 1
}
others() { "${psql[@]}" -c "SELECT count(*) FROM pg_stat_activity
                             WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"; }

# per round, the two systems in alternating order: in odd rounds awa_bgw first at 200 and
# the baseline first at 1000, in even rounds the other way; the records and pg_class
# writes are read from round 1's windows (later rounds' spans are named NAME/rR)
declare -A cpu wal jobs secs_of wcpu
declare -a cpu_ratios200 cpu_ratios1000 wal_ratios200 wal_ratios1000
echo "| round | rate | first | awa_bgw CPU ms/job (worker) | SKIP LOCKED | ratio | awa_bgw WAL B/job | SKIP LOCKED | ratio |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in $(seq "$cost_rounds"); do
    for rate_ in 200 1000; do
        if { [ "$rate_" = 200 ] && [ $((r % 2)) = 1 ]; } || { [ "$rate_" = 1000 ] && [ $((r % 2)) = 0 ]; }; then
            order=(awa skip)
        else
            order=(skip awa)
        fi
        sfx=$([ "$r" = 1 ] || echo "/r$r")
        [ "$cost_slices" = 1 ] || cost_pair "$rate_" "$sfx" "${order[@]}"
        for side in "${order[@]}"; do
            if [ "$cost_slices" = 1 ]; then cost_side "$side" "$rate_" "$sfx"
            elif [ "$side" = awa ]; then res=$res_awa
            else res=$res_skip; fi
            read -r ms b n s wk <<<"$res"
            k=$side$rate_$r
            cpu[$k]=$(per_job "$ms" "$n" %.3f); wal[$k]=$(per_job "$b" "$n" %.0f)
            jobs[$k]=$n; secs_of[$k]=$s; wcpu[$k]=$(per_job "$wk" "$n" %.3f)
        done
        a=awa$rate_$r; b=skip$rate_$r
        qc=$(ratio "${cpu[$a]}" "${cpu[$b]}"); qw=$(ratio "${wal[$a]}" "${wal[$b]}")
        eval "cpu_ratios$rate_+=(\"\$qc\"); wal_ratios$rate_+=(\"\$qw\")"
        echo "| $r | $rate_ | ${order[0]} | ${cpu[$a]} (${wcpu[$a]}) | ${cpu[$b]} | $qc | ${wal[$a]} | ${wal[$b]} | $qw |"
    done
done
echo

# the idle minute: a fresh queue, the catalogs vacuumed and analysed after the rate
# cells (so that autovacuum finds little to do in either window), the worker leading,
# no client connected; then the same after a restart without the library
reset_queues
# ANALYZE first, pg_statistic itself last, then VACUUM: the dead pg_statistic versions
# the ANALYZEs leave are vacuumed now, not by autovacuum in the first idle window
"${psql[@]}" -c ANALYZE -c 'ANALYZE pg_statistic' -c VACUUM >/dev/null
wait_leader
"${psql[@]}" -c CHECKPOINT >/dev/null
[ "$(others)" = 0 ] || echo "note: $(others) other client(s) connected at the idle minute's start" >&2
window idle_with sleep "$idle_secs"
idle_with_ms=$w_ms; idle_with_wal=$w_wal; idle_with_secs=$w_secs
[ "$(leader)" = leader ] || echo "note: the worker did not lead at the idle minute's end" >&2
# (in postgresql.conf, whose last line wins: ALTER SYSTEM would write '""', a list of
# one library with an empty name, and the server would not start)
echo "shared_preload_libraries = ''" >> "$work/data/postgresql.conf"
"${run_as[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -m fast -w restart >/dev/null
"${psql[@]}" -c CHECKPOINT >/dev/null
[ "$("${psql[@]}" -c 'SHOW shared_preload_libraries')" = "" ] || { echo "the library is still preloaded" >&2; exit 1; }
[ "$(others)" = 0 ] || echo "note: $(others) other client(s) connected at the idle minute's start" >&2
window idle_without sleep "$idle_secs"
idle_without_ms=$w_ms; idle_without_wal=$w_wal; idle_without_secs=$w_secs
"${psql[@]}" -c CHECKPOINT >/dev/null

# the records of every window (the CHECKPOINT above wrote out the last one's)
declare -A pgclass pgclass_kinds
for span in "${cost_spans[@]}"; do
    read -r name l0 l1 <<<"$span"
    case $name in */r*) continue;; esac
    if [ "$l0" = "$l1" ]; then pgclass[$name]=0; continue; fi
    pgclass[$name]=$(dump "$l0" "$l1" | grep -cF "$pgclass_rel" || true)
    pgclass_kinds[$name]=$(dump "$l0" "$l1" | { grep -F "$pgclass_rel" || true; } | kinds)
done
per_hour() { awk -v n="${pgclass[$1]}" -v s="$2" 'BEGIN { printf "%.0f", n * 3600 / s }'; }
per_min() { awk -v v="$1" -v s="$2" 'BEGIN { printf "%.0f", v * 60 / s }'; }

of_rounds() {   # of_rounds ARRAY SIDE RATE: the median over the rounds of ARRAY[SIDE RATE r]
    local -n arr=$1
    local r v=()
    for r in $(seq "$cost_rounds"); do v+=("${arr[$2$3$r]}"); done
    median "${v[@]}"
}
med_ratio() { local -n rs=$1; median "${rs[@]}"; }
echo "| cost (median of $cost_rounds round(s); ratio: the median of the rounds' ratios) | awa_bgw | SKIP LOCKED | awa_bgw / baseline |"
echo "|---|---|---|---|"
for rate_ in 200 1000; do
    echo "| server CPU per job at $rate_ jobs/s (ms) | $(of_rounds cpu awa "$rate_") | $(of_rounds cpu skip "$rate_") | $(med_ratio "cpu_ratios$rate_") |"
    echo "| of it, the awa_bgw worker's (ms) | $(of_rounds wcpu awa "$rate_") | | |"
    echo "| WAL per job at $rate_ jobs/s (B) | $(of_rounds wal awa "$rate_") | $(of_rounds wal skip "$rate_") | $(med_ratio "wal_ratios$rate_") |"
done
# (not with slices: a window of one side then holds the other's background work, the
# awa_bgw worker's rotations in the baseline's windows, autovacuum in awa_bgw's)
for rate_ in 200 1000; do
    [ "$cost_slices" = 1 ] || break
    a=$(per_hour "awa@$rate_" "${span_secs[awa@$rate_]}"); b=$(per_hour "skip@$rate_" "${span_secs[skip@$rate_]}")
    echo "| pg_class WAL records per hour at $rate_ jobs/s (round 1) | $a | $b | $(ratio "$a" "$b") |"
done
for rate_ in 200 1000; do
    a=$(per_job "$(of_rounds jobs awa "$rate_")" "$cost_secs" %.0f); b=$(per_job "$(of_rounds jobs skip "$rate_")" "$cost_secs" %.0f)
    echo "| jobs completed per s, $rate_ offered | $a | $b | $(ratio "$a" "$b") |"
done
echo "| **idle, per minute** | **with the library** | **without** | **added** |"
a=$(per_min "$idle_with_ms" "$idle_with_secs"); b=$(per_min "$idle_without_ms" "$idle_without_secs")
echo "| idle minute: CPU ms | $a | $b | $((a - b)) |"
a=$(per_min "$idle_with_wal" "$idle_with_secs"); b=$(per_min "$idle_without_wal" "$idle_without_secs")
echo "| idle minute: WAL B | $a | $b | $((a - b)) |"
echo
echo "($cost_secs s per side, producers and consumers $cost_clients clients each at pgbench -R, 100-byte"
echo " payloads; idle windows of $idle_with_secs s and $idle_without_secs s; CPU in ticks of $((1000 / tck)) ms;"
echo " $(nproc) cores, synchronous_commit = on; $(date -u +%F))"
# where each window's bytes go: pg_waldump --stats=record over exactly its range, the
# eight record kinds that wrote the most (per job in the rate windows, per window idle)
for span in "${cost_spans[@]}"; do
    read -r name l0 l1 <<<"$span"
    case $name in
        idle*) n=1; what="the whole window";;
        */r*) [ "${BENCH_COST_RECORDS:-}" = all ] || continue
              base=${name%/r*}; side=${base%@*}; rate_=${base#*@}
              n=${span_jobs[$name]}; what="per job, ${n} jobs";;
        *) n=${span_jobs[$name]}; what="per job, ${n} jobs";;
    esac
    [ "$n" -gt 0 ] || continue
    echo
    if [ "$l0" = "$l1" ]; then echo "$name: no WAL"; continue; fi
    echo "$name ($what): record kind | records | record B | FPI B | total B"
    { "${run_as[@]}" "$bin/pg_waldump" -p "$work/data/pg_wal" -s "$l0" -e "$l1" --stats=record 2>/dev/null || true; } |
        awk -v n="$n" '{ gsub(/\([^)]*\)/, "") }   # columns: kind, N, record, FPI, combined
                       $1 ~ /\// { printf "%s | %.2f | %.0f | %.0f | %.0f\n", $1, $2 / n, $3 / n, $4 / n, $5 / n }' |
        sort -t'|' -k5 -rn | awk 'NR <= 8'
    case $name in
        idle*)   # which relations were written, and by what kinds of record
            echo "$name, the relations named by the most records: relation | records | kinds"
            dump "$l0" "$l1" | relations | while read -r k rel; do
                echo "$(relname "$rel") | $k | $(dump "$l0" "$l1" | { grep -F "rel $rel " || true; } | kinds)"
            done;;
        */r*) ;;
        *) echo "$name, the records naming pg_class: ${pgclass_kinds[$name]:-none}";;
    esac
done
fi
