#!/bin/sh
# A node written by an earlier nodecm (main before the journal helper; tests/data/journal/
# README.md) restarts under this one: the same state read from nodecm_pods and its journal,
# then changes appended to that journal and read back.
. "$(dirname "$0")/lib.sh"

D="$TMPD/node"
T="package:2 numa:1 core:4 pu:2"
mkdir -m 700 "$D"
cp "$DATA/journal/node-main/"* "$D/"
chmod 600 "$D/"*
N() {
        run node "$@" --root-dir "$D" --config "$DATA/journal/kubelet-config.yaml" --synthetic "$T"
}
cat >"$TMPD/g4.yaml" <<EOF
metadata: {name: g4, uid: g4}
spec:
  containers:
  - name: app
    resources: {limits: {cpu: "2", memory: 64Mi}}
EOF

N status --json
expect_rc 0 "status of main's node"
expect_golden journal/node-main.status.json "status of main's node"

N admit "$TMPD/g4.yaml"
expect_rc 0 "admit on main's node"
expect_out "admit g4: admitted: app exclusive 2-3 (NUMA 0)" "admit on main's node"
[ "$(wc -l <"$D/nodecm_pods_journal")" -eq 7 ] || fail "the admission is not one more journal line"
tail -n 1 "$D/nodecm_pods_journal" | grep -q '^{"gen": 1, "put": {"removed": \[\], "pod": {.*"uid": "g4"' ||
        fail "journal line: $(tail -n 1 "$D/nodecm_pods_journal")"
N remove web
expect_rc 0 "remove a pod main admitted"
expect_out "removePod web: released 4-5 to the shared pool" "remove a pod main admitted"
N status --json
case "$OUT" in
*'"entries": {"g2": {"app": "8-9"}, "g3": {"app": "1"}, "g4": {"app": "2-3"}}'*) ;;
*) fail "status after the changes: [$OUT]" ;;
esac
finish
