#!/bin/sh
# make run's daemon part: nodecmd on a temporary root directory with the web/database machine
# of examples/web-db.yaml, the pods of examples/nodecmd/web-db/ admitted through
# `nodecm node admit --connect`, the CPU map and the kubelet's metrics, then SIGTERM; last, the
# node map of the demo node (docs/map.md), written to MAP (default BUILD/demo-map.html), whose
# path is the last line printed.
#   tools/demo-nodecmd.sh [BUILD [MAP]]
set -eu
build=${1:-build}
map=${2:-$build/demo-map.html}
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
echo "\$ nodecm node status --html $map --connect $dir/nodecm.sock"
"$build/nodecm" node status --html "$map" --connect "$dir/nodecm.sock"
echo "(nodecmd serves the same page live: curl --unix-socket $dir/metrics.sock http://localhost/map)"
echo
echo "\$ kill -TERM $pid"
kill -TERM "$pid"
wait "$pid"
pid=""
echo "nodecmd exited $?; its log:"
cat "$dir/nodecmd.log"
echo
echo "The node map of the demo node (open it in a browser):"
echo "$(cd "$(dirname "$map")" && pwd)/$(basename "$map")"
