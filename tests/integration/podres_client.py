# SPDX-License-Identifier: Apache-2.0
"""A pod resources API client on python3-grpcio, as monitoring agents use the kubelet's.

  podres_client.py --stubs DIR --socket PATH list | allocatable | get NAME NAMESPACE |
                   list-v1alpha1 | flood N

Prints the answer as one JSON object (protobuf field names), or {"error": {"code": ...,
"details": ...}}. flood makes N List calls back to back and counts the status codes (the
kubelet's rate limit). Run with /usr/bin/python3.
"""
import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--stubs", required=True)
    p.add_argument("--socket", required=True)
    p.add_argument("--max-recv", type=int, default=16 << 20)
    p.add_argument("call", nargs="+")
    a = p.parse_args()
    sys.path.insert(0, a.stubs)
    import grpc
    from google.protobuf.json_format import MessageToDict
    import podresources_v1_pb2 as v1
    import podresources_v1_svc_pb2_grpc as v1_grpc
    import podresources_v1alpha1_pb2 as v1alpha1
    import podresources_v1alpha1_svc_pb2_grpc as v1alpha1_grpc

    opts = [("grpc.max_receive_message_length", a.max_recv)]
    with grpc.insecure_channel("unix:" + a.socket, options=opts) as ch:
        stub = v1_grpc.PodResourcesListerStub(ch)
        try:
            what = a.call[0]
            if what == "list":
                r = stub.List(v1.ListPodResourcesRequest(), timeout=30)
            elif what == "allocatable":
                r = stub.GetAllocatableResources(v1.AllocatableResourcesRequest(), timeout=30)
            elif what == "get":
                r = stub.Get(v1.GetPodResourcesRequest(pod_name=a.call[1],
                                                       pod_namespace=a.call[2]), timeout=30)
            elif what == "list-v1alpha1":
                r = v1alpha1_grpc.PodResourcesListerStub(ch).List(
                    v1alpha1.ListPodResourcesRequest(), timeout=30)
            elif what == "flood":
                codes = {}
                for _ in range(int(a.call[1])):
                    try:
                        stub.List(v1.ListPodResourcesRequest(), timeout=30)
                        c = "OK"
                    except grpc.RpcError as e:
                        c = e.code().name + ": " + e.details()
                    codes[c] = codes.get(c, 0) + 1
                print(json.dumps({"codes": codes}))
                return 0
            else:
                print("unknown call " + what, file=sys.stderr)
                return 2
        except grpc.RpcError as e:
            print(json.dumps({"error": {"code": e.code().name, "details": e.details()}}))
            return 0
        print(json.dumps(MessageToDict(r, preserving_proto_field_name=True,
                                       including_default_value_fields=False)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
