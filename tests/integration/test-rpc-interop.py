# SPDX-License-Identifier: Apache-2.0
"""Interop of lib/rpc with real gRPC peers (Debian's python3-grpcio, a gRPC core stack).

Our server (build/tests/integration/rpc-echo serve) with python clients, and our client
(rpc-echo call) with a python server (this file run with --peer-server). Run with
/usr/bin/python3; stubs are generated at test time with grpc_tools. Every process started here
is killed on exit, also on failure.
"""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ECHO = os.environ.get("NCM_RPC_ECHO", "")
PROTO_DIR = os.environ.get("NCM_TEST_PROTO_DIR", "")
procs = []
tmp = None


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def gen_stubs(out):
    from grpc_tools import protoc

    r = protoc.main(["protoc", "-I", PROTO_DIR, "--python_out=" + out,
                     "--grpc_python_out=" + out, "echo.proto", "echo_svc.proto"])
    if r != 0:
        raise RuntimeError("grpc_tools.protoc failed")
    sys.path.insert(0, out)


# ---- the python server peer ---------------------------------------------------------------

def peer_server(target, stubs):
    import grpc
    from concurrent import futures
    sys.path.insert(0, stubs)
    import echo_pb2
    import echo_svc_pb2_grpc

    def md_of(context):
        kv = sorted((k, v) for k, v in context.invocation_metadata() if k.startswith("x-echo-"))
        return ";".join("%s=%s" % p for p in kv)

    def code_of(n):
        return [c for c in grpc.StatusCode if c.value[0] == n][0]

    class Echo(echo_svc_pb2_grpc.EchoServicer):
        def reply(self, req, i, context):
            return echo_pb2.EchoReply(text=req.text, index=i, metadata=md_of(context),
                                      payload=b"\0" * req.size if req.size > 0 else req.payload)

        def Unary(self, req, context):
            context.send_initial_metadata((("x-echo-header", "h"),))
            context.set_trailing_metadata((("x-echo-trailer", "t"),))
            if req.delay_ms:
                time.sleep(req.delay_ms / 1000)
            if req.code:
                context.abort(code_of(req.code), req.message)
            return self.reply(req, 0, context)

        def Stream(self, req, context):
            context.send_initial_metadata((("x-echo-header", "h"),))
            context.set_trailing_metadata((("x-echo-trailer", "t"),))
            for i in range(req.count):
                if req.delay_ms:
                    time.sleep(req.delay_ms / 1000)
                yield self.reply(req, i, context)
            if req.code:
                context.abort(code_of(req.code), req.message)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    echo_svc_pb2_grpc.add_EchoServicer_to_server(Echo(), server)
    server.add_insecure_port(target)
    server.start()
    print("ready", flush=True)
    signal.signal(signal.SIGTERM, lambda *a: server.stop(0))
    server.wait_for_termination()


# ---- helpers --------------------------------------------------------------------------------

def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)


def start(argv):
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    procs.append(p)
    line = p.stdout.readline()
    if line.strip() != "ready":
        raise RuntimeError("%s did not start: %r" % (argv, line))
    return p


failures = []


def check(name, cond, detail=""):
    if cond:
        print("ok - " + name)
    else:
        print("not ok - %s %s" % (name, detail))
        failures.append(name)


def c_call(target, method, *opts, timeout=60):
    r = subprocess.run([ECHO, "call", target, method] + [str(o) for o in opts],
                       capture_output=True, text=True, timeout=timeout)
    check("rpc-echo call %s exits 0" % method, r.returncode == 0, r.stderr[-2000:])
    return r.stdout


def status_of(out):
    for line in out.splitlines():
        if line.startswith("status "):
            parts = line.split(" ", 3)
            return int(parts[1]), parts[3] if len(parts) > 3 else ""
    return None, out


def wait_line(p, prefix, deadline=30):
    """Read the server's stdout until a line starting with prefix (bounded by a watchdog)."""
    import select
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        r, _, _ = select.select([p.stdout], [], [], 0.5)
        if r:
            line = p.stdout.readline()
            if line.startswith(prefix):
                return line.strip()
    return None


