#!/usr/bin/env bash
# The reports of bench/pinned.sh, from its raw files (awk and sort only):
#   pinned_report.sh series  RAW SYS STEP CLK_TCK            -> CSV time series (stdout)
#   pinned_report.sh summary RAW STEP CLK_TCK PIN "SYSTEMS"  -> Markdown tables (stdout)
#   pinned_report.sh plots   OUT RAW "SYSTEMS"               -> OUT/*.png (gnuplot)
# Raw files per system (written by pinned.sh):
#   SYS_t0          epoch at which the producers and consumers started
#   SYS_phases      "phase start end" (epochs)
#   SYS_jobs        "epoch jobs claim_us", one line per consumer transaction that got work
#   SYS_produced    "epoch schedule_lag_us", one line per enqueue (pgbench -l of the producers)
#   SYS_samples.csv epoch,phase,kind,name,live,dead,value   (kind rel: value = bytes;
#                   wal: value = WAL position in bytes; cpu: value = server CPU ticks)
#   SYS_bounds.csv  label,epoch,kind,name,value (pgstattuple dead tuples per table, WAL,
#                   CPU ticks, awa_bgw prunes), label = the phase that starts there
set -euo pipefail

mode=$1
shift

# percentiles "KEY VALUE COUNT" (sorted by key, then value) -> "KEY count jobs p50 p99"
pct() {
    sort -k1,1n -k2,2n | awk '
        function flush() {
            if (n == 0) return
            i50 = int(0.5 * n + 0.999999); i99 = int(0.99 * n + 0.999999)
            printf "%s %d %d %s %s\n", key, n, jobs, v[i50], v[i99]
        }
        $1 != key { flush(); key = $1; n = 0; jobs = 0 }
        { v[++n] = $2; jobs += $3 }
        END { flush() }'
}

case "$mode" in
series)
    raw=$1 sys=$2 step=$3 clk=$4
    t0=$(cat "$raw/${sys}_t0")
    t_end=$(awk 'END { print $3 }' "$raw/${sys}_phases")
    tmp=$(mktemp)
    awk -v t0="$t0" -v s="$step" '{ print int(($1 - t0) / s) + 1, $3, $2 }' "$raw/${sys}_jobs" | pct > "$tmp"
    echo "t_s,phase,produced_per_s,completed_per_s,claim_p50_ms,claim_p99_ms,backlog,queue_dead_tup,queue_bytes,pg_class_dead_tup,pg_class_bytes,wal_bytes_per_s,cpu_pct"
    awk -F'[ ,]' -v t0="$t0" -v te="$t_end" -v s="$step" -v clk="$clk" -v jf="$tmp" -v pf="$raw/${sys}_produced" '
        BEGIN {
            while ((getline l < jf) > 0) { split(l, a, " "); jobs[a[1]] = a[3]; p50[a[1]] = a[4]; p99[a[1]] = a[5] }
            while ((getline l < pf) > 0) { split(l, a, " "); prod[int((a[1] - t0) / s) + 1]++ }
        }
        $1 > te + 1 { next }
        {   # samples: epoch,phase,kind,name,live,dead,value
            i = int(($1 - t0) / s + 0.5)
            if (!(i in seen)) { seen[i] = 1; order[++n] = i; ph[i] = $2 }
            if ($3 == "rel" && $4 == "pg_class") { cdead[i] = $6; cbytes[i] = $7 }
            else if ($3 == "rel") { qdead[i] += $6; qbytes[i] += $7 }
            else if ($3 == "wal") wal[i] = $7
            else if ($3 == "cpu") cpu[i] = $7
        }
        END {
            cp = 0; cc = 0
            for (k = 1; k <= n; k++) {
                i = order[k]
                if (k == 1) { prev = i; continue }
                for (b = prev + 1; b <= i; b++) { cp += prod[b]; cc += jobs[b]; pr += prod[b]; co += jobs[b] }
                d = (i - prev) * s
                printf "%d,%s,%.1f,%.1f,%s,%s,%d,%d,%d,%d,%d,%.0f,%.1f\n", i * s, ph[i], pr / d, co / d,
                    (i in p50) ? sprintf("%.3f", p50[i] / 1000) : "", (i in p99) ? sprintf("%.3f", p99[i] / 1000) : "",
                    cp - cc, qdead[i], qbytes[i], cdead[i], cbytes[i],
                    (wal[i] - wal[prev]) / d, (cpu[i] - cpu[prev]) / clk / d * 100
                pr = 0; co = 0; prev = i
            }
        }' "$raw/${sys}_samples.csv"
    rm -f "$tmp"
    ;;

