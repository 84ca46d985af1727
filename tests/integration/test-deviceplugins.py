# SPDX-License-Identifier: Apache-2.0
"""The device-plugin host and the pod resources API against real gRPC peers.

python3-grpcio device plugins written against the kubelet's API register with the host
(tests/integration/dp-harness: a node, the device-plugin host and the pod resources server
on one libuv loop, as nodecmd runs them), pods are admitted through them, and a python pod
resources client reads the result. Every scenario runs under its own temporary root
directory; every process is killed when the test ends. Run with /usr/bin/python3.
"""
import base64
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dplib import (Plugin, Proc, check, finish, gen_stubs, pod, podres, skip,  # noqa: E402
                   tempdir, wait_until)

HARNESS = os.environ.get("NCM_DP_HARNESS", "")
NODECM = os.environ.get("NCM_NODECM", "")
if not HARNESS or not os.path.exists(HARNESS):
    skip("dp-harness not built")
STUBS = gen_stubs()
sys.path.insert(0, STUBS)
import deviceplugin_v1beta1_pb2 as pb  # noqa: E402


class Host(Proc):
    def __init__(self, *opts):
        self.root = tempdir("ncm-dp-")
        self.dir = os.path.join(self.root, "device-plugins")
        self.podres = os.path.join(self.root, "pod-resources", "kubelet.sock")
        super().__init__([HARNESS, self.root] + list(opts), "host",
                         os.path.join(self.root, "host.log"))
        if not self.wait(lambda m: m.get("op") == "ready", 30, "ready"):
            raise RuntimeError("dp-harness did not start: " + self.stderr_text())
        self.n = 0

    def plugin(self, socket, resource, *opts):
        p = Plugin(STUBS, self.dir, socket, resource, *opts,
                   log=os.path.join(self.root, socket + ".log"))
        return p

    def admit(self, podfile, timeout=60):
        self.n += 1
        pid = "a%d" % self.n
        self.send("admit %s %s" % (pid, podfile))
        return self.wait(lambda m: m.get("op") == "admit" and m.get("id") == pid, timeout,
                         "admit " + pid) or {}

    def admit_async(self, podfile):
        self.n += 1
        pid = "a%d" % self.n
        self.send("admit %s %s" % (pid, podfile))
        return pid

    def result(self, pid, timeout=60):
        return self.wait(lambda m: m.get("op") == "admit" and m.get("id") == pid, timeout,
                         "admit " + pid) or {}

    def inventory(self):
        self.send("devices")
        m = self.wait(lambda m: m.get("op") == "devices", 30, "devices") or {}
        inv = {r["resource"]: r for r in m.get("inventory", {}).get("resources", [])}
        inv["_held"] = m.get("held", 0)
        return inv

    def resource(self, name):
        return self.inventory().get(name)

    def plugins(self):
        self.send("plugins")
        return (self.wait(lambda m: m.get("op") == "plugins", 30, "plugins") or {}).get(
            "plugins", [])

    def metrics(self):
        self.send("metrics")
        return (self.wait(lambda m: m.get("op") == "metrics", 30, "metrics") or {}).get("text", "")

    def remove(self, uid):
        self.send("remove " + uid)
        return self.wait(lambda m: m.get("op") == "remove", 30, "remove")

    def checkpoint(self):
        with open(os.path.join(self.root, "kubelet_internal_checkpoint")) as f:
            return json.load(f)

    def quit(self):
        self.send("quit")
        return self.close()


def healthy_count(h, res):
    r = h.resource(res)
    return r["allocatable"] if r else -1


def wait_devices(h, res, n, timeout=30):
    return wait_until(lambda: healthy_count(h, res) == n, timeout)


def podres_devices(cr):
    """(resource, ids, NUMA ids or None) of a ContainerResources (JSON drops ID 0)."""
    out = []
    for d in cr.get("devices", []):
        topo = d.get("topology")
        nodes = None if topo is None else [int(n.get("ID", 0)) for n in topo.get("nodes", [])]
        out.append((d["resource_name"], d["device_ids"], nodes))
    return sorted(out, key=lambda x: (x[0], x[1], x[2] or []))


