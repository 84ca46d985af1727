# SPDX-License-Identifier: Apache-2.0
"""nodecm oci-hook with runc: real containers pinned before their first instruction.

Bundles from a busybox-static rootfs get the hooks of examples/oci/runc-hooks.json (paths
pointed at this build and a temporary node directory). Containers of every QoS class are run
with `runc run -d`; each prints its Cpus_allowed_list as its first instruction, and
`runc exec` reads it again later. Every value must be what `nodecm simulate` (the kubelet's
static policy) gives the same pods on this machine: Guaranteed integer containers on their own
CPUs, the others on the shared pool, which shrinks and grows as containers come and go. Also:
a refused admission fails `runc run` with the kubelet's text and changes nothing; a container
without nodecm's annotations is kept on the shared pool (nodecm.io/managed "false": left alone); a container deleted without its poststop hook is
released at the next hook run; a hook configured at both prestart and createRuntime admits once.
Every container, cgroup and file made here is removed on exit, also on failure.
"""
import copy
import json
import os
import subprocess
import sys
import time

import runtimes as rt

rt.require_root()
RUNC = rt.require_prog("runc")
rt.require_cgroup_v1_cpuset()
rt.static_busybox()

cl, tmp, cg, rootfs, node_dir, kubelet, ALL = rt.scene("nodecm-oci-runc-")
state_root = os.path.join(tmp, "runc")

HOOKS = json.loads(rt.shipped_hook("runc-hooks.json", node_dir, kubelet))["hooks"]
subprocess.run([RUNC, "spec", "-b", tmp], check=True)
with open(os.path.join(tmp, "config.json")) as f:
    TEMPLATE = json.load(f)

running = []


def runc(*args, **kw):
    return subprocess.run([RUNC, "--root", state_root] + list(args), capture_output=True,
                          text=True, **kw)


def kill_all():
    for cid in reversed(running):
        runc("delete", "-f", cid)


cl.push(kill_all)

FIRST = "grep Cpus_allowed_list /proc/self/status; exec sleep 100000"


def bundle(cid, resources, annotations, stages=("createRuntime", "poststop")):
    d = os.path.join(tmp, "bundles", cid)
    os.makedirs(d)
    c = copy.deepcopy(TEMPLATE)
    c["root"] = {"path": rootfs, "readonly": True}
    c["process"]["terminal"] = False
    c["process"]["args"] = ["/bin/sh", "-c", FIRST]
    c["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]
    c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "network"]
    c["linux"]["cgroupsPath"] = cg.path(cid)
    c["linux"]["resources"] = resources
    c["annotations"] = annotations
    hooks = {}
    for s in stages:
        # prestart runs where createRuntime does (runc runs both before pivot_root)
        hooks[s] = copy.deepcopy(HOOKS["createRuntime" if s == "prestart" else s])
    c["hooks"] = hooks
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(c, f)
    return d


def start(cid, resources, annotations, stages=("createRuntime", "poststop")):
    d = bundle(cid, resources, annotations, stages)
    running.append(cid)
    # the container keeps runc's stdout and stderr: files, not pipes nobody would close
    with open(os.path.join(d, "out.log"), "w") as log, open(os.path.join(d, "err.log"), "w+") as e:
        r = subprocess.run([RUNC, "--root", state_root, "run", "-d", "-b", d, cid],
                           stdin=subprocess.DEVNULL, stdout=log, stderr=e, timeout=60)
        e.seek(0)
        r.stderr = e.read()
    if r.returncode != 0:
        running.remove(cid)
        runc("delete", "-f", cid)
    return r


def first_cpus(cid):
    path = os.path.join(tmp, "bundles", cid, "out.log")
    for _ in range(200):
        with open(path) as f:
            v = rt.cpus_allowed_of(f.read())
        if v is not None:
            return v
        time.sleep(0.01)
    return None


def inside_cpus(cid):
    r = runc("exec", cid, "/bin/grep", "Cpus_allowed_list", "/proc/self/status")
    return rt.cpus_allowed_of(r.stdout)


def delete(cid, poststop=True):
    r = runc("delete", "-f", cid)
    check(r.returncode == 0, "runc delete %s: %s" % (cid, r.stderr))
    running.remove(cid)


check = rt.check


def shares(m):
    return m * 1024 // 1000


def guaranteed(milli, mem=256 << 20):
    return {"cpu": {"shares": shares(milli), "quota": milli * 100, "period": 100000},
            "memory": {"limit": mem}}


MEM = {"memory": "256Mi"}
exp = rt.Expect({"reserved": "0"})
live = {}  # cid -> (pod uid, container name) of the managed containers running


def expect_all(when):
    for cid, (uid, name) in live.items():
        want = exp.cpus(tmp, uid, name)
        got = inside_cpus(cid)
        check(got == want, "%s: %s runs on %s, the kubelet would give %s" % (when, cid, got, want))


def admitted(cid, uid, name, pod_obj, resources, annotations, stages=("createRuntime", "poststop")):
    exp.admit(pod_obj)
    want = exp.cpus(tmp, uid, name)
    r = start(cid, resources, annotations, stages)
    if not check(r.returncode == 0, "runc run %s: %s" % (cid, r.stderr)):
        return
    live[cid] = (uid, name)
    got = first_cpus(cid)
    print("%s (%s/%s): first instruction on %s, the kubelet's %s" % (cid, uid, name, got, want))
    check(got == want, "%s's first instruction ran on %s, the kubelet would give %s"
          % (cid, got, want))


def ann(uid, name):
    return {"nodecm.io/pod-uid": uid, "nodecm.io/container-name": name}


# Burstable, Guaranteed integer, Guaranteed fractional, BestEffort
admitted("b1", "pb", "app", rt.pod("pb", [("app", {"cpu": "500m"}, {})]),
         {"cpu": {"shares": 512}}, ann("pb", "app"))
