#!/bin/sh
# nodecm hints on machines with many NUMA nodes: the full array streamed (the same as the
# kubelet's list), one page with --limit/--offset and the exact total, and the paging options'
# bad input.
. "$(dirname "$0")/lib.sh"

H="$DATA/cpumanager/topo/hints-dual-numa-ht.json"

# a page of the small machine: total and the first hint
run hints --topology "$H" --available 2-11 --count 2 --limit 1
expect_rc 0 "limit 1"
expect_out '{"total": 3, "offset": 0, "limit": 1, "hints": [{"numa": [0], "preferred": true}]}' "limit 1"
run hints --topology "$H" --available 2-11 --count 2 --limit 5 --offset 2
expect_out '{"total": 3, "offset": 2, "limit": 5, "hints": [{"numa": [0, 1], "preferred": false}]}' "offset 2"
run hints --topology "$H" --available 2-11 --count 11 --limit 0
expect_out '{"total": 0, "offset": 0, "limit": 0, "hints": []}' "nothing fits"

# pages put together are the whole array
full=$("$NODECM" hints --synthetic "package:2 numa:2 core:2 pu:2" --available 0-15 --reusable 1 --count 3)
pieces=""
for off in 0 4 8 12; do
        p=$("$NODECM" hints --synthetic "package:2 numa:2 core:2 pu:2" --available 0-15 --reusable 1 \
                --count 3 --limit 4 --offset $off | sed -e 's/.*"hints": \[//' -e 's/\]}$//')
        [ -n "$p" ] || continue
        pieces="${pieces:+$pieces, }$p"
done
[ "[$pieces]" = "$full" ] || fail "pages: [$pieces] vs $full"

# 32 NUMA nodes (512 CPUs): 2^32 - 1 masks, counted exactly, the first page at once
run hints --synthetic "package:2 numa:16 core:8 pu:2" --available 0-511 --count 4 --limit 2
expect_rc 0 "32 nodes"
expect_out '{"total": 4294967295, "offset": 0, "limit": 2, "hints": [{"numa": [0], "preferred": true}, {"numa": [1], "preferred": true}]}' "32 nodes"
# 64 NUMA nodes: every mask but the 64 single nodes and 2016 pairs holds 40 CPUs
run hints --synthetic "package:2 numa:32 core:8 pu:2" --available 0-1023 --count 40 --limit 1
expect_out '{"total": 18446744073709549535, "offset": 0, "limit": 1, "hints": [{"numa": [0, 1, 2], "preferred": true}]}' "64 nodes"

# the whole array of a 16-node machine, streamed: 65535 hints
run hints --synthetic "package:2 numa:8 core:8 pu:2" --available 0-255 --count 4
expect_rc 0 "16 nodes"
[ "$(printf '%s' "$OUT" | grep -o '"numa"' | wc -l)" -eq 65535 ] || fail "16 nodes: 65535 hints"

run hints --topology "$H" --available 0-3 --count 1 --limit -1
expect_rc 2 "negative limit"
expect_err_contains "--limit '-1': expected a number (0 or more)" "negative limit"
run hints --topology "$H" --available 0-3 --count 1 --offset 3
expect_rc 2 "offset alone"
expect_err_contains "--offset needs --limit" "offset alone"
run take --topology "$H" --available 0-3 --count 1 --limit 3
expect_rc 2 "take has no pages"
expect_err_contains "unknown option '--limit'" "take has no pages"

finish
