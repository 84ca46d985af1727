# SPDX-License-Identifier: Apache-2.0
"""A private containerd for tests, and a CRI client that sends what a kubelet sends.

Containerd runs with its config, root, state and sockets in a temporary directory, the CRI
plugin set for this kind of machine (restrict_oom_score_adj: root cannot lower oom_score_adj
here; no CNI: host-network pods), and two images built locally from busybox-static (no
registry, no network): nodecm.local/busybox:1 and nodecm.local/pause:1, imported with ctr.

Kubelet sends RunPodSandbox, CreateContainer, StartContainer, StopContainer, RemoveContainer,
StopPodSandbox and RemovePodSandbox with the values the kubelet computes (cgroup parent from
the QoS class, shares, quota, period and memory limit from requests and limits, its labels and
annotations), through python3-grpcio with stubs generated at test time from lib/api.

Teardown runs on every exit path (the caller's Cleanups): every sandbox is stopped and removed
through the CRI, containerd is stopped, shims it left are killed, mounts under the directory
are undone.
"""
import hashlib
import io
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

import runtimes as rt

BUSYBOX = "nodecm.local/busybox:1"
PAUSE = "nodecm.local/pause:1"


def stubs(out):
    """Generate and import the CRI stubs from lib/api (python's grpc_tools)."""
    from grpc_tools import protoc

    api = os.path.join(rt.SRC, "lib", "api")
    os.makedirs(out, exist_ok=True)
    r = protoc.main(["protoc", "-I", api, "--python_out=" + out, "--grpc_python_out=" + out,
                     os.path.join(api, "cri-runtime-v1.proto"),
                     os.path.join(api, "cri-runtime-v1_svc.proto")])
    if r != 0:
        raise RuntimeError("grpc_tools.protoc failed")
    sys.path.insert(0, out)
    import cri_runtime_v1_pb2 as pb
    import cri_runtime_v1_svc_pb2_grpc as svc

    return pb, svc


def scene(prefix):
    """What the CRI tests start from: cleanups, a temporary directory (PREFIX), a cgroup parent,
    the CRI stubs, and a private containerd started with its images imported. Returns
    (cleanups, tmp, cgroup parent, pb, svc, containerd)."""
    cl = rt.Cleanups()
    tmp = tempfile.mkdtemp(prefix=prefix)
    cl.push(shutil.rmtree, tmp, True)
    cg = rt.CgroupParent(cl)
    pb, svc = stubs(os.path.join(tmp, "stubs"))
    c = Containerd(cl, tmp)
    c.start()
    c.import_images()
    return cl, tmp, cg, pb, svc, c


def goarch():
    m = platform.machine()
    return {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le",
            "s390x": "s390x"}.get(m, m)


def _rootfs_layer():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for d in ("bin", "dev", "proc", "sys", "tmp", "etc", "run"):
            ti = tarfile.TarInfo(d)
            ti.type = tarfile.DIRTYPE
            ti.mode = 0o755
            t.addfile(ti)
        with open(rt.static_busybox(), "rb") as f:
            data = f.read()
        ti = tarfile.TarInfo("bin/busybox")
        ti.size = len(data)
        ti.mode = 0o755
        t.addfile(ti, io.BytesIO(data))
        for applet in ("sh", "sleep", "cat", "grep", "true", "echo", "head"):
            ti = tarfile.TarInfo("bin/" + applet)
            ti.type = tarfile.SYMTYPE
            ti.linkname = "busybox"
            t.addfile(ti)
        for name, text in (("etc/passwd", b"root:x:0:0:root:/:/bin/sh\n"),
                           ("etc/group", b"root:x:0:\n")):
            ti = tarfile.TarInfo(name)
            ti.size = len(text)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(text))
    return buf.getvalue()


