#!/bin/sh
# PCI devices: on every dump of tests/data/topologies that has some (hwloc's and the fakepci-*
# machines make-fake.py builds), `nodecm topology --fsroot ROOT --json` lists the functions
# lstopo lists, with the same ids, bridges and locality (pci-lstopo.py), as the reviewed golden
# says, and reads back unchanged; the tree lists them by locality; --no-pci leaves them out; a
# damaged file is named.
. "$(dirname "$0")/lib.sh"

CHECK="$(dirname "$0")/pci-lstopo.py"
X=$(mktemp -d /dev/shm/nodecm-pci-XXXXXX 2>/dev/null || mktemp -d "$TMPD/x-XXXXXX")
trap 'rm -rf "$TMPD" "$X"' EXIT

extract() {
        mkdir -p "$X/$1"
        tar -xjf "$DATA/topologies/$1.tar.bz2" -C "$X/$1" || fail "extract $1"
        ROOT=$(dirname "$(find "$X/$1" -maxdepth 4 -type d -name sys | head -1)")
}

n=0
for name in 2pa-pcidomain32bits 32em64t-2n8c+dax+nvme+mic+dimms 40intel64-4n10c+pci-conflicts \
        fakepcilocalities nvidiagpunumanodes fakepci-2s4r fakepci-nonuma fakepci-256; do
        extract "$name"
        if command -v lstopo-no-graphics >/dev/null; then
                /usr/bin/python3 "$CHECK" "$NODECM" "$ROOT" >"$TMPD/check" 2>&1 ||
                        fail "$name: nodecm and lstopo differ: $(cat "$TMPD/check")"
        fi
        run topology --fsroot "$ROOT" --json
        expect_rc 0 "$name"
        case "$OUT" in *'"pci": [{"address": '*) ;; *) fail "$name: no pci list" ;; esac
        printf '%s\n' "$OUT" | sed -n '/^ "pci": \[/,$p' >"$TMPD/pci.json"
        OUT=$(cat "$TMPD/pci.json")
        expect_golden "topologies/golden/pci/$name.json" "$name"
        run topology --fsroot "$ROOT" --json
        printf '%s\n' "$OUT" >"$TMPD/t.json"
        first=$OUT
        run topology --topology "$TMPD/t.json" --json
        expect_rc 0 "$name read back"
        [ "$OUT" = "$first" ] || fail "$name: --topology changed the table"
        run topology --fsroot "$ROOT" --no-pci --json
        case "$OUT" in *'"pci"'*) fail "$name: --no-pci printed PCI devices" ;; esac
        run topology --topology "$TMPD/t.json" --no-pci --json
        case "$OUT" in *'"pci"'*) fail "$name: --no-pci printed a file's PCI devices" ;; esac
        n=$((n + 1))
        [ "$name" = fakepci-2s4r ] || rm -rf "${X:?}/$name"
done
[ "$n" -eq 8 ] || fail "only $n dumps"

# the tree, by locality
extract fakepci-2s4r
run topology --fsroot "$ROOT"
expect_rc 0 "tree"
printf '%s\n' "$OUT" | sed -n '/^PCI devices/,$p' >"$TMPD/tree"
cmp -s "$TMPD/tree" "$DATA/topologies/golden/pci/fakepci-2s4r.txt" ||
        fail "tree: $(diff -u "$DATA/topologies/golden/pci/fakepci-2s4r.txt" "$TMPD/tree")"
run topology --fsroot "$ROOT" --no-pci
case "$OUT" in *"PCI devices"*) fail "--no-pci printed the PCI tree" ;; esac

# this machine: whatever it has, listed and read back
run topology --json
expect_rc 0 "this machine"
printf '%s\n' "$OUT" >"$TMPD/me.json"
first=$OUT
run topology --topology "$TMPD/me.json" --json
[ "$OUT" = "$first" ] || fail "this machine: --topology changed the table"

# damaged files are named, under the root; nothing is printed
printf 'PCI_CLASS=ethernet\nPCI_ID=15B3:1017\n' >"$ROOT/sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.0/uevent"
printf 'ethernet\n' >"$ROOT/sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.0/class"
run topology --fsroot "$ROOT"
expect_rc 2 "bad class"
expect_out "" "bad class: stdout"
expect_err_contains "--fsroot $ROOT: /sys/bus/pci/devices/0000:c1:00.0/class: cannot parse 'ethernet'" "bad class"
run topology --fsroot "$ROOT" --no-pci
expect_rc 0 "--no-pci does not read PCI devices"
printf '{"cpus": [{"cpu": 0, "core": 0, "socket": 0, "numa": 0, "uncore": 0}], "pci": [{"address": "3b:00.0", "numa": "one"}]}' >"$TMPD/bad.json"
run topology --topology "$TMPD/bad.json"
expect_rc 2 "json pci field"
expect_err_contains "$TMPD/bad.json: pci[0].numa: expected" "json pci field"
finish
