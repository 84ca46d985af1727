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
        if "--policy" not in opts:
            opts = opts + ("--policy", "none")
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
        rc = self.close()
        check("host exits cleanly (under ASan: no leak, no error)", rc == 0,
              "rc %s: %s" % (rc, self.stderr_text()[-3000:]))
        return rc


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
    h = Host("--synthetic", "package:2 numa:1 core:4 pu:1", "--policy", "single-numa-node")
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
    h.quit()
    gpu.close()
    nic.close()


# --------------------------------------------------------------------------------------------
def scenario_health_preferred_prestart():
    """Health flipping; GetPreferredAllocation with the kubelet's sets; PreStartContainer."""
    print("# health, GetPreferredAllocation, PreStartContainer", flush=True)
    h = Host()
    gpu = h.plugin("gpu.sock", "example.com/gpu", "--devices", "g0:0;g1:0;g2:1;g3:1",
                   "--preferred", "--pre-start")
    check("plugin registers", gpu.event("registered") is not None)
    check("4 healthy", wait_devices(h, "example.com/gpu", 4))
    gpu.send("health g1 Unhealthy")
    check("a device turns unhealthy: allocatable 3, capacity 4",
          wait_until(lambda: (h.resource("example.com/gpu") or {}).get("allocatable") == 3 and
                     h.resource("example.com/gpu")["capacity"] == 4))
    r = h.resource("example.com/gpu")
    check("inventory shows it unhealthy",
          [d["healthy"] for d in r["devices"]] == [True, False, True, True], str(r))
    gpu.send("health g1 Healthy")
    check("and healthy again", wait_devices(h, "example.com/gpu", 4))
    gpu.send("health g0 Bogus")
    check("any health but exactly \"Healthy\" is unhealthy", wait_devices(h, "example.com/gpu", 3))
    gpu.send("health g0 Healthy")
    wait_devices(h, "example.com/gpu", 4)
    # no NUMA preference (policy none): the plugin chooses among all
    p1 = pod(os.path.join(h.root, "p1.json"), "u1", "pref", [("app", "1", {
        "example.com/gpu": 2})])
    a = h.admit(p1)
    c = (a.get("containers") or [{}])[0]
    pe = gpu.event("preferred")
    check("GetPreferredAllocation asked with the aligned devices, nothing to include, size 2",
          pe is not None and pe["must_include"] == [] and pe["size"] == 2 and
          set(pe["available"]) <= {"g0", "g1", "g2", "g3"}, str(pe))
    check("the plugin's preference is honoured", a.get("admitted") and
          c.get("devices", {}).get("example.com/gpu") == (pe or {}).get("answer"), str(a))
    ps = gpu.event("prestart")
    check("PreStartContainer with the container's devices",
          ps is not None and ps["ids"] == c.get("devices", {}).get("example.com/gpu"), str(ps))
    check("three rounds: GetPreferredAllocation, Allocate, PreStartContainer",
          a.get("rounds") == 3 and a.get("calls") == 3, str(a))
    h.quit()
    gpu.close()

    print("# failing PreStartContainer and Allocate roll everything back", flush=True)
    h = Host()
    bad = h.plugin("bad.sock", "example.com/bad", "--devices", "b0:0;b1:1", "--pre-start",
                   "--pre-start-fail", "device not ready")
    boom = h.plugin("boom.sock", "example.com/boom", "--devices", "x0:0;x1:1",
                    "--allocate-fail", "boom")
    bad.event("registered")
    boom.event("registered")
    wait_devices(h, "example.com/bad", 2)
    wait_devices(h, "example.com/boom", 2)
    before = open(os.path.join(h.root, "cpu_manager_state")).read()
    a = h.admit(pod(os.path.join(h.root, "p1.json"), "u1", "ps", [("app", "2", {
        "example.com/bad": 1})]))
    check("failing PreStartContainer: UnexpectedAdmissionError with the kubelet's texts",
          a.get("admitted") is False and a.get("reason") == "UnexpectedAdmissionError" and
          a.get("message") == "Allocate failed due to device plugin PreStartContainer rpc failed "
          "with err: rpc error: code = Unknown desc = device not ready, which is unexpected",
          str(a))
    a = h.admit(pod(os.path.join(h.root, "p2.json"), "u2", "al", [("app", "2", {
        "example.com/boom": 1})]))
    check("failing Allocate: UnexpectedAdmissionError with the kubelet's text",
          a.get("admitted") is False and a.get("message") ==
          "Allocate failed due to rpc error: code = Unknown desc = boom, which is unexpected",
          str(a))
    inv = h.inventory()
    check("nothing stays allocated or held",
          inv["example.com/bad"]["allocated"] == 0 and inv["example.com/boom"]["allocated"] == 0
          and inv["_held"] == 0, str(inv))
    check("the CPUs went back (cpu_manager_state as before)",
          open(os.path.join(h.root, "cpu_manager_state")).read() == before)
    check("no checkpoint entry", h.checkpoint()["Data"]["PodDeviceEntries"] is None)
    h.quit()
    bad.close()
    boom.close()


