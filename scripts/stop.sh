#!/usr/bin/env bash
# `make stop`: stop the server that `make run` started.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base=$(cat "$src/tmp_run.path" 2>/dev/null || echo "$src/tmp_run")
# the binaries of the major the cluster was made with
export PATH=/usr/lib/postgresql/$(cat "$base/data/PG_VERSION")/bin:$PATH
if [ "$(id -u)" -eq 0 ]; then run_as=(runuser -u postgres --); else run_as=(); fi
"${run_as[@]}" pg_ctl -D "$base/data" -m fast stop
