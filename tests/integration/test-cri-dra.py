# SPDX-License-Identifier: Apache-2.0
"""DRA's CDI devices through nodecmd's CRI proxy, in front of a real containerd (issue 24).

A python3-grpcio client sends what a 1.31+ kubelet sends for a container with DRA claims: the
CDI device names in CreateContainer (ContainerConfig.CDI_devices, field 17), and what older
kubelets sent (a "cdi.k8s.io/..." annotation). nodecmd (draTopologyHints: align,
deviceLocalCPUs: prefer, cdiSpecDirs: this test's directory) locates them on this machine: a
CDI spec names a real device node whose /sys/dev link goes through one of this machine's PCI
functions. Checked: the container is created and started with the CPUs the kubelet would give
(this machine has one NUMA node: the devices align with it), `nodecm devices` says where each
CDI device is (the function read here from sysfs, the spec and node that said so, a name no
spec defines as not located), and nodecmd stops cleanly. Everything is torn down on every exit.
"""
import json
import os
import re
import signal
import subprocess
import time

import runtimes as rt
import containerd as ctd

rt.require_root()
rt.require_cgroup_v1_cpuset()
rt.static_busybox()
NODECMD = os.environ.get("NCM_NODECMD", "")
if not NODECMD:
    rt.skip("run through meson test (NCM_NODECMD is not set)")
try:
    import grpc  # noqa: F401
except ImportError:
    rt.skip("python3-grpcio is not importable by /usr/bin/python3")
os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"
PCI = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def pci_device_node():
    """(path, 'b' or 'c', major, minor, the PCI function) of a device node of this machine
    that sits on its PCI bus, or None."""
    for kind, t in (("block", "b"), ("char", "c")):
        d = "/sys/dev/" + kind
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            target = os.path.realpath(os.path.join(d, n))
            funcs = [p for p in target.split("/") if PCI.match(p)]
            if not funcs:
                continue
            devname = None
            try:
                with open(os.path.join(d, n, "uevent")) as f:
                    for line in f:
                        if line.startswith("DEVNAME="):
                            devname = "/dev/" + line.strip().split("=", 1)[1]
            except OSError:
                continue
            if not devname or not os.path.exists(devname):
                continue
            st = os.stat(devname)
            maj, mi = (int(x) for x in n.split(":"))
            if os.major(st.st_rdev) == maj and os.minor(st.st_rdev) == mi:
                return devname, t, maj, mi, funcs[-1]
    return None


node = pci_device_node()
if not node:
    rt.skip("no device node of this machine sits on a PCI function")
devname, dtype, dmaj, dmin, func = node

cl, tmp, cg, pb, svc, c = ctd.scene("nodecm-cri-dra-")
check = rt.check
ALL = rt.parse_list(rt.machine_cpus())
if len(ALL) < 2 or 0 not in ALL:
    rt.skip("needs CPU 0 and at least one more (have %s)" % rt.machine_cpus())
node_dir = os.path.join(tmp, "node")
proxy_sock = os.path.join(tmp, "cri.sock")
kubelet_yaml = os.path.join(tmp, "kubelet.yaml")
cdi_dir = os.path.join(tmp, "cdi")
os.makedirs(cdi_dir)
# one device by its node's path (nodecm stats it), one by its numbers; read-only
with open(os.path.join(cdi_dir, "disk.yaml"), "w") as f:
    f.write("cdiVersion: 0.5.0\nkind: nodecm.test/disk\ndevices:\n"
            "- name: d0\n  containerEdits:\n    deviceNodes:\n"
            "    - {path: %s, permissions: r}\n"
            "- name: d1\n  containerEdits:\n    deviceNodes:\n"
            "    - {path: /dev/nodecm-test-d1, hostPath: %s, type: %s, major: %d, minor: %d, "
            "permissions: r}\n" % (devname, devname, dtype, dmaj, dmin))
with open(os.path.join(rt.SRC, "examples", "cri", "nodecmd.yaml")) as f:
    text = f.read()
