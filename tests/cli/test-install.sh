#!/bin/sh
# meson install puts the binary, the library, the public headers, nodecm.pc and the man pages
# in place, and a program builds against them with pkg-config alone.
. "$(dirname "$0")/lib.sh"
BUILD=${NCM_BUILD_ROOT:?run through meson test}
command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: no pkg-config"; exit 77; }

DEST="$TMPD/dest"
meson install -C "$BUILD" --no-rebuild --destdir "$DEST" >"$TMPD/log" 2>&1 ||
        { fail "meson install: $(tail -5 "$TMPD/log")"; finish; }
pc=$(find "$DEST" -name nodecm.pc | head -1)
[ -n "$pc" ] || fail "no nodecm.pc installed"
[ -n "$(find "$DEST" -path '*/include/nodecm/node.h')" ] || fail "node.h not installed"
[ -n "$(find "$DEST" -path '*/man1/nodecm-node.1*')" ] || fail "nodecm-node.1 not installed"
[ -n "$(find "$DEST" -name 'libnodecm.so*')" ] || fail "libnodecm.so not installed"
[ -n "$(find "$DEST" -path '*/bin/nodecm')" ] || fail "nodecm not installed"
[ -n "$(find "$DEST" -path '*/sbin/nodecmd')" ] || fail "nodecmd not installed"
[ -n "$(find "$DEST" -path '*/man8/nodecmd.8*')" ] || fail "nodecmd.8 not installed"
# Headers that include one another must stand alone: a program includes them all.
if [ -n "$pc" ] && [ "${NCM_SANITIZE:-none}" = none ]; then
        {
                for h in $(cd "$(dirname "$(find "$DEST" -path '*/include/nodecm/node.h')")" && ls *.h); do
                        echo "#include <nodecm/$h>"
                done
                echo 'int main(void) { ncm_cpuset *s = ncm_cpuset_new(); int ok = s != NULL; ncm_cpuset_free(s); return ok ? 0 : 1; }'
        } >"$TMPD/app.c"
        export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$DEST"
        cc -std=gnu11 -Wall -Werror -o "$TMPD/app" "$TMPD/app.c" $(pkg-config --cflags --libs nodecm) \
                2>"$TMPD/cc" || fail "build against the installed library: $(head -c 600 "$TMPD/cc")"
        LD_LIBRARY_PATH=$(dirname "$(find "$DEST" -name 'libnodecm.so' | head -1)") "$TMPD/app" ||
                fail "the program built against the installed library does not run"
fi
finish