admitted("g1", "pg", "app", rt.pod("pg", [("app", dict(cpu="1", **MEM), dict(cpu="1", **MEM))]),
         guaranteed(1000), ann("pg", "app"))
expect_all("after g1")
pool = exp.cpus(tmp, "pb", "app")
check(rt.parse_list(pool) == ALL - rt.parse_list(exp.cpus(tmp, "pg", "app")),
      "the shared pool %s is every CPU but g1's" % pool)
admitted("f1", "pf", "app",
         rt.pod("pf", [("app", dict(cpu="500m", **MEM), dict(cpu="500m", **MEM))]),
         guaranteed(500), ann("pf", "app"))
admitted("e1", "pe", "app", rt.pod("pe", [("app", {}, {})]), {}, ann("pe", "app"))
# a second container of pg: the pod rebuilt from both, the fractional one on the pool
admitted("g1-log", "pg", "log",
         rt.pod("pg", [("app", dict(cpu="1", **MEM), dict(cpu="1", **MEM)),
                       ("log", dict(cpu="200m", **MEM), dict(cpu="200m", **MEM))]),
         guaranteed(200), ann("pg", "log"))
expect_all("after the pods came")

# not nodecm's: kept on the shared pool from its first instruction, off g1's CPU (no stranger
# on an exclusive CPU); nodecm.io/managed "false" opts out: every CPU of its parent
r = start("u1", {"cpu": {"shares": 2048}}, {})
check(r.returncode == 0, "runc run u1: %s" % r.stderr)
pool = exp.cpus(tmp, "pb", "app")
check(first_cpus("u1") == pool, "u1 (not nodecm's) runs on %s, not the shared pool %s"
      % (first_cpus("u1"), pool))
r = start("u0", {"cpu": {"shares": 2048}}, {"nodecm.io/managed": "false"})
check(r.returncode == 0, "runc run u0: %s" % r.stderr)
check(first_cpus("u0") == rt.format_list(ALL), "u0 (opted out) runs on %s" % first_cpus("u0"))

# refused: more CPUs than are free; runc fails with the kubelet's text, nothing changes
free = len(ALL) - 1 - len(rt.parse_list(exp.cpus(tmp, "pg", "app")))
big = free + 1
ref = rt.pod("px", [("app", dict(cpu=str(big), **MEM), dict(cpu=str(big), **MEM))])
steps = list(exp.steps)
exp.admit(ref)
line, _ = exp.run(tmp)
exp.steps = steps
check(line and not line["admitted"], "simulate refuses %d CPUs" % big)
with open(os.path.join(node_dir, "cpu_manager_state")) as f:
    before = f.read()
r = start("x1", guaranteed(big * 1000), ann("px", "app"))
check(r.returncode != 0, "runc run x1 (%d CPUs) must fail" % big)
if line:
    check(line["message"] in r.stderr, "runc's error carries the kubelet's text %r: %s"
          % (line["message"], r.stderr.strip()))
with open(os.path.join(node_dir, "cpu_manager_state")) as f:
    check(f.read() == before, "a refused container leaves cpu_manager_state as it was")
expect_all("after the refusal")

# g1 goes (poststop): the pool grows back in every shared container
delete("g1")
live.pop("g1")
exp.remove("pg", "app")
expect_all("after g1 went")
check(inside_cpus("u1") == exp.cpus(tmp, "pb", "app"), "u1 did not follow the pool back: %s"
      % inside_cpus("u1"))
check(inside_cpus("u0") == rt.format_list(ALL), "u0 is still left alone")

# deleted without its poststop hook (as if the runtime had been killed): released at the
# next hook run, as the kubelet's removeStaleState releases containers that are gone
admitted("s1", "ps", "app", rt.pod("ps", [("app", dict(cpu="1", **MEM), dict(cpu="1", **MEM))]),
         guaranteed(1000), ann("ps", "app"), stages=("createRuntime",))
delete("s1")
live.pop("s1")
exp.remove_pod("ps")
admitted("b2", "pb2", "app", rt.pod("pb2", [("app", {"cpu": "100m"}, {})]),
         {"cpu": {"shares": 102}}, ann("pb2", "app"))
expect_all("after s1's cgroup went")

# prestart and createRuntime both configured: admitted once
admitted("d1", "pd", "app", rt.pod("pd", [("app", {}, {})]), {}, ann("pd", "app"),
         stages=("prestart", "createRuntime", "poststop"))
with open(os.path.join(node_dir, "nodecm_oci_containers")) as f:
    reg = json.load(f)["containers"]
check(sorted(c["id"] for c in reg) == sorted(live),
      "the hook's record lists exactly the running managed containers: %s vs %s"
      % (sorted(c["id"] for c in reg), sorted(live)))
st = subprocess.run([rt.NODECM, "node", "status", "--json", "--root-dir", node_dir, "--config",
                     kubelet], capture_output=True, text=True)
check(st.returncode == 0, "node status: %s" % st.stderr)
if st.returncode == 0:
    pods = {p["uid"]: p for p in json.loads(st.stdout)["pods"]}
    check(sorted(pods) == sorted({u for u, _ in live.values()}),
          "the node holds the pods of the running containers: %s" % sorted(pods))

# everything goes: the node is empty again
for cid in list(live):
    delete(cid)
live.clear()
st = subprocess.run([rt.NODECM, "node", "status", "--json", "--root-dir", node_dir, "--config",
                     kubelet], capture_output=True, text=True)
if check(st.returncode == 0, "node status: %s" % st.stderr):
    s = json.loads(st.stdout)
    check(s["pods"] == [] and s["entries"] == {}, "the node holds nothing at the end: %s"
          % st.stdout)
rt.finish()
