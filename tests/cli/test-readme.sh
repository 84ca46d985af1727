#!/bin/sh
# The README's "things to try" run as written (from the source tree, with this build's nodecm
# and a temporary directory for /tmp), each exiting 0.
. "$(dirname "$0")/lib.sh"
SRC=${NCM_SOURCE_ROOT:?run through meson test}

awk '/^Some things to try/ {on = 1; next} on && /^```$/ {n++; if (n == 2) exit; next}
     on && n == 1 && /^build\/nodecm / {print}' "$SRC/README.md" >"$TMPD/lines"
[ -s "$TMPD/lines" ] || fail "no lines found in the README's things to try"
cd "$SRC" || exit 1
while IFS= read -r line; do
        cmd=$(printf '%s\n' "$line" | sed -e 's/[[:space:]]*#.*$//' -e "s|^build/nodecm|\"\$NODECM\"|" \
                -e "s|/tmp/|$TMPD/|g")
        eval "$cmd" >"$TMPD/out" 2>"$TMPD/err"
        rc=$?
        [ $rc -eq 0 ] || fail "README: [$line] exit $rc: $(head -c 300 "$TMPD/err")"
done <"$TMPD/lines"
finish