with open(kubelet_yaml, "w") as f:
    f.write(text.replace("unix:///run/containerd/containerd.sock", c.endpoint)
            .replace("/var/lib/nodecm/cri.sock", proxy_sock))
    f.write("draTopologyHints: align\ndeviceLocalCPUs: prefer\ncdiSpecDirs: [%s]\n" % cdi_dir)

log = os.path.join(tmp, "nodecmd.log")
with open(log, "a") as lf:
    proc = subprocess.Popen([NODECMD, "--config", kubelet_yaml, "--root-dir", node_dir,
                             "--log-level", "debug"], stdout=lf, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)


def stop_daemon():
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


cl.push(stop_daemon)
for _ in range(400):
    if proc.poll() is not None:
        break
    if os.path.exists(proxy_sock) and os.path.exists(os.path.join(node_dir, "nodecm.sock")):
        break
    time.sleep(0.025)
if proc.poll() is not None or not os.path.exists(proxy_sock):
    with open(log) as f:
        raise RuntimeError("nodecmd did not start: %s" % f.read()[-3000:])

kl = ctd.Kubelet(pb, svc, "unix:" + proxy_sock, os.path.join(tmp, "logs"), cg.path())
direct = ctd.Kubelet(pb, svc, "unix:" + c.sock, os.path.join(tmp, "logs"), cg.path())
c.cri = direct
MEM = {"memory": "64Mi"}
FIRST = "grep Cpus_allowed_list /proc/self/status; exec sleep 100000"

# a Guaranteed container with DRA devices: field 17 and the older annotation
lim = dict(cpu="1", **MEM)
kl.run_pod("pd", "pd", [("app", lim, lim)])
req = kl.container_request("pd", "app", lim, lim, FIRST,
                           annotations={"cdi.k8s.io/nodecm.test_d1": "nodecm.test/disk=d1"})
req.config.CDI_devices.add(name="nodecm.test/disk=d0")
req.config.CDI_devices.add(name="nodecm.test/disk=unknown")
os.makedirs(os.path.join(kl.pods["pd"]["config"].log_directory, "app"), exist_ok=True)
cid = kl.rt.CreateContainer(req, timeout=30).container_id
kl.pods["pd"]["containers"]["app"] = cid
kl.start(cid)
got = None
for _ in range(200):
    m = re.search(r"Cpus_allowed_list:\s*(\S+)", kl.log("pd", "app"))
    if m:
        got = m.group(1)
        break
    time.sleep(0.02)
# the kubelet's choice on this machine (reserved CPU 0, one NUMA node): the first free CPU
want = rt.format_list(sorted(ALL - {0})[:1])
check(got == want, "a container with CDI devices runs on %s, the kubelet's CPUs are %s"
      % (got, want))

r = subprocess.run([rt.NODECM, "devices", "--connect", os.path.join(node_dir, "nodecm.sock"),
                    "--json"], capture_output=True, text=True)
check(r.returncode == 0, "nodecm devices: %s" % r.stderr)
locs = {x["device"]: x for x in json.loads(r.stdout).get("locations", [])} \
    if r.returncode == 0 else {}
spec = os.path.join(cdi_dir, "disk.yaml")
d0, d1 = locs.get("nodecm.test/disk=d0", {}), locs.get("nodecm.test/disk=d1", {})
check(d0.get("located") is True and d0.get("pci") == [func] and
      d0.get("how") == "CDI %s: %s" % (spec, devname),
      "the CDI device by its node's path is %s's %s: %s" % (devname, func, d0))
check(d1.get("located") is True and d1.get("pci") == [func] and
      d1.get("how") == "CDI %s: /dev/nodecm-test-d1" % spec,
      "the CDI device by its node's numbers is %s: %s" % (func, d1))
unknown = locs.get("nodecm.test/disk=unknown", {})
check(unknown.get("located") is False and unknown.get("how") == "no CDI spec defines it",
      "a name no spec defines is not located: %s" % unknown)
print("CDI devices of the container: %s" % json.dumps(
    [locs.get(k) for k in sorted(locs) if k.startswith("nodecm.test/")]))

kl.stop(cid)
kl.remove(cid)
kl.remove_pod("pd")
rc = stop_daemon()
check(rc == 0, "nodecmd stops with status 0 on SIGTERM (got %s)" % rc)
rt.finish()
