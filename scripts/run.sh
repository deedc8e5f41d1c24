#!/usr/bin/env bash
# `make run`: build and install awa_bgw, then initdb and start a PostgreSQL (the major
# this machine's Debian ships: 15 on Debian 12, 17 on 13; scripts/pg_major.sh) with
# awa_bgw preloaded on 127.0.0.1:${AWA_BGW_PORT:-5499}, create the extension, run a few
# jobs through the queue and show the worker turning and reclaiming the rings. Works as root (the
# server runs as the unprivileged user postgres) or as a user who can `make install`.
# Stop it with `make stop`.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
port=${AWA_BGW_PORT:-5499}
major=$(bash "$src/scripts/pg_major.sh")
bindir=/usr/lib/postgresql/$major/bin
export PATH=$bindir:$PATH

if [ "$(id -u)" -eq 0 ]; then
    if ! [ -x "$bindir/initdb" ] || ! [ -x "$bindir/pg_config" ] \
       || ! [ -d "/usr/include/postgresql/$major/server" ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "postgresql-$major" \
            "postgresql-server-dev-$major" make gcc libc6-dev >/dev/null
    fi
    run_as=(runuser -u postgres --)
else
    run_as=()
fi

make -C "$src" -s PG_CONFIG="$bindir/pg_config"
make -C "$src" -s install PG_CONFIG="$bindir/pg_config"

# the cluster lives under the repository when the server's user can reach it
base="$src/tmp_run"
mkdir -p "$base"
[ "$(id -u)" -eq 0 ] && chown postgres "$base"
if ! "${run_as[@]}" test -w "$base"; then
    base=/tmp/awa_bgw_run
    mkdir -p "$base"
    [ "$(id -u)" -eq 0 ] && chown postgres "$base"
fi
echo "$base" > "$src/tmp_run.path" 2>/dev/null || true
data="$base/data"

if [ ! -f "$data/PG_VERSION" ]; then
    "${run_as[@]}" initdb -D "$data" -A trust -U postgres >/dev/null
    cat >> "$data/postgresql.conf" <<CONF
# awa_bgw demo settings
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$base'
shared_preload_libraries = 'awa_bgw'
awa_bgw.databases = 'postgres'
awa_bgw.leader_retry_interval = '1s'
# the rings turn by need, and at the latest when their slot is this old (default 60 s):
# 5 s here, so that the demo's queue slot is sealed and pruned within seconds
awa_bgw.queue_rotate_interval = '5s'
CONF
fi
if ! "${run_as[@]}" pg_ctl -D "$data" status >/dev/null 2>&1; then
    "${run_as[@]}" pg_ctl -D "$data" -l "$base/server.log" -w start >/dev/null
fi

psql=("${run_as[@]}" psql -X -h "$base" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1)
"${psql[@]}" -q -c "CREATE EXTENSION IF NOT EXISTS awa_bgw"

# wait for the worker to lead (leader_retry_interval is 1 s here)
for _ in $(seq 1 60); do
    state=$("${psql[@]}" -At -c "SELECT state FROM awa.maintenance_status WHERE database = 'postgres'")
    [ "$state" = leader ] && break
    sleep 0.5
done

# A working queue: enqueue three jobs, claim them, complete two and fail the third
# for good; then the worker turns the rings and reclaims the slot with TRUNCATE.
"${psql[@]}" <<'SQL'
SELECT awa.enqueue('demo', 'hello', '{"to": "world"}') AS enqueued;
SELECT awa.enqueue('demo', 'hello', '{"to": "you"}', 0::smallint) AS enqueued;
SELECT awa.enqueue('demo', 'flaky', max_attempts => 1) AS enqueued;
CREATE TEMP TABLE claimed AS SELECT * FROM awa.claim('demo', 3);
SELECT job_id, run_lease, kind, args FROM claimed;
SELECT job_id, kind,
       CASE WHEN kind = 'flaky' THEN awa.fail(job_id, run_lease, 'out of luck')
            ELSE awa.complete(job_id, run_lease) END AS accepted
  FROM claimed ORDER BY job_id;
SELECT * FROM awa.queue_counts('demo');
SQL
for _ in $(seq 1 120); do
    n=$("${psql[@]}" -At -c "SELECT count(*) FROM awa.ready_entries WHERE queue = 'demo'")
    [ "$n" -eq 0 ] && break
    sleep 0.5
done
echo "ready entries of queue demo left after the worker's prune: $n"

"${psql[@]}" -c "SELECT ring, authority, current_slot, generation, ledger_rows, last_rotated_at FROM awa.ring_status" \
             -c "SELECT database, pid, state, leader_since, rotations->'queue' AS queue_rotations, prunes->'queue' AS queue_prunes, errors FROM awa.maintenance_status"
cat <<MSG
awa_bgw is running: psql -h $base -p $port -U postgres postgres
(server log: $base/server.log; stop it with: make stop)
MSG
