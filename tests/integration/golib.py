# SPDX-License-Identifier: Apache-2.0
"""The Go peers (tests/integration/go/peer, one program `nodecm-go-peer`), built at test time.

Offline, in GOPATH mode, from Debian's packages: golang-go (Go 1.19), golang-google-grpc-dev
(grpc-go 1.33 in /usr/share/gocode), golang-goprotobuf-dev (protoc-gen-go 1.3 with
plugins=grpc) and protobuf-compiler. The stubs are generated from lib/api's .proto files, one
Go package per API. The binary is kept in a cache keyed by everything it is built from (the
sources, the .proto files, the Go, protoc and grpc-go versions), so the ASan run of the suite
and the next run reuse it; NCM_GO_CACHE names the cache directory (default
$XDG_CACHE_HOME/nodecm-go-peers, else ~/.cache/..., else under /tmp). A missing toolchain is a
skip (exit 77) naming the package; tools/setup.sh installs them, so CI never skips."""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "go", "peer")
API = os.environ.get("NCM_API_DIR") or os.path.join(HERE, "..", "..", "lib", "api")
GOROOT_PATH = "/usr/share/gocode"
# Go package of each API: the .proto files it is generated from
PACKAGES = {
    "dp": ["deviceplugin-v1beta1.proto", "deviceplugin-v1beta1_svc.proto"],
    "podresv1": ["podresources-v1-claim.proto", "podresources-v1.proto",
                 "podresources-v1_svc.proto"],
    "podresv1alpha1": ["podresources-v1alpha1.proto", "podresources-v1alpha1_svc.proto"],
    "cri": ["cri-runtime-v1.proto", "cri-runtime-v1_svc.proto"],
}


def skip(why):
    print("SKIP: " + why, flush=True)
    sys.exit(77)


def missing():
    """What of the toolchain is absent (the Debian package to install), or None."""
    for tool, pkg in (("go", "golang-go"), ("protoc", "protobuf-compiler"),
                      ("protoc-gen-go", "golang-goprotobuf-dev")):
        if not shutil.which(tool):
            return "%s not found (Debian package %s; tools/setup.sh installs it)" % (tool, pkg)
    for d, pkg in (("google.golang.org/grpc", "golang-google-grpc-dev"),
                   ("github.com/golang/protobuf/proto", "golang-goprotobuf-dev")):
        if not os.path.isdir(os.path.join(GOROOT_PATH, "src", d)):
            return "%s/src/%s missing (Debian package %s)" % (GOROOT_PATH, d, pkg)
    return None


def cache_root():
    d = os.environ.get("NCM_GO_CACHE")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or (
            os.path.join(os.environ["HOME"], ".cache") if os.environ.get("HOME") else None)
        d = os.path.join(base, "nodecm-go-peers") if base else os.path.join(
            tempfile.gettempdir(), "nodecm-go-peers-%d" % os.getuid())
    os.makedirs(d, exist_ok=True)
    return d


def _version(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return ""


def key():
    h = hashlib.sha256()
    h.update(_version(["go", "version"]).encode())
    h.update(_version(["protoc", "--version"]).encode())
    h.update(os.path.realpath(os.path.join(GOROOT_PATH, "src", "google.golang.org",
                                           "grpc")).encode())
    for f in ("version.go",):
        p = os.path.join(GOROOT_PATH, "src", "google.golang.org", "grpc", f)
        if os.path.exists(p):
            with open(p, "rb") as fh:
                h.update(fh.read())
    files = [os.path.join(SRC, f) for f in sorted(os.listdir(SRC)) if f.endswith(".go")]
    files += [os.path.join(API, f) for fs in PACKAGES.values() for f in fs]
    files.append(os.path.abspath(__file__))
    for p in files:
        h.update(os.path.basename(p).encode())
        with open(p, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:20]


def _run(argv, env, cwd=None):
    r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError("%s failed:\n%s%s" % (" ".join(argv), r.stdout, r.stderr))


def peer():
    """The path of nodecm-go-peer, built now unless the cache has it; skips without a toolchain."""
    why = missing()
    if why:
        skip("Go peers: " + why)
    root = cache_root()
    k = key()
    out = os.path.join(root, k, "nodecm-go-peer")
    if os.path.exists(out):
        print("# Go peers: cached %s" % out, flush=True)
        return out
    with open(os.path.join(root, "lock"), "w") as lock:
        # the tests of one run may build at once: one builds, the others wait and reuse
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(out):
            return out
        work = tempfile.mkdtemp(prefix="gopath-", dir=root)
        try:
            src = os.path.join(work, "src", "nodecmtest")
            m = ",".join("M%s=nodecmtest/%s" % (f, pkg) for pkg, fs in PACKAGES.items()
                         for f in fs)
            env = dict(os.environ, GO111MODULE="off", GOFLAGS="", GOPROXY="off",
                       CGO_ENABLED="0", GOPATH=work + ":" + GOROOT_PATH,
                       GOCACHE=os.path.join(root, "gocache"))
            for pkg, fs in PACKAGES.items():
                os.makedirs(os.path.join(src, pkg))
                _run(["protoc", "-I", API,
                      "--go_out=plugins=grpc,paths=source_relative,%s:%s" %
                      (m, os.path.join(src, pkg))] + fs, env)
            main = os.path.join(work, "src", "nodecm-go-peer")
            shutil.copytree(SRC, main)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            _run(["go", "build", "-o", out + ".tmp", "nodecm-go-peer"], env, cwd=work)
            os.rename(out + ".tmp", out)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print("# Go peers: built %s" % out, flush=True)
    return out
