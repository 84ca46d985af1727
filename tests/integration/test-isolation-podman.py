# SPDX-License-Identifier: Apache-2.0
"""Isolation for latency-critical pods with podman and the shipped hook, on this machine's real
cgroup v1 (docs/isolation.md).

CPU 0 is reserved and CPU 1 counts as isolated (the topology the hook is given marks it, as
isolcpus=1 would): isolatedCPUs exclusive-only keeps it out of the shared pool. Checked, each
at the container's first instruction and later:
  - a container without annotations is kept on the shared pool (CPU 0), and so is a
    Burstable pod's container: neither ever runs on the isolated CPU;
  - a Guaranteed container annotated nodecm.io/isolated-cpus: require gets CPU 1, and CRI-O's
    cpu-load-balancing.crio.io and cpu-quota.crio.io ("disable") are done on its real cgroups:
    cpuset.sched_load_balance 0 on it and its parent, no CFS quota;
  - what is changed behind nodecm's back is put back by `nodecm oci-hook --stage reconcile`,
    and counted;
  - when the container goes, its parent's sched_load_balance comes back;
  - nodecm.io/managed "false" opts a container out: it runs on every CPU.
irq-load-balancing is not run here: it would move this machine's interrupts (tests/unit/
test-node-knobs.c runs it on a fake /proc). Everything made here is removed on exit.
"""
import json
import os
import subprocess

import runtimes as rt

rt.require_root()
PODMAN = rt.require_prog("podman")
rt.require_prog("runc")
rt.require_prog("conmon")
rt.require_cgroup_v1_cpuset()
rt.static_busybox()

cl, tmp, cg, rootfs, node_dir, kubelet, ALL = rt.scene("nodecm-isolation-podman-")
if sorted(ALL)[:2] != [0, 1]:
    rt.skip("needs CPUs 0 and 1 (have %s)" % rt.machine_cpus())
with open(kubelet, "a") as f:
    f.write("isolatedCPUs: exclusive-only\n")

# this machine as the kubelet sees it, with CPU 1 isolated
topo_path = os.path.join(tmp, "topology.json")
r = subprocess.run([rt.NODECM, "topology", "--json"], capture_output=True, text=True)
if r.returncode != 0:
    rt.skip("nodecm topology: %s" % r.stderr)
topo = json.loads(r.stdout)
for c in topo["cpus"]:
    if c["cpu"] == 1:
        c["isolated"] = True
with open(topo_path, "w") as f:
    json.dump(topo, f)

hooks_dir = os.path.join(tmp, "hooks.d")
os.makedirs(hooks_dir)
hook = json.loads(rt.shipped_hook(os.path.join("hooks.d", "nodecm.json"), node_dir, kubelet))
check = rt.check
check(hook["when"] == {"always": True}, "the shipped hook runs for every container")
hook["hook"]["args"] += ["--topology", topo_path]
with open(os.path.join(hooks_dir, "nodecm.json"), "w") as f:
    json.dump(hook, f)

GLOBAL = [PODMAN, "--root", os.path.join(tmp, "storage"), "--runroot", os.path.join(tmp, "run"),
          "--tmpdir", os.path.join(tmp, "tmp"), "--storage-driver", "vfs",
          "--cgroup-manager", "cgroupfs", "--runtime", "runc", "--events-backend", "file",
          "--hooks-dir", hooks_dir]
RUN = ["run", "-d", "--network", "none", "--ulimit", "nofile=20000:20000",
       "--ulimit", "nproc=4096:4096", "--cgroup-parent", cg.path(), "--log-driver", "k8s-file"]
FIRST = "grep Cpus_allowed_list /proc/self/status; exec sleep 100000"
CPUSET = "/sys/fs/cgroup/cpuset"


