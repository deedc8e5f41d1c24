#!/usr/bin/env bash
# The pinned-horizon benchmark: awa_bgw, a well-tuned SKIP LOCKED table queue and PgQ
# (with the real pgqd), one after another on one throwaway server, at the same offered
# load, through phases clean -> pinned -> recovery for each kind of pin.
#
#   bash bench/pinned.sh [smoke|short|long]          (default smoke)
#   make bench-pinned [PROFILE=short]
#
# Profiles (seconds; each overridable by the environment variable named):
#                 BENCH_WARMUP BENCH_CLEAN BENCH_PIN BENCH_RECOVERY
#   smoke              3           8         10         4       (~2.5 min for 3 systems)
#   short             10         120        600       120       (~79 min)
#   long              30         300       3600       600       (~7.3 h)
# Per system: warmup, clean, then for each pin kind of BENCH_PINS (default "rr xid"):
# pin_<kind>, recovery_<kind>. Pin kinds, held by a psql session in the measured database:
#   rr   BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1;   then idle
#   xid  BEGIN; SELECT txid_current();                       then idle
# Other settings: BENCH_SYSTEMS (default "awa skip pgq"), BENCH_RATE (800 jobs/s offered
# by BENCH_PRODUCERS=4 pgbench clients, -R), BENCH_CONSUMERS (4; PgQ has one consumer),
# BENCH_BACKOFF_MS (5: an empty claim's back-off), BENCH_SAMPLE (5 s), BENCH_PORT (5497),
# BENCH_OUT (results dir, default bench/results/pinned-<UTC stamp>), PGBIN (the
# PostgreSQL bin dir, default /usr/lib/postgresql/15/bin; 17 and 18 too, with pgq of
# the same major), BENCH_PGQ_ROTATION (PgQ's
# rotation_period, default a third of the pin, at least 10 s), BENCH_PGQ_MAINT (pgqd's
# maint_period, default 30 s, at most 120), BENCH_CONF (lines added to the server's
# postgresql.conf, e.g. 'awa_bgw.rotate_fill = 1024'), BENCH_AWA_SQL (SQL run after
# awa_bgw's setup, e.g. "SELECT awa.set_queue_limits('pinned', 64, 2000)": limits on
# the measured queue).
#
# Run as root (the server then runs as user postgres; missing packages are installed
# with apt-get) or as a user who can initdb. bench/README.md explains the output.
set -euo pipefail

profile=${1:-smoke}
case "$profile" in
    smoke) d_warm=3  d_clean=8   d_pin=10   d_rec=4   ;;
    short) d_warm=10 d_clean=120 d_pin=600  d_rec=120 ;;
    long)  d_warm=30 d_clean=300 d_pin=3600 d_rec=600 ;;
    *) echo "usage: bash bench/pinned.sh [smoke|short|long]" >&2; exit 2 ;;
esac
warmup=${BENCH_WARMUP:-$d_warm}
clean=${BENCH_CLEAN:-$d_clean}
pin=${BENCH_PIN:-$d_pin}
recovery=${BENCH_RECOVERY:-$d_rec}
pins=${BENCH_PINS:-rr xid}
systems=${BENCH_SYSTEMS:-awa skip pgq}
rate=${BENCH_RATE:-800}
producers=${BENCH_PRODUCERS:-4}
consumers=${BENCH_CONSUMERS:-4}
backoff=${BENCH_BACKOFF_MS:-5}
step=${BENCH_SAMPLE:-5}
port=${BENCH_PORT:-5497}
bin=${PGBIN:-/usr/lib/postgresql/15/bin}
rotation=${BENCH_PGQ_ROTATION:-$(( pin / 3 > 10 ? pin / 3 : 10 ))}
pgq_maint=${BENCH_PGQ_MAINT:-30}
for k in $pins; do
    case "$k" in rr|xid) ;; *) echo "BENCH_PINS: rr and/or xid" >&2; exit 2 ;; esac
done
for s in $systems; do
    case "$s" in awa|skip|pgq) ;; *) echo "BENCH_SYSTEMS: awa, skip and/or pgq" >&2; exit 2 ;; esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=${BENCH_OUT:-$here/results/pinned-$stamp}

n_pins=$(echo "$pins" | wc -w)
n_sys=$(echo "$systems" | wc -w)
per_sys=$(( warmup + clean + n_pins * (pin + recovery) ))
# ~10 s per system for the install, the checkpoint and the boundaries' pgstattuple
total=$(( n_sys * (per_sys + 10) + 10 ))
echo "pinned.sh $profile: systems '$systems', pins '$pins', warmup ${warmup}s clean ${clean}s" \
     "pin ${pin}s recovery ${recovery}s, $rate jobs/s offered"