# ---- our server, python clients ---------------------------------------------------------

def test_our_server(grpc, echo_pb2, echo_svc_pb2_grpc):
    sock = os.path.join(tmp, "c.sock")
    srv = start([ECHO, "serve", "unix:" + sock])
    for target in ("unix:" + sock, "unix://" + sock):
        ch = grpc.insecure_channel(target)
        stub = echo_svc_pb2_grpc.EchoStub(ch)
        text = "héllo ✓ 100%"
        rep, call = stub.Unary.with_call(echo_pb2.EchoRequest(text=text, payload=b"\x00\xff"),
                                         metadata=(("x-echo-b", "2"), ("x-echo-a", "1")))
        check("py->c unary %s" % target, rep.text == text and rep.payload == b"\x00\xff"
              and rep.metadata == "x-echo-a=1;x-echo-b=2", repr(rep))
        check("py->c metadata", ("x-echo-header", "h") in call.initial_metadata()
              and ("x-echo-trailer", "t") in call.trailing_metadata(),
              repr((call.initial_metadata(), call.trailing_metadata())))
        ch.close()

    ch = grpc.insecure_channel("unix:" + sock)
    stub = echo_svc_pb2_grpc.EchoStub(ch)
    reps = list(stub.Stream(echo_pb2.EchoRequest(text="s", count=5, size=100)))
    check("py->c stream", [r.index for r in reps] == list(range(5))
          and all(len(r.payload) == 100 for r in reps))

    for code in (3, 5, 9, 13, 14, 16):
        msg = "bad ünïcode %% 100%% ✓ %d\tend" % code
        try:
            stub.Unary(echo_pb2.EchoRequest(code=code, message=msg))
            check("py->c status %d" % code, False, "no error")
        except grpc.RpcError as e:
            check("py->c status %d" % code, e.code().value[0] == code and e.details() == msg,
                  repr((e.code(), e.details())))

    try:
        it = stub.Stream(echo_pb2.EchoRequest(count=2, code=10, message="stream ✗"))
        got = [r.index for r in it]
        check("py->c stream status", False, repr(got))
    except grpc.RpcError as e:
        check("py->c stream status", e.code() == grpc.StatusCode.ABORTED
              and e.details() == "stream ✗", repr((e.code(), e.details())))

    # Deadline set by the client: our server cancels the handler (which learns it).
    try:
        stub.Unary(echo_pb2.EchoRequest(delay_ms=3000), timeout=0.3)
        check("py->c deadline", False, "no error")
    except grpc.RpcError as e:
        check("py->c deadline", e.code() == grpc.StatusCode.DEADLINE_EXCEEDED, repr(e.code()))
    # grpcio resets the stream (CANCEL) at its own deadline, the same moment our timer fires:
    # on a loaded machine either comes first, and the handler learns of the one that did (our
    # own deadline alone is tested with a fake clock in tests/unit/test-rpc.c)
    line = wait_line(srv, "cancelled")
    check("py->c deadline reaches the handler",
          line in ("cancelled DEADLINE_EXCEEDED /nodecm.test.Echo/Unary",
                   "cancelled CANCELLED /nodecm.test.Echo/Unary"), repr(line))

    # Unknown method and service: grpc-go's texts.
    for path, text in (("/nodecm.test.Echo/Nope", "unknown method Nope for service nodecm.test.Echo"),
                       ("/x.Y/Z", "unknown service x.Y")):
        try:
            ch.unary_unary(path)(b"")
            check("py->c unknown %s" % path, False, "no error")
        except grpc.RpcError as e:
            check("py->c unknown %s" % path, e.code() == grpc.StatusCode.UNIMPLEMENTED
                  and e.details() == text, repr((e.code(), e.details())))

    # Oversized both ways (4 MiB default receive limit on both stacks).
    try:
        stub.Unary(echo_pb2.EchoRequest(payload=b"x" * (5 << 20)))
        check("py->c oversized request", False, "no error")
    except grpc.RpcError as e:
        check("py->c oversized request", e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and
              e.details().startswith("grpc: received message larger than max (") and
              e.details().endswith(" vs. 4194304)"), repr((e.code(), e.details())))
    try:
        stub.Unary(echo_pb2.EchoRequest(size=5 << 20))
        check("py->c oversized reply", False, "no error")
    except grpc.RpcError as e:
        check("py->c oversized reply", e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED,
              repr((e.code(), e.details())))
    rep = stub.Unary(echo_pb2.EchoRequest(text="after"))
    check("py->c serves after errors", rep.text == "after")

    # A gzip client: compressed messages are refused, as the server advertises identity only.
    gz = grpc.insecure_channel("unix:" + sock, compression=grpc.Compression.Gzip)
    try:
        echo_svc_pb2_grpc.EchoStub(gz).Unary(echo_pb2.EchoRequest(payload=b"\0" * 100000))
        check("py(gzip)->c", False, "no error")
    except grpc.RpcError as e:
        check("py(gzip)->c", e.code() == grpc.StatusCode.UNIMPLEMENTED and
              e.details() == 'grpc: Decompressor is not installed for grpc-encoding "gzip"',
              repr((e.code(), e.details())))
    gz.close()

    # A slow reader gets every message, in order.
    n = 0
    for r in stub.Stream(echo_pb2.EchoRequest(count=60, size=64 << 10)):
        if r.index != n:
            break
        n += 1
        time.sleep(0.005)
    check("py->c slow reader", n == 60, "got %d" % n)

    # A client killed mid-stream: the handler learns, the server goes on.
    cl = subprocess.Popen([sys.executable, __file__, "--peer-stream", "unix:" + sock, tmp],
                          stdout=subprocess.PIPE, text=True)
    procs.append(cl)
    first = cl.stdout.readline()
    cl.kill()
    cl.wait()
    line = wait_line(srv, "cancelled")
    check("py->c client SIGKILL mid-stream", first.startswith("message")
          and line == "cancelled CANCELLED /nodecm.test.Echo/Stream", repr((first, line)))
    rep = stub.Unary(echo_pb2.EchoRequest(text="still"))
    check("py->c serves after a killed client", rep.text == "still")
    ch.close()

    # A wrong content-type, from curl (HTTP/2 over the unix socket): HTTP 415 as grpc-go. No
    # body: a request still sending when the answer comes is also reset (RST_STREAM NO_ERROR,
    # as grpc-go does), which curl may report as an error instead of the response.
    if shutil.which("curl"):
        r = subprocess.run(["curl", "-s", "-D", "-", "-o", "/dev/null", "--http2-prior-knowledge",
                            "--unix-socket", sock, "-H", "content-type: application/json",
                            "-X", "POST", "http://localhost/nodecm.test.Echo/Unary"],
                           capture_output=True, text=True, timeout=30)
        hdrs = r.stdout.lower()
        check("curl wrong content-type", hdrs.startswith("http/2 415") and
              "grpc-status: 3" in hdrs and
              'grpc-message: invalid grpc request content-type "application/json"' in hdrs,
              repr(r.stdout))
    else:
        check("curl wrong content-type (curl missing)", False)

    # C client with C server.
    out = c_call("unix:" + sock, "Unary", "--text", "c", "--delay-ms", "50", "--md", "x-echo-k=v")
    check("c->c unary async", "message 0 0 c x-echo-k=v" in out and "status 0 OK" in out
          and "headers x-echo-header=h;" in out and "trailers x-echo-trailer=t;" in out, out)
    out = c_call("unix://" + sock, "Stream", "--count", "3", "--size", "10")
    check("c->c stream", out.count("message ") == 3 and "status 0 OK" in out, out)
    out = c_call(sock, "/a.B/C")
    check("c->c unknown", "status 12 UNIMPLEMENTED unknown service a.B" in out, out)
    out = c_call("unix:" + sock, "Stream", "--count", "100", "--delay-ms", "20",
                 "--cancel-after", "2")
    check("c->c cancel", out.count("message ") == 2 and "status 1 CANCELLED" in out, out)
    line = wait_line(srv, "cancelled")
    check("c->c cancel reaches the handler",
          line == "cancelled CANCELLED /nodecm.test.Echo/Stream", repr(line))

    srv.send_signal(signal.SIGTERM)
    check("our server stops on SIGTERM", srv.wait(timeout=30) == 0)


