# Sourced by the bench scripts (run.sh, pinned.sh, scrape.sh): the throwaway cluster
# they all start. Expects bin (the PostgreSQL bin dir) and run_as (the command
# prefix that runs a command as the cluster's owner: runuser -u postgres -- as root).
#
#   cluster_init WORK PORT DB     initdb in WORK/data; postgresql.conf gets the lines
#                                 below, then whatever the caller writes on stdin
#
# The common lines: loopback only on PORT, the socket in WORK, awa_bgw preloaded and
# maintaining database DB.
cluster_init() {
    local work=$1 port=$2 db=$3
    "${run_as[@]}" "$bin/initdb" -D "$work/data" -A trust -U postgres >/dev/null
    {
        cat <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$work'
shared_preload_libraries = 'awa_bgw'
awa_bgw.databases = '$db'
CONF
        cat
    } >> "$work/data/postgresql.conf"
}