echo "total time: about $(( total / 60 )) min $(( total % 60 )) s (${per_sys}s measured per system);" \
     "results in $out"

# ---------------------------------------------------------------- prerequisites
need_pkgs=()
sharedir=$("$bin/pg_config" --sharedir)
pkglibdir=$("$bin/pg_config" --pkglibdir)
major=$("$bin/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
case " $systems " in
    *" pgq "*) [ -f "/usr/share/postgresql/$major/extension/pgq.control" ] ||
        need_pkgs+=("postgresql-$major-pgq3") ;;
esac
case " $systems " in *" pgq "*) command -v pgqd >/dev/null || need_pkgs+=(pgqd) ;; esac
command -v gnuplot >/dev/null || need_pkgs+=(gnuplot-nox)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        echo "installing ${need_pkgs[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y "${need_pkgs[@]}" >/dev/null
    else
        echo "missing: ${need_pkgs[*]}; install them (apt-get install ${need_pkgs[*]}) and run again" >&2
        exit 1
    fi
fi
# an install tree other than the system one (PGBIN) needs its own copy of pgq
if [[ " $systems " == *" pgq "* ]] && [ ! -f "$sharedir/extension/pgq.control" ]; then
    echo "copying pgq's extension files into $sharedir and $pkglibdir"
    cp "/usr/share/postgresql/$major/extension/pgq.control" \
       "/usr/share/postgresql/$major/extension/"pgq--*.sql "$sharedir/extension/"
    cp "/usr/lib/postgresql/$major/lib/pgq_lowlevel.so" \
       "/usr/lib/postgresql/$major/lib/pgq_triggers.so" "$pkglibdir/"
fi
[ -f "$pkglibdir/awa_bgw.so" ] || { echo "awa_bgw is not installed in $pkglibdir (make install)" >&2; exit 1; }

