# SPDX-License-Identifier: Apache-2.0
"""A device plugin written against the kubelet's API (v1beta1), on python3-grpcio.

It does what a real plugin does: serves v1beta1.DevicePlugin on its socket in the device
plugin directory, registers on kubelet.sock, sends its device list on ListAndWatch (again on
every change), answers GetPreferredAllocation / Allocate / PreStartContainer, and registers
again when kubelet.sock is created anew (a kubelet restart). Options make it misbehave the
ways the tests need. Run with /usr/bin/python3 (Debian's grpc modules live there):

  deviceplugin_peer.py --stubs DIR --dir PLUGINDIR --socket NAME --resource R
      [--devices "id:numa[,numa]:health;..."] [--count N --numa-nodes K]
      [--preferred] [--pre-start] [--pre-start-fail MSG] [--allocate-fail MSG]
      [--allocate-hang] [--version V] [--endpoint E] [--garbage] [--huge-mb N]
      [--no-reregister] [--envs-only]

Every event is one JSON line on stdout ({"event": ...}). Commands on stdin, one per line:
  health ID STATE      set a device's health and send the list
  devices SPEC         replace the device list and send it
  register             register again (a new ListAndWatch follows)
  stop                 stop the server (its streams end: UNAVAILABLE)
  crash                SIGKILL itself
  exit                 stop and exit 0
"""
import argparse
import json
import os
import queue
import signal
import sys
import threading
import time

args = None
lock = threading.Lock()
devices = []          # [(id, [numa...] or None, health)]
watchers = []         # one queue per ListAndWatch stream
server = None


def emit(event, **kw):
    kw["event"] = event
    with lock:
        sys.stdout.write(json.dumps(kw) + "\n")
        sys.stdout.flush()


def parse_devices(spec):
    """ "id:numa[,numa]:health;..." ("id@numa@health" for ids with a ':' of their own, such as
    the PCI addresses the SR-IOV plugin names its devices by)."""
    out = []
    for item in filter(None, spec.split(";")):
        parts = item.split("@") if "@" in item else item.split(":")
        numa = None
        if len(parts) > 1 and parts[1] != "-":
            numa = [int(x) for x in parts[1].split(",") if x != ""]
        health = parts[2] if len(parts) > 2 else "Healthy"
        out.append((parts[0], numa, health))
    return out


def snapshot(pb):
    resp = pb.ListAndWatchResponse()
    for dev_id, numa, health in devices:
        d = resp.devices.add(ID=dev_id, health=health)
        if numa is not None:
            d.topology.SetInParent()
            for n in numa:
                d.topology.nodes.add(ID=n)
    return resp


def publish():
    with lock:
        for q in watchers:
            q.put("send")


def allocate_response(pb, ids):
    """The plugin's answer for one container: envs, a mount, device specs, annotations, CDI."""
    c = pb.ContainerAllocateResponse()
    c.envs["EXAMPLE_DEVICES"] = ",".join(ids)
    c.envs["EXAMPLE_RESOURCE"] = args.resource
    if not args.envs_only:
        c.annotations["example.com/devices"] = ",".join(ids)
        c.mounts.add(container_path="/var/lib/example", host_path="/tmp/example-" + ids[0],
                     read_only=True)
        for i in ids:
            c.devices.add(container_path="/dev/" + i, host_path="/dev/null", permissions="rw")
            c.cdi_devices.add(name=args.resource + "=" + i)
    return c