# --------------------------------------------------------------------------------------------
def scenario_crash_reregister():
    """A plugin crashes: its devices turn unhealthy, stay allocated, and come back when it
    registers again; a plugin that does not come back is dropped after the grace period."""
    print("# crash, re-registration, grace period, kubelet.sock re-created", flush=True)
    h = Host("--grace-ms", "1500", "--capacity-ms", "100")
    gpu = h.plugin("gpu.sock", "example.com/gpu", "--devices", "g0:0;g1:1")
    gpu.event("registered")
    wait_devices(h, "example.com/gpu", 2)
    a = h.admit(pod(os.path.join(h.root, "p1.json"), "u1", "x", [("app", "1", {
        "example.com/gpu": 1})]))
    check("admitted before the crash", a.get("admitted") is True, str(a))
    held = a["containers"][0]["devices"]["example.com/gpu"][0]
    gpu.send("crash")
    gpu.kill()
    r = wait_until(lambda: (h.resource("example.com/gpu") or {}).get("endpoint") == "stopped" and
                   h.resource("example.com/gpu"))
    check("crash: endpoint stopped, allocatable 0, capacity kept",
          r and r["allocatable"] == 0 and r["capacity"] == 2, str(r))
    check("crash: the container keeps its device",
          r and [d["id"] for d in r["devices"] if d.get("pod") == "u1"] == [held], str(r))
    check("crash logged as the kubelet logs it",
          "ListAndWatch ended unexpectedly for device plugin" in h.stderr_text())
    a2 = h.admit(pod(os.path.join(h.root, "p2.json"), "u2", "y", [("app", "1", {
        "example.com/gpu": 1})]))
    check("while stopped: a new pod is refused (no healthy devices)",
          a2.get("admitted") is False and "no healthy devices present" in a2.get("message", ""),
          str(a2))
    gpu2 = h.plugin("gpu.sock", "example.com/gpu", "--devices", "g0:0;g1:1")
    check("the plugin comes back within the grace period", gpu2.event("registered") is not None)
    check("devices healthy again", wait_devices(h, "example.com/gpu", 2))
    r = h.resource("example.com/gpu")
    check("... and the container still holds its device",
          [d["id"] for d in r["devices"] if d.get("pod") == "u1"] == [held], str(r))

    # a second instance on another socket replaces the first; the first's end changes nothing
    gpu3 = h.plugin("gpu-new.sock", "example.com/gpu", "--devices", "g0:0;g1:1;g2:1")
    check("a new instance registers", gpu3.event("registered") is not None)
    check("its devices replace the old list", wait_devices(h, "example.com/gpu", 3))
    pl = h.plugins()
    check("the old instance is replaced, the new one current",
          sorted((p["socket"].rsplit("/", 1)[1], p["state"]) for p in pl
                 if p["resource"] == "example.com/gpu") ==
          [("gpu-new.sock", "running"), ("gpu.sock", "replaced")], str(pl))
    gpu2.send("stop")
    gpu2.close()
    time.sleep(0.5)
    r = h.resource("example.com/gpu")
    check("the replaced instance's stream end does not stop the resource",
          r["endpoint"] == "running" and r["allocatable"] == 3, str(r))

    # kubelet.sock deleted: re-created, the plugin registers again
    os.unlink(os.path.join(h.dir, "kubelet.sock"))
    check("kubelet.sock re-created", wait_until(lambda: os.path.exists(
        os.path.join(h.dir, "kubelet.sock")), 10))
    check("the plugin notices and registers again",
          gpu3.event("kubelet-restarted") is not None and gpu3.event("registered") is not None)
    check("still 3 devices", wait_devices(h, "example.com/gpu", 3))

    # the plugin leaves for good: the resource goes after the grace period
    gpu3.send("crash")
    gpu3.kill()
    check("stopped", wait_until(lambda: (h.resource("example.com/gpu") or {}).get(
        "endpoint") == "stopped"))
    check("dropped after the grace period (only the allocation is left)",
          wait_until(lambda: (h.resource("example.com/gpu") or {}).get("endpoint") == "none",
                     10), str(h.resource("example.com/gpu")))
    check("the drop is in the checkpoint (no registered devices)",
          wait_until(lambda: h.checkpoint()["Data"]["RegisteredDevices"] == {}), 
          str(h.checkpoint()["Data"]))
    h.quit()


