#!/usr/bin/env bash
# The live check of README.md ("Checked on"): a fresh 3-master Redis Cluster on 127.0.0.1:31000-31002
# (redis-server from PATH, data in a temporary folder), then four runs of one application, each
# 10 s at 200/s with 8 in flight, every JSON line printed on stdout:
#   migrate  2 s in, `redis-cli --cluster reshard` moves 2000 slots from 31000 to 31001
#   ask      2 s in, the slot of key:{11} is migrated by hand from 31001 to 31002 (SETSLOT
#            IMPORTING/MIGRATING, MIGRATE key:{11}, 4 s half-migrated, the rest, SETSLOT NODE)
#   kill     3 s in, the startup node 31000 (a master with slots, no replica) is killed (SIGKILL,
#            by its PID); restarted from its nodes file after the run
#   remap    address_remap = the startup node's own address
# Usage: apps/node/check/live.sh ioredis|node-redis
# Ends every process it started, by PID.
set -euo pipefail
client=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$(mktemp -d)
declare -A pid
start_node() {
    redis-server --port "$1" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "nodes-$1.conf" \
        --dir "$dir" --save '' --appendonly no --daemonize no >"$dir/$1.log" 2>&1 &
    pid[$1]=$!
}
cleanup() {
    for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
wait_ok() {
    for _ in $(seq 1 60); do
        ok=0
        for p in 31000 31001 31002; do
            [ "$(redis-cli -p $p cluster info 2>/dev/null | tr -d '\r' | grep cluster_state)" = cluster_state:ok ] && ok=$((ok + 1))
        done
        [ $ok = 3 ] && return 0
        sleep 0.5
    done
    echo "cluster not ok" >&2; return 1
}
for p in 31000 31001 31002; do start_node $p; done
sleep 1
redis-cli --cluster create 127.0.0.1:31000 127.0.0.1:31001 127.0.0.1:31002 --cluster-replicas 0 --cluster-yes >"$dir/create.log"
wait_ok
settings() { # KEYS [EXTRA JSON FIELDS]
    echo "{\"startup\":\"127.0.0.1:31000\",\"rate\":200,\"in_flight\":8,\"duration_s\":10,\"keys\":$1,\"command\":\"zadd\",\"socket_timeout_s\":0.5,\"connect_timeout_s\":0.5,\"client_name\":\"matrix-app\",\"seed\":1${2:-}}"
}
run_app() { # NAME SETTINGS: starts the app in the background
    echo "== $1: node apps/node/app.mjs $client '$2'" >&2
    node "$here/app.mjs" "$client" "$2" >"$dir/$1.json" 2>"$dir/$1.err" &
    app=$!
}
end_app() {
    wait "$app" || echo "app exit $?" >&2
    grep -v '^app: \(node\|cluster\) error' "$dir/$1.err" | sed 's/^/   /' >&2 || true
    cat "$dir/$1.json"
}
id() { redis-cli -p "$1" cluster myid; }
owner() { # SLOT: the port of the master that owns it
    redis-cli -p 31000 cluster nodes | tr -d '\r' | awk -v s="$1" '{
        split($2, a, "[:@]"); for (i = 9; i <= NF; i++) { n = split($i, r, "-"); if (n == 1) r[2] = r[1];
        if ($i !~ /^\[/ && s + 0 >= r[1] + 0 && s + 0 <= r[2] + 0) print a[2] } }'
}
other() { for p in 31000 31001 31002; do [ "$p" != "$1" ] && { echo "$p"; return; }; done; }

run_app migrate "$(settings 1000)"
sleep 2
redis-cli --cluster reshard 127.0.0.1:31000 --cluster-from "$(id 31000)" --cluster-to "$(id 31001)" \
    --cluster-slots 2000 --cluster-yes >"$dir/reshard.log" 2>&1
echo "   reshard of 2000 slots 31000 -> 31001 done at $(date +%s%3N)" >&2
end_app migrate

run_app ask "$(settings 20)"
sleep 2
slot=$(redis-cli -p 31000 cluster keyslot 'key:{11}')
from=$(owner "$slot"); to=$(other "$from")
redis-cli -p "$to" cluster setslot "$slot" importing "$(id "$from")" >/dev/null
redis-cli -p "$from" cluster setslot "$slot" migrating "$(id "$to")" >/dev/null
redis-cli -p "$from" migrate 127.0.0.1 "$to" 'key:{11}' 0 5000 >/dev/null
echo "   slot $slot half-migrated $from -> $to at $(date +%s%3N)" >&2
sleep 4
while keys=$(redis-cli -p "$from" cluster getkeysinslot "$slot" 100 | tr '\n' ' ') && [ -n "${keys// }" ]; do
    redis-cli -p "$from" migrate 127.0.0.1 "$to" "" 0 5000 KEYS $keys >/dev/null
done
for p in "$from" "$to" 31000 31001 31002; do redis-cli -p "$p" cluster setslot "$slot" node "$(id "$to")" >/dev/null; done
echo "   slot $slot moved at $(date +%s%3N)" >&2
end_app ask

run_app kill "$(settings 1000)"
sleep 3
kill -9 "${pid[31000]}"
wait "${pid[31000]}" 2>/dev/null || true
echo "   killed 31000 (pid ${pid[31000]}) at $(date +%s%3N)" >&2
end_app kill
start_node 31000
wait_ok

run_app remap "$(settings 1000 ',"address_remap":"127.0.0.1:31000"')"
end_app remap
