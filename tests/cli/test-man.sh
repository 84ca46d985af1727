#!/bin/sh
# Every man page in docs/man renders with groff without a warning, and every nodecm command
# has its NAME in nodecm(1).
. "$(dirname "$0")/lib.sh"
SRC=${NCM_SOURCE_ROOT:?run through meson test}
command -v groff >/dev/null 2>&1 || { echo "SKIP: groff is not installed"; exit 77; }

for page in "$SRC"/docs/man/*.[1-8]; do
        groff -man -ww -z -Tutf8 "$page" 2>"$TMPD/warn"
        [ -s "$TMPD/warn" ] && fail "$page: $(cat "$TMPD/warn")"
done
run --help
for cmd in $(printf '%s\n' "$OUT" | awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}'); do
        grep -q "^\.B $(printf '%s' "$cmd" | sed 's/-/\\\\-/g')\$" "$SRC/docs/man/nodecm.1" ||
                fail "nodecm.1 does not list the command $cmd"
done
finish
