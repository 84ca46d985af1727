# SPDX-License-Identifier: Apache-2.0
"""What the tests with real container runtimes share.

A busybox-static rootfs, a uniquely named cgroup parent (nodecm-test-<pid>-<random>) at the
root of every cgroup v1 hierarchy, the kubelet's expected decisions from `nodecm simulate`
(the reference the node reproduces), a container's CPUs as the kernel sees them, and one
list of clean-ups that runs on every exit path: normal exit, a failed check, an exception,
SIGTERM from meson's timeout, SIGINT.
"""
import atexit
import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NODECM = os.environ.get("NCM_NODECM", "")
SRC = os.environ.get("NCM_SOURCE_ROOT", "")
failures = []


def skip(why):
    print("SKIP: " + why)
    sys.stdout.flush()
    os._exit(77)


def check(cond, msg):
    """Record a failed check and go on (the test fails at the end)."""
    if not cond:
        print("FAIL: " + msg, file=sys.stderr)
        failures.append(msg)
    return cond


def finish():
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("ok")


class Cleanups:
    """Callables run last-in first-out at exit, also when a signal ends the test."""

    def __init__(self):
        self.fns = []
        atexit.register(self.run)
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, self._signal)

    def _signal(self, signum, frame):
        print("signal %d: cleaning up" % signum, file=sys.stderr)
        sys.exit(1)

    def push(self, fn, *args):
        self.fns.append((fn, args))

    def run(self):
        while self.fns:
            fn, args = self.fns.pop()
            try:
                fn(*args)
            except Exception as e:  # a clean-up that fails must not stop the others
                print("cleanup %s: %s" % (getattr(fn, "__name__", fn), e), file=sys.stderr)


def require_root():
    if os.geteuid() != 0:
        skip("needs root to run containers")
    if not NODECM:
        skip("run through meson test (NCM_NODECM is not set)")


def require_prog(name):
    path = shutil.which(name)
    if not path:
        skip("%s is not installed (tools/setup.sh installs it)" % name)
    return path


