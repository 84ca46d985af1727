# SPDX-License-Identifier: Apache-2.0
"""nodecmd's CRI proxy in front of a real containerd, driven as a kubelet drives its runtime.

A private containerd (tests/integration/containerd.py) and nodecmd with --runtime-endpoint (that
containerd) and --cri-listen (the proxy's socket). A python3-grpcio client sends the proxy what
a kubelet with cpuManagerPolicy none sends (RunPodSandbox with the QoS tier's cgroup parent,
CreateContainer with shares, quota, period and memory limit and no cpuset, StartContainer,
StopContainer, RemoveContainer, RemovePodSandbox). Checked:
  - every container's Cpus_allowed_list at its first instruction and later is what
    `nodecm simulate` (the kubelet's static policy) gives the same pods on this machine:
    Guaranteed integer, Guaranteed fractional, Burstable, BestEffort; the shared pool shrinks
    and grows in every other container as containers come and go;
  - a container made at containerd itself (nodecm cannot attribute it) is kept on the shared
    pool by the next reconcile;
  - CRI-O's cpu-load-balancing and cpu-quota annotations done on the cgroups containerd made
    (sched_load_balance of the container, its pod and kubepods; no quota), put back by the
    reconcile, undone when the pod goes;
  - a refused admission fails CreateContainer with the kubelet's text, nothing created;
  - a client's UpdateContainerResources that would widen a cpuset keeps nodecm's;
  - a cpuset changed behind nodecm's back (directly at containerd) is put back by reconcile;
  - calls nodecm does not decode (ImageService, Status) are forwarded unchanged;
  - containerd restarted under the proxy: UNAVAILABLE meanwhile, then success, nothing lost;
  - nodecmd killed -9 during a burst of CreateContainer calls: after its restart the node's state
    and the runtime's containers agree, and no CPU is held twice.
Everything is torn down on every exit path.
"""
import json
import os
import signal
import subprocess
import threading
import time

import runtimes as rt
import containerd as ctd

cl, tmp, cg, pb, svc, c, ALL = ctd.proxy_scene("nodecm-cri-proxy-")
import grpc  # noqa: E402 (proxy_scene skips the test without it)

check = rt.check
daemon, kl, direct = ctd.proxy_node(cl, tmp, cg, pb, svc, c)
node_dir = daemon.node_dir
# the kubelet's decisions with the configuration nodecmd has (examples/cri/nodecmd.yaml)
exp = rt.Expect({"reserved": "0", "kubelet": {"topologyManagerPolicy": "single-numa-node"}})
live = {}  # container id -> (pod uid, container name)
FIRST = "grep Cpus_allowed_list /proc/self/status; exec sleep 100000"
MEM = {"memory": "64Mi"}


def cpus_of(cid):
    try:
        with open("/proc/%d/status" % direct.pid(cid)) as f:
            return rt.cpus_allowed_of(f.read())
    except Exception as e:
        return "error: %s" % e


def first_cpus(uid, name):
    """The first line the container wrote, from its CRI log ("<time> stdout F <line>")."""
    for _ in range(200):
        for line in kl.log(uid, name).splitlines():
            i = line.find("Cpus_allowed_list:")
            if i >= 0:
                return line[i:].split(":", 1)[1].strip()
        time.sleep(0.02)
    return None


def expect_all(when, wait=3.0):
    """Every live container on the kubelet's CPUs; the pool may take a reconcile to follow."""
    deadline = time.time() + wait
    while True:
        bad = []
        for cid, (uid, name) in live.items():
            want = exp.cpus(tmp, uid, name)
            got = cpus_of(cid)
            if got != want:
                bad.append("%s/%s runs on %s, the kubelet would give %s" % (uid, name, got, want))
        if not bad or time.time() > deadline:
            break
        time.sleep(0.1)
    for b in bad:
        check(False, "%s: %s" % (when, b))