def oci_image(path, name, cmd):
    """An OCI image layout tarball of the busybox rootfs, named NAME, running CMD."""
    layer = _rootfs_layer()
    ld = hashlib.sha256(layer).hexdigest()
    config = json.dumps({"architecture": goarch(), "os": "linux",
                         "config": {"Cmd": cmd, "Env": ["PATH=/bin"]},
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + ld]}}).encode()
    cd = hashlib.sha256(config).hexdigest()
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": "sha256:" + cd, "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": "sha256:" + ld, "size": len(layer)}]}).encode()
    md = hashlib.sha256(manifest).hexdigest()
    index = json.dumps({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + md,
        "size": len(manifest), "annotations": {"io.containerd.image.name": name}}]}).encode()
    with tarfile.open(path, "w") as t:
        for n, b in (("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'), ("index.json", index),
                     ("blobs/sha256/" + ld, layer), ("blobs/sha256/" + cd, config),
                     ("blobs/sha256/" + md, manifest)):
            ti = tarfile.TarInfo(n)
            ti.size = len(b)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(b))


class Containerd:
    def __init__(self, cleanups, tmp):
        self.bin = rt.require_prog("containerd")
        self.ctr = rt.require_prog("ctr")
        rt.require_prog("containerd-shim-runc-v2")
        rt.require_prog("runc")
        self.dir = os.path.join(tmp, "containerd")
        os.makedirs(self.dir)
        self.sock = os.path.join(self.dir, "containerd.sock")
        self.endpoint = "unix://" + self.sock
        self.proc = None
        self.log = os.path.join(self.dir, "containerd.log")
        d = self.dir
        with open(os.path.join(d, "config.toml"), "w") as f:
            f.write("""version = 2
root = "%(d)s/root"
state = "%(d)s/state"
[grpc]
  address = "%(d)s/containerd.sock"
[ttrpc]
  address = "%(d)s/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = true
  sandbox_image = "%(pause)s"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "%(d)s/cni-bin"
    conf_dir = "%(d)s/cni-conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
[plugins."io.containerd.internal.v1.opt"]
  path = "%(d)s/opt"
""" % {"d": d, "pause": PAUSE})
        cleanups.push(self.teardown)
        self.cri = None  # set by the test: a Kubelet, used to remove what is left

    def start(self, timeout=30):
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen([self.bin, "--config",
                                          os.path.join(self.dir, "config.toml")],
                                         stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("containerd exited: %s" % self.tail())
            if os.path.exists(self.sock):
                r = subprocess.run([self.ctr, "-a", self.sock, "version"], capture_output=True)
                if r.returncode == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("containerd did not start: %s" % self.tail())

    def tail(self, n=2000):
        try:
            with open(self.log) as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def import_images(self):
        for name, cmd in ((BUSYBOX, ["/bin/sh"]), (PAUSE, ["/bin/sleep", "2147483647"])):
            path = os.path.join(self.dir, name.split("/")[1].replace(":", "-") + ".tar")
            oci_image(path, name, cmd)
            subprocess.run([self.ctr, "-a", self.sock, "-n", "k8s.io", "images", "import", path],
                           check=True, capture_output=True)

    def teardown(self):
        if self.cri is not None and self.proc is not None:
            try:
                self.cri.remove_everything()
            except Exception as e:
                print("cleanup: removing pods through the CRI: %s" % e, file=sys.stderr)
        self.stop()
        # shims outlive containerd: those serving this directory's socket go
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    cmd = f.read().split(b"\0")
            except OSError:
                continue
            if any(self.dir.encode() in a for a in cmd) and int(pid) != os.getpid():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
        # rootfs and shm mounts under the directory, deepest first
        mounts = []
        with open("/proc/self/mountinfo") as f:
            for line in f:
                mp = line.split()[4]
                if mp.startswith(self.dir + "/"):
                    mounts.append(mp)
        for mp in sorted(mounts, key=len, reverse=True):
            subprocess.run(["umount", "-l", mp], capture_output=True)


def qos_of(containers):
    """ComputePodQOS of (name, requests, limits) containers, cpu and memory only."""
    guaranteed = all(
        lim.get("cpu") and lim.get("memory") and req.get("cpu", lim["cpu"]) == lim["cpu"]
        and req.get("memory", lim["memory"]) == lim["memory"] for _, req, lim in containers)
    if guaranteed:
        return "Guaranteed"
    if not any(req.get(k) or lim.get(k) for _, req, lim in containers for k in ("cpu", "memory")):
        return "BestEffort"
    return "Burstable"


def milli(q):
    if q is None:
        return 0
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def mem_bytes(q):
    if q is None:
        return 0
    q = str(q)
    for suf, m in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30)):
        if q.endswith(suf):
            return int(q[:-2]) * m
    return int(q)


