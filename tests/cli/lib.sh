# Shared helpers for the shell-driven CLI tests. Source it; it sets NODECM and DATA.
set -u
NODECM=${NCM_NODECM:?run through meson test}
DATA=${NCM_TEST_DATA:?run through meson test}
FAILS=0
TMPD=$(mktemp -d "${NCM_TEST_BUILD:-/tmp}/cli-XXXXXX")
trap 'rm -rf "$TMPD"' EXIT

# run ARGS...: runs nodecm, leaving $OUT, $ERR and $RC.
run() {
        "$NODECM" "$@" >"$TMPD/out" 2>"$TMPD/err"
        RC=$?
        OUT=$(cat "$TMPD/out")
        ERR=$(cat "$TMPD/err")
}

fail() {
        echo "FAIL: $*" >&2
        FAILS=$((FAILS + 1))
}

# expect_rc N DESCRIPTION
expect_rc() {
        [ "$RC" -eq "$1" ] || fail "$2: exit $RC, expected $1 (stderr: $ERR)"
}

# expect_out TEXT DESCRIPTION
expect_out() {
        [ "$OUT" = "$1" ] || fail "$2: stdout was [$OUT], expected [$1]"
}

# expect_err_contains TEXT DESCRIPTION: stderr is one line containing TEXT.
expect_err_contains() {
        case "$ERR" in
        *"$1"*) ;;
        *) fail "$2: stderr was [$ERR], expected it to contain [$1]" ;;
        esac
        [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail "$2: stderr has more than one line: [$ERR]"
}

# expect_golden FILE DESCRIPTION: stdout equals $DATA/FILE (NCM_UPDATE_GOLDEN=1 rewrites it).
expect_golden() {
        if [ "${NCM_UPDATE_GOLDEN:-0}" = 1 ]; then
                printf '%s\n' "$OUT" >"$DATA/$1"
        elif ! printf '%s\n' "$OUT" | diff -u "$DATA/$1" - >&2; then
                fail "$2: stdout differs from $1"
        fi
}

# finish: exit status for meson.
finish() {
        if [ "$FAILS" -ne 0 ]; then
                echo "$FAILS failure(s)" >&2
                exit 1
        fi
        exit 0
}