def run_pod(uid, containers, qos=None, annotations=None):
    """The kubelet's way: the sandbox, then each container created and started."""
    exp.admit(rt.pod(uid, containers))
    kl.run_pod(uid, uid, containers, qos=qos, annotations=annotations)
    for name, req, lim in containers:
        want = exp.cpus(tmp, uid, name)
        cid = kl.create(uid, name, req, lim, FIRST)
        kl.start(cid)
        live[cid] = (uid, name)
        got = first_cpus(uid, name)
        print("%s/%s: first instruction on %s, the kubelet's %s" % (uid, name, got, want))
        check(got == want, "%s/%s's first instruction ran on %s, the kubelet would give %s"
              % (uid, name, got, want))


def cid_of(uid, name):
    return kl.pods[uid]["containers"][name]


# forwarded as they are: Version, Status, the ImageService
v = kl.rt.Version(pb.VersionRequest(version="0.1.0"), timeout=10)
check(v.runtime_name == "containerd", "Version through the proxy: %s" % v)
st = kl.rt.Status(pb.StatusRequest(), timeout=10)
check(any(x.type == "RuntimeReady" for x in st.status.conditions),
      "Status (not decoded by nodecm) forwarded: %s" % st)
imgs = kl.img.ListImages(pb.ListImagesRequest(), timeout=10)
check(any(ctd.BUSYBOX in i.repo_tags for i in imgs.images), "ListImages through the proxy")
ist = kl.img.ImageStatus(pb.ImageStatusRequest(image=pb.ImageSpec(image=ctd.BUSYBOX)), timeout=10)
check(ist.image.id != "", "ImageStatus through the proxy")

# every QoS class
run_pod("pb", [("app", {"cpu": "250m"}, MEM)])
run_pod("pg", [("app", dict(cpu="1", **MEM), dict(cpu="1", **MEM))])
run_pod("pf", [("app", dict(cpu="500m", **MEM), dict(cpu="500m", **MEM))])
run_pod("pe", [("app", {}, {})])
expect_all("after the pods came")
pool = rt.parse_list(exp.cpus(tmp, "pb", "app"))
check(pool == ALL - rt.parse_list(exp.cpus(tmp, "pg", "app")),
      "the shared pool is every CPU but the Guaranteed container's")

# a container nodecm cannot attribute (made at containerd itself, not through the proxy): the
# next reconcile keeps it on the shared pool, off the Guaranteed container's CPU (no stranger
# on an exclusive CPU)
direct.run_pod("ps", "stranger", [("app", {}, {})])
stranger = direct.create("ps", "app", {}, {}, FIRST)
direct.start(stranger)
want = exp.cpus(tmp, "pb", "app")
deadline = time.time() + 5.0
while cpus_of(stranger) != want and time.time() < deadline:
    time.sleep(0.1)
check(cpus_of(stranger) == want, "the stranger runs on %s, not the shared pool %s"
      % (cpus_of(stranger), want))
direct.stop(stranger)
direct.remove(stranger)
direct.remove_pod("ps")

# refused: the kubelet's text, nothing created
free = len(ALL) - 1 - len(rt.parse_list(exp.cpus(tmp, "pg", "app")))
big = str(free + 1)
steps = list(exp.steps)
exp.admit(rt.pod("px", [("app", dict(cpu=big, **MEM), dict(cpu=big, **MEM))]))
line, _ = exp.run(tmp)
exp.steps = steps
kl.run_pod("px", "px", [("app", dict(cpu=big, **MEM), dict(cpu=big, **MEM))])
try:
    kl.create("px", "app", dict(cpu=big, **MEM), dict(cpu=big, **MEM), FIRST)
    check(False, "CreateContainer of %s CPUs must fail" % big)
except grpc.RpcError as e:
    check(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and line and
          line["message"] in e.details(),
          "refused with the kubelet's text %r: %s %s" % (line and line["message"], e.code(),
                                                           e.details()))
