# SPDX-License-Identifier: Apache-2.0
"""nodecm oci-hook with podman --hooks-dir: examples/oci/hooks.d/nodecm.json as shipped.

podman (runc, the cgroupfs manager, private storage and run directories, no network, lowered
ulimits) runs containers from a busybox-static rootfs with the hooks directory holding the
shipped hook (paths pointed at this build and a temporary node directory). Resources are
podman's own flags (--cpus, --memory, --cpu-shares), the pod identity nodecm.io annotations.
Each container prints its Cpus_allowed_list as its first instruction (podman logs) and
`podman exec` reads it again; every value must be what `nodecm simulate` gives the same pods.
A container without nodecm's annotations is kept on the shared pool, off the exclusive CPUs
(nodecm.io/managed "false" opts out). The pool follows `podman rm`, a refused container fails
`podman run` with the kubelet's text,
and a cpuset widened behind nodecm's back (`podman update --cpuset-cpus`) is written again when
the pool next moves. Everything made here is removed on exit, also on failure.
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

cl, tmp, cg, rootfs, node_dir, kubelet, ALL = rt.scene("nodecm-oci-podman-")

hooks_dir = os.path.join(tmp, "hooks.d")
os.makedirs(hooks_dir)
with open(os.path.join(hooks_dir, "nodecm.json"), "w") as f:
    f.write(rt.shipped_hook(os.path.join("hooks.d", "nodecm.json"), node_dir, kubelet))

GLOBAL = [PODMAN, "--root", os.path.join(tmp, "storage"), "--runroot", os.path.join(tmp, "run"),
          "--tmpdir", os.path.join(tmp, "tmp"), "--storage-driver", "vfs",
          "--cgroup-manager", "cgroupfs", "--runtime", "runc", "--events-backend", "file",
          "--hooks-dir", hooks_dir]
RUN = ["run", "-d", "--network", "none", "--ulimit", "nofile=20000:20000",
       "--ulimit", "nproc=4096:4096", "--cgroup-parent", cg.path(), "--log-driver", "k8s-file"]
FIRST = "grep Cpus_allowed_list /proc/self/status; exec sleep 100000"


def podman(*args, timeout=120):
    return subprocess.run(GLOBAL + list(args), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def remove_all():
    podman("rm", "-a", "-f", "-t", "0")


cl.push(remove_all)
check = rt.check
exp = rt.Expect({"reserved": "0"})
live = {}  # name -> (pod uid, container name)
MEM = {"memory": "256Mi"}


def first_cpus(name):
    for _ in range(200):
        r = podman("logs", name)
        v = rt.cpus_allowed_of(r.stdout)
        if v is not None:
            return v
    return None


def inside_cpus(name):
    return rt.cpus_allowed_of(podman("exec", name, "grep", "Cpus_allowed_list",
                                     "/proc/self/status").stdout)


def expect_all(when):
    for name, (uid, c) in live.items():
        want = exp.cpus(tmp, uid, c)
        got = inside_cpus(name)
        check(got == want, "%s: %s runs on %s, the kubelet would give %s" % (when, name, got, want))


def run(name, flags, annotations):
    args = list(RUN) + ["--name", name] + flags
    for k, v in annotations.items():
        args += ["--annotation", "%s=%s" % (k, v)]
    return podman(*(args + ["--rootfs", rootfs, "/bin/sh", "-c", FIRST]))


def admitted(name, uid, pod_obj, flags, annotations):
    exp.admit(pod_obj)
    want = exp.cpus(tmp, uid, "app")
    r = run(name, flags, annotations)
    if not check(r.returncode == 0, "podman run %s: %s" % (name, r.stderr)):
        return
    live[name] = (uid, "app")
    got = first_cpus(name)
    print("%s: first instruction on %s, the kubelet's %s" % (name, got, want))
    check(got == want, "%s's first instruction ran on %s, the kubelet would give %s"
          % (name, got, want))


def ann(uid):
    return {"nodecm.io/pod-uid": uid, "nodecm.io/container-name": "app"}


admitted("pm-b", "qb", rt.pod("qb", [("app", {"cpu": "500m"}, {})]), ["--cpu-shares", "512"],
         ann("qb"))
admitted("pm-g", "qg", rt.pod("qg", [("app", dict(cpu="1", **MEM), dict(cpu="1", **MEM))]),
         ["--cpus", "1", "--memory", "256m"], ann("qg"))
admitted("pm-f", "qf", rt.pod("qf", [("app", dict(cpu="500m", **MEM), dict(cpu="500m", **MEM))]),
         ["--cpus", "0.5", "--memory", "256m"], ann("qf"))
# BestEffort, made nodecm's by nodecm.io/managed alone: its own pod, named by the container id
r = run("pm-e", [], {"nodecm.io/managed": "true"})
if check(r.returncode == 0, "podman run pm-e: %s" % r.stderr):
    cid = r.stdout.strip()
    # the hook names the container by its 64-digit id; a pod file's container name is a DNS
    # label (63 characters at most), so the simulation names it "e" (names decide nothing here)
    exp.admit(rt.pod(cid, [("e", {}, {})]))
    live["pm-e"] = (cid, "e")
    check(first_cpus("pm-e") == exp.cpus(tmp, cid, "e"), "pm-e's first instruction ran on %s"
          % first_cpus("pm-e"))
expect_all("after the containers came")

# not nodecm's: kept on the shared pool, off every exclusive CPU (no stranger on an exclusive
# CPU; docs/runtimes.md); with the opt-out it runs on every CPU, pm-g's included
r = run("pm-u", ["--cpus", "1", "--memory", "256m"], {})
pool = exp.cpus(tmp, "qb", "app")
check(r.returncode == 0 and first_cpus("pm-u") == pool,
      "pm-u (not nodecm's) runs on %s, not the shared pool %s" % (first_cpus("pm-u"), pool))
check(not set(rt.parse_list(inside_cpus("pm-u") or "")) &
      set(rt.parse_list(exp.cpus(tmp, "qg", "app"))),
      "pm-u is on pm-g's exclusive CPU")
r = run("pm-o", ["--cpus", "1", "--memory", "256m"], {"nodecm.io/managed": "false"})
check(r.returncode == 0 and first_cpus("pm-o") == rt.format_list(ALL),
      "pm-o (opted out) runs on %s" % first_cpus("pm-o"))

# refused: podman run fails with the kubelet's text
free = len(ALL) - 1 - len(rt.parse_list(exp.cpus(tmp, "qg", "app")))
big = free + 1
steps = list(exp.steps)
exp.admit(rt.pod("qx", [("app", dict(cpu=str(big), **MEM), dict(cpu=str(big), **MEM))]))
line, _ = exp.run(tmp)
exp.steps = steps
r = run("pm-x", ["--cpus", str(big), "--memory", "256m"], ann("qx"))
check(r.returncode != 0, "podman run pm-x (%d CPUs) must fail" % big)
if line and not line["admitted"]:
    check(line["message"] in r.stderr, "podman's error carries the kubelet's text %r: %s"
          % (line["message"], r.stderr.strip()))
podman("rm", "-f", "pm-x")
expect_all("after the refusal")

# a cpuset changed behind nodecm's back is put back by the next hook run (the shared pool is
# written again for every shared container the hook placed)
podman("update", "--cpuset-cpus", rt.format_list(ALL), "pm-b")
r = podman("rm", "-f", "-t", "0", "pm-g")
check(r.returncode == 0, "podman rm pm-g: %s" % r.stderr)
live.pop("pm-g")
exp.remove("qg", "app")
expect_all("after pm-g went")
check(inside_cpus("pm-u") == exp.cpus(tmp, "qb", "app"),
      "pm-u did not follow the pool back: %s" % inside_cpus("pm-u"))
podman("rm", "-f", "-t", "0", "pm-u", "pm-o")

for name in list(live):
    podman("rm", "-f", "-t", "0", name)
live.clear()
st = subprocess.run([rt.NODECM, "node", "status", "--json", "--root-dir", node_dir, "--config",
                     kubelet], capture_output=True, text=True)
if check(st.returncode == 0, "node status: %s" % st.stderr):
    s = json.loads(st.stdout)
    check(s["pods"] == [] and s["entries"] == {}, "the node holds nothing at the end: %s"
          % st.stdout)

# The memory manager's Static policy behind the hook (its own node and hooks directory): a
# Guaranteed container's memory request is podman's --memory to the byte, its blocks' NUMA node
# is its cpuset.mems; a Burstable one keeps the runtime's (the kubelet leaves it alone).
mm_dir = os.path.join(tmp, "node-mm")
mm_kubelet = os.path.join(tmp, "kubelet-mm.yaml")
with open(kubelet) as f, open(mm_kubelet, "w") as out:
    out.write(f.read() + "memoryManagerPolicy: Static\nevictionHard: {memory.available: 100Mi}\n"
              "reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]\n")
mm_hooks = os.path.join(tmp, "hooks-mm.d")
os.makedirs(mm_hooks)
with open(os.path.join(mm_hooks, "nodecm.json"), "w") as f:
    f.write(rt.shipped_hook(os.path.join("hooks.d", "nodecm.json"), mm_dir, mm_kubelet))
GLOBAL[GLOBAL.index(hooks_dir)] = mm_hooks
EXACT = 100000000


def mems_inside(name):
    out = podman("exec", name, "grep", "Mems_allowed_list", "/proc/self/status").stdout
    return out.split(":", 1)[1].strip() if ":" in out else None


def mm_blocks(uid):
    with open(os.path.join(mm_dir, "memory_manager_state")) as f:
        return json.load(f).get("entries", {}).get(uid, {}).get("app", [])


r = run("pm-mg", ["--cpus", "1", "--memory", "%db" % EXACT], ann("mg"))
if check(r.returncode == 0, "podman run pm-mg: %s" % r.stderr):
    b = mm_blocks("mg")
    print("pm-mg: blocks %s, Mems_allowed_list %s" % (b, mems_inside("pm-mg")))
    check(b == [{"numaAffinity": [0], "type": "memory", "size": EXACT}],
          "the memory manager pinned exactly --memory on NUMA node 0: %s" % b)
    check(mems_inside("pm-mg") == "0", "pm-mg's memory is on NUMA node 0")
r = run("pm-mb", ["--cpu-shares", "512", "--memory", "64m"], ann("mb"))
if check(r.returncode == 0, "podman run pm-mb: %s" % r.stderr):
    with open("/sys/fs/cgroup/cpuset/cpuset.mems") as f:
        machine = f.read().strip()
    check(mm_blocks("mb") == [] and mems_inside("pm-mb") == machine,
          "a Burstable container has no blocks and the runtime's memory nodes: %s"
          % mems_inside("pm-mb"))
for name in ("pm-mg", "pm-mb"):
    podman("rm", "-f", "-t", "0", name)
rt.finish()