# ---- our client, python server ------------------------------------------------------------

def test_our_client():
    sock = os.path.join(tmp, "py.sock")
    py = start([sys.executable, __file__, "--peer-server", "unix:" + sock, tmp])
    t = "unix:" + sock
    text = "héllo ✓"
    out = c_call(t, "Unary", "--text", text, "--md", "x-echo-a=1", "--md", "x-echo-b=2")
    check("c->py unary", ("message 0 0 %s x-echo-a=1;x-echo-b=2" % text) in out and
          "status 0 OK" in out and "headers x-echo-header=h;" in out and
          "trailers x-echo-trailer=t;" in out, out)
    out = c_call("unix://" + sock, "Stream", "--count", "5", "--size", "100")
    check("c->py stream", out.count("message ") == 5 and "message 4 100" in out
          and "status 0 OK" in out, out)
    for code in (3, 9, 16):
        msg = "ünïcode 100%% ✓ %d" % code
        code_, m = status_of(c_call(t, "Unary", "--code", code, "--message", msg))
        check("c->py status %d" % code, code_ == code and m == msg, repr((code_, m)))
    code_, m = status_of(c_call(t, "Unary", "--delay-ms", "3000", "--timeout-ms", "300"))
    check("c->py deadline", code_ == 4 and m == "Deadline Exceeded", repr((code_, m)))
    code_, m = status_of(c_call(t, "Unary", "--size", str(5 << 20)))
    check("c->py oversized reply", code_ == 8 and
          m == "grpc: received message larger than max (%d vs. 4194304)" % ((5 << 20) + 5),
          repr((code_, m)))
    code_, m = status_of(c_call(t, "Unary", "--payload-size", str(5 << 20),
                                "--max-send", str(8 << 20)))
    check("c->py oversized request", code_ == 8, repr((code_, m)))
    code_, m = status_of(c_call(t, "/nodecm.test.Echo/Nope"))
    check("c->py unknown method", code_ == 12, repr((code_, m)))
    out = c_call(t, "Stream", "--count", "40", "--size", str(64 << 10), "--read-delay-ms", "5")
    check("c->py slow reader", out.count("message ") == 40 and "status 0 OK" in out,
          out[-200:])
    out = c_call(t, "Stream", "--count", "100", "--delay-ms", "10", "--cancel-after", "2")
    check("c->py cancel", "status 1 CANCELLED" in out, out[-200:])
    out = c_call("unix:" + os.path.join(tmp, "missing.sock"), "Unary")
    check("c->missing socket", out.startswith("connect-error connect '") and
          "No such file or directory" in out, out)

    # The server dies mid-stream (SIGKILL): connection EOF is UNAVAILABLE.
    cl = subprocess.Popen([ECHO, "call", t, "Stream", "--count", "1000", "--delay-ms", "10"],
                          stdout=subprocess.PIPE, text=True)
    procs.append(cl)
    first = cl.stdout.readline()
    while first.startswith("headers"):
        first = cl.stdout.readline()
    py.kill()
    py.wait()
    rest = cl.communicate(timeout=60)[0]
    check("rpc-echo call exits 0 after its server died", cl.returncode == 0)
    code_, m = status_of(rest)
    check("c->py server SIGKILL mid-stream", first.startswith("message") and code_ == 14,
          repr((first, rest[-200:])))


