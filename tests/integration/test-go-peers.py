# SPDX-License-Identifier: Apache-2.0
"""nodecmd against grpc-go peers (issue 29): the device plugins and pod-resources consumers of
the field are Go programs on grpc-go, and python3-grpcio hid two faults from the tests before
(a Register answered without its Empty message; a request with the socket path as :authority
reset).

nodecm-go-peer (tests/integration/go/peer, built at test time by golib.py from Debian's Go
1.19 and grpc-go 1.33) is run as:
  - a device plugin serving two resources on two sockets, dialing kubelet.sock by its bare
    path (grpc-go then sends the path as :authority), registering again when its own socket
    disappears; and a second plugin dialing "unix://" and watching kubelet.sock;
  - a pod resources client (List, Get, GetAllocatableResources, v1alpha1 List), both dials.
Checked: registration, devices and health flips in `nodecm devices`, an admission that asks
GetPreferredAllocation, Allocate and PreStartContainer, the Allocate answer in
`nodecm node admit --json`, the pod resources answers, a deleted kubelet.sock (both kinds of
plugin register again), a plugin restart and a nodecmd restart. A python3-grpcio client with
grpc.default_authority set to the socket path is served by the Registration, pod resources
and control servers. Run with /usr/bin/python3; every process dies with the test.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golib  # noqa: E402
import nodecmd_test as nt  # noqa: E402
import dplib  # noqa: E402

TOPOLOGY = "package:2 numa:1 core:4 pu:1"


def devices_json(sock):
    rc, out, err = nt.nodecm("devices", "--connect", sock, "--json")
    if rc != 0:
        return {}
    return {r["resource"]: r for r in json.loads(out)["resources"]}


def allocatable(sock, res):
    return (devices_json(sock).get(res) or {}).get("allocatable")


def go_plugin(peer, pdir, log, dial, watch, *resources, opts=()):
    argv = [peer, "plugin", "-dir", pdir, "-dial", dial, "-watch", watch] + list(opts)
    for r in resources:
        argv += ["-resource", r]
    return dplib.Proc(argv, "go plugin (%s)" % dial, log)


def event(p, name, resource=None, timeout=30):
    return p.wait(lambda m: m.get("event") == name and
                  (resource is None or m.get("resource") == resource), timeout,
                  "%s %s" % (name, resource or ""))


def podres_go(peer, sock, dial, call, *extra):
    r = nt.subprocess.run([peer, "podres", "-socket", sock, "-dial", dial, "-call", call] +
                          list(extra), capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return {"error": r.stderr}
    return json.loads(r.stdout)


def main():
    grpc, pb, svc, tmp = nt.setup("ncm-go-peers-")
    peer = golib.peer()
    stubs = dplib.gen_stubs()
    sys.path.insert(0, stubs)
    root = os.path.join(tmp, "root")
    config = os.path.join(tmp, "kubelet.yaml")
    nt.write_config(config, nodecmd={"devicePluginGracePeriod": '"30s"'})
    d = nt.Daemon(config, root, os.path.join(tmp, "nodecmd.log"), topology=TOPOLOGY).start()
    pdir = os.path.join(root, "device-plugins")
    podres = os.path.join(root, "pod-resources", "kubelet.sock")

    a = go_plugin(peer, pdir, os.path.join(tmp, "go-a.log"), "bare", "own",
                  "example.com/gpu=gpu.sock=g0:0;g1:0;g2:1;g3:1",
                  "example.com/nic=nic.sock=n0:0;n1:0;n2:1;n3:1",
                  opts=["-preferred", "-pre-start"])
    b = go_plugin(peer, pdir, os.path.join(tmp, "go-b.log"), "unix", "kubelet",
                  "example.com/fpga=fpga.sock=f0:0;f1:1")
    for p, res, how in ((a, "example.com/gpu", "bare path"), (a, "example.com/nic", "bare path"),
                        (b, "example.com/fpga", "unix://")):
        ev = p.wait(lambda m: m.get("resource") == res and
                    m.get("event") in ("registered", "register-failed"), 60, "register " + res)
        nt.check("a grpc-go plugin dialing kubelet.sock by its %s registers %s (Register "
                 "returns Empty)" % (how, res), ev and ev["event"] == "registered",
                 str(ev) + p.stderr_text())
    nt.check("no 'gRPC peer refused' in nodecmd's log", "gRPC peer refused" not in d.log_text(),
             d.log_text()[-2000:])
    inv = dplib.wait_until(lambda: allocatable(d.socket, "example.com/gpu") == 4 and
                           allocatable(d.socket, "example.com/nic") == 4 and
                           allocatable(d.socket, "example.com/fpga") == 2)
    nt.check("their devices show in `nodecm devices`", inv, str(devices_json(d.socket)))

    # health flips: ListAndWatch sends the list again
    a.send("health example.com/gpu g0 Unhealthy")
    nt.check("a device turning unhealthy leaves the allocatable count",
             dplib.wait_until(lambda: allocatable(d.socket, "example.com/gpu") == 3),
             str(devices_json(d.socket).get("example.com/gpu")))
    a.send("health example.com/gpu g0 Healthy")
    nt.check("... and healthy again comes back",
             dplib.wait_until(lambda: allocatable(d.socket, "example.com/gpu") == 4))

    # an admission asking a GPU and a NIC: each from two on the NUMA node of its CPUs, so the
    # kubelet's rule asks the plugin's preference (GetPreferredAllocation), then Allocate and
    # PreStartContainer
    pod1 = dplib.pod(os.path.join(tmp, "p1.json"), "uid-1", "trainer",
                     [("app", "2", {"example.com/gpu": 1, "example.com/nic": 1})])
    rc, out, err = nt.nodecm("node", "admit", pod1, "--connect", d.socket, "--json")
    adm = json.loads(out) if rc == 0 and out else {}
    c = (adm.get("containers") or [{}])[0]
    gpus = c.get("devices", {}).get("example.com/gpu") or []
    nics = c.get("devices", {}).get("example.com/nic") or []
    nt.check("a pod asking for devices of a Go plugin is admitted", adm.get("admitted") is True,
             out + err)
    pref = event(a, "preferred", "example.com/gpu")
    nt.check("GetPreferredAllocation was asked (the NUMA node's devices), and its answer taken",
             pref is not None and len(pref["available"]) == 2 and pref["answer"] == gpus,
             str(pref) + str(c))
    al = event(a, "allocate", "example.com/gpu")
    nt.check("Allocate was called with the devices", al and sorted(al["ids"]) == sorted(gpus),
             str(al))
    ps = event(a, "prestart", "example.com/gpu")
    nt.check("PreStartContainer was called with the devices", ps and ps["ids"] == sorted(gpus),
             str(ps))
    opts = adm.get("deviceOptions", {}).get("app", {})
    nt.check("`nodecm node admit --json` prints the Go plugin's Allocate answer",
             opts.get("envs", {}).get("EXAMPLE_COM_GPU") == ",".join(gpus) and
             opts.get("envs", {}).get("EXAMPLE_COM_NIC") == ",".join(nics) and
             sorted(m["containerPath"] for m in opts.get("mounts", [])) ==
             ["/var/run/gpu", "/var/run/nic"] and
             sorted(x["containerPath"] for x in opts.get("devices", [])) ==
             sorted("/dev/" + i for i in gpus + nics) and
             opts.get("annotations", {}).get("example.com/gpu") == ",".join(gpus) and
             sorted(opts.get("cdiDevices", [])) ==
             sorted(["example.com/gpu=" + i for i in gpus] +
                    ["example.com/nic=" + i for i in nics]), out)

    # pod resources from Go, both dials
    for dial in ("bare", "unix"):
        lst = podres_go(peer, podres, dial, "list")
        pods = {p.get("name"): p for p in lst.get("pod_resources", [])}
        cr = ((pods.get("trainer") or {}).get("containers") or [{}])[0]
        nt.check("Go pod resources List (%s dial) sees the devices and CPUs" % dial,
                 sorted((x["resource_name"], i) for x in cr.get("devices", [])
                        for i in x["device_ids"]) ==
                 sorted([("example.com/gpu", i) for i in gpus] +
                        [("example.com/nic", i) for i in nics]) and
                 len(cr.get("cpu_ids", [])) == 2, str(lst))
        g = podres_go(peer, podres, dial, "get", "-pod", "trainer")
        nt.check("Go pod resources Get (%s dial)" % dial,
                 (g.get("pod_resources") or {}).get("name") == "trainer", str(g))
        al = podres_go(peer, podres, dial, "allocatable")
        nt.check("Go pod resources GetAllocatableResources (%s dial)" % dial,
                 sorted(set(x["resource_name"] for x in al.get("devices", []))) ==
                 ["example.com/fpga", "example.com/gpu", "example.com/nic"] and
                 len(al.get("cpu_ids", [])) > 0, str(al))
        la = podres_go(peer, podres, dial, "list-v1alpha1")
        nt.check("Go pod resources v1alpha1 List (%s dial)" % dial,
                 "trainer" in [p.get("name") for p in la.get("pod_resources", [])], str(la))

    # python3-grpcio with the socket path as :authority, as grpc-go < 1.57 sends it
    import deviceplugin_v1beta1_pb2 as dpb
    import deviceplugin_v1beta1_svc_pb2_grpc as dsvc
    import podresources_v1_pb2 as prpb
    import podresources_v1_svc_pb2_grpc as prsvc

    def authority(path):
        return [("grpc.default_authority", path)]
    with grpc.insecure_channel("unix:" + podres, options=authority(podres)) as ch:
        r = prsvc.PodResourcesListerStub(ch).List(prpb.ListPodResourcesRequest(), timeout=30)
    nt.check("python with grpc.default_authority = the socket path: pod resources served",
             "trainer" in [p.name for p in r.pod_resources])
    with grpc.insecure_channel("unix:" + d.socket, options=authority(d.socket)) as ch:
        r = svc.NodeStub(ch).ListPods(pb.ListPodsRequest(), timeout=30)
    nt.check("... the control API served", r is not None)
    kubelet = os.path.join(pdir, "kubelet.sock")
    with grpc.insecure_channel("unix:" + kubelet, options=authority(kubelet)) as ch:
        try:
            dsvc.RegistrationStub(ch).Register(dpb.RegisterRequest(
                version="v0", endpoint="x.sock", resource_name="example.com/x"), timeout=30)
            code = "OK"
        except grpc.RpcError as e:
            code, details = e.code().name, e.details()
    nt.check("... Registration served (the kubelet's answer to a wrong version)",
             code == "UNKNOWN" and "v0" in details, code)

    # kubelet.sock deleted: as at a kubelet restart, plugin sockets go too, so plugins that
    # watch their own socket register again, as do those that watch kubelet.sock
    os.unlink(kubelet)
    nt.check("kubelet.sock deleted: the plugin watching its own socket registers again",
             event(a, "socket-deleted", "example.com/gpu") is not None and
             event(a, "registered", "example.com/gpu") is not None and
             event(a, "registered", "example.com/nic") is not None, a.stderr_text())
    nt.check("... and the one watching kubelet.sock", event(b, "kubelet-restarted") is not None
             and event(b, "registered", "example.com/fpga") is not None, b.stderr_text())
    nt.check("... the log says so", d.wait_log("plugin sockets removed, as at a kubelet restart"))
    r = dplib.wait_until(lambda: allocatable(d.socket, "example.com/gpu") == 4 and
                         devices_json(d.socket)["example.com/gpu"])
    nt.check("... the allocations kept",
             r and sorted(x["id"] for x in r["devices"] if x.get("pod")) == sorted(gpus), str(r))

    # the plugin restarts (stops its servers, serves and registers again)
    a.send("restart")
    nt.check("a Go plugin restarting registers again",
             event(a, "registered", "example.com/gpu") is not None and
             event(a, "registered", "example.com/nic") is not None)
    nt.check("... its devices allocatable again",
             dplib.wait_until(lambda: allocatable(d.socket, "example.com/gpu") == 4 and
                              allocatable(d.socket, "example.com/nic") == 4))

    # nodecmd restarts: sockets wiped, both plugins register again, allocations restored
    nt.check("nodecmd stops (SIGTERM)", d.stop() == 0)
    d.start()
    nt.check("after a nodecmd restart both Go plugins register again",
             event(a, "registered", "example.com/gpu", 60) is not None and
             event(b, "registered", "example.com/fpga", 60) is not None)
    r = dplib.wait_until(lambda: allocatable(d.socket, "example.com/gpu") == 4 and
                         devices_json(d.socket)["example.com/gpu"])
    nt.check("... with the allocations of the checkpoint",
             r and sorted(x["id"] for x in r["devices"] if x.get("pod")) == sorted(gpus), str(r))
    nt.check("nodecmd logged no refusal and no handler error",
             "gRPC peer refused" not in d.log_text() and "gRPC handler error" not in d.log_text())
    a.send("exit")
    b.send("exit")
    a.close()
    b.close()
    nt.check("nodecmd stops", d.stop() == 0)
    return nt.finish()


sys.exit(main())
