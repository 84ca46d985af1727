# SPDX-License-Identifier: Apache-2.0
"""The memory manager through nodecmd's CRI proxy, in front of a real containerd.

nodecmd runs the shipped examples/cri/nodecmd.yaml with memoryManagerPolicy Static (the
kubelet's reservation: 100Mi on NUMA node 0, the hard eviction threshold) on this machine's
memory as cadvisor reads it. A python3-grpcio client sends what a kubelet with
cpuManagerPolicy none and memoryManagerPolicy None sends. Checked:
  - a Guaranteed container's memory request is its limit, to the byte (100000000, no multiple
    of a page): the memory manager's block in memory_manager_state has that size;
  - its cpuset.mems reaches containerd in CreateContainer (LinuxContainerResources.cpuset_mems,
    the kubelet's "0" form, as containerd's ContainerStatus reports the config it was given and
    the OCI spec it made), and the kernel's: the container's Mems_allowed_list;
  - a Burstable container has no cpuset_mems (the kubelet leaves it to the runtime): it keeps
    its parent's memory nodes;
  - a container whose memory no NUMA node holds fails CreateContainer with the memory
    manager's refusal, and nothing is created or pinned;
  - a restarted nodecmd restores the blocks and keeps the container's mems.
This machine has one NUMA node; several nodes, cross-NUMA groups and hugepages are tested on
fake machines (unit test node-mems). Everything is torn down on every exit path.
"""
import json
import os
import time

import runtimes as rt
import containerd as ctd

cl, tmp, cg, pb, svc, c, ALL = ctd.proxy_scene("nodecm-cri-memory-")
import grpc  # noqa: E402 (proxy_scene skips the test without it)

check = rt.check
daemon, kl, direct = ctd.proxy_node(cl, tmp, cg, pb, svc, c,
                                    "memoryManagerPolicy: Static\n"
                                    "evictionHard: {memory.available: 100Mi}\n"
                                    "reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]\n")
node_dir = daemon.node_dir
CMD = "exec sleep 100000"
EXACT = 100000000  # bytes: a request no kubelet quantity rounds


def parent_mems():
    with open("/sys/fs/cgroup/cpuset%s/cpuset.mems" % cg.path()) as f:
        return f.read().strip()


def seen_by_containerd(cid):
    """The config containerd was given, the OCI spec it made, and the process's allowed lists."""
    st = direct.rt.ContainerStatus(pb.ContainerStatusRequest(container_id=cid, verbose=True),
                                   timeout=10)
    info = json.loads(st.info["info"])
    res = info.get("config", {}).get("linux", {}).get("resources", {})
    spec = info.get("runtimeSpec", {}).get("linux", {}).get("resources", {})
    with open("/proc/%d/status" % info["pid"]) as f:
        status = f.read()
    allowed = {}
    for line in status.splitlines():
        for key in ("Cpus_allowed_list", "Mems_allowed_list"):
            if line.startswith(key + ":"):
                allowed[key] = line.split(":", 1)[1].strip()
    return {"cpuset_mems": res.get("cpuset_mems", ""),
            "memory": int(res.get("memory_limit_in_bytes", 0)),
            "spec_mems": spec.get("cpu", {}).get("mems", ""),
            "mems_allowed": allowed.get("Mems_allowed_list"),
            "cpus_allowed": allowed.get("Cpus_allowed_list")}


def blocks(uid, name):
    with open(os.path.join(node_dir, "memory_manager_state")) as f:
        state = json.load(f)
    return state.get("entries", {}).get(uid, {}).get(name, [])


def run(uid, req, lim):
    kl.run_pod(uid, uid, [("app", req, lim)])
    cid = kl.create(uid, "app", req, lim, CMD)
    kl.start(cid)
    return cid


# Guaranteed: its memory pinned to NUMA node 0, the request exactly its limit
g_lim = {"cpu": "1", "memory": str(EXACT)}
g = run("mg", g_lim, g_lim)
seen = seen_by_containerd(g)
print("mg: %s" % seen)
b = blocks("mg", "app")
print("mg's blocks: %s" % b)
check(b == [{"numaAffinity": [0], "type": "memory", "size": EXACT}],
      "the memory manager pinned %d bytes on NUMA node 0, the request being the limit: %s"
      % (EXACT, b))
