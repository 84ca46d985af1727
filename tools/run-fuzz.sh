#!/bin/sh
# Run every libFuzzer target of a fuzz build for SECONDS each, starting from the committed
# seed corpus (tests/fuzz/corpus/<target>/). New inputs go to a scratch corpus, so the source
# tree is not modified; crashes are kept in BUILD/fuzz-artifacts/.
set -eu
build=${1:-build-fuzz}
seconds=${2:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build/fuzz-artifacts"
status=0
for exe in "$build"/tests/fuzz/fuzz-*; do
        [ -f "$exe" ] && [ -x "$exe" ] || continue
        name=$(basename "$exe" | sed 's/^fuzz-//')
        scratch="$build/fuzz-corpus/$name"
        mkdir -p "$scratch"
        seeds="$src/tests/fuzz/corpus/$name"
        [ -d "$seeds" ] || seeds=""
        printf 'fuzz %-20s %ss ... ' "$name" "$seconds"
        if "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
                -artifact_prefix="$build/fuzz-artifacts/$name-" "$scratch" $seeds \
                >"$build/fuzz-$name.log" 2>&1; then
                echo ok
        else
                echo FAILED
                tail -40 "$build/fuzz-$name.log" >&2
                status=1
        fi
done
exit $status