def hugepage_sizes():
    out = []
    try:
        for d in os.listdir("/sys/kernel/mm/hugepages"):
            kb = int(d[len("hugepages-"):-2])
            out.append(kb * 1024)
    except OSError:
        pass
    names = []
    for b in sorted(out):
        for suf, m in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
            if b % m == 0:
                names.append("%d%s" % (b // m, suf))
                break
    return names


class Kubelet:
    """Sends what a kubelet (cgroupfs driver, cpuManagerPolicy none) sends."""

    def __init__(self, pb, svc, target, logdir, cgroup_root):
        import grpc

        self.grpc = grpc
        self.pb = pb
        self.channel = grpc.insecure_channel(target)
        self.rt = svc.RuntimeServiceStub(self.channel)
        self.img = svc.ImageServiceStub(self.channel)
        self.logdir = logdir
        self.cgroup_root = cgroup_root
        self.pods = {}  # uid -> (sandbox id, config)
        self.timeout = 30

    def close(self):
        self.channel.close()

    def cgroup_parent(self, uid, qos):
        tier = {"Guaranteed": "", "Burstable": "/burstable", "BestEffort": "/besteffort"}[qos]
        return "%s/kubepods%s/pod%s" % (self.cgroup_root, tier, uid)

    def ns(self):
        pb = self.pb
        return pb.NamespaceOption(network=pb.NODE, pid=pb.CONTAINER, ipc=pb.POD)

    def linux_resources(self, req, lim, qos):
        """calculateLinuxResources, cpuCFSQuota on, period 100ms; the OOM score of its QoS."""
        pb = self.pb
        creq, clim = req.get("cpu"), lim.get("cpu")
        shares = max(2, min(262144, milli(clim if creq is None and clim else creq) * 1024 // 1000))
        quota = 0
        if clim:
            quota = max(1000, milli(clim) * 100000 // 1000)
        oom = {"Guaranteed": -997, "BestEffort": 1000}.get(qos, 999)
        return pb.LinuxContainerResources(
            cpu_period=100000, cpu_quota=quota, cpu_shares=shares,
            memory_limit_in_bytes=mem_bytes(lim.get("memory")), oom_score_adj=oom,
            hugepage_limits=[pb.HugepageLimit(page_size=s, limit=0) for s in hugepage_sizes()])

    def run_pod(self, uid, name, containers, namespace="default", annotations=None,
                labels=None, qos=None):
        """RunPodSandbox for a pod of (name, requests, limits) containers; returns its id."""
        pb = self.pb
        qos = qos or qos_of(containers)
        logs = os.path.join(self.logdir, "%s_%s_%s" % (namespace, name, uid))
        os.makedirs(logs, exist_ok=True)
        lab = dict(labels or {})
        lab.update({"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": namespace,
                    "io.kubernetes.pod.uid": uid})
        cfg = pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=name, uid=uid, namespace=namespace, attempt=0),
            log_directory=logs, labels=lab, annotations=dict(annotations or {}),
            linux=pb.LinuxPodSandboxConfig(
                cgroup_parent=self.cgroup_parent(uid, qos),
                security_context=pb.LinuxSandboxSecurityContext(namespace_options=self.ns())))
        r = self.rt.RunPodSandbox(pb.RunPodSandboxRequest(config=cfg), timeout=self.timeout)
        self.pods[uid] = {"id": r.pod_sandbox_id, "config": cfg, "qos": qos,
                          "containers": {}}
        return r.pod_sandbox_id

    def container_request(self, uid, name, req, lim, command, kind="container", annotations=None):
        pb = self.pb
        p = self.pods[uid]
        cfg = p["config"]
        ann = {"io.kubernetes.container.hash": "%08x" % (hash(name) & 0xffffffff),
               "io.kubernetes.container.restartCount": "0",
               "io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
               "io.kubernetes.container.terminationMessagePolicy": "File",
               "io.kubernetes.pod.terminationGracePeriod": "30",
               "io.kubernetes.container.type": kind}
        ann.update(annotations or {})
        cc = pb.ContainerConfig(
            metadata=pb.ContainerMetadata(name=name, attempt=0),
            image=pb.ImageSpec(image=BUSYBOX, user_specified_image=BUSYBOX),
            command=["/bin/sh", "-c", command], log_path="%s/0.log" % name,
            envs=[pb.KeyValue(key="KUBERNETES_SERVICE_HOST", value="10.0.0.1")],
            labels={"io.kubernetes.container.name": name,
                    "io.kubernetes.pod.name": cfg.metadata.name,
                    "io.kubernetes.pod.namespace": cfg.metadata.namespace,
                    "io.kubernetes.pod.uid": uid},
            annotations=ann,
            linux=pb.LinuxContainerConfig(
                resources=self.linux_resources(req, lim, p["qos"]),
                security_context=pb.LinuxContainerSecurityContext(
                    namespace_options=self.ns(), masked_paths=["/proc/kcore"],
                    readonly_paths=["/proc/sys"])))
        return pb.CreateContainerRequest(pod_sandbox_id=p["id"], config=cc, sandbox_config=cfg)

    def create(self, uid, name, req, lim, command, kind="container", annotations=None):
        os.makedirs(os.path.join(self.pods[uid]["config"].log_directory, name), exist_ok=True)
        r = self.rt.CreateContainer(self.container_request(uid, name, req, lim, command, kind,
                                                           annotations), timeout=self.timeout)
        self.pods[uid]["containers"][name] = r.container_id
        return r.container_id

    def start(self, cid):
        self.rt.StartContainer(self.pb.StartContainerRequest(container_id=cid),
                               timeout=self.timeout)

    def stop(self, cid, timeout=0):
        self.rt.StopContainer(self.pb.StopContainerRequest(container_id=cid, timeout=timeout),
                              timeout=self.timeout)

    def remove(self, cid):
        self.rt.RemoveContainer(self.pb.RemoveContainerRequest(container_id=cid),
                                timeout=self.timeout)
        for p in self.pods.values():
            for n, c in list(p["containers"].items()):
                if c == cid:
                    del p["containers"][n]

    def remove_pod(self, uid):
        p = self.pods.pop(uid)
        self.rt.StopPodSandbox(self.pb.StopPodSandboxRequest(pod_sandbox_id=p["id"]),
                               timeout=self.timeout)
        self.rt.RemovePodSandbox(self.pb.RemovePodSandboxRequest(pod_sandbox_id=p["id"]),
                                 timeout=self.timeout)

    def pid(self, cid):
        st = self.rt.ContainerStatus(self.pb.ContainerStatusRequest(container_id=cid, verbose=True),
                                     timeout=self.timeout)
        return json.loads(st.info["info"])["pid"]

    def log(self, uid, name):
        path = os.path.join(self.pods[uid]["config"].log_directory, name, "0.log")
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return ""

    def remove_everything(self):
        pb = self.pb
        for s in self.rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=self.timeout).items:
            self.rt.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=s.id),
                                   timeout=self.timeout)
            self.rt.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=s.id),
                                     timeout=self.timeout)
        self.pods.clear()


