#!/usr/bin/env python3
# Writes the kubelet test topologies (pkg/kubelet/cm/cpumanager/policy_test.go and the uncore
# fixtures) as nodecm topology JSON, one file per topology, into topo/. The regular ones are
# generated from their formulas; topoQuadSocketFourWayHT, whose core ids are irregular, is
# transcribed as a table. Go's zero values are kept: a fixture without UncoreCacheID has every
# CPU in uncore cache 0.
import json, os, sys

def cpu(c, core, socket, numa, uncore=0):
    return {"cpu": c, "core": core, "socket": socket, "numa": numa, "uncore": uncore}

T = {}
T["single-socket-ht"] = [cpu(i, i % 4, 0, 0) for i in range(8)]
T["dual-socket-ht"] = [cpu(i, i % 6, i % 2, i % 2) for i in range(12)]
T["dual-socket-noht"] = [cpu(i, i, i // 4, i // 4) for i in range(8)]
_tri_sock = lambda i: [1, 0, 2][i // 6]
T["triple-socket-ht"] = [cpu(i, i // 2, _tri_sock(i), _tri_sock(i)) for i in range(18)]
T["dual-socket-multi-numa-ht"] = [cpu(i, i % 40, (i % 40) // 20, (i % 40) // 10) for i in range(80)]
T["fake-multi-socket-dual-socket-per-numa-ht"] = [cpu(i, i % 40, (i % 40) // 10, (i % 40) // 20)
                                                  for i in range(80)]
T["dual-socket-multi-numa-ht-large"] = [cpu(i, i % 128, (i % 128) // 64, (i % 128) // 16)
                                        for i in range(256)]
T["uncore-single-socket-no-smt"] = [cpu(i, i, 0, 0, i // 4) for i in range(16)]
T["uncore-dual-socket-no-smt"] = [cpu(i, i, i // 8, i // 8, i // 4) for i in range(16)]
T["uncore-single-socket-multi-numa"] = [cpu(i, i, 0, i // 8, i // 4) for i in range(16)]
T["uncore-single-socket-smt"] = [cpu(i, i % 8, 0, 0, (i % 8) // 4) for i in range(16)]
# topology_hints_test.go's machine: cadvisor cores {0,6},{1,7},{2,8} on node 0 and
# {3,9},{4,10},{5,11} on node 1, uncore cache id 1 everywhere (core id = lowest thread)
T["hints-dual-numa-ht"] = [cpu(c, min(p), n, n, 1)
                           for n, pairs in enumerate([[(0, 6), (1, 7), (2, 8)], [(3, 9), (4, 10), (5, 11)]])
                           for p in pairs for c in p]

# The uncore-alignment machines of policy_test.go (TestStaticPolicyAddWithUncoreAlignment in
# policy_static_test.go), named after the Go variables in the comments. They are regular
# enough for formulas, which were checked against the Go tables. Two keep the
# fixture's quirks on purpose, because the kubelet's results are computed on them:
#  - topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore lists 64 CPUs (its NumCPUs says 128);
#  - topoDualSocketMultiNumaPerSocketUncore numbers cores per socket, so core ids 0-95 repeat
#    on socket 1 (NumCores says 192).
# topoDualSocketSingleNumaPerSocketSMTUncore: 2 x 96 cores x 2 threads, 8 cores per uncore
T["uncore-dual-socket-smt"] = [cpu(i, i % 192, (i % 192) // 96, (i % 192) // 96, (i % 192) // 8)
                               for i in range(384)]
# topoSingleSocketSingleNumaPerSocketSMTSmallUncore: 64 cores x 2 threads, 4 cores per uncore
T["uncore-single-socket-smt-small"] = [cpu(i, i % 64, 0, 0, (i % 64) // 4) for i in range(128)]
# topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore: 64 cores, 4 per uncore
T["uncore-single-socket-no-smt-small"] = [cpu(i, i, 0, 0, i // 4) for i in range(64)]
# topoSmallDualSocketSingleNumaPerSocketNoSMTUncore: 2 x 32 cores, 8 per uncore
T["uncore-small-dual-socket-no-smt"] = [cpu(i, i, i // 32, i // 32, i // 8) for i in range(64)]
# topoLargeSingleSocketSingleNumaPerSocketSMTUncore: 128 cores x 2 threads, 8 cores per uncore
T["uncore-large-single-socket-smt"] = [cpu(i, i % 128, 0, 0, (i % 128) // 8) for i in range(256)]
# topoDualSocketMultiNumaPerSocketUncore: 2 sockets x 2 NUMA nodes x 48 cores, 8 per uncore
T["uncore-dual-socket-multi-numa"] = [cpu(i, i % 96, i // 96, i // 48, i // 8) for i in range(192)]
# topoDualSocketSubNumaPerSocketHTMonolithicUncore: 2 sockets x 2 NUMA nodes x 30 cores x 2
# threads, one uncore cache per socket
T["uncore-dual-socket-sub-numa-ht-monolithic"] = [
    cpu(i, i % 120, (i % 120) // 60, (i % 120) // 30, (i % 120) // 60) for i in range(240)]
# topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore: 8 E-cores (CPUs 0-7), 8 P-cores
# with two threads (8-15 and 16-23), one uncore cache
T["uncore-single-socket-pcore-ht-monolithic"] = [cpu(i, i if i < 16 else i - 8, 0, 0)
                                                 for i in range(24)]
# topoLargeSingleSocketSingleNumaPerSocketUncore: 128 cores, 8 per uncore
T["uncore-large-single-socket"] = [cpu(i, i, 0, 0, i // 8) for i in range(128)]
# topoSingleSocketSingleNumaPerSocketUncore: 64 cores, one uncore cache
T["uncore-single-socket-monolithic"] = [cpu(i, i, 0, 0) for i in range(64)]
# topoSmallSingleSocketSingleNumaPerSocketNoSMTUncore: its Go table was not found in any
# stored copy of policy_test.go; it is rebuilt from what the two test cases using it state:
# no SMT, "8 cpus per uncore", and "every uncore has partially allocated 4 CPUs" once
# 8-11, 16-19 and 24-27 are taken besides the reserved 0-3, so exactly uncore caches 0-3.
T["uncore-small-single-socket-no-smt"] = [cpu(i, i, 0, 0, i // 8) for i in range(32)]

# Machines where kubelet generations differ (nodecm's own, not the kubelet's fixtures):
# an Intel hybrid with 6 P-cores (two adjacent threads: CPUs 0-11) and 8 E-cores (12-19),
# as an i5-13500; NumCPUs / NumCores = 20 / 14 = 1 "CPU per core"
T["hybrid-6p8e"] = [cpu(i, i - i % 2 if i < 12 else i, 0, 0) for i in range(20)]
# 4 cores x 2 threads (k, k+4) with CPU 7 offline: 7 CPUs / 4 cores = 1 "CPU per core"
T["offline-thread"] = [cpu(i, i % 4, 0, 0) for i in range(7)]
# one NUMA node, socket 0 with 10 CPUs (0-9), socket 1 with 6 (10-15): 8 "CPUs per socket"
T["uneven-sockets"] = [cpu(i, i, 0 if i < 10 else 1, 0, 0 if i < 10 else 1) for i in range(16)]
# no SMT, uncore cache 0 with CPUs 0-5 and cache 1 with 6-7: 4 "CPUs per uncore cache"
T["uneven-uncore"] = [cpu(i, i, 0, 0, 0 if i < 6 else 1) for i in range(8)]
# SMT, threads (k, k+4), cores 0-1 on uncore cache 0, cores 2-3 on cache 1
T["uncore-smt-2x2"] = [cpu(i, i % 4, 0, 0, (i % 4) // 2) for i in range(8)]

QUAD = [  # socket, core, cpus
    (0, 0, [0, 169, 109, 229]), (0, 1, [50, 170, 110, 230]), (0, 64, [1, 25, 13, 38]),
    (0, 65, [2, 26, 14, 39]), (0, 72, [9, 33, 21, 46]), (0, 73, [10, 34, 22, 47]),
    (0, 8, [57, 177, 117, 237]), (0, 9, [58, 178, 118, 238]), (0, 24, [71, 191, 131, 251]),
    (0, 25, [72, 192, 132, 252]), (0, 32, [79, 199, 139, 259]), (0, 33, [80, 200, 140, 260]),
    (0, 40, [87, 207, 147, 267]), (0, 41, [88, 208, 148, 268]), (0, 48, [95, 215, 155, 275]),
    (0, 49, [96, 216, 156, 276]), (0, 56, [103, 223, 163, 283]), (0, 57, [104, 224, 164, 284]),
    (1, 66, [3, 27, 15, 40]), (1, 67, [4, 28, 16, 41]), (1, 74, [11, 35, 23, 48]),
    (1, 75, [12, 36, 24, 49]), (1, 2, [51, 171, 111, 231]), (1, 3, [52, 172, 112, 232]),
    (1, 10, [59, 179, 119, 239]), (1, 11, [60, 180, 120, 240]), (1, 18, [65, 185, 125, 245]),
    (1, 19, [66, 186, 126, 246]), (1, 26, [73, 193, 133, 253]), (1, 27, [74, 194, 134, 254]),
    (1, 34, [81, 201, 141, 261]), (1, 35, [82, 202, 142, 262]), (1, 42, [89, 209, 149, 269]),
    (1, 43, [90, 210, 150, 270]), (1, 50, [97, 217, 157, 277]), (1, 51, [98, 218, 158, 278]),
    (2, 68, [5, 29, 17, 42]), (2, 69, [6, 30, 18, 43]), (2, 4, [53, 173, 113, 233]),
    (2, 5, [54, 174, 114, 234]), (2, 12, [61, 181, 121, 241]), (2, 13, [62, 182, 122, 242]),
    (2, 20, [67, 187, 127, 247]), (2, 21, [68, 188, 128, 248]), (2, 28, [75, 195, 135, 255]),
    (2, 29, [76, 196, 136, 256]), (2, 36, [83, 203, 143, 263]), (2, 37, [84, 204, 144, 264]),
    (2, 44, [91, 211, 151, 271]), (2, 45, [92, 212, 152, 272]), (2, 52, [99, 219, 159, 279]),
    (2, 53, [100, 220, 160, 280]), (2, 60, [105, 225, 165, 285]), (2, 61, [106, 226, 166, 286]),
    (3, 70, [7, 31, 19, 44]), (3, 71, [8, 32, 20, 45]), (3, 63, [37, 168, 108, 228]),
    (3, 62, [107, 227, 167, 287]), (3, 6, [55, 175, 115, 235]), (3, 7, [56, 176, 116, 236]),
    (3, 14, [63, 183, 123, 243]), (3, 15, [64, 184, 124, 244]), (3, 22, [69, 189, 129, 249]),
    (3, 23, [70, 190, 130, 250]), (3, 30, [77, 197, 137, 257]), (3, 31, [78, 198, 138, 258]),
    (3, 38, [85, 205, 145, 265]), (3, 39, [86, 206, 146, 266]), (3, 46, [93, 213, 153, 273]),
    (3, 47, [94, 214, 154, 274]), (3, 54, [101, 221, 161, 281]), (3, 55, [102, 222, 162, 282]),
]
T["quad-socket-four-way-ht"] = [cpu(c, core, s, s) for s, core, cs in QUAD for c in cs]

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "topo")
for name, cpus in T.items():
    cpus = sorted(cpus, key=lambda c: c["cpu"])
    assert len({c["cpu"] for c in cpus}) == len(cpus), name
    with open(os.path.join(out, name + ".json"), "w") as f:
        f.write('{"cpus": [\n')
        f.write(",\n".join("  " + json.dumps(c) for c in cpus))
        f.write("\n]}\n")