# ---- python client -> our proxy (opaque forwarding) -> python server ---------------------

def test_proxy(grpc, echo_pb2, echo_svc_pb2_grpc):
    up = os.path.join(tmp, "up.sock")
    sock = os.path.join(tmp, "proxy.sock")
    py = start([sys.executable, __file__, "--peer-server", "unix:" + up, tmp])
    proxy = start([ECHO, "proxy", "unix:" + sock, "unix://" + up])
    ch = grpc.insecure_channel("unix:" + sock)
    stub = echo_svc_pb2_grpc.EchoStub(ch)
    rep, call = stub.Unary.with_call(echo_pb2.EchoRequest(text="via ✓", payload=b"\x00\x01"),
                                     metadata=(("x-echo-a", "1"),))
    check("py->proxy->py unary", rep.text == "via ✓" and rep.payload == b"\x00\x01"
          and rep.metadata == "x-echo-a=1" and ("x-echo-header", "h") in call.initial_metadata()
          and ("x-echo-trailer", "t") in call.trailing_metadata(), repr((rep, call)))
    reps = list(stub.Stream(echo_pb2.EchoRequest(count=5, size=10)))
    check("py->proxy->py stream", [r.index for r in reps] == list(range(5)))
    try:
        stub.Unary(echo_pb2.EchoRequest(code=7, message="nö 100%"))
        check("py->proxy->py status", False, "no error")
    except grpc.RpcError as e:
        check("py->proxy->py status", e.code() == grpc.StatusCode.PERMISSION_DENIED and
              e.details() == "nö 100%", repr((e.code(), e.details())))
    try:
        ch.unary_unary("/other.Svc/Any")(b"\x01\x02")
        check("py->proxy->py unknown method", False, "no error")
    except grpc.RpcError as e:
        check("py->proxy->py unknown method", e.code() == grpc.StatusCode.UNIMPLEMENTED,
              repr((e.code(), e.details())))
    try:
        stub.Unary(echo_pb2.EchoRequest(delay_ms=3000), timeout=0.3)
        check("py->proxy->py deadline", False, "no error")
    except grpc.RpcError as e:
        check("py->proxy->py deadline", e.code() == grpc.StatusCode.DEADLINE_EXCEEDED,
              repr(e.code()))
    n = 0
    for r in stub.Stream(echo_pb2.EchoRequest(count=40, size=64 << 10)):
        n += 1 if r.index == n else 0
        time.sleep(0.005)
    check("py->proxy->py slow reader", n == 40, "got %d" % n)
    ch.close()
    proxy.send_signal(signal.SIGTERM)
    check("proxy stops on SIGTERM", proxy.wait(timeout=30) == 0)
    py.send_signal(signal.SIGTERM)
    py.wait(timeout=30)


