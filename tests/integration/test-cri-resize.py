# SPDX-License-Identifier: Apache-2.0
"""In-place resize through nodecmd's CRI proxy, in front of a real containerd.

A kubelet with cpuManagerPolicy none resizes a pod by sending UpdateContainerResources with the
containers' new shares, quota and memory limit; behind the proxy nodecm decides (its static
policy, InPlacePodVerticalScalingExclusiveCPUs on) and forwards the update with the new cpusets,
or refuses it with the reason the kubelet would show, changing nothing. Checked, with a python
grpcio client standing in for the kubelet:
  - a fractional Guaranteed container (500m -> 700m) is resized: containerd holds the new
    shares and quota, the container stays on the shared pool, nodecm's pod has the new request;
  - a container with an exclusive CPU cannot grow to every CPU of the machine (CPU 0 is
    reserved): the call fails with "Infeasible: ...", and containerd's view of the container
    (shares, quota, cpuset, the CPUs its process may run on) and nodecm's state are unchanged;
  - the node's files still restore after the refusal (nodecmd restarted).
Everything is torn down on every exit path.
"""
import json
import os
import subprocess
import time

import runtimes as rt
import containerd as ctd

cl, tmp, cg, pb, svc, c, ALL = ctd.proxy_scene("nodecm-cri-resize-")
import grpc  # noqa: E402 (proxy_scene skips the test without it)

check = rt.check
daemon, kl, direct = ctd.proxy_node(cl, tmp, cg, pb, svc, c,
                                    "featureGates: {InPlacePodVerticalScalingExclusiveCPUs: true}\n")
node_dir = daemon.node_dir
MEM = {"memory": "64Mi"}
CMD = "exec sleep 100000"


def status(cid):
    """What containerd says of the container: its linux resources and where it may run."""
    st = direct.rt.ContainerStatus(pb.ContainerStatusRequest(container_id=cid, verbose=True),
                                   timeout=10).status
    lin = st.resources.linux
    with open("/proc/%d/status" % direct.pid(cid)) as f:
        allowed = rt.cpus_allowed_of(f.read())
    return {"shares": lin.cpu_shares, "quota": lin.cpu_quota, "period": lin.cpu_period,
            "memory": lin.memory_limit_in_bytes, "cpuset": lin.cpuset_cpus, "allowed": allowed}


def node_state():
    r = subprocess.run([rt.NODECM, "node", "status", "--json", "--connect",
                        os.path.join(node_dir, "nodecm.sock")], capture_output=True, text=True)
    check(r.returncode == 0, "node status: %s" % r.stderr)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def resize(cid, lim):
    """The kubelet's UpdateContainerResources for a Guaranteed container resized to LIM."""
    res = kl.linux_resources(lim, lim, "Guaranteed")
    return kl.rt.UpdateContainerResources(pb.UpdateContainerResourcesRequest(
        container_id=cid, linux=res), timeout=30)


def run(uid, lim):
    kl.run_pod(uid, uid, [("app", lim, lim)])
    cid = kl.create(uid, "app", lim, lim, CMD)
    kl.start(cid)
    return cid


# a fractional Guaranteed container: only its shares and quota change
f = run("pf", dict(cpu="500m", **MEM))
g = run("pg", dict(cpu="1", **MEM))
time.sleep(1.5)  # a reconcile: every shared container on the pool
before_f = status(f)
print("pf before: %s" % before_f)
resize(f, dict(cpu="700m", **MEM))
after_f = status(f)
print("pf after:  %s" % after_f)
check(after_f["shares"] == 716 and after_f["quota"] == 70000,
      "the fractional container runs with its new shares and quota: %s" % after_f)
pool = node_state().get("defaultCpuSet")
check(after_f["allowed"] == before_f["allowed"] and after_f["allowed"] == pool,
      "it stays on the shared pool %s: %s" % (pool, after_f["allowed"]))
pods = subprocess.run([rt.NODECM, "node", "pods", "--json", "--connect",
                       os.path.join(node_dir, "nodecm.sock")], capture_output=True, text=True)
check(pods.returncode == 0 and '"pf"' in pods.stdout, "node pods: %s" % pods.stderr)
check("resize" in daemon.tail(), "nodecmd logged the resize")

# an exclusive container that cannot grow here (to every CPU: one is reserved): refused,
# nothing changed anywhere
big = str(len(ALL))
before_g = status(g)
state_before = node_state()
print("pg before: %s" % before_g)
try:
    resize(g, dict(cpu=big, **MEM))
    check(False, "an upsize of pg to %s CPUs must be refused on this machine" % big)
except grpc.RpcError as e:
    print("refused: %s %s" % (e.code(), e.details()))
    check(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and
          e.details().startswith("Infeasible: "),
          "refused as Infeasible: %s %s" % (e.code(), e.details()))
after_g = status(g)
check(after_g == before_g, "containerd's view of pg is unchanged: %s, was %s"
      % (after_g, before_g))
check(after_g["allowed"] == state_before["entries"]["pg"]["app"],
      "pg keeps its exclusive CPU: %s" % after_g["allowed"])
state_after = node_state()
check(state_after.get("entries") == state_before.get("entries") and
      state_after.get("defaultCpuSet") == state_before.get("defaultCpuSet"),
      "nodecm's state is unchanged by the refusal: %s" % state_after.get("entries"))

# the files the refusal left restore as they were
rc = daemon.stop()
check(rc == 0, "nodecmd stops with status 0 (got %s): %s" % (rc, daemon.tail()[-2000:]))
daemon.start()
for _ in range(100):
    try:
        kl.rt.Version(pb.VersionRequest(version="0.1.0"), timeout=5)  # the client reconnects
        break
    except grpc.RpcError:
        time.sleep(0.1)
state_restarted = node_state()
check(state_restarted.get("entries") == state_before.get("entries"),
      "after a restart: %s" % state_restarted.get("entries"))
for uid in ("pf", "pg"):
    kl.remove_pod(uid)
rc = daemon.stop()
check(rc == 0, "nodecmd stops with status 0 (got %s): %s" % (rc, daemon.tail()[-2000:]))
rt.finish()
