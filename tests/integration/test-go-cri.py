# SPDX-License-Identifier: Apache-2.0
"""nodecmd's CRI proxy against a grpc-go client (issue 29), in front of a private containerd.

The kubelet talks to its runtime with grpc-go; nodecm-go-peer's `cri` subcommand is that side:
the requests are built by the kubelet model of tests/integration/containerd.py (what a kubelet
with the cgroupfs driver and cpuManagerPolicy none sends), decoded into the Go types generated
from lib/api and sent with grpc-go's typed client, dialing the proxy by its bare path (the path
goes as :authority) and by unix://. For each dial: RunPodSandbox, CreateContainer of a
Guaranteed container whose first instruction runs on the CPUs `nodecm simulate` gives it,
StartContainer, an UpdateContainerResources that would widen its cpuset (nodecm's stays),
ContainerStatus, then removal. A python3-grpcio client with grpc.default_authority set to the
proxy's socket is served too. Root, cgroup v1 cpuset and containerd are needed (else 77).
"""
import base64
import json
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runtimes as rt  # noqa: E402
import golib  # noqa: E402

rt.require_root()
rt.require_cgroup_v1_cpuset()
rt.static_busybox()
NODECMD = os.environ.get("NCM_NODECMD", "")
if not NODECMD:
    rt.skip("run through meson test (NCM_NODECMD is not set)")
try:
    import grpc
except ImportError:
    rt.skip("python3-grpcio is not importable by /usr/bin/python3")
os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"
PEER = golib.peer()
import containerd as ctd  # noqa: E402
import dplib  # noqa: E402

cl, tmp, cg, pb, svc, c = ctd.scene("nodecm-go-cri-")


def check(cond, msg):
    if cond:
        print("ok - " + msg, flush=True)
    return rt.check(cond, msg)



ALL = rt.parse_list(rt.machine_cpus())
if len(ALL) < 2 or 0 not in ALL:
    rt.skip("needs CPU 0 and at least one more (have %s)" % rt.machine_cpus())
node_dir = os.path.join(tmp, "node")
proxy_sock = os.path.join(tmp, "cri.sock")
kubelet_yaml = os.path.join(tmp, "kubelet.yaml")
with open(os.path.join(rt.SRC, "examples", "cri", "nodecmd.yaml")) as f:
    text = f.read()
with open(kubelet_yaml, "w") as f:
    f.write(text.replace("unix:///run/containerd/containerd.sock", c.endpoint)
            .replace("/var/lib/nodecm/cri.sock", proxy_sock))
