#!/bin/sh
# Run every bench program of a build and write bench/RESULTS.md.
set -eu
build=${1:-build-bench}
out=${2:-bench/RESULTS.md}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
        echo "# nodecm benchmark results"
        echo
        echo "Written by \`make bench\` ($(date -u +%Y-%m-%d)). Medians of 9 timed batches; release build"
        echo "(\`-O3\`, no sanitizers). Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
        echo "$(nproc) CPUs, $(uname -sr)."
        echo
        for name in topology cpuset cpu-assignment cpu-hints tm-merge simulate; do
                exe="$build/bench/bench-$name"
                [ -x "$exe" ] || continue
                "$exe"
                echo
        done
} >"$tmp"
mv "$tmp" "$out"
echo "wrote $out" >&2