def main():
    global tmp
    if len(sys.argv) > 1 and sys.argv[1] == "--peer-server":
        return peer_server(sys.argv[2], sys.argv[3])
    if len(sys.argv) > 1 and sys.argv[1] == "--peer-stream":
        import grpc
        sys.path.insert(0, sys.argv[3])
        import echo_pb2
        import echo_svc_pb2_grpc
        stub = echo_svc_pb2_grpc.EchoStub(grpc.insecure_channel(sys.argv[2]))
        for r in stub.Stream(echo_pb2.EchoRequest(count=100000, delay_ms=5)):
            print("message", r.index, flush=True)
        return 0
    try:
        import grpc
        import grpc_tools  # noqa: F401
    except ImportError as e:
        skip("python3-grpcio / python3-grpc-tools not importable by %s: %s" % (sys.executable, e))
    if not ECHO or not PROTO_DIR:
        skip("NCM_RPC_ECHO / NCM_TEST_PROTO_DIR not set (run through meson test)")
    atexit.register(cleanup)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    tmp = tempfile.mkdtemp(prefix="ncm-rpc-")
    gen_stubs(tmp)
    import echo_pb2
    import echo_svc_pb2_grpc
    test_our_server(grpc, echo_pb2, echo_svc_pb2_grpc)
    test_our_client()
    test_proxy(grpc, echo_pb2, echo_svc_pb2_grpc)
    if failures:
        print("FAILED: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