# ---------------------------------------------------------------- cluster
if [ "$(id -u)" -eq 0 ]; then run_as=(runuser -u postgres --); else run_as=(); fi
work=$(mktemp -d /tmp/awa_pinned.XXXXXX)
raw=$work/raw
mkdir -p "$raw" "$out"
cp "$here"/pinned/*.sql "$work"/
[ "$(id -u)" -eq 0 ] && chown -R postgres "$work"
db=postgres

. "$here/cluster.sh"
cluster_init "$work" "$port" "$db" <<CONF
# (a worker that is not leader yet retries often: the install waits for a leader)
awa_bgw.leader_retry_interval = '200ms'
shared_buffers = '256MB'
max_connections = 100
synchronous_commit = on
max_wal_size = '4GB'
checkpoint_timeout = '30min'
autovacuum_naptime = '10s'
autovacuum_vacuum_cost_limit = 2000
idle_in_transaction_session_timeout = 0
statement_timeout = 0
log_min_messages = warning
${BENCH_CONF:-}
CONF

pids_to_stop=()
cleanup() {
    local p
    for p in "${pids_to_stop[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -f "$work/pgqd.pid" ]; then kill "$(cat "$work/pgqd.pid")" 2>/dev/null || true; fi
    "${run_as[@]}" "$bin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
    [ -n "${BENCH_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
"${run_as[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w -t 120 start >/dev/null

psql=("${run_as[@]}" env PGOPTIONS="-c client_min_messages=warning" "$bin/psql" -X -q -At
      -h "$work" -p "$port" -U postgres -d "$db" -v ON_ERROR_STOP=1)
q() { "${psql[@]}" -c "$1"; }

# wait_for SQL SECONDS WHAT: poll a query until it returns t, or fail
wait_for() {
    local deadline=$(( $(date +%s) + $2 ))
    until [ "$(q "$1" 2>/dev/null || true)" = t ]; do
        if [ "$(date +%s)" -ge "$deadline" ]; then echo "timed out waiting for $3" >&2; exit 1; fi
        sleep 0.2
    done
}
now() { date +%s.%N; }
sleep_until() { local d; d=$(awk -v t="$1" -v n="$(now)" 'BEGIN { d = t - n; printf "%.3f", (d > 0 ? d : 0) }'); sleep "$d"; }

q "CREATE EXTENSION pgstattuple"
{
    echo "# manifest"
    echo "date: $(date -u '+%F %T UTC')"
    echo "host: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "server: $(q 'SELECT version()')"
    echo "pgq: $(dpkg-query -W -f '${Version}' postgresql-15-pgq3 2>/dev/null || echo '?'), pgqd: $(dpkg-query -W -f '${Version}' pgqd 2>/dev/null || echo '?')"
    echo "awa_bgw: $(q "SELECT default_version FROM pg_available_extensions WHERE name = 'awa_bgw'") ($(cd "$here" && git rev-parse --short HEAD 2>/dev/null || echo '?'))"
    echo "command: $(env | grep -E '^(BENCH_|PGBIN=)' | sort | tr '\n' ' ')bash bench/pinned.sh $profile"
    echo "profile: warmup=$warmup clean=$clean pin=$pin recovery=$recovery pins='$pins' systems='$systems'"
    echo "load: rate=$rate producers=$producers consumers=$consumers backoff_ms=$backoff sample=$step pgq_rotation=$rotation pgq_maint=$pgq_maint"
    echo "settings:"
    q "SELECT name || ' = ' || setting FROM pg_settings WHERE source = 'configuration file' ORDER BY name" | sed 's/^/  /'
} > "$out/manifest.txt"

# ---------------------------------------------------------------- per-system install
reset_db() {   # drop every system's objects (the worker rides through a drop of
               # awa_bgw, which can deadlock with one of its steps: tried again)
    local _
    for _ in 1 2 3 4 5; do
        q "DROP SCHEMA IF EXISTS pinned CASCADE; DROP SCHEMA IF EXISTS q_skip CASCADE;
           DROP EXTENSION IF EXISTS pgq CASCADE; DROP SCHEMA IF EXISTS pgq CASCADE;
           DROP EXTENSION IF EXISTS awa_bgw CASCADE; DROP SCHEMA IF EXISTS awa CASCADE" >/dev/null 2>&1 \
            && return 0
        sleep 1
    done
    echo "could not drop the previous system's objects" >&2
    exit 1
}
install_system() {
    case "$1" in
        skip) "${psql[@]}" -f "$work/skip.sql" >/dev/null ;;
        awa)  q "CREATE EXTENSION awa_bgw" >/dev/null
              "${psql[@]}" -f "$work/awa.sql" >/dev/null
              [ -z "${BENCH_AWA_SQL:-}" ] || q "$BENCH_AWA_SQL" >/dev/null
              wait_for "SELECT state = 'leader' FROM awa.maintenance_status WHERE database = '$db'" 120 \
                       "the awa_bgw worker to lead"
              wait_for "SELECT awa_internal.ring_authority() = 'ledger'" 120 "the ring authority to be the ledger" ;;
        pgq)  q "CREATE EXTENSION pgq" >/dev/null
              "${psql[@]}" -v rotation="$rotation seconds" -f "$work/pgq.sql" >/dev/null ;;
    esac
}
schemas_of() { case "$1" in skip) echo q_skip ;; awa) echo awa ;; pgq) echo pgq ;; esac; }

# pgqd: ticker every second, maintenance every $pgq_maint s
start_pgqd() {
    cat > "$work/pgqd.ini" <<INI
[pgqd]
logfile = $work/pgqd.log
pidfile = $work/pgqd.pid
base_connstr = host=$work port=$port user=postgres
initial_database = $db
database_list = $db
ticker_period = 1
maint_period = $pgq_maint
retry_period = 30
check_period = 60
INI
    [ "$(id -u)" -eq 0 ] && chown postgres "$work/pgqd.ini"
    "${run_as[@]}" pgqd "$work/pgqd.ini" >>"$work/pgqd.out" 2>&1 &
    pgqd_job=$!
    pids_to_stop+=("$pgqd_job")
    local t0
    t0=$(q "SELECT coalesce(max(tick_id), 0) FROM pgq.tick")
    wait_for "SELECT max(tick_id) > $t0 FROM pgq.tick" 60 "pgqd's first tick"
}
stop_pgqd() {
    kill "$(cat "$work/pgqd.pid")" 2>/dev/null || true
    wait "$pgqd_job" 2>/dev/null || true
    rm -f "$work/pgqd.pid"
}

# ---------------------------------------------------------------- measurement
# server CPU: ticks of the postmaster, its reaped children and its live children
postmaster=$(head -1 "$work/data/postmaster.pid")
cpu_ticks() {
    local files=("/proc/$postmaster/stat") p
    for p in $(pgrep -P "$postmaster"); do files+=("/proc/$p/stat"); done
    cat "${files[@]}" 2>/dev/null | awk -v pm="$postmaster" '
        { t += $14 + $15; if ($1 == pm) t += $16 + $17 } END { print t }'
}
clk_tck=$(getconf CLK_TCK)

# sample SYS PHASE FILE: one row per queue relation and pg_class, the WAL position and
# the server CPU (read-only queries)
sample() {
    local sys=$1 phase=$2 file=$3 e rows
    e=$(now)
    rows=$(q "SELECT 'rel,' || s.relid::regclass || ',' || s.n_live_tup || ',' || s.n_dead_tup || ','
                     || pg_total_relation_size(s.relid)
                FROM pg_stat_all_tables s
               WHERE s.schemaname = ANY (string_to_array('$(schemas_of "$sys")', ' '))
                  OR s.relid = 'pg_class'::regclass
              UNION ALL
              SELECT 'wal,-,0,0,' || (pg_current_wal_lsn() - '0/0'::pg_lsn)" 2>/dev/null || true)
    {
        [ -n "$rows" ] && printf '%s\n' "$rows" | awk -v p="$e,$phase," '{ print p $0 }'
        echo "$e,$phase,cpu,-,0,0,$(cpu_ticks)"
    } >> "$file"
}
# sampler SYS T0: every $step s from T0 until $work/stop exists
sampler() {
    local sys=$1 t0=$2 i=0 phase
    while [ ! -f "$work/stop" ]; do
        sleep_until "$(awk -v t="$t0" -v i="$i" -v s="$step" 'BEGIN { printf "%.3f", t + i * s }')"
        phase=$(cat "$work/phase")
        sample "$sys" "$phase" "$raw/${sys}_samples.csv"
        i=$((i + 1))
    done
}
# boundary SYS LABEL: exact counts (pgstattuple) of every queue table and pg_class, the
# WAL position, the server CPU, and awa_bgw's prune counters
boundary() {
    local sys=$1 label=$2 e
    e=$(now)
    {
        q "SELECT 'dead,' || c.oid::regclass || ',' || (pgstattuple(c.oid)).dead_tuple_count
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind = 'r' AND n.nspname = ANY (string_to_array('$(schemas_of "$sys")', ' '))
               OR c.oid = 'pg_class'::regclass" | sed "s/^/$label,$e,/"
        echo "$label,$e,wal,-,$(q "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")"
        echo "$label,$e,cpu,-,$(cpu_ticks)"
        if [ "$sys" = awa ]; then
            echo "$label,$e,prunes,-,$(q "SELECT coalesce(sum((r.v ->> 'pruned')::bigint), 0)
                     FROM awa.maintenance_status m, jsonb_each(m.prunes) r(ring, v) WHERE m.database = '$db'")"
        fi
    } >> "$raw/${sys}_bounds.csv"
}

# the pin: a psql session of its own, fed through a fifo, idle in its transaction
pin_begin() {
    local kind=$1 check
    rm -f "$work/pin.fifo"; mkfifo "$work/pin.fifo"
    [ "$(id -u)" -eq 0 ] && chown postgres "$work/pin.fifo"
    "${run_as[@]}" env PGAPPNAME=pinned_pin "$bin/psql" -X -q -h "$work" -p "$port" -U postgres -d "$db" \
        -f "$work/pin.fifo" >"$work/pin.out" 2>&1 &
    pin_job=$!
    pids_to_stop+=("$pin_job")
    exec 7>"$work/pin.fifo"
    if [ "$kind" = rr ]; then
        echo "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1;" >&7
        check="backend_xmin IS NOT NULL"
    else
        echo "BEGIN; SELECT txid_current();" >&7
        check="backend_xid IS NOT NULL"
    fi
    wait_for "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'pinned_pin'
                 AND state = 'idle in transaction' AND $check" 30 "the $kind pin"
}
pin_end() {
    echo "ROLLBACK;" >&7
    exec 7>&-
    wait "$pin_job" || true
}

# ---------------------------------------------------------------- one system
run_system() {
    local sys=$1 t0 total_secs kind phase_end cons_clients
    echo "== $sys ($(date -u +%T) UTC)"
    reset_db
    install_system "$sys"
    q "VACUUM pg_class" >/dev/null
    q "CHECKPOINT" >/dev/null
    [ "$sys" = pgq ] && start_pgqd
    rm -f "$work/stop"
    total_secs=$per_sys
    cons_clients=$consumers
    [ "$sys" = pgq ] && cons_clients=1

    echo warmup > "$work/phase"
    t0=$(now)
    echo "$t0" > "$raw/${sys}_t0"
    "${run_as[@]}" "$bin/pgbench" -n -M prepared -c "$producers" -j "$producers" -R "$rate" -T "$total_secs" \
        -l --log-prefix="$raw/${sys}_producer" \
        -h "$work" -p "$port" -U postgres -f "$work/produce_$sys.sql" "$db" \
        >"$raw/${sys}_producer.out" 2>&1 &
    local prod=$!
    "${run_as[@]}" "$bin/pgbench" -n -c "$cons_clients" -j "$cons_clients" -T "$total_secs" -D backoff="$backoff" \
        -h "$work" -p "$port" -U postgres -f "$work/consume.sql" "$db" \
        >"$raw/${sys}_consumer.out" 2>"$raw/${sys}_consumer.err" &
    local cons=$!
    pids_to_stop+=("$prod" "$cons")
    sampler "$sys" "$t0" &
    local samp=$!
    pids_to_stop+=("$samp")

    phase_end=$(awk -v t="$t0" -v d="$warmup" 'BEGIN { printf "%.3f", t + d }')
    echo "warmup $t0 $phase_end" >> "$raw/${sys}_phases"
    sleep_until "$phase_end"
    boundary "$sys" clean
    run_phase() {   # name seconds
        local start=$phase_end
        echo "$1" > "$work/phase"
        phase_end=$(awk -v t="$start" -v d="$2" 'BEGIN { printf "%.3f", t + d }')
        echo "$1 $start $phase_end" >> "$raw/${sys}_phases"
    }
    run_phase clean "$clean"
    sleep_until "$phase_end"
    for kind in $pins; do
        # pg_class vacuumed just before the pin, so that what it holds at the pin's end
        # beyond the boundary's count was left by the systems' own DDL during the pin
        q "VACUUM pg_class" >/dev/null
        boundary "$sys" "pin_$kind"
        pin_begin "$kind"
        run_phase "pin_$kind" "$pin"
        echo "   pin $kind held ($(date -u +%T))"
        sleep_until "$phase_end"
        boundary "$sys" "recovery_$kind"
        pin_end
        run_phase "recovery_$kind" "$recovery"
        sleep_until "$phase_end"
    done
    boundary "$sys" end
    touch "$work/stop"
    wait "$prod" || echo "   the producers' pgbench failed: $(tail -3 "$raw/${sys}_producer.out")" >&2
    wait "$cons" || echo "   the consumers' pgbench failed: $(tail -3 "$raw/${sys}_consumer.err")" >&2
    wait "$samp" || true
    [ "$sys" = pgq ] && stop_pgqd
    grep -h '^NOTICE:  pinned ' "$raw/${sys}_consumer.err" | awk '{ print $3, $4, $5 }' > "$raw/${sys}_jobs" || true
    # pgbench -l: client tx latency_us script epoch_s epoch_us schedule_lag_us
    cat "$raw/${sys}"_producer.[0-9]* 2>/dev/null \
        | awk 'NF >= 6 && $3 ~ /^[0-9]+$/ { printf "%d.%06d %s\n", $5, $6, $7 }' > "$raw/${sys}_produced" || true
    # the extracts above are what the reports read; the pgbench logs (hundreds of MB in
    # the long profile) go unless BENCH_KEEP is set
    [ -n "${BENCH_KEEP:-}" ] || rm -f "$raw/${sys}"_producer.[0-9]* "$raw/${sys}_consumer.err"
    "$here/pinned_report.sh" series "$raw" "$sys" "$step" "$clk_tck" > "$out/$sys.csv"
    echo "   $(wc -l < "$raw/${sys}_jobs") consumer transactions with a job, $(awk '{ n += $2 } END { print n + 0 }' "$raw/${sys}_jobs") jobs," \
         "$(wc -l < "$raw/${sys}_produced") enqueued"
}

for sys in $systems; do run_system "$sys"; done
reset_db

"$here/pinned_report.sh" summary "$raw" "$step" "$clk_tck" "$pin" "$systems" > "$out/summary.md"
"$here/pinned_report.sh" plots "$out" "$raw" "$systems" || echo "(plots failed: is gnuplot installed?)" >&2
cp "$raw"/*_phases "$raw"/*_bounds.csv "$raw"/*_samples.csv "$out/" 2>/dev/null || true
{ cat "$out/manifest.txt"; echo; cat "$out/summary.md"; } > "$out/README.md"
cat "$out/summary.md"
echo
echo "results: $out"