def expected_alloc_resp(ids, resource, envs_only=False):
    """What the peer answers, marshalled as the kubelet's checkpoint keeps it (map keys sorted,
    as gogo-protobuf and Go's deterministic marshal write them)."""
    c = pb.ContainerAllocateResponse()
    c.envs["EXAMPLE_DEVICES"] = ",".join(ids)
    c.envs["EXAMPLE_RESOURCE"] = resource
    if not envs_only:
        c.annotations["example.com/devices"] = ",".join(ids)
        c.mounts.add(container_path="/var/lib/example", host_path="/tmp/example-" + ids[0],
                     read_only=True)
        for i in ids:
            c.devices.add(container_path="/dev/" + i, host_path="/dev/null", permissions="rw")
            c.cdi_devices.add(name=resource + "=" + i)
    return c.SerializeToString(deterministic=True)


# --------------------------------------------------------------------------------------------
def scenario_basic():
    """Two resources register; a pod gets NUMA-aligned CPUs and a GPU; the Allocate answer
    comes back, lands in the checkpoint byte for byte; pod resources sees it all."""
    print("# basic: registration, admission, checkpoint, pod resources", flush=True)
    h = Host("--synthetic", "package:2 numa:1 core:4 pu:1")
    gpu = h.plugin("gpu.sock", "example.com/gpu",
                   "--devices", "gpu0:0;gpu1:0;gpu2:1;gpu3:1")
    nic = h.plugin("nic.sock", "example.com/nic", "--devices", "nic0:-;nic1:-", "--envs-only")
    check("gpu plugin registers", gpu.event("registered") is not None)
    check("nic plugin registers", nic.event("registered") is not None)
    check("gpu devices show", wait_devices(h, "example.com/gpu", 4))
    check("nic devices show", wait_devices(h, "example.com/nic", 2))
    inv = h.inventory()
    g = inv["example.com/gpu"]
    check("inventory: endpoint running, plugin grpc",
          g["endpoint"] == "running" and g.get("plugin") == "grpc", str(g))
    check("inventory: devices with their NUMA nodes",
          [(d["id"], d["numa"]) for d in g["devices"]] ==
          [("gpu0", [0]), ("gpu1", [0]), ("gpu2", [1]), ("gpu3", [1])], str(g["devices"]))
    check("inventory: device without topology has numa null",
          all(d["numa"] is None for d in inv["example.com/nic"]["devices"]))

    # CPU 0 is reserved: NUMA 0 has 3 free CPUs, NUMA 1 has 4. 4 CPUs + 1 GPU: NUMA 1 only.
    p1 = pod(os.path.join(h.root, "p1.json"), "uid-1", "train", [("app", "4", {
        "example.com/gpu": 1, "example.com/nic": 1})], ns="ml")
    a = h.admit(p1)
    check("pod admitted", a.get("admitted") is True, str(a))
    c = (a.get("containers") or [{}])[0]
    check("CPUs on NUMA node 1 (single-numa-node)", c.get("numa") == [1] and c.get("cpus") == "4-7",
          str(c))
    check("GPU on NUMA node 1", c.get("devices", {}).get("example.com/gpu") in (["gpu2"], ["gpu3"]),
          str(c))
    gpu_id = c.get("devices", {}).get("example.com/gpu", ["?"])[0]
    nic_id = c.get("devices", {}).get("example.com/nic", ["?"])[0]
    check("plugin got Allocate with the chosen ids",
          gpu.event("allocate") == {"event": "allocate", "ids": [[gpu_id]]})
    opts = c.get("options") or {}
    check("Allocate answers reach the container (envs of both plugins)",
          opts.get("envs", {}).get("EXAMPLE_DEVICES") in (gpu_id, nic_id) and
          "EXAMPLE_RESOURCE" in opts.get("envs", {}), str(opts))
    check("Allocate answer: mounts, device specs, annotations, CDI devices",
          opts.get("mounts") and opts.get("devices") == [
              {"containerPath": "/dev/" + gpu_id, "hostPath": "/dev/null", "permissions": "rw"}]
          and opts.get("cdiDevices") == ["example.com/gpu=" + gpu_id]
          and opts.get("annotations") == {"example.com/devices": gpu_id}, str(opts))
    check("two rounds: a pass, the Allocate calls, the pass that commits",
          a.get("rounds") == 2 and a.get("calls") == 2, str(a))

    cp = h.checkpoint()
    entries = {e["ResourceName"]: e for e in cp["Data"]["PodDeviceEntries"]}
    ge = entries.get("example.com/gpu", {})
    check("checkpoint: entry with the device under its NUMA node",
          ge.get("PodUID") == "uid-1" and ge.get("ContainerName") == "app" and
          ge.get("DeviceIDs") == {"1": [gpu_id]}, str(ge))
    check("checkpoint: AllocResp byte for byte as the kubelet marshals it",
          base64.b64decode(ge.get("AllocResp", "")) ==
          expected_alloc_resp([gpu_id], "example.com/gpu"), ge.get("AllocResp"))
    check("checkpoint: device without topology under -1",
          entries.get("example.com/nic", {}).get("DeviceIDs") == {"-1": [nic_id]})
    check("checkpoint: registered healthy devices",
          cp["Data"]["RegisteredDevices"] == {"example.com/gpu": ["gpu0", "gpu1", "gpu2", "gpu3"],
                                              "example.com/nic": ["nic0", "nic1"]},
          str(cp["Data"]["RegisteredDevices"]))
    if NODECM:
        r = subprocess.run([NODECM, "checkpoint", "verify",
                            os.path.join(h.root, "kubelet_internal_checkpoint")],
                           capture_output=True, text=True)
        check("checkpoint: the kubelet's checksum (nodecm checkpoint verify)", r.returncode == 0,
              r.stdout + r.stderr)

    # pod resources
    lst = podres(STUBS, h.podres, "list")
    prs = lst.get("pod_resources", [])
    check("pod resources List: the pod, its CPUs and devices with NUMA",
          len(prs) == 1 and prs[0]["name"] == "train" and prs[0]["namespace"] == "ml", str(lst))
    if prs:
        cr = prs[0]["containers"][0]
        check("List: exclusive CPU ids",
              sorted(int(x) for x in cr.get("cpu_ids", [])) == [4, 5, 6, 7], str(cr))
        devs = podres_devices(cr)
        check("List: one entry per device and NUMA node; no topology for nic",
              devs == sorted([("example.com/gpu", [gpu_id], [1]),
                              ("example.com/nic", [nic_id], None)]), str(devs))
    al = podres(STUBS, h.podres, "allocatable")
    check("GetAllocatableResources: allocatable CPUs (all but the reserved one)",
          sorted(int(x) for x in al.get("cpu_ids", [])) == [1, 2, 3, 4, 5, 6, 7], str(al))
    check("GetAllocatableResources: every healthy device (allocated or not)",
          len(al.get("devices", [])) == 6, str(al))
    g1 = podres(STUBS, h.podres, "get", "train", "ml")
    check("Get: the pod by name and namespace",
          g1.get("pod_resources", {}).get("name") == "train", str(g1))
    g2 = podres(STUBS, h.podres, "get", "nope", "ml")
    check("Get: the kubelet's text for an unknown pod",
          g2.get("error") == {"code": "UNKNOWN", "details": "pod nope in namespace ml not found"},
          str(g2))
    va = podres(STUBS, h.podres, "list-v1alpha1")
    check("v1alpha1 List: app containers, devices without topology",
          va.get("pod_resources", [{}])[0].get("containers", [{}])[0].get("name") == "app",
          str(va))
    fl = podres(STUBS, h.podres, "flood", "40")
    check("rate limit: bursts beyond 10 are rejected with the kubelet's text",
          fl.get("codes", {}).get("RESOURCE_EXHAUSTED: rejected by rate limit", 0) > 0, str(fl))

    # a second pod wanting 2 GPUs on one NUMA node: NUMA 0 has 2 GPUs but only 3 free CPUs
    p2 = pod(os.path.join(h.root, "p2.json"), "uid-2", "two", [("app", "2", {
        "example.com/gpu": 2})])
    a2 = h.admit(p2)
    c2 = (a2.get("containers") or [{}])[0]
    check("second pod: 2 GPUs and its CPUs on NUMA node 0",
          a2.get("admitted") and c2.get("numa") == [0] and
          c2.get("devices", {}).get("example.com/gpu") == ["gpu0", "gpu1"], str(a2))
    p3 = pod(os.path.join(h.root, "p3.json"), "uid-3", "three", [("app", "1", {
        "example.com/gpu": 2})])
    a3 = h.admit(p3)
    check("third pod: no NUMA node has 2 free GPUs: TopologyAffinityError",
          a3.get("admitted") is False and a3.get("reason") == "TopologyAffinityError", str(a3))
    check("the refused pod called no plugin", a3.get("calls") == 0, str(a3))
    check("metrics: registrations and Allocate durations with the kubelet's names",
          'kubelet_device_plugin_registration_total{resource_name="example.com/gpu"} 1' in
          h.metrics() and "kubelet_device_plugin_alloc_duration_seconds_count" in h.metrics())
    check("host exits cleanly", h.quit() == 0)
    gpu.close()
    nic.close()


# --------------------------------------------------------------------------------------------
def main():
    scenario_basic()
    finish()


main()
