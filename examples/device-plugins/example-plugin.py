# SPDX-License-Identifier: Apache-2.0
"""A minimal device plugin written against the kubelet's device plugin API (v1beta1), as real
plugins are: it works with a kubelet and with nodecmd unchanged. Four fake GPUs, two per NUMA
node, resource example.com/gpu.

  python3 -m grpc_tools.protoc -I lib/api --python_out=STUBS --grpc_python_out=STUBS \\
      deviceplugin-v1beta1.proto deviceplugin-v1beta1_svc.proto
  /usr/bin/python3 examples/device-plugins/example-plugin.py --stubs STUBS \\
      --dir /tmp/nodecm-dp/device-plugins

It serves its socket in the plugin directory, registers on kubelet.sock, sends its devices on
ListAndWatch, answers Allocate with an environment variable and a CDI device per GPU, and
registers again whenever kubelet.sock is created anew (a kubelet or nodecmd restart).
"""
import argparse
import os
import sys
import time
from concurrent import futures

RESOURCE = "example.com/gpu"
DEVICES = [("gpu0", 0), ("gpu1", 0), ("gpu2", 1), ("gpu3", 1)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--stubs", required=True, help="python stubs of lib/api")
    p.add_argument("--dir", default="/var/lib/kubelet/device-plugins")
    a = p.parse_args()
    sys.path.insert(0, a.stubs)
    import grpc
    import deviceplugin_v1beta1_pb2 as pb
    import deviceplugin_v1beta1_svc_pb2_grpc as svc

    class Plugin(svc.DevicePluginServicer):
        def GetDevicePluginOptions(self, request, context):
            return pb.DevicePluginOptions()

        def ListAndWatch(self, request, context):
            resp = pb.ListAndWatchResponse()
            for dev_id, numa in DEVICES:
                d = resp.devices.add(ID=dev_id, health="Healthy")
                d.topology.nodes.add(ID=numa)
            yield resp
            while context.is_active():  # the list never changes: keep the stream open
                time.sleep(1)

        def Allocate(self, request, context):
            out = pb.AllocateResponse()
            for req in request.container_requests:
                c = out.container_responses.add()
                c.envs["EXAMPLE_GPUS"] = ",".join(req.devices_ids)
                for dev_id in req.devices_ids:
                    c.cdi_devices.add(name=RESOURCE + "=" + dev_id)
            return out

    sock = os.path.join(a.dir, "example-gpu.sock")
    kubelet = os.path.join(a.dir, "kubelet.sock")
    while True:
        if os.path.exists(sock):
            os.unlink(sock)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        svc.add_DevicePluginServicer_to_server(Plugin(), server)
        server.add_insecure_port("unix:" + sock)
        server.start()
        with grpc.insecure_channel("unix:" + kubelet) as ch:
            svc.RegistrationStub(ch).Register(pb.RegisterRequest(
                version="v1beta1", endpoint="example-gpu.sock", resource_name=RESOURCE),
                timeout=30)
        print("registered " + RESOURCE, flush=True)
        st = os.stat(kubelet)
        seen = (st.st_ino, st.st_ctime_ns)
        while True:  # a new kubelet.sock: register again
            time.sleep(0.2)
            try:
                st = os.stat(kubelet)
                if (st.st_ino, st.st_ctime_ns) != seen:
                    break
            except OSError:
                pass
        server.stop(0)


if __name__ == "__main__":
    main()