def fs_type(path):
    r = subprocess.run(["stat", "-fc", "%T", path], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def require_cgroup_v1_cpuset():
    if fs_type("/sys/fs/cgroup") == "cgroup2fs":
        skip("a unified cgroup v2 host: these tests make their cgroups on v1 hierarchies (the "
             "hook's v2 writes are covered by tests/unit/test-oci.c)")
    if fs_type("/sys/fs/cgroup/cpuset") != "cgroupfs":
        skip("no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset")


def static_busybox():
    path = "/bin/busybox"
    if not os.path.exists(path):
        skip("no /bin/busybox (tools/setup.sh installs busybox-static)")
    with open(path, "rb") as f:
        head = f.read(8192)
    if b"ld-linux" in head or b"/lib/ld-" in head:
        skip("/bin/busybox is dynamically linked: install busybox-static")
    return path


def make_rootfs(root):
    """A read-only busybox root: /bin/busybox and the applets the tests run."""
    for d in ("bin", "dev", "proc", "sys", "tmp", "etc", "run"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    shutil.copy2(static_busybox(), os.path.join(root, "bin", "busybox"))
    for applet in ("sh", "cat", "grep", "sleep", "true", "echo", "head"):
        os.symlink("busybox", os.path.join(root, "bin", applet))
    with open(os.path.join(root, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/:/bin/sh\n")
    with open(os.path.join(root, "etc", "group"), "w") as f:
        f.write("root:x:0:\n")


def hierarchies():
    """The cgroup mounts directly below /sys/fs/cgroup: the v1 hierarchies, and the cgroup2
    tree of a hybrid host (/sys/fs/cgroup/unified), where runtimes make cgroups too."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            mp = left.split()[4]
            if right.split()[0] not in ("cgroup", "cgroup2"):
                continue
            if os.path.dirname(mp) != "/sys/fs/cgroup":
                continue
            out.append(mp)
    return sorted(set(out))


class CgroupParent:
    """nodecm-test-<pid>-<random> at the root of every v1 hierarchy; removed deepest first."""

    def __init__(self, cleanups):
        self.name = "nodecm-test-%d-%08x" % (os.getpid(), random.getrandbits(32))
        self.hiers = hierarchies()
        cleanups.push(self.remove)
        cs = "/sys/fs/cgroup/cpuset"
        os.mkdir(os.path.join(cs, self.name))
        for f in ("cpuset.cpus", "cpuset.mems"):
            with open(os.path.join(cs, f)) as src, open(os.path.join(cs, self.name, f), "w") as d:
                d.write(src.read())

    def path(self, *parts):
        return "/" + "/".join((self.name,) + parts)

    def remove(self):
        for h in self.hiers:
            top = os.path.join(h, self.name)
            if not os.path.isdir(top):
                continue
            for d, _, _ in sorted(os.walk(top), key=lambda t: -t[0].count("/")):
                # a runtime's helper (conmon, a shim) may still be on its way out: EBUSY
                for attempt in range(100):
                    try:
                        os.rmdir(d)
                        break
                    except OSError as e:
                        if e.errno != errno.EBUSY or attempt == 99:
                            print("cleanup: rmdir %s: %s" % (d, e), file=sys.stderr)
                            break
                        time.sleep(0.05)


def machine_cpus():
    with open("/sys/fs/cgroup/cpuset/cpuset.effective_cpus") as f:
        return f.read().strip()


def parse_list(s):
    out = set()
    for part in s.strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def format_list(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def cpus_allowed_of(status_text):
    for line in status_text.splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return None


# With CPU 0 reserved on a machine of two CPUs one CPU is allocatable, and the kubelet's
# resource-fit predicates would refuse most of the pods these tests need (a whole CPU next to
# others' requests); they test the CPU manager and the runtimes, so the check is off in the
# node and in the simulation it is compared with.
FIT_ADMISSION = "never"


def kubelet_config(path, reserved="0"):
    with open(path, "w") as f:
        f.write("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                "cpuManagerPolicy: static\nreservedSystemCPUs: \"%s\"\n"
                # a kubelet from 1.35 on refuses cgroup v1 (this machine's) unless told otherwise
                "failCgroupV1: false\n"
                "fitAdmission: %s\n" % (reserved, FIT_ADMISSION))


def scene(prefix):
    """What both runtime tests start from: cleanups, a temporary directory (PREFIX), a cgroup
    parent, a busybox rootfs, a node directory, a kubelet configuration, and this machine's
    CPUs (the test skips without CPU 0 and one more). Returns
    (cleanups, tmp, cgroup parent, rootfs, node directory, kubelet configuration, CPUs)."""
    cl = Cleanups()
    tmp = tempfile.mkdtemp(prefix=prefix)
    cl.push(shutil.rmtree, tmp, True)
    cg = CgroupParent(cl)
    rootfs = os.path.join(tmp, "rootfs")
    make_rootfs(rootfs)
    node_dir = os.path.join(tmp, "node")
    kubelet = os.path.join(tmp, "kubelet.yaml")
    kubelet_config(kubelet)
    cpus = parse_list(machine_cpus())
    if len(cpus) < 2 or 0 not in cpus:
        skip("needs CPU 0 and at least one more (have %s)" % machine_cpus())
    return cl, tmp, cg, rootfs, node_dir, kubelet, cpus


def shipped_hook(path, node_dir, kubelet):
    """The text of the shipped hook file examples/oci/PATH, pointed at this build, NODE_DIR
    and KUBELET."""
    with open(os.path.join(SRC, "examples", "oci", path)) as f:
        text = f.read()
    return (text.replace("/usr/local/bin/nodecm", NODECM)
            .replace("/var/lib/nodecm", node_dir).replace("/etc/nodecm/kubelet.yaml", kubelet))


def pod(uid, containers, name=None):
    """A Pod object: containers are (name, requests, limits)."""
    return {"metadata": {"uid": uid, "name": name or uid},
            "spec": {"containers": [{"name": n, "resources": {"requests": req, "limits": lim}}
                                    for n, req, lim in containers]}}


class Expect:
    """The kubelet's decisions for a sequence of admissions and removals, from `nodecm simulate`
    on this machine with the same configuration: what every container's CPUs must be."""

    def __init__(self, config):
        self.config = config
        self.steps = []

    def admit(self, p):
        self.steps.append({"admit": p})

    def remove(self, uid, container):
        self.steps.append({"remove": {"pod": uid, "container": container}})

    def remove_pod(self, uid):
        self.steps.append({"removePod": uid})

    def run(self, tmpdir):
        """(last admission line, state line) after the steps so far."""
        kubelet = {"cpuManagerPolicy": "static", "reservedSystemCPUs": self.config["reserved"],
                   "fitAdmission": FIT_ADMISSION}
        kubelet.update(self.config.get("kubelet", {}))
        scen = {"node": {"kubelet": kubelet}, "steps": self.steps}
        path = os.path.join(tmpdir, "scenario.json")
        with open(path, "w") as f:
            json.dump(scen, f)
        r = subprocess.run([NODECM, "simulate", path, "--json"], capture_output=True, text=True)
        lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
        if r.returncode not in (0, 1) or not lines:
            raise RuntimeError("simulate: %s" % r.stderr)
        admits = [l for l in lines if l.get("op") == "admit"]
        return (admits[-1] if admits else None), lines[-1]

    def cpus(self, tmpdir, uid, container):
        """What container must run on now: its exclusive CPUs or the shared pool."""
        _, state = self.run(tmpdir)
        own = state.get("entries", {}).get(uid, {}).get(container)
        return own if own is not None else state["defaultCpuSet"]