def make_servicer(pb, grpc):
    class Plugin:
        def GetDevicePluginOptions(self, request, context):
            emit("options")
            return pb.DevicePluginOptions(pre_start_required=args.pre_start,
                                          get_preferred_allocation_available=args.preferred)

        def ListAndWatch(self, request, context):
            q = queue.Queue()
            with lock:
                watchers.append(q)
            emit("listandwatch")
            q.put("send")
            try:
                while context.is_active():
                    try:
                        q.get(timeout=0.2)
                    except queue.Empty:
                        continue
                    if args.garbage:
                        emit("sent-garbage")
                        yield b"\xff\xff\xff\xff\x0f"
                        continue
                    if args.huge_mb:
                        # ids of 1000 bytes: HUGE_MB MiB in one message
                        n = args.huge_mb * 1048576 // 1010
                        resp = pb.ListAndWatchResponse()
                        for i in range(n):
                            resp.devices.add(ID="%08d" % i + "x" * 992, health="Healthy")
                        data = resp.SerializeToString()
                        emit("sent-huge", bytes=len(data))
                        yield data
                        continue
                    data = snapshot(pb).SerializeToString()
                    emit("sent", devices=len(devices), bytes=len(data))
                    yield data
            finally:
                with lock:
                    if q in watchers:
                        watchers.remove(q)

        def GetPreferredAllocation(self, request, context):
            out = pb.PreferredAllocationResponse()
            for cr in request.container_requests:
                avail = list(cr.available_deviceIDs)
                must = list(cr.must_include_deviceIDs)
                # prefers the highest ids: a choice the kubelet's own order would not make
                pick = list(must)
                for d in sorted(avail, reverse=True):
                    if len(pick) >= cr.allocation_size:
                        break
                    if d not in pick:
                        pick.append(d)
                emit("preferred", available=sorted(avail), must_include=sorted(must),
                     size=cr.allocation_size, answer=sorted(pick))
                out.container_responses.add(deviceIDs=pick)
            return out

        def Allocate(self, request, context):
            ids = [list(cr.devices_ids) for cr in request.container_requests]
            emit("allocate", ids=ids)
            if args.allocate_hang:
                while context.is_active():
                    time.sleep(0.05)
                emit("allocate-abandoned")
                return pb.AllocateResponse()
            if args.allocate_fail:
                context.abort(grpc.StatusCode.UNKNOWN, args.allocate_fail)
            resp = pb.AllocateResponse()
            for i in ids:
                resp.container_responses.append(allocate_response(pb, i))
            return resp

        def PreStartContainer(self, request, context):
            emit("prestart", ids=sorted(request.devices_ids))
            if args.pre_start_fail:
                context.abort(grpc.StatusCode.UNKNOWN, args.pre_start_fail)
            return pb.PreStartContainerResponse()

    return Plugin()


def serve(pb, grpc):
    """The DevicePlugin service; ListAndWatch's serializer passes raw bytes (garbage tests)."""
    from concurrent import futures
    svc = make_servicer(pb, grpc)
    handlers = {
        "GetDevicePluginOptions": grpc.unary_unary_rpc_method_handler(
            svc.GetDevicePluginOptions, request_deserializer=pb.Empty.FromString,
            response_serializer=pb.DevicePluginOptions.SerializeToString),
        "ListAndWatch": grpc.unary_stream_rpc_method_handler(
            svc.ListAndWatch, request_deserializer=pb.Empty.FromString,
            response_serializer=lambda b: b),
        "GetPreferredAllocation": grpc.unary_unary_rpc_method_handler(
            svc.GetPreferredAllocation,
            request_deserializer=pb.PreferredAllocationRequest.FromString,
            response_serializer=pb.PreferredAllocationResponse.SerializeToString),
        "Allocate": grpc.unary_unary_rpc_method_handler(
            svc.Allocate, request_deserializer=pb.AllocateRequest.FromString,
            response_serializer=pb.AllocateResponse.SerializeToString),
        "PreStartContainer": grpc.unary_unary_rpc_method_handler(
            svc.PreStartContainer, request_deserializer=pb.PreStartContainerRequest.FromString,
            response_serializer=pb.PreStartContainerResponse.SerializeToString),
    }
    s = grpc.server(futures.ThreadPoolExecutor(max_workers=16),
                    options=[("grpc.max_send_message_length", -1)])
    s.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("v1beta1.DevicePlugin",
                                                                     handlers),))
    path = os.path.join(args.dir, args.socket)
    if os.path.exists(path):
        os.unlink(path)
    s.add_insecure_port("unix:" + path)
    s.start()
    return s