summary)
    raw=$1 step=$2 clk=$3 pin=$4 systems=$5
    echo "| system | phase | s | produced jobs/s | completed jobs/s | claim p50 ms | claim p99 ms | backlog at end | queue dead tuples added | pg_class dead added | WAL B/job | CPU % |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    perhour=$(mktemp)
    for sys in $systems; do
        [ -f "$raw/${sys}_phases" ] || continue
        tmp=$(mktemp)
        # percentiles per phase (phase index as the key)
        awk -v pf="$raw/${sys}_phases" '
            BEGIN { while ((getline l < pf) > 0) { split(l, a, " "); n++; st[n] = a[2]; en[n] = a[3] } }
            { for (k = 1; k <= n; k++) if ($1 >= st[k] && $1 < en[k]) { print k, $3, $2; break } }' \
            "$raw/${sys}_jobs" | pct > "$tmp"
        awk -v sys="$sys" -v s="$step" -v clk="$clk" -v pin="$pin" -v jf="$raw/${sys}_jobs" \
            -v pf="$raw/${sys}_produced" -v bf="$raw/${sys}_bounds.csv" -v tf="$tmp" -v hf="$perhour" '
            BEGIN {
                while ((getline l < tf) > 0) { split(l, a, " "); p50[a[1]] = a[4]; p99[a[1]] = a[5] }
                while ((getline l < bf) > 0) {
                    split(l, a, ",")
                    if (a[3] == "dead" && a[4] == "pg_class") cls[a[1]] = a[5]
                    else if (a[3] == "dead") qd[a[1]] += a[5]
                    else if (a[3] == "wal") wal[a[1]] = a[5]
                    else if (a[3] == "cpu") cpu[a[1]] = a[5]
                    else if (a[3] == "prunes") prn[a[1]] = a[5]
                }
            }
            { n++; name[n] = $1; st[n] = $2; en[n] = $3 }
            END {
                for (k = 1; k <= n; k++) {
                    done = 0; prod = 0; cdone = 0; cprod = 0
                    while ((getline l < jf) > 0) {
                        split(l, a, " ")
                        if (a[1] >= st[k] && a[1] < en[k]) done += a[2]
                        if (a[1] < en[k]) cdone += a[2]
                    }
                    close(jf)
                    while ((getline l < pf) > 0) {
                        split(l, a, " ")
                        if (a[1] >= st[k] && a[1] < en[k]) prod++
                        if (a[1] < en[k]) cprod++
                    }
                    close(pf)
                    d = en[k] - st[k]
                    if (name[k] == "warmup") continue
                    b0 = name[k]; b1 = (k < n) ? name[k + 1] : "end"
                    printf "| %s | %s | %.0f | %.0f | %.0f | %s | %s | %d | %s | %s | %s | %.0f |\n", sys, name[k], d, prod / d, done / d,
                        (k in p50) ? sprintf("%.2f", p50[k] / 1000) : "-", (k in p99) ? sprintf("%.2f", p99[k] / 1000) : "-",
                        cprod - cdone,
                        (b0 in qd && b1 in qd) ? qd[b1] - qd[b0] : "-",
                        (b0 in cls && b1 in cls) ? cls[b1] - cls[b0] : "-",
                        (done > 0 && b0 in wal && b1 in wal) ? sprintf("%.0f", (wal[b1] - wal[b0]) / done) : "-",
                        (b0 in cpu && b1 in cpu) ? (cpu[b1] - cpu[b0]) / clk / d * 100 : 0
                    if (name[k] ~ /^pin_/ && b0 in cls && b1 in cls)
                        printf "| %s | %s | %d | %.0f | %s | %s |\n", sys, substr(name[k], 5), cls[b1] - cls[b0],
                            (cls[b1] - cls[b0]) / (d / 3600),
                            (b0 in prn && b1 in prn) ? prn[b1] - prn[b0] : "-",
                            (b0 in prn && b1 in prn && prn[b1] > prn[b0]) ? sprintf("%.1f", (cls[b1] - cls[b0]) / (prn[b1] - prn[b0])) : "-" >> hf
                }
            }' "$raw/${sys}_phases"
        rm -f "$tmp"
    done
    echo
    echo "Relations that gained dead tuples during a pin (pgstattuple at the pin's start and end; at most 6 per pin, largest first):"
    echo
    echo "| system | pin | relation | dead at start | dead at end | added |"
    echo "|---|---|---|---|---|---|"
    for sys in $systems; do
        [ -f "$raw/${sys}_bounds.csv" ] || continue
        awk -F, '$1 ~ /^pin_/ { print substr($1, 5) }' "$raw/${sys}_bounds.csv" | sort -u | while read -r kind; do
            awk -F, -v k="$kind" -v sys="$sys" '
                $3 == "dead" && $1 == "pin_" k { a[$4] = $5; seen[$4] = 1 }
                $3 == "dead" && $1 == "recovery_" k { b[$4] = $5; seen[$4] = 1 }
                END { for (r in seen) if (b[r] - a[r] > 0) printf "%d| %s | %s | %s | %d | %d | %d |\n", b[r] - a[r], sys, k, r, a[r], b[r], b[r] - a[r] }' \
                "$raw/${sys}_bounds.csv" | sort -t'|' -k1,1nr | head -6 | cut -d'|' -f2- | sed 's/^/|/'
        done
    done
    echo
    echo "pg_class dead versions during each pin (pgstattuple at the pin's start and end), per hour of pin:"
    echo
    echo "| system | pin | pg_class dead added | per hour of pin | awa_bgw prunes | dead per prune |"
    echo "|---|---|---|---|---|---|"
    cat "$perhour"
    rm -f "$perhour"
    ;;