n = len(direct.rt.ListContainers(pb.ListContainersRequest(), timeout=10).containers)
check(n == len(live), "the refused container was not created (%d containers)" % n)
kl.remove_pod("px")

# a client that would widen a cpuset: nodecm's stays
g = cid_of("pg", "app")
kl.rt.UpdateContainerResources(pb.UpdateContainerResourcesRequest(
    container_id=g, linux=pb.LinuxContainerResources(cpuset_cpus=rt.format_list(ALL))), timeout=10)
check(cpus_of(g) == exp.cpus(tmp, "pg", "app"),
      "UpdateContainerResources through the proxy keeps the exclusive cpuset: %s" % cpus_of(g))

# behind nodecm's back (at containerd itself): reconcile puts it back (period 1s)
direct.rt.UpdateContainerResources(pb.UpdateContainerResourcesRequest(
    container_id=g, linux=pb.LinuxContainerResources(cpuset_cpus=rt.format_list(ALL))), timeout=10)
# (a reconcile may already have put it back: the period is a second)
print("behind nodecm's back: containerd has it on %s" % cpus_of(g))
time.sleep(1.5)
expect_all("after a cpuset was changed behind nodecm's back", wait=5.0)
log = daemon.tail()
check("cpuset put back" in log, "reconcile logged that it put a cpuset back")

# the Guaranteed container goes: the pool grows back in every shared container at once
kl.stop(g)
kl.remove(g)
live.pop(g)
exp.remove("pg", "app")
kl.remove_pod("pg")
exp.remove_pod("pg")
expect_all("after the Guaranteed pod went")
log = daemon.tail()
check("enforcer=cri " in log, "the ready line names the CRI as the enforcer")
check("level=warn" not in log, "the ordinary removals so far logged no warning: %s"
      % [l for l in log.splitlines() if "level=warn" in l])

# CRI-O's knobs through the proxy (the pod's annotations come in its sandbox's config): done by
# nodecmd on the cgroups containerd made, within a reconcile period; undone when it goes
run_pod("pk", [("app", dict(cpu="1", **MEM), dict(cpu="1", **MEM))],
        annotations={"cpu-load-balancing.crio.io": "disable", "cpu-quota.crio.io": "disable"})
k = cid_of("pk", "app")
pod_cg = kl.cgroup_parent("pk", "Guaranteed")
kubepods = os.path.dirname(pod_cg)
CPUSET = "/sys/fs/cgroup/cpuset"


def knob_state():
    def rd(p):
        try:
            with open(p) as f:
                return f.read().strip()
        except OSError as e:
            return "error: %s" % e
    return (rd("%s%s/%s/cpuset.sched_load_balance" % (CPUSET, pod_cg, k)),
            rd("%s%s/cpuset.sched_load_balance" % (CPUSET, pod_cg)),
            rd("%s%s/cpuset.sched_load_balance" % (CPUSET, kubepods)),
            rd("/sys/fs/cgroup/cpu%s/%s/cpu.cfs_quota_us" % (pod_cg, k)))


deadline = time.time() + 5.0
while knob_state() != ("0", "0", "0", "-1") and time.time() < deadline:
    time.sleep(0.1)
check(knob_state() == ("0", "0", "0", "-1"),
      "sched_load_balance of the container, its pod and kubepods, and its quota: %s"
      % (knob_state(),))
with open("%s%s/cpuset.sched_load_balance" % (CPUSET, kubepods), "w") as f:
    f.write("1")
deadline = time.time() + 5.0
while knob_state()[2] != "0" and time.time() < deadline:
    time.sleep(0.1)
check(knob_state()[2] == "0", "the reconcile put kubepods' sched_load_balance back")
kl.stop(k)
kl.remove(k)
live.pop(k)
exp.remove("pk", "app")
kl.remove_pod("pk")
exp.remove_pod("pk")
deadline = time.time() + 5.0
while knob_state()[2] != "1" and time.time() < deadline:
    time.sleep(0.1)
