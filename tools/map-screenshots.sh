#!/bin/sh
# Make the node map pictures in docs/ (docs/map.md, the README) with headless Chromium:
#   tools/map-screenshots.sh [BUILD]
# the web/database example, the same with the pointer on postgres-0 (the hover panel and its
# explanation), the 64-NUMA example, and this machine with the example pod. make check takes
# the same scenes in tests/integration/test-map-browser.py; this only refreshes the pictures.
set -eu
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nodecm-map.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

shot() { # PAGE PNG WIDTH HEIGHT
        chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
                --disable-background-networking --disable-component-update --disable-sync \
                --hide-scrollbars --user-data-dir="$tmp/profile-$(basename "$2")" \
                --screenshot="$2" --window-size="$3,$4" "file://$1" 2>/dev/null
        echo "$2"
}

"$build/nodecm" simulate "$src/examples/web-db.yaml" --html "$tmp/web-db.html" >/dev/null
shot "$tmp/web-db.html" "$src/docs/map-web-db.png" 1200 620

# the pointer on one of postgres-0's CPUs: the panel with its card and explanation
sed 's|</body>|<script>document.querySelector("#map [data-pod] rect[data-holder$=\\"/postgres\\"]").dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));</script></body>|' \
        "$tmp/web-db.html" >"$tmp/hover.html"
shot "$tmp/hover.html" "$src/docs/map-hover.png" 1200 620

"$build/nodecm" simulate "$src/examples/many-numa/map-64-numa.yaml" --html "$tmp/64.html" >/dev/null
shot "$tmp/64.html" "$src/docs/map-64-numa.png" 1280 960

printf '%s\n' 'cpuManagerPolicy: static' 'reservedSystemCPUs: "0"' 'enforcement: none' >"$tmp/vm.yaml"
"$build/nodecm" node init --root-dir "$tmp/vm" --config "$tmp/vm.yaml" >/dev/null
"$build/nodecm" node admit "$src/examples/node/pod.yaml" --root-dir "$tmp/vm" --config "$tmp/vm.yaml" >/dev/null || true
"$build/nodecm" node status --html "$tmp/vm.html" --root-dir "$tmp/vm" --config "$tmp/vm.yaml"
shot "$tmp/vm.html" "$src/docs/map-this-machine.png" 1000 640