plots)
    out=$1 raw=$2 systems=$3
    first=$(echo "$systems" | awk '{ print $1 }')
    # the first phase (warmup) starts at t0
    shade=$(awk 'NR == 1 { t0 = $2 } $1 ~ /^pin_/ {
                printf "set object rect from %.1f, graph 0 to %.1f, graph 1 behind fc rgb \"#e8e8e8\" fs solid noborder\n", $2 - t0, $3 - t0 }' \
            "$raw/${first}_phases")
    plot_cmd() {   # column title-suffix
        local col=$1 s sep=""
        for s in $systems; do
            printf '%s"%s" using 1:(column(%d) > 0 || %d ? column(%d) : NaN) with lines lw 2 title "%s"' \
                "$sep" "$out/$s.csv" "$col" "${2:-1}" "$col" "$s"
            sep=", "
        done
    }
    common="set terminal pngcairo noenhanced size 1100,450 font ',10'; set datafile separator ','; set key autotitle columnhead; set key top left; set grid; set xlabel 'seconds since the system started (grey: pin held)'"
    gnuplot <<GP
$common
$shade
set output '$out/throughput.png'
set title 'completed jobs/s (5 s bins)'
set ylabel 'jobs/s'
set yrange [0:*]
plot $(plot_cmd 4)
set output '$out/dead_tuples.png'
set title 'dead tuples in the queue relations (n_dead_tup, summed)'
set ylabel 'dead tuples'
plot $(plot_cmd 8)
set output '$out/pg_class_dead.png'
set title 'pg_class dead tuples (n_dead_tup)'
set ylabel 'dead tuples'
plot $(plot_cmd 10)
set output '$out/claim_p99.png'
set title 'claim latency p99 per 5 s (PgQ: per batch)'
set ylabel 'ms'
set logscale y
set yrange [*:*]
plot $(plot_cmd 6 0)
GP
    ;;
*)
    echo "usage: pinned_report.sh series|summary|plots ..." >&2
    exit 2
    ;;
esac