# --------------------------------------------------------------------------------------------
def scenario_hang_and_big():
    """A plugin that never answers Allocate blocks nothing else and fails after the timeout;
    its devices are held meanwhile. 30,000 devices in one snapshot."""
    print("# hanging Allocate, 30,000 devices", flush=True)
    h = Host("--allocate-timeout-ms", "2000")
    hang = h.plugin("hang.sock", "example.com/hang", "--devices", "h0:0;h1:0;h2:1;h3:1",
                    "--allocate-hang")
    gpu = h.plugin("gpu.sock", "example.com/gpu", "--devices", "g0:0;g1:1")
    big = h.plugin("big.sock", "example.com/big", "--count", "30000", "--numa-nodes", "2")
    for p in (hang, gpu, big):
        p.event("registered")
    wait_devices(h, "example.com/hang", 4)
    wait_devices(h, "example.com/gpu", 2)
    check("30,000 devices registered", wait_devices(h, "example.com/big", 30000, 60))
    t0 = time.monotonic()
    pa = h.admit_async(pod(os.path.join(h.root, "a.json"), "ua", "a", [("app", "1", {
        "example.com/hang": 1})]))
    ev = hang.event("allocate")
    first = ev["ids"][0] if ev else []
    r = h.resource("example.com/hang")
    check("while Allocate hangs, its device is held",
          [d["id"] for d in r["devices"] if d.get("held")] == first and first, str(r))
    b = h.admit(pod(os.path.join(h.root, "b.json"), "ub", "b", [("app", "1", {
        "example.com/gpu": 1})]))
    check("another admission goes on meanwhile", b.get("admitted") is True, str(b))
    c = h.admit(pod(os.path.join(h.root, "c.json"), "uc", "c", [("app", "1", {
        "example.com/big": 1})]))
    check("... with the 30,000-device plugin too", c.get("admitted") is True, str(c))
    pd = h.admit_async(pod(os.path.join(h.root, "d.json"), "ud", "d", [("app", "1", {
        "example.com/hang": 1})]))
    ev2 = hang.event("allocate")
    check("a second pod on the hanging plugin gets another device (the first is held)",
          ev2 is not None and ev2["ids"][0] != first, str(ev2))
    a = h.result(pa, 30)
    check("the hanging call fails after the timeout, with Go's deadline text",
          a.get("admitted") is False and a.get("message") ==
          "Allocate failed due to rpc error: code = DeadlineExceeded desc = context deadline "
          "exceeded, which is unexpected", str(a))
    check("... not before it", time.monotonic() - t0 >= 2.0)
    d = h.result(pd, 30)
    check("the second one too", d.get("admitted") is False, str(d))
    inv = h.inventory()
    check("nothing held, nothing allocated from the hanging plugin",
          inv["_held"] == 0 and inv["example.com/hang"]["allocated"] == 0, str(inv["_held"]))
    check("the plugin saw its calls cancelled", hang.event("allocate-abandoned", 10) is not None)
    cp = h.checkpoint()
    check("checkpoint: 30,000 registered devices",
          len(cp["Data"]["RegisteredDevices"]["example.com/big"]) == 30000)
    al = podres(STUBS, h.podres, "allocatable")
    check("pod resources: 30,000 + 4 + 2 allocatable devices",
          len(al.get("devices", [])) == 30006, str(len(al.get("devices", []))))
    h.quit()
    for p in (hang, gpu, big):
        p.close()


