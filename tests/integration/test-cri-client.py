# SPDX-License-Identifier: Apache-2.0
"""lib/cri's client against a real containerd (its CRI plugin, a grpc-go server).

A private containerd (tests/integration/containerd.py) runs pods that a python3-grpcio client
creates as a kubelet would; build/tests/integration/cri-client (lib/cri, blocking and
asynchronous) must then read Version, ListPodSandbox, ListContainers (all, by state, by
sandbox), ContainerStatus with the resources the kubelet sent, and change a running container's
cpuset with UpdateContainerResources, which the container's process sees at once. Errors:
a container containerd does not know, and containerd gone (the endpoint named). Everything is
torn down on every exit path.
"""
import json
import os
import subprocess
import time

import runtimes as rt
import containerd as ctd

rt.require_root()
rt.require_cgroup_v1_cpuset()
rt.static_busybox()
CLIENT = os.environ.get("NCM_CRI_CLIENT", "")
if not CLIENT:
    rt.skip("run through meson test (NCM_CRI_CLIENT is not set)")
try:
    import grpc  # noqa: F401
except ImportError:
    rt.skip("python3-grpcio is not importable by /usr/bin/python3")

cl, tmp, cg, pb, svc, c = ctd.scene("nodecm-cri-client-")
kl = ctd.Kubelet(pb, svc, "unix:" + c.sock, os.path.join(tmp, "logs"), cg.path())
c.cri = kl
check = rt.check
ALL = rt.format_list(rt.parse_list(rt.machine_cpus()))
other = sorted(rt.parse_list(rt.machine_cpus()))[-1]


def client(*args):
    r = subprocess.run([CLIENT, c.endpoint] + list(args), capture_output=True, text=True,
                       timeout=60)
    out = json.loads(r.stdout) if r.stdout.strip() else None
    return r.returncode, out, r.stderr


rc, v, err = client("version")
check(rc == 0 and v["runtimeName"] == "containerd" and v["runtimeApiVersion"] == "v1",
      "Version: %s %s" % (v, err))

G = [("app", {"cpu": "1", "memory": "64Mi"}, {"cpu": "1", "memory": "64Mi"})]
B = [("web", {"cpu": "250m"}, {"memory": "64Mi"})]
sg = kl.run_pod("uid-g", "db", G)
sb = kl.run_pod("uid-b", "web", B, namespace="prod", annotations={"team": "a"})
cg_ = kl.create("uid-g", "app", G[0][1], G[0][2], "sleep 100000")
cb = kl.create("uid-b", "web", B[0][1], B[0][2], "sleep 100000")
kl.start(cg_)

rc, sandboxes, err = client("sandboxes")
check(rc == 0, "ListPodSandbox: %s" % err)
by_uid = {s["uid"]: s for s in sandboxes or []}
check(set(by_uid) == {"uid-g", "uid-b"}, "ListPodSandbox lists both pods: %s" % sandboxes)
if "uid-b" in by_uid:
    s = by_uid["uid-b"]
    check(s["id"] == sb and s["name"] == "web" and s["namespace"] == "prod" and s["ready"]
          and s["annotations"] == {"team": "a"}, "ListPodSandbox: %s" % s)

rc, ctrs, err = client("containers")
check(rc == 0 and {x["id"] for x in ctrs} == {cg_, cb}, "ListContainers: %s %s" % (ctrs, err))
for x in ctrs or []:
    if x["id"] == cg_:
        check(x["name"] == "app" and x["sandbox"] == sg and x["state"] == "CONTAINER_RUNNING"
              and x["labels"].get("io.kubernetes.pod.uid") == "uid-g",
              "ListContainers, the Guaranteed container: %s" % x)
    else:
        check(x["state"] == "CONTAINER_CREATED", "the created container: %s" % x)
rc, ctrs, err = client("containers", "running")
check(rc == 0 and [x["id"] for x in ctrs] == [cg_], "ListContainers running: %s" % ctrs)
rc, ctrs, err = client("containers", sb)
check(rc == 0 and [x["id"] for x in ctrs] == [cb], "ListContainers of a sandbox: %s" % ctrs)

rc, st, err = client("status", cg_)
check(rc == 0 and st["resources"]["cpuShares"] == 1024 and st["resources"]["cpuQuota"] == 100000
      and st["resources"]["cpuPeriod"] == 100000 and st["resources"]["memoryLimit"] == 64 << 20,
      "ContainerStatus carries what the kubelet sent: %s %s" % (st, err))

# UpdateContainerResources: the process sees its new cpuset at once
pid = kl.pid(cg_)
with open("/proc/%d/status" % pid) as f:
    check(rt.cpus_allowed_of(f.read()) == ALL, "the container starts on every CPU")
rc, _, err = client("update", cg_, str(other), "0")
check(rc == 0, "UpdateContainerResources: %s" % err)
with open("/proc/%d/status" % pid) as f:
    got = rt.cpus_allowed_of(f.read())
check(got == str(other), "after UpdateContainerResources the container runs on %s" % got)
rc, st, err = client("status", cg_)
check(rc == 0 and st["resources"]["cpusetCpus"] == str(other)
      and st["resources"]["cpusetMems"] == "0", "ContainerStatus shows the cpuset: %s" % st)

# many calls at once on one connection, answered through the loop
rc, out, err = client("async", "64")
check(rc == 0 and out == {"calls": 64, "failed": 0, "containers": 2},
      "64 asynchronous ListContainers: %s %s" % (out, err))

# errors: an unknown container is the runtime's status; a runtime that is gone is named
rc, out, err = client("status", "0123456789abcdef")
check(rc == 1 and out["code"] == 5, "ContainerStatus of an unknown container: %s" % out)
kl.remove_pod("uid-g")
kl.remove_pod("uid-b")
c.stop()
rc, out, err = client("version")
check(rc == 2 and c.sock in err, "a runtime that is gone: %d %s" % (rc, err.strip()))
rt.finish()
