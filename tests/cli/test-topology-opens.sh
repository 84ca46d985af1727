#!/bin/sh
# What `nodecm topology` opens is a contract (docs/topology.md, "What is opened"): cadvisor's
# files for the kubelet's table, lstopo's per PCI function, and nothing else. On three dumps
# (the 256-CPU one, the same with 208 PCI functions, a real machine with caches, hugepage
# pools and PCI devices) the files opened, listed, probed and read as links, traced with
# strace, equal the reviewed lists in topologies/golden/opened/ (NCM_UPDATE_GOLDEN=1 rewrites
# them).
. "$(dirname "$0")/lib.sh"

command -v strace >/dev/null || { echo "SKIP: strace is not installed (tools/setup.sh)"; exit 77; }
strace -f -o /dev/null true 2>/dev/null || { echo "SKIP: strace cannot trace here"; exit 77; }

X=$(mktemp -d /dev/shm/nodecm-opens-XXXXXX 2>/dev/null || mktemp -d "$TMPD/x-XXXXXX")
trap 'rm -rf "$TMPD" "$X"' EXIT

for name in 256ia64-64n2s2c fakepci-256 32em64t-2n8c+dax+nvme+mic+dimms; do
        mkdir "$X/$name"
        tar -xjf "$DATA/topologies/$name.tar.bz2" -C "$X/$name" || fail "extract $name"
        ROOT=$(dirname "$(find "$X/$name" -maxdepth 4 -type d -name sys | head -1)")
        ROOT=$(cd "$ROOT" && pwd -P)
        # LeakSanitizer cannot run under ptrace: the ASan build checks leaks in the other
        # topology tests, not here
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
                strace -f -y -qq -e trace=openat2,readlinkat -e signal=none -o "$TMPD/log" \
                "$NODECM" topology --fsroot "$ROOT" >"$TMPD/out" 2>"$TMPD/err"
        RC=$?
        ERR=$(cat "$TMPD/err")
        expect_rc 0 "$name"
        OUT=$(/usr/bin/python3 "$(dirname "$0")/opened-files.py" "$ROOT" "$TMPD/log") ||
                fail "$name: cannot read the trace"
        [ -n "$OUT" ] || fail "$name: nothing opened under the root"
        expect_golden "topologies/golden/opened/$name.txt" "$name"
        rm -rf "${X:?}/$name"
done
finish