def nodecmd_config(path, endpoint, proxy_sock, extra=""):
    """examples/cri/nodecmd.yaml as shipped, pointed at ENDPOINT (containerd) and PROXY_SOCK,
    reconciling every second, with EXTRA (YAML lines) after it, written to PATH."""
    with open(os.path.join(rt.SRC, "examples", "cri", "nodecmd.yaml")) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace("unix:///run/containerd/containerd.sock", endpoint)
                .replace("/var/lib/nodecm/cri.sock", proxy_sock)
                .replace("cpuManagerReconcilePeriod: 10s", "cpuManagerReconcilePeriod: 1s")
                + extra)


def proxy_scene(prefix):
    """What the CRI proxy tests start from: root, a cgroup v1 cpuset hierarchy, busybox-static,
    nodecmd (NCM_NODECMD) and python3-grpcio (each missing one skips the test), scene(PREFIX),
    and this machine's CPUs (CPU 0 and one more, else a skip). Returns (cleanups, tmp, cgroup
    parent, pb, svc, containerd, CPUs)."""
    rt.require_root()
    rt.require_cgroup_v1_cpuset()
    rt.static_busybox()
    if not os.environ.get("NCM_NODECMD"):
        rt.skip("run through meson test (NCM_NODECMD is not set)")
    try:
        import grpc  # noqa: F401
    except ImportError:
        rt.skip("python3-grpcio is not importable by /usr/bin/python3")
    os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"
    cpus = rt.parse_list(rt.machine_cpus())
    if len(cpus) < 2 or 0 not in cpus:
        rt.skip("needs CPU 0 and at least one more (have %s)" % rt.machine_cpus())
    return scene(prefix) + (cpus,)