check(knob_state()[2] == "1", "kubepods balances again once the pod went: %s" % (knob_state(),))

# containerd restarts under the proxy: UNAVAILABLE meanwhile, then success, nothing lost
c.stop()
try:
    kl.rt.Version(pb.VersionRequest(version="0.1.0"), timeout=5)
    check(False, "a call while containerd is down must fail")
except grpc.RpcError as e:
    check(e.code() == grpc.StatusCode.UNAVAILABLE, "containerd down: %s %s" % (e.code(),
                                                                             e.details()))
c.start()
for _ in range(100):
    try:
        v = kl.rt.Version(pb.VersionRequest(version="0.1.0"), timeout=5)
        break
    except grpc.RpcError:
        time.sleep(0.1)
check(v.runtime_name == "containerd", "containerd back: calls succeed")
run_pod("pg2", [("app", dict(cpu="1", **MEM), dict(cpu="1", **MEM))])
expect_all("after containerd's restart")

# nodecmd killed -9 during a burst of CreateContainer calls (Guaranteed, one CPU each: as many
# as there are free CPUs are admitted, the others refused)
g2 = cid_of("pg2", "app")
kl.stop(g2)
kl.remove(g2)
live.pop(g2)
kl.remove_pod("pg2")
exp.remove_pod("pg2")
burst = ["pk%d" % i for i in range(8)]
for uid in burst:
    kl.run_pod(uid, uid, [("app", dict(cpu="1", **MEM), dict(cpu="1", **MEM))])
results = {}


def create(uid):
    try:
        results[uid] = kl.create(uid, "app", dict(cpu="1", **MEM), dict(cpu="1", **MEM), FIRST)
    except grpc.RpcError as e:
        results[uid] = e


threads = [threading.Thread(target=create, args=(u,)) for u in burst]
for t in threads:
    t.start()
time.sleep(0.05)
daemon.stop(signal.SIGKILL)
for t in threads:
    t.join(30)
daemon.start(flags=False)
# reconcile settles what the kill left: creations the kill interrupted are released once
# containerd had time to finish them (5 s after the start), a period later at most
time.sleep(7.0)
status = subprocess.run([rt.NODECM, "node", "status", "--json", "--connect",
                         os.path.join(node_dir, "nodecm.sock")], capture_output=True, text=True)
check(status.returncode == 0, "node status after the restart: %s" % status.stderr)
state = json.loads(status.stdout) if status.returncode == 0 else {"entries": {}, "pods": []}
ctrs = direct.rt.ListContainers(pb.ListContainersRequest(), timeout=10).containers
in_runtime = {x.labels.get("io.kubernetes.pod.uid") for x in ctrs
              if x.labels.get("io.kubernetes.pod.uid", "").startswith("pk")}
held = {u for u in state["entries"] if u.startswith("pk")}
check(held == in_runtime, "after kill -9: pods holding CPUs %s, containers in containerd %s"
      % (sorted(held), sorted(in_runtime)))
seen = {}
for uid, cs in state["entries"].items():
    for name, cpus in cs.items():
        for cpu in rt.parse_list(cpus):
            check(cpu not in seen, "CPU %d held by %s and %s" % (cpu, seen.get(cpu), uid))
            seen[cpu] = uid
print("kill -9 burst: %d created, %d failed; %d hold CPUs" % (
    sum(1 for r in results.values() if isinstance(r, str)),
    sum(1 for r in results.values() if not isinstance(r, str)), len(held)))
for uid in burst:
    try:
        kl.remove_pod(uid)
    except (grpc.RpcError, KeyError):
        pass
expect_all("after the burst went")
rc = daemon.stop()
check(rc == 0, "nodecmd stops with status 0 on SIGTERM (got %s): %s" % (rc, daemon.tail()[-2000:]))
rt.finish()
