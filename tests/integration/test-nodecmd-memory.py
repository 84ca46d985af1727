# SPDX-License-Identifier: Apache-2.0
"""nodecmd with the memory manager's Static policy: the machine's memory from --numa-memory,
Admit answering the blocks, memory_manager_state in the root directory, the pod resources API's
ContainerMemory and allocatable memory, a refusal by the memory manager, and a restart that
validates the file (and refuses one that no longer fits). Run with /usr/bin/python3."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dplib  # noqa: E402
import nodecmd_test as T  # noqa: E402

TOPOLOGY = "package:2 numa:1 core:4 pu:2"
MEMORY = "16Gi,hugepages-1Gi=8"


def pod(uid, mem, hugepages):
    limits = {"cpu": "2", "memory": mem, "hugepages-1Gi": hugepages}
    return T.pod_json(uid, containers=[{"name": "db", "resources": {"limits": limits}}])


def main():
    grpc, pb, svc, tmp = T.setup("ncm-nodecmd-mem-")
    stubs = dplib.gen_stubs()
    cfg = os.path.join(tmp, "kubelet.yaml")
    T.write_config(cfg, memoryManagerPolicy="Static",
                   kubeReserved={"memory": "512Mi"}, systemReserved={"memory": "512Mi"},
                   evictionHard={"memory.available": "100Mi"},
                   reservedMemory="[{numaNode: 0, limits: {memory: 562Mi}}, "
                                  "{numaNode: 1, limits: {memory: 562Mi}}]")
    root = os.path.join(tmp, "root")
    log = os.path.join(tmp, "nodecmd.log")
    d = T.Daemon(cfg, root, log, topology=TOPOLOGY, extra=["--numa-memory", MEMORY]).start()
    stub = svc.NodeStub(grpc.insecure_channel(d.target()))

    a = stub.Admit(pb.AdmitRequest(pod=pod("pg", "4Gi", "4Gi").encode()), timeout=30)
    blocks = sorted((b.type, b.size, list(b.numa_affinity)) for b in a.containers[0].memory) \
        if a.admitted else []
    T.check("Admit: the memory manager's blocks, on the CPUs' NUMA node",
            a.admitted and blocks == [("hugepages-1Gi", 4 << 30, [0]), ("memory", 4 << 30, [0])]
            and list(a.containers[0].numa) == [0], repr(a))
    state = os.path.join(root, "memory_manager_state")
    with open(state) as f:
        text = f.read()
    T.check("memory_manager_state in the root directory", '"policyName":"Static"' in text
            and '"pg"' in text, text[:200])
    rc, out, err = T.nodecm("checkpoint", "verify", state)
    T.check("`nodecm checkpoint verify` accepts it", rc == 0, out + err)

    # a replica with 6Gi of hugepages: node 1 (node 0 has 4Gi left)
    rep = stub.Admit(pb.AdmitRequest(pod=pod("rep", "4Gi", "6Gi").encode()), timeout=30)
    T.check("the replica on node 1", rep.admitted and list(rep.containers[0].numa) == [1],
            repr(rep))
    with open(state) as f:
        text = f.read()
    # 5Gi of hugepages: 4Gi left on node 0, 2Gi on node 1, and [0,1] is no hint (the group
    # rule): the memory manager has no preference, the merge takes the CPUs' node, and its
    # Allocate cannot place the pages there (examples/memory-hugepages-db.yaml)
    r = stub.Admit(pb.AdmitRequest(pod=pod("an", "2Gi", "5Gi").encode()), timeout=30)
    T.check("a refusal by the memory manager's Allocate, the file unchanged",
            not r.admitted and r.reason == "UnexpectedAdmissionError"
            and open(state).read() == text, repr(r))

    podres = os.path.join(root, "pod-resources", "kubelet.sock")
    lst = dplib.podres(stubs, podres, "list")
    mem = []
    for p in lst.get("pod_resources", []):
        for c in p.get("containers", []):
            mem += [(p["name"], m["memory_type"], int(m["size"]),
                     [int(n.get("ID", 0)) for n in m["topology"]["nodes"]])
                    for m in c.get("memory", [])]
    T.check("pod resources List: ContainerMemory", sorted(mem) == [
        ("pg", "hugepages-1Gi", 4 << 30, [0]), ("pg", "memory", 4 << 30, [0]),
        ("rep", "hugepages-1Gi", 6 << 30, [1]), ("rep", "memory", 4 << 30, [1])],
        json.dumps(lst))
    al = dplib.podres(stubs, podres, "allocatable")
    types = sorted((m["memory_type"], [int(n.get("ID", 0)) for n in m["topology"]["nodes"]])
                   for m in al.get("memory", []))
    T.check("pod resources GetAllocatableResources: memory per node and type", types == [
        ("hugepages-1Gi", [0]), ("hugepages-1Gi", [1]), ("memory", [0]), ("memory", [1])],
        json.dumps(al))

    # a restart validates the file against the machine (the kubelet's validateState)
    T.check("SIGTERM: exit 0", d.stop() == 0)
    d.start()
    stub = svc.NodeStub(grpc.insecure_channel(d.target()))
    a2 = stub.Admit(pb.AdmitRequest(pod=pod("pg", "4Gi", "4Gi").encode()), timeout=30)
    T.check("restart: the pod keeps its blocks", a2.admitted and sorted(
        (b.type, b.size, list(b.numa_affinity)) for b in a2.containers[0].memory) == blocks,
        repr(a2))
    T.check("SIGTERM: exit 0", d.stop() == 0)
    small = T.Daemon(cfg, root, log, topology=TOPOLOGY,
                     extra=["--numa-memory", "8Gi,hugepages-1Gi=8"])
    small.start(wait=False)
    rc = small.p.wait(60)
    T.check("restart on a machine with less memory: refused (exit 1), the kubelet's text",
            rc == 1 and "[memorymanager]" in small.log_text(), small.log_text()[-600:])
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