class Nodecmd:
    """nodecmd (NCM_NODECMD) with its CRI proxy on PROXY_SOCK in front of ENDPOINT, its node in
    NODE_DIR, logging to LOG; stopped on every exit path (CLEANUPS)."""

    def __init__(self, cleanups, config, node_dir, endpoint, proxy_sock, log):
        self.config = config
        self.endpoint = endpoint
        self.node_dir = node_dir
        self.proxy_sock = proxy_sock
        self.log = log
        self.proc = None
        cleanups.push(self.stop)

    def start(self, flags=True):
        """FLAGS: the sockets on the command line too (else the configuration's section)."""
        args = [os.environ["NCM_NODECMD"], "--config", self.config, "--root-dir", self.node_dir,
                "--log-level", "debug"]
        if flags:
            args += ["--runtime-endpoint", self.endpoint, "--cri-listen", self.proxy_sock]
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        for _ in range(400):
            if self.proc.poll() is not None:
                raise RuntimeError("nodecmd exited: %s" % self.tail())
            if os.path.exists(self.proxy_sock) and \
                    os.path.exists(os.path.join(self.node_dir, "nodecm.sock")):
                return
            time.sleep(0.025)
        raise RuntimeError("nodecmd did not start: %s" % self.tail())

    def tail(self):
        try:
            with open(self.log) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM):
        """The exit status (SIGTERM: 0, and under ASan no leak), or None."""
        rc = None
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                rc = self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        return rc


def proxy_node(cl, tmp, cg, pb, svc, c, extra=""):
    """nodecmd on the shipped configuration (EXTRA after it) in front of containerd C, started,
    its node in TMP/node; a client of its proxy as a kubelet, and one of containerd itself (C's
    teardown client). Returns (nodecmd, kubelet, direct)."""
    proxy_sock = os.path.join(tmp, "cri.sock")
    config = os.path.join(tmp, "kubelet.yaml")
    nodecmd_config(config, c.endpoint, proxy_sock, extra)
    d = Nodecmd(cl, config, os.path.join(tmp, "node"), c.endpoint, proxy_sock,
                os.path.join(tmp, "nodecmd.log"))
    d.start()
    kl = Kubelet(pb, svc, "unix:" + proxy_sock, os.path.join(tmp, "logs"), cg.path())
    direct = Kubelet(pb, svc, "unix:" + c.sock, os.path.join(tmp, "logs"), cg.path())
    c.cri = direct
    return d, kl, direct
