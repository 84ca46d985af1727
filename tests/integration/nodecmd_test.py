# SPDX-License-Identifier: Apache-2.0
"""What the nodecmd tests share: stubs of nodecm.v1 generated at test time, a daemon started in
a temporary root directory (killed on exit, also on failure), checks printed as TAP lines."""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NODECMD = os.environ.get("NCM_NODECMD", "")
# nodecmd with the test hook (NODECMD_TEST_PASSES): the test build, not the installed one
NODECMD_TEST = os.environ.get("NCM_NODECMD_TEST", "")
NODECM = os.environ.get("NCM_NODECM", "")
API_DIR = os.environ.get("NCM_API_DIR", "")
TOPOLOGY = "package:2 numa:1 core:4 pu:2"

failures = []
procs = []
tmpdirs = []
logs = []
crashed = []


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def check(name, cond, detail=""):
    if cond:
        print("ok - " + name)
    else:
        print("not ok - %s %s" % (name, detail))
        failures.append(name)
    sys.stdout.flush()
    return cond


def finish():
    if failures:
        print("FAILED: " + ", ".join(failures))
        return 1
    return 0


def cleanup():
    if failures or crashed:
        # what the daemons said, for the report of a failed run
        for log in logs:
            try:
                with open(log) as f:
                    tail = f.read()[-6000:]
                sys.stderr.write("---- %s ----\n%s\n" % (log, tail))
            except OSError:
                pass
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
    for d in tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


# PR_SET_PDEATHSIG, so that nothing a test starts outlives it, set by setpriv (util-linux) before
# it execs the daemon: a preexec_fn would run Python in the child of a process whose gRPC
# threads may hold locks at the fork, and grpcio's abseil aborts there now and then ("Mutex::Fer
# while waiting on Condition"), so that the daemon never starts.
DIE_WITH_PARENT = ["setpriv", "--pdeathsig", "KILL", "--"]


def setup(prefix, fast=False):
    """Imports grpc and the stubs; returns (grpc, pb, svc, tmpdir). FAST puts the directory on
    a tmpfs when there is one (fsync is then free; kill -9 loses the process, not the page
    cache, so crash tests see the same files)."""
    # the tests fork (daemons, nodecm) while gRPC threads run; gRPC's fork handlers would wait
    # for its threads to go idle, and the children exec at once anyway
    os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"
    try:
        import grpc
        import grpc_tools  # noqa: F401
        from grpc_tools import protoc
    except ImportError as e:
        skip("python3-grpcio / python3-grpc-tools not importable by %s: %s" % (sys.executable, e))
    if not NODECMD or not NODECM or not API_DIR:
        skip("NCM_NODECMD / NCM_NODECM / NCM_API_DIR not set (run through meson test)")
    atexit.register(cleanup)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    hook = sys.excepthook

    def on_exception(*a):
        crashed.append(True)
        hook(*a)
    sys.excepthook = on_exception
    base = "/dev/shm" if fast and os.path.isdir("/dev/shm") else None
    tmp = tempfile.mkdtemp(prefix=prefix, dir=base)
    tmpdirs.append(tmp)
    stubs = os.path.join(tmp, "stubs")
    os.mkdir(stubs)
    r = protoc.main(["protoc", "-I", API_DIR, "--python_out=" + stubs,
                     "--grpc_python_out=" + stubs, "deviceplugin-v1beta1.proto", "nodecm-v1.proto",
                     "nodecm-v1_svc.proto"])
    if r != 0:
        raise RuntimeError("grpc_tools.protoc failed")
    sys.path.insert(0, stubs)
    import nodecm_v1_pb2 as pb
    import nodecm_v1_svc_pb2_grpc as svc
    return grpc, pb, svc, tmp


def write_config(path, **fields):
    base = {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": '"0"',
        "topologyManagerPolicy": "single-numa-node",
        "enforcement": "none",
    }
    base.update(fields)
    with open(path, "w") as f:
        f.write("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
        for k, v in base.items():
            if v is None:
                continue
            if isinstance(v, dict):
                f.write("%s:\n" % k)
                for k2, v2 in v.items():
                    f.write("  %s: %s\n" % (k2, v2))
            else:
                f.write("%s: %s\n" % (k, v))


class Daemon:
    def __init__(self, config, root, log, topology=TOPOLOGY, extra=(), env=None, exe=None):
        self.config, self.root, self.log = config, root, log
        self.argv = [exe or NODECMD, "--config", config, "--root-dir", root, "--synthetic", topology]
        self.argv += list(extra)
        self.socket = os.path.join(root, "nodecm.sock")
        self.p = None
        self.env = env
        if log not in logs:
            logs.append(log)

    def start(self, wait=True):
        self.ready_before = self.log_text().count("msg=ready") if os.path.exists(self.log) else 0
        logf = open(self.log, "a")
        env = dict(os.environ, **self.env) if self.env else None
        self.p = subprocess.Popen(DIE_WITH_PARENT + self.argv, stderr=logf,
                                  stdin=subprocess.DEVNULL, env=env)
        logf.close()
        procs.append(self.p)
        if wait:
            self.wait_ready()
        return self

    def log_text(self):
        with open(self.log) as f:
            return f.read()

    def wait_log(self, needle, count=1, deadline=60):
        """Until NEEDLE appears COUNT times in the log (a bound against hanging, not a
        measured time)."""
        end = time.time() + deadline
        while time.time() < end:
            if self.log_text().count(needle) >= count:
                return True
            if self.p.poll() is not None:
                return self.log_text().count(needle) >= count
            time.sleep(0.005)
        return False

    def wait_ready(self):
        if not self.wait_log("msg=ready", self.ready_before + 1):
            raise RuntimeError("nodecmd did not start: " + self.log_text()[-2000:])

    def stop(self, sig=signal.SIGTERM, timeout=60):
        self.p.send_signal(sig)
        return self.p.wait(timeout)

    def kill(self):
        self.p.kill()
        self.p.wait()

    def target(self):
        return "unix:" + self.socket


def pod_json(uid, cpu="1", name=None, containers=None, qos_guaranteed=True):
    """A Pod as JSON text: one container "app" asking CPU (limits only: requests default to
    them, so the pod is Guaranteed)."""
    import json
    if containers is None:
        res = {"limits": {"cpu": cpu, "memory": "64Mi"}}
        if not qos_guaranteed:
            res = {"requests": {"cpu": "100m", "memory": "64Mi"}}
        containers = [{"name": "app", "resources": res}]
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name or uid, "uid": uid, "namespace": "default"},
                       "spec": {"containers": containers}})


def nodecm(*argv, stdin=None):
    r = subprocess.run([NODECM] + list(argv), capture_output=True, text=True, input=stdin,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def status_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return -1
