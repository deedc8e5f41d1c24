#!/usr/bin/env bash
# Prints the PostgreSQL major that `make run` uses: $PG_MAJOR when set; otherwise the one
# this machine's Debian ships (12 bookworm: 15, 13 trixie: 17, forky and sid: 18);
# otherwise the newest installed under /usr/lib/postgresql.
set -euo pipefail
if [ -n "${PG_MAJOR:-}" ]; then
    echo "$PG_MAJOR"
    exit 0
fi
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
case $codename in
    bookworm) echo 15 ;;
    trixie) echo 17 ;;
    forky | sid) echo 18 ;;
    *)
        newest=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)
        if [ -z "$newest" ]; then
            echo "scripts/pg_major.sh: no PostgreSQL found; set PG_MAJOR (15, 17 or 18)" >&2
            exit 1
        fi
        echo "$newest"
        ;;
esac
