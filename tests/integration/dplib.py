# SPDX-License-Identifier: Apache-2.0
"""Helpers of the device-plugin integration tests: processes that speak JSON lines (the host
under test, python device plugins), the pod resources client, stubs generated at test time,
checks. Every process started here dies with the test (killed at exit, also on failure)."""
import atexit
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

PY = "/usr/bin/python3"
PEERS = os.environ.get("NCM_PEERS_DIR", os.path.dirname(os.path.abspath(__file__)))
API = os.environ.get("NCM_API_DIR") or os.path.join(PEERS, "..", "..", "lib", "api")
procs = []
tmpdirs = []
failures = []


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
        try:
            p.wait(timeout=10)
        except Exception:
            pass
    for d in tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(cleanup)


def tempdir(prefix):
    d = tempfile.mkdtemp(prefix=prefix)
    tmpdirs.append(d)
    return d


def check(name, cond, detail=""):
    if cond:
        print("ok - " + name, flush=True)
    else:
        print("not ok - %s %s" % (name, detail), flush=True)
        failures.append(name)
    return cond


def finish():
    if failures:
        print("%d failed: %s" % (len(failures), ", ".join(failures)))
        sys.exit(1)
    sys.exit(0)


def gen_stubs():
    try:
        import grpc_tools  # noqa: F401
        import grpc  # noqa: F401
    except ImportError as e:
        skip("python3-grpcio / python3-grpc-tools missing: %s" % e)
    out = tempdir("ncm-stubs-")
    files = ["deviceplugin-v1beta1.proto", "deviceplugin-v1beta1_svc.proto",
             "podresources-v1-claim.proto", "podresources-v1.proto", "podresources-v1_svc.proto",
             "podresources-v1alpha1.proto", "podresources-v1alpha1_svc.proto"]
    r = subprocess.run([PY, "-m", "grpc_tools.protoc", "-I", API, "--python_out=" + out,
                        "--grpc_python_out=" + out] + files, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("grpc_tools.protoc failed: " + r.stderr)
    return out


class Proc:
    """A child speaking JSON lines on stdout, commands on stdin; stderr to a file."""

    def __init__(self, argv, name, stderr_path=None):
        self.name = name
        self.err_path = stderr_path
        self.err = open(stderr_path, "w") if stderr_path else subprocess.DEVNULL
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, text=True, bufsize=1)
        procs.append(self.p)
        self.q = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                self.q.put(json.loads(line))
            except ValueError:
                self.q.put({"raw": line})
        self.q.put(None)

    def send(self, line):
        try:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def wait(self, pred, timeout=30, what="event"):
        """The first message (seen before or arriving) matching pred, or None after timeout."""
        for m in self.seen:
            if pred(m):
                self.seen.remove(m)
                return m
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                print("# %s: timed out waiting for %s" % (self.name, what), flush=True)
                return None
            try:
                m = self.q.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                print("# %s: ended while waiting for %s" % (self.name, what), flush=True)
                self.q.put(None)
                return None
            if pred(m):
                return m
            self.seen.append(m)

    def drain(self):
        while True:
            try:
                m = self.q.get_nowait()
            except queue.Empty:
                return
            if m is None:
                self.q.put(None)
                return
            self.seen.append(m)

    def stderr_text(self):
        if not self.err_path:
            return ""
        self.err.flush()
        with open(self.err_path) as f:
            return f.read()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()

    def close(self, timeout=30):
        try:
            self.p.stdin.close()
        except Exception:
            pass
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        return self.p.returncode


class Plugin(Proc):
    def __init__(self, stubs, plugin_dir, socket, resource, *opts, log=None):
        argv = [PY, os.path.join(PEERS, "deviceplugin_peer.py"), "--stubs", stubs, "--dir",
                plugin_dir, "--socket", socket, "--resource", resource] + list(opts)
        super().__init__(argv, "plugin " + socket, log)

    def event(self, name, timeout=30):
        return self.wait(lambda m: m.get("event") == name, timeout, name)


def pod(path, uid, name, containers, init=None, ns="default"):
    """Write a pod file: containers = [(name, cpu, {extended: n}), ...]."""
    def cont(c):
        lim = {"cpu": c[1], "memory": "256Mi"}
        lim.update({k: str(v) for k, v in c[2].items()})
        out = {"name": c[0], "resources": {"requests": dict(lim), "limits": dict(lim)}}
        if len(c) > 3 and c[3]:
            out["restartPolicy"] = "Always"
        return out
    spec = {"containers": [cont(c) for c in containers]}
    if init:
        spec["initContainers"] = [cont(c) for c in init]
    with open(path, "w") as f:
        json.dump({"metadata": {"uid": uid, "name": name, "namespace": ns}, "spec": spec}, f)
    return path


def podres(stubs, socket, *call):
    r = subprocess.run([PY, os.path.join(PEERS, "podres_client.py"), "--stubs", stubs,
                        "--socket", socket] + list(call), capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        return {"client-error": r.stderr[-2000:]}
    return json.loads(r.stdout)


def wait_until(fn, timeout=30, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return fn()
