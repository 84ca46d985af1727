#!/bin/sh
# Every dump of tests/data/topologies: `nodecm topology --fsroot ROOT --json --no-pci` prints the
# kubelet's table, the same as kubelet-topology.py (an independent model of cadvisor's
# GetNodesInfo and the kubelet's Discover) and as the reviewed golden, and --topology reads it
# back unchanged. A dump on which the kubelet cannot start fails with the kubelet's message.
. "$(dirname "$0")/lib.sh"

MODEL="$(dirname "$0")/kubelet-topology.py"
X=$(mktemp -d /dev/shm/nodecm-dumps-XXXXXX 2>/dev/null || mktemp -d "$TMPD/x-XXXXXX")
trap 'rm -rf "$TMPD" "$X"' EXIT

n=0
for tarball in "$DATA"/topologies/*.tar.bz2; do
        name=$(basename "$tarball" .tar.bz2)
        mkdir "$X/$name"
        tar -xjf "$tarball" -C "$X/$name" || fail "extract $name"
        ROOT=$(dirname "$(find "$X/$name" -maxdepth 4 -type d -name sys | head -1)")
        model=$(/usr/bin/python3 "$MODEL" "$ROOT") || fail "$name: the model failed"
        # the CPU table alone: the kubelet reads no PCI devices (test-topology-pci.sh does)
        run topology --fsroot "$ROOT" --json --no-pci
        case "$model" in
        "error: "*)
                expect_rc 2 "$name"
                expect_err_contains "${model#error: }" "$name"
                ;;
        *)
                expect_rc 0 "$name"
                [ "$OUT" = "$model" ] || {
                        printf '%s\n' "$model" >"$TMPD/model.json"
                        printf '%s\n' "$OUT" | diff -u "$TMPD/model.json" - >&2
                        fail "$name: nodecm and the model differ"
                }
                expect_golden "topologies/golden/$name.json" "$name"
                printf '%s\n' "$OUT" >"$TMPD/t.json"
                first=$OUT
                run topology --topology "$TMPD/t.json" --json
                expect_rc 0 "$name read back"
                [ "$OUT" = "$first" ] || fail "$name: --topology changed the table"
                ;;
        esac
        rm -rf "${X:?}/$name"
        n=$((n + 1))
done
[ "$n" -ge 36 ] || fail "only $n dumps"
finish