check(seen["memory"] == EXACT, "containerd got the limit %d: %s" % (EXACT, seen["memory"]))
check(seen["cpuset_mems"] == "0", "CreateContainer carried cpuset_mems \"0\": %r"
      % seen["cpuset_mems"])
check(seen["spec_mems"] == "0", "containerd's OCI spec has cpu.mems \"0\": %r" % seen["spec_mems"])
check(seen["mems_allowed"] == "0", "the process may use NUMA node 0's memory: %r"
      % seen["mems_allowed"])
check(seen["cpus_allowed"] not in (None, rt.format_list(ALL)),
      "and runs on its exclusive CPU: %r" % seen["cpus_allowed"])

# Burstable: nothing pinned, cpuset_mems left to the runtime (the parent's nodes)
bst = run("mb", {"cpu": "100m", "memory": "32Mi"}, {"memory": "64Mi"})
seen = seen_by_containerd(bst)
print("mb: %s" % seen)
check(blocks("mb", "app") == [], "a Burstable container has no blocks")
check(seen["cpuset_mems"] == "", "a Burstable container's CreateContainer has no cpuset_mems: %r"
      % seen["cpuset_mems"])
check(seen["mems_allowed"] == parent_mems(), "it keeps its parent's memory nodes %s: %r"
      % (parent_mems(), seen["mems_allowed"]))

# more memory than NUMA node 0 has: the memory manager refuses, nothing is created
with open("/sys/devices/system/node/node0/meminfo") as f:
    total_kb = int([ln for ln in f if "MemTotal" in ln][0].split()[3])
huge = {"cpu": "1", "memory": str((total_kb + 1024 * 1024) * 1024)}
kl.run_pod("mx", "mx", [("app", huge, huge)])
try:
    kl.create("mx", "app", huge, huge, CMD)
    check(False, "a container asking for more memory than the machine has must be refused")
except grpc.RpcError as e:
    print("mx refused: %s %s" % (e.code(), e.details()))
    check("TopologyAffinityError" in e.details() or "[memorymanager]" in e.details(),
          "refused with the kubelet's reason: %s" % e.details())
check(blocks("mx", "app") == [], "the refusal pinned nothing")
listed = direct.rt.ListContainers(pb.ListContainersRequest(), timeout=10).containers
check(not any(x.labels.get("io.kubernetes.pod.uid") == "mx" for x in listed),
      "containerd has no container of mx")
kl.remove_pod("mx")

# hugepages: only where this machine has them (the memory manager's pools are nr_hugepages)
with open("/proc/meminfo") as f:
    pages = int([ln for ln in f if ln.startswith("HugePages_Total:")][0].split()[1])
if pages == 0:
    print("this machine has no hugepages (HugePages_Total: 0): hugepage blocks are tested on "
          "fake machines (unit test node-mems, cli-memory)")

# restarted: the blocks come back from memory_manager_state, the container keeps its mems
rc = daemon.stop()
check(rc == 0, "nodecmd stops with status 0 (got %s): %s" % (rc, daemon.tail()[-2000:]))
daemon.start()
for _ in range(100):
    try:
        kl.rt.Version(pb.VersionRequest(version="0.1.0"), timeout=5)
        break
    except grpc.RpcError:
        time.sleep(0.1)
time.sleep(1.5)  # a reconcile pass
check(blocks("mg", "app") == [{"numaAffinity": [0], "type": "memory", "size": EXACT}],
      "after a restart the blocks are as they were: %s" % blocks("mg", "app"))
seen = seen_by_containerd(g)
check(seen["mems_allowed"] == "0" and seen["cpuset_mems"] == "0",
      "after a restart and a reconcile mg keeps NUMA node 0: %s" % seen)
for uid in ("mg", "mb"):
    kl.remove_pod(uid)
rc = daemon.stop()
check(rc == 0, "nodecmd stops with status 0 (got %s): %s" % (rc, daemon.tail()[-2000:]))
rt.finish()