# --------------------------------------------------------------------------------------------
def scenario_bad_plugins():
    """Bad plugins are refused with a clear log line; nothing else is affected."""
    print("# bad plugins", flush=True)
    h = Host("--dial-timeout-ms", "1000")
    good = h.plugin("good.sock", "example.com/good", "--devices", "a:0;b:1")
    good.event("registered")
    wait_devices(h, "example.com/good", 2)

    def refused(name, resource, *opts):
        p = h.plugin(name, resource, "--no-reregister", *opts)
        ev = p.event("register-failed")
        p.close()
        return ev or {}

    ev = refused("v.sock", "example.com/v", "--version", "v1alpha", "--devices", "x:0")
    check("wrong version: the kubelet's text",
          ev.get("code") == "UNKNOWN" and ev.get("details") ==
          'requested API version "v1alpha" is not supported by kubelet. Supported version is '
          '["v1beta1"]', str(ev))
    for res in ("gpu", "kubernetes.io/gpu", "requests.example.com/gpu", "example.com/-bad"):
        ev = refused("n.sock", res, "--devices", "x:0")
        check("invalid resource name %s: the kubelet's text" % res,
              ev.get("details") == 'the ResourceName "%s" is invalid' % res, str(ev))
    ev = refused("e.sock", "example.com/e", "--endpoint", "../escape.sock", "--devices", "x:0")
    check("endpoint outside the directory is refused",
          ev.get("details") == 'invalid endpoint "../escape.sock": must be the name of a socket '
          "in the device plugin directory", str(ev))
    ev = refused("g.sock", "example.com/ghost", "--endpoint", "ghost.sock", "--devices", "x:0")
    check("endpoint nobody listens on: the kubelet's dial error after the dial timeout",
          ev.get("details") == "failed to dial device plugin: context deadline exceeded", str(ev))
    check("refusals are logged",
          h.stderr_text().count("Bad registration request from device plugin") >= 6)

    garbage = h.plugin("garbage.sock", "example.com/garbage", "--devices", "x:0", "--garbage",
                       "--no-reregister")
    check("garbage plugin registers", garbage.event("registered") is not None)
    check("garbage on the stream stops the endpoint",
          wait_until(lambda: (h.resource("example.com/garbage") or {}).get("endpoint")
                     == "stopped"), str(h.resource("example.com/garbage")))
    check("... with a clear log line",
          "grpc: failed to unmarshal the received message" in h.stderr_text())
    huge = h.plugin("huge.sock", "example.com/huge", "--huge-mb", "100", "--no-reregister")
    check("100 MiB plugin registers", huge.event("registered", 60) is not None)
    check("a 100 MiB device list is refused: endpoint stopped",
          wait_until(lambda: (h.resource("example.com/huge") or {}).get("endpoint") == "stopped",
                     120), str(h.resource("example.com/huge")))
    check("... with a clear log line", "received message larger than max" in h.stderr_text())
    r = h.resource("example.com/good")
    check("the good plugin is not affected", r["endpoint"] == "running" and r["allocatable"] == 2,
          str(r))
    a = h.admit(pod(os.path.join(h.root, "p.json"), "u", "p", [("app", "1", {
        "example.com/good": 1})]))
    check("and admissions through it go on", a.get("admitted") is True, str(a))
    h.quit()
    for p in (good, garbage, huge):
        p.close()


# --------------------------------------------------------------------------------------------
def main():
    scenario_basic()
    scenario_health_preferred_prestart()
    scenario_crash_reregister()
    scenario_hang_and_big()
    scenario_bad_plugins()
    finish()


main()