def register(pb, svc_grpc, grpc):
    kubelet = os.path.join(args.dir, "kubelet.sock")
    with grpc.insecure_channel("unix:" + kubelet) as ch:
        stub = svc_grpc.RegistrationStub(ch)
        req = pb.RegisterRequest(version=args.version, endpoint=args.endpoint or args.socket,
                                 resource_name=args.resource,
                                 options=pb.DevicePluginOptions(
                                     pre_start_required=args.pre_start,
                                     get_preferred_allocation_available=args.preferred))
        try:
            stub.Register(req, timeout=30)
            emit("registered")
            return True
        except grpc.RpcError as e:
            emit("register-failed", code=e.code().name, details=e.details())
            return False


def watch_kubelet(pb, svc_grpc, grpc):
    """Register again when kubelet.sock is created anew, as real plugins do."""
    global server
    kubelet = os.path.join(args.dir, "kubelet.sock")
    own = os.path.join(args.dir, args.socket)

    def ident():
        try:
            st = os.stat(kubelet)
            # tmpfs hands a freed inode number out again at once: the change time tells
            return (st.st_dev, st.st_ino, st.st_ctime_ns)
        except OSError:
            return None

    last = ident()
    while True:
        time.sleep(0.05)
        now = ident()
        if now is None or now == last:
            continue
        last = now
        emit("kubelet-restarted")
        if not os.path.exists(own):
            server.stop(0)
            server = serve(pb, grpc)
        register(pb, svc_grpc, grpc)


def main():
    global args, devices, server
    p = argparse.ArgumentParser()
    p.add_argument("--stubs", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--socket", required=True)
    p.add_argument("--resource", required=True)
    p.add_argument("--devices", default="")
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--numa-nodes", type=int, default=1)
    p.add_argument("--preferred", action="store_true")
    p.add_argument("--pre-start", action="store_true")
    p.add_argument("--pre-start-fail", default="")
    p.add_argument("--allocate-fail", default="")
    p.add_argument("--allocate-hang", action="store_true")
    p.add_argument("--version", default="v1beta1")
    p.add_argument("--endpoint", default="")
    p.add_argument("--garbage", action="store_true")
    p.add_argument("--huge-mb", type=int, default=0)
    p.add_argument("--no-reregister", action="store_true")
    p.add_argument("--envs-only", action="store_true")
    args = p.parse_args()
    sys.path.insert(0, args.stubs)
    import grpc
    import deviceplugin_v1beta1_pb2 as pb
    import deviceplugin_v1beta1_svc_pb2_grpc as svc_grpc

    devices = parse_devices(args.devices)
    for i in range(args.count):
        devices.append(("dev-%05d" % i, [i % args.numa_nodes], "Healthy"))
    server = serve(pb, grpc)
    emit("serving", socket=os.path.join(args.dir, args.socket))
    ok = register(pb, svc_grpc, grpc)
    if not args.no_reregister:
        threading.Thread(target=watch_kubelet, args=(pb, svc_grpc, grpc), daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "health":
            with lock:
                devices = [(d, n, cmd[2] if d == cmd[1] else h) for d, n, h in devices]
            publish()
        elif cmd[0] == "devices":
            with lock:
                devices = parse_devices(cmd[1] if len(cmd) > 1 else "")
            publish()
        elif cmd[0] == "register":
            register(pb, svc_grpc, grpc)
        elif cmd[0] == "stop":
            server.stop(0)
            emit("stopped")
        elif cmd[0] == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        elif cmd[0] == "exit":
            break
    server.stop(0)
    return 0 if ok or True else 1


if __name__ == "__main__":
    sys.exit(main())