def podman(*args, timeout=120):
    return subprocess.run(GLOBAL + list(args), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


cl.push(lambda: podman("rm", "-a", "-f", "-t", "0"))


def run(name, flags, annotations):
    args = list(RUN) + ["--name", name] + flags
    for k, v in annotations.items():
        args += ["--annotation", "%s=%s" % (k, v)]
    r = podman(*(args + ["--rootfs", rootfs, "/bin/sh", "-c", FIRST]))
    check(r.returncode == 0, "podman run %s: %s" % (name, r.stderr))
    return r


def first_cpus(name):
    for _ in range(200):
        v = rt.cpus_allowed_of(podman("logs", name).stdout)
        if v is not None:
            return v
    return None


def inside_cpus(name):
    return rt.cpus_allowed_of(podman("exec", name, "grep", "Cpus_allowed_list",
                                     "/proc/self/status").stdout)


def cgroup_of(name, controller):
    """The container's cgroup in CONTROLLER's hierarchy, from its process."""
    pid = podman("inspect", "-f", "{{.State.Pid}}", name).stdout.strip()
    with open("/proc/%s/cgroup" % pid) as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if controller in ctrls.split(","):
                return path
    return None


def read(path):
    with open(path) as f:
        return f.read().strip()


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def nodecm(*args):
    return subprocess.run([rt.NODECM] + list(args) + ["--root-dir", node_dir, "--config",
                                                        kubelet, "--topology", topo_path],
                          capture_output=True, text=True)


# a container without annotations, and a Burstable pod's: the shared pool, never CPU 1
run("iso-plain", ["--cpus", "1", "--memory", "256m"], {})
check(first_cpus("iso-plain") == "0", "iso-plain (not nodecm's) runs on %s, not the shared "
      "pool 0" % first_cpus("iso-plain"))
run("iso-burst", ["--cpu-shares", "512"], {"nodecm.io/pod-uid": "burst"})
check(first_cpus("iso-burst") == "0", "a Burstable pod runs on %s, not 0"
      % first_cpus("iso-burst"))

# the latency-critical one: CPU 1, load balancing and quota off on its real cgroups
run("iso-rt", ["--cpus", "1", "--memory", "256m"],
    {"nodecm.io/pod-uid": "rt", "nodecm.io/isolated-cpus": "require",
     "cpu-load-balancing.crio.io": "disable", "cpu-quota.crio.io": "disable"})
check(first_cpus("iso-rt") == "1", "the pod that requires isolated CPUs runs on %s"
      % first_cpus("iso-rt"))
ctr = cgroup_of("iso-rt", "cpuset")
cpu_ctr = cgroup_of("iso-rt", "cpu")
parent = os.path.dirname(ctr)
check(parent == cg.path(), "the container's parent is the test's cgroup: %s" % parent)
check(read(CPUSET + ctr + "/cpuset.sched_load_balance") == "0",
      "the container's sched_load_balance: %s" % read(CPUSET + ctr + "/cpuset.sched_load_balance"))
check(read(CPUSET + parent + "/cpuset.sched_load_balance") == "0",
      "its parent's sched_load_balance: %s" % read(CPUSET + parent + "/cpuset.sched_load_balance"))
quota = "/sys/fs/cgroup/cpu" + cpu_ctr + "/cpu.cfs_quota_us"
check(os.path.exists(quota) and read(quota) == "-1", "no CFS quota: %s"
      % (read(quota) if os.path.exists(quota) else "no " + quota))
for name in ("iso-plain", "iso-burst"):
    check(inside_cpus(name) == "0", "%s is on %s next to the pinned one" % (name, inside_cpus(name)))

st = nodecm("node", "status", "--json")
if check(st.returncode == 0, "node status: %s" % st.stderr):
    s = json.loads(st.stdout)
    check(s["isolatedCPUs"] == "exclusive-only" and s["isolated"] == "1" and
          s["sharedPool"] == "0", "status: %s" % st.stdout)
    rt_pod = [p for p in s["pods"] if p["uid"] == "rt"]
    check(rt_pod and rt_pod[0]["containers"][0].get("knobs") == ["cpu-load-balancing",
                                                                   "cpu-quota"],
          "status lists the knobs: %s" % rt_pod)

# behind nodecm's back: a reconcile puts it back
write(CPUSET + parent + "/cpuset.sched_load_balance", "1")
write(quota, "100000")
r = nodecm("oci-hook", "--stage", "reconcile", "--json")
check(r.returncode == 0, "oci-hook --stage reconcile: %s" % r.stderr)
if r.returncode == 0:
    out = json.loads(r.stdout)
    check(out["sched_load_balance"] == 1 and out["cpu_quota"] == 1,
          "the reconcile counted what it put back: %s" % r.stdout)
check(read(CPUSET + parent + "/cpuset.sched_load_balance") == "0",
      "reconcile put the parent's sched_load_balance back")
check(read(quota) == "-1", "reconcile took the quota off again: %s" % read(quota))

# the opt-out runs on every CPU
run("iso-out", ["--cpus", "1", "--memory", "256m"], {"nodecm.io/managed": "false"})
check(first_cpus("iso-out") == rt.format_list(ALL), "iso-out (opted out) runs on %s"
      % first_cpus("iso-out"))

# the container goes: its parent balances again; the isolated CPU stays out of the pool
r = podman("rm", "-f", "-t", "0", "iso-rt")
check(r.returncode == 0, "podman rm iso-rt: %s" % r.stderr)
check(read(CPUSET + parent + "/cpuset.sched_load_balance") == "1",
      "the parent's sched_load_balance came back: %s"
      % read(CPUSET + parent + "/cpuset.sched_load_balance"))
check(inside_cpus("iso-plain") == "0", "iso-plain is on %s once CPU 1 is free (isolated: not in "
      "the shared pool)" % inside_cpus("iso-plain"))
with open(os.path.join(node_dir, "nodecm_isolation")) as f:
    check(json.load(f) == {}, "nothing left to put back")
rt.finish()
