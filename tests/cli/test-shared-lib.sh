#!/bin/sh
# The CLI built against libnodecm.so (build/cli/nodecm-shared) links at all only if it uses
# nothing but exported NCM_API symbols; here it also gives the same answers as build/nodecm.
. "$(dirname "$0")/lib.sh"
SHARED=${NCM_NODECM_SHARED:?run through meson test}

# same ARGS...: both binaries print the same stdout and exit the same way.
same() {
        run "$@"
        want_out=$OUT
        want_rc=$RC
        "$SHARED" "$@" >"$TMPD/sout" 2>"$TMPD/serr"
        src=$?
        [ "$src" -eq "$want_rc" ] || fail "$*: nodecm-shared exit $src, nodecm $want_rc"
        [ "$(cat "$TMPD/sout")" = "$want_out" ] || fail "$*: nodecm-shared stdout differs"
}

same --help
same topology --synthetic "package:2 core:4 pu:2" --json
same take --synthetic "package:2 core:4 pu:2" --available 0-15 --count 4
same merge "$DATA/merge/design-example.json"
same simulate --json "$DATA/scenarios/design.json"
same checkpoint verify "$DATA/checkpoints/kubelet/v3-native.json"
finish
