#!/bin/sh
# make run's daemon part: nodecmd on a temporary root directory with the web/database machine
# of examples/web-db.yaml, the pods of examples/nodecmd/web-db/ admitted through
# `nodecm node admit --connect`, the CPU map and the kubelet's metrics, then SIGTERM.
set -eu
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/nodecm-demo.XXXXXX")
pid=""
cleanup() {
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
        rm -rf "$dir"
}
trap cleanup EXIT INT TERM
topo="package:2 numa:1 l3:1 core:8 pu:2(indexes=0,16,1,17,2,18,3,19,4,20,5,21,6,22,7,23,8,24,9,25,10,26,11,27,12,28,13,29,14,30,15,31)"

echo "\$ nodecmd --config examples/nodecmd/web-db.yaml --root-dir $dir &"
"$build/nodecmd" --config "$src/examples/nodecmd/web-db.yaml" --root-dir "$dir" \
        --synthetic "$topo" 2>"$dir/nodecmd.log" &
pid=$!
i=0
while [ ! -S "$dir/nodecm.sock" ]; do
        i=$((i + 1))
        if [ $i -gt 200 ] || ! kill -0 "$pid" 2>/dev/null; then
                cat "$dir/nodecmd.log" >&2
                exit 1
        fi
        sleep 0.05
done
for pod in "$src"/examples/nodecmd/web-db/*.yaml; do
        echo "\$ nodecm node admit examples/nodecmd/web-db/$(basename "$pod") --connect $dir/nodecm.sock"
        "$build/nodecm" node admit "$pod" --connect "$dir/nodecm.sock" || true
done
echo
echo "\$ nodecm node status --connect $dir/nodecm.sock"
"$build/nodecm" node status --connect "$dir/nodecm.sock"
echo
echo "\$ curl --unix-socket $dir/metrics.sock http://localhost/metrics | grep '^kubelet_'"
if command -v curl >/dev/null 2>&1; then
        curl -s --unix-socket "$dir/metrics.sock" http://localhost/metrics | grep '^kubelet_' |
                grep -v '_bucket{'
fi
echo
echo "\$ kill -TERM $pid"
kill -TERM "$pid"
wait "$pid"
pid=""
echo "nodecmd exited $?; its log:"
cat "$dir/nodecmd.log"
