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
        echo "Machine load (/proc/loadavg: 1, 5, 15 minutes, runnable/threads) when the run began:"
        echo "\`$(cat /proc/loadavg)\`; when it ended: see the end of this file. On a shared VM a"
        echo "loaded run's rows are slower than a quiet one's; compare rows of one run."
        echo
        echo "The kubelet columns were measured with the kubelet's own Go code on this machine class"
        echo "(2 vCPU AMD EPYC VM) **on another day, not in this run**: a ratio against them divides"
        echo "figures of two days (and two loads). Targets set for nodecm: takeByTopology and hint generation at least"
        echo "100x faster than the kubelet on every row, with the same results; topology-manager"
        echo "admission with 3 providers offering every hint at most 1 ms at 8 NUMA nodes and 50 ms at"
        echo "16; on many NUMA nodes (issue 14, bench-admission) one admission at most 200 µs at 16 NUMA"
        echo "nodes, 500 µs and 8 MB at 32, 1 ms and 8 MB at 64 (issue 21, bench-mem-admission: the same"
        echo "bounds with the memory manager and a device plugin beside the CPU manager),"
        echo "\`simulate --explain\` of 1,000 pods at 16"
        echo "NUMA nodes at most 2 s and 100 MB, the 32-NUMA example under 1 s and 50 MB; nodecmd"
        echo "(issue 11, bench-nodecmd) at most 8 MB of RSS with 100 pods on 384 CPUs, a start-up of at"
        echo "most 20 ms on this machine and 50 ms on the 256-CPU dump, an Admit round trip over the"
        echo "control socket of at most 300 µs (median, C and python clients, 64 CPUs), and no RSS growth"
        echo "over 10,000 admissions and removals; big pods (issue 20, bench-bigpod): admission cost"
        echo "linear in the pod's size, the largest request nodecmd accepts (128 KiB) admitted in at most"
        echo "100 ms, the RSS back within 1 MB of its baseline after it; device plugins (issue 12,"
        echo "bench-deviceplugin): a"
        echo "ListAndWatch update of 30,000 devices processed in at most 50 ms, and an admission with a"
        echo "device recorded beside the same one without; real runtimes (issue 13): the OCI hook's wall"
        echo "time at most 15 ms (bench-oci-hook), CreateContainer through nodecmd's CRI proxy at most"
        echo "1 ms slower than directly to containerd (median), and a reconcile of 500 containers"
        echo "(bench-cri); PCI discovery on a 256-CPU dump at least 5x faster than lstopo, and an"
        echo "admission that locates its devices within those bounds (issue 24, bench-topology,"
        echo "bench-locality); the node map (issue 26, bench-map): the 64-NUMA machine's page at most"
        echo "1 MB and quick to render. The tables below say where each stands. On a 2-CPU"
        echo "VM shared with other work, single rows can move"
        echo "by up to 2x between runs (disk-bound rows, with fsync, by far more)."
        echo
        for name in topology cpuset cpu-assignment cpu-hints tm-merge simulate admission mem-admission node-path locality rpc nodecmd bigpod oci-hook deviceplugin cri map; do
                exe="$build/bench/bench-$name"
                [ -x "$exe" ] || continue
                "$exe"
                echo
        done
        echo "Machine load when the run ended: \`$(cat /proc/loadavg)\`."
} >"$tmp"
mv "$tmp" "$out"
echo "wrote $out" >&2