log_path = os.path.join(tmp, "nodecmd.log")
with open(log_path, "a") as log:
    daemon = subprocess.Popen([NODECMD, "--config", kubelet_yaml, "--root-dir", node_dir,
                               "--runtime-endpoint", c.endpoint, "--cri-listen", proxy_sock],
                              stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def stop_daemon():
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
        try:
            return daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
    return None


cl.push(stop_daemon)
if not dplib.wait_until(lambda: os.path.exists(proxy_sock) or daemon.poll() is not None, 30) \
        or daemon.poll() is not None:
    with open(log_path) as f:
        raise RuntimeError("nodecmd did not start: " + f.read()[-3000:])


class GoError(Exception):
    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code_name, self.message = code, message


class GoRuntime:
    """The RuntimeService stub containerd.Kubelet calls, sent by the grpc-go client."""

    def __init__(self, dial):
        self.p = dplib.Proc([PEER, "cri", "-socket", proxy_sock, "-dial", dial],
                            "go cri (%s)" % dial, os.path.join(tmp, "go-cri-%s.log" % dial))
        cl.push(self.p.kill)

    def __getattr__(self, method):
        def call(req, timeout=None):
            self.p.send(json.dumps({"method": method, "req": base64.b64encode(
                req.SerializeToString()).decode()}))
            m = self.p.wait(lambda m: "ok" in m, 90, method)
            if m is None:
                raise GoError("NoAnswer", self.p.stderr_text())
            if not m["ok"]:
                raise GoError(m["code"], m["message"])
            return getattr(pb, method + "Response").FromString(base64.b64decode(m["reply"]))
        return call


direct = ctd.Kubelet(pb, svc, "unix:" + c.sock, os.path.join(tmp, "logs"), cg.path())
c.cri = direct
exp = rt.Expect({"reserved": "0", "kubelet": {"topologyManagerPolicy": "single-numa-node"}})
MEM = {"memory": "64Mi"}
FIRST = "grep Cpus_allowed_list /proc/self/status; exec sleep 100000"


def cpus_of(cid):
    try:
        with open("/proc/%d/status" % direct.pid(cid)) as f:
            return rt.cpus_allowed_of(f.read())
    except Exception as e:
        return "error: %s" % e


for dial in ("bare", "unix"):
    kl = ctd.Kubelet(pb, svc, "unix:" + proxy_sock, os.path.join(tmp, "logs"), cg.path())
    kl.rt = GoRuntime(dial)
    v = kl.rt.Version(pb.VersionRequest(version="0.1.0"))
    check(v.runtime_name == "containerd",
          "Go client (%s dial): Version forwarded (%s)" % (dial, v.runtime_name))
    uid = "go-" + dial
    spec = [("app", dict(cpu="1", **MEM), dict(cpu="1", **MEM))]
    exp.admit(rt.pod(uid, spec))
    want = exp.cpus(tmp, uid, "app")
    try:
        kl.run_pod(uid, uid, spec)
        cid = kl.create(uid, "app", spec[0][1], spec[0][2], FIRST)
        kl.start(cid)
        ok = True
    except GoError as e:
        ok = False
        check(False, "Go client (%s dial): RunPodSandbox, CreateContainer, StartContainer: %s"
              % (dial, e))
    if not ok:
        continue
    check(True, "Go client (%s dial): RunPodSandbox, CreateContainer, StartContainer" % dial)
    got = None
    for line in (dplib.wait_until(lambda: "Cpus_allowed_list" in kl.log(uid, "app") and
                                  kl.log(uid, "app"), 10) or "").splitlines():
        if "Cpus_allowed_list:" in line:
            got = line.split("Cpus_allowed_list:", 1)[1].strip()
    check(got == want, "Go client (%s dial): the container's first instruction ran on %s, the "
          "kubelet's static policy gives %s" % (dial, got, want))
    try:
        kl.rt.UpdateContainerResources(pb.UpdateContainerResourcesRequest(
            container_id=cid, linux=pb.LinuxContainerResources(
                cpuset_cpus=rt.format_list(ALL))))
        upd = None
    except GoError as e:
        upd = e
    check(upd is None and cpus_of(cid) == want,
          "Go client (%s dial): UpdateContainerResources answered, the exclusive cpuset kept "
          "(%s)" % (dial, upd or cpus_of(cid)))
    st = kl.rt.ContainerStatus(pb.ContainerStatusRequest(container_id=cid))
    check(st.status.id == cid, "Go client (%s dial): ContainerStatus" % dial)
    kl.stop(cid)
    kl.remove(cid)
    kl.remove_pod(uid)
    exp.remove_pod(uid)
    check(True, "Go client (%s dial): StopContainer, RemoveContainer, StopPodSandbox, "
          "RemovePodSandbox" % dial)
    kl.rt.p.close()
    kl.close()

# python3-grpcio with the socket path as :authority
with grpc.insecure_channel("unix:" + proxy_sock,
                           options=[("grpc.default_authority", proxy_sock)]) as ch:
    v = svc.RuntimeServiceStub(ch).Version(pb.VersionRequest(version="0.1.0"), timeout=30)
check(v.runtime_name == "containerd",
      "python with grpc.default_authority = the socket path: the CRI proxy serves it")
with open(log_path) as f:
    text = f.read()
check("gRPC peer refused" not in text and "gRPC handler error" not in text,
      "nodecmd logged no refusal and no handler error")
check(stop_daemon() == 0, "nodecmd stops (SIGTERM)")
sys.exit(rt.finish())
