# SPDX-License-Identifier: Apache-2.0
"""nodecmd as a device-plugin host, end to end (issue 12's "done when").

A python device plugin written against the kubelet's API (deviceplugin_peer.py) registers with
nodecmd on DIR/device-plugins/kubelet.sock; its devices show in `nodecm devices`; pods asking
for them are admitted through the control API with NUMA-aligned CPUs and devices (the
single-numa-node policy), the plugin's Allocate answer comes back in the Admit reply; the pod
resources client sees the allocation; a crash / re-register cycle, a nodecmd restart, a deleted
kubelet.sock and a SIGTERM during a hanging Allocate behave as the kubelet's do. Run with
/usr/bin/python3; every process is killed when the test ends.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodecmd_test as nt  # noqa: E402
import dplib  # noqa: E402

TOPOLOGY = "package:2 numa:1 core:4 pu:1"


def devices_json(sock):
    rc, out, err = nt.nodecm("devices", "--connect", sock, "--json")
    if rc != 0:
        return {"error": err}
    return {r["resource"]: r for r in json.loads(out)["resources"]}


def wait_until(fn, timeout=30):
    return dplib.wait_until(fn, timeout)


def main():
    grpc, pb, svc, tmp = nt.setup("ncm-nodecmd-dev-")
    stubs = dplib.gen_stubs()
    sys.path.insert(0, stubs)
    root = os.path.join(tmp, "root")
    config = os.path.join(tmp, "kubelet.yaml")
    nt.write_config(config, nodecmd={"devicePluginGracePeriod": '"2s"',
                                     "devicePluginAllocateTimeout": '"2s"'})
    d = nt.Daemon(config, root, os.path.join(tmp, "nodecmd.log"), topology=TOPOLOGY).start()
    pdir = os.path.join(root, "device-plugins")
    podres = os.path.join(root, "pod-resources", "kubelet.sock")
    nt.check("Registration socket at DIR/device-plugins/kubelet.sock",
             os.path.exists(os.path.join(pdir, "kubelet.sock")))
    nt.check("pod resources socket at DIR/pod-resources/kubelet.sock", os.path.exists(podres))

    gpu = dplib.Plugin(stubs, pdir, "gpu.sock", "example.com/gpu",
                       "--devices", "g0:0;g1:0;g2:1;g3:1", "--pre-start",
                       log=os.path.join(tmp, "gpu.log"))
    nt.check("a python plugin written against the kubelet's API registers",
             gpu.event("registered") is not None)
    inv = wait_until(lambda: (devices_json(d.socket).get("example.com/gpu") or {}).get(
        "allocatable") == 4 and devices_json(d.socket))
    nt.check("its devices show in `nodecm devices --json`", bool(inv), str(inv))
    rc, out, err = nt.nodecm("devices", "--connect", d.socket)
    nt.check("... and in `nodecm devices`",
             rc == 0 and "example.com/gpu: plugin running (PreStartContainer); capacity 4, "
             "allocatable 4, allocated 0" in out and "  g2  healthy  NUMA 1  free" in out,
             out + err)

    # 4 CPUs + 1 GPU: CPU 0 is reserved, so only NUMA node 1 has room for both
    pod1 = os.path.join(tmp, "p1.json")
    dplib.pod(pod1, "uid-1", "trainer", [("app", "4", {"example.com/gpu": 1})], ns="ml")
    rc, out, err = nt.nodecm("node", "admit", pod1, "--connect", d.socket, "--json")
    a = json.loads(out) if rc == 0 and out else {}
    c = (a.get("containers") or [{}])[0]
    nt.check("a pod asking for a device is admitted through nodecmd", a.get("admitted") is True,
             out + err)
    nt.check("with NUMA-aligned CPUs and device (single-numa-node)",
             c.get("numa") == [1] and c.get("cpus") == "4-7" and
             c.get("devices", {}).get("example.com/gpu") in (["g2"], ["g3"]), str(c))
    ps = gpu.event("prestart")
    nt.check("PreStartContainer was called with the device",
             ps is not None and ps["ids"] == c.get("devices", {}).get("example.com/gpu"), str(ps))

    # the control API's Admit returns the plugin's Allocate answer
    with grpc.insecure_channel(d.target()) as ch:
        stub = svc.NodeStub(ch)
        pod2 = nt.pod_json("uid-2", name="infer", containers=[{
            "name": "app", "resources": {"limits": {"cpu": "1", "memory": "64Mi",
                                                    "example.com/gpu": "1"}}}])
        rep = stub.Admit(pb.AdmitRequest(pod=pod2.encode(), source="pod2.json"), timeout=60)
    nt.check("Admit through the python control API client", rep.admitted, str(rep))
    opts = rep.containers[0].device_options if rep.containers else None
    gid = list(rep.containers[0].devices[0].ids) if rep.containers else []
    nt.check("the plugin's Allocate answer comes back through the control API",
             opts is not None and dict(opts.envs).get("EXAMPLE_DEVICES") == ",".join(gid) and
             [m.container_path for m in opts.mounts] == ["/var/lib/example"] and
             [x.name for x in opts.cdi_devices] == ["example.com/gpu=" + g for g in gid],
             str(opts))

    lst = dplib.podres(stubs, podres, "list")
    by_name = {p["name"]: p for p in lst.get("pod_resources", [])}
    cr = (by_name.get("trainer", {}).get("containers") or [{}])[0]
    nt.check("the pod resources client sees the allocation: devices with their NUMA node",
             [(x["resource_name"], x["device_ids"], x.get("topology", {}).get("nodes"))
              for x in cr.get("devices", [])] ==
             [("example.com/gpu", c.get("devices", {}).get("example.com/gpu"), [{"ID": "1"}])],
             str(lst))
    nt.check("... and exclusive CPU ids", sorted(int(x) for x in cr.get("cpu_ids", [])) ==
             [4, 5, 6, 7], str(cr))
    g = dplib.podres(stubs, podres, "get", "infer", "default")
    nt.check("pod resources Get (on by default in the newest release)",
             g.get("pod_resources", {}).get("name") == "infer", str(g))
    cp = os.path.join(root, "kubelet_internal_checkpoint")
    rc, out, err = nt.nodecm("checkpoint", "verify", cp)
    nt.check("kubelet_internal_checkpoint carries the kubelet's checksum", rc == 0, out + err)

    # Explain decides on a copy: the live devices, and no plugin call
    pod3 = os.path.join(tmp, "p3.json")
    dplib.pod(pod3, "uid-3", "what-if", [("app", "1", {"example.com/gpu": 1})])
    gpu.drain()
    calls = len([m for m in gpu.seen if m.get("event") == "allocate"])
    rc, out, err = nt.nodecm("node", "explain", pod3, "--connect", d.socket, "--json")
    ex = json.loads(out) if rc == 0 and out else {}
    steps = [s for e in ex.get("explain", []) for s in e.get("steps", [])
             if s.startswith("example.com/gpu")]
    gpu.drain()
    nt.check("explain decides on the live devices (and their NUMA nodes), calls no plugin",
             ex.get("admitted") is True and steps and "(NUMA 0)" in steps[0] and
             len([m for m in gpu.seen if m.get("event") == "allocate"]) == calls,
             out + err)

    # crash / re-register
    held = c.get("devices", {}).get("example.com/gpu", ["?"])[0]
    gpu.send("crash")
    gpu.kill()
    r = wait_until(lambda: (devices_json(d.socket).get("example.com/gpu") or {}).get(
        "endpoint") == "stopped" and devices_json(d.socket)["example.com/gpu"])
    nt.check("plugin crash: endpoint stopped, allocatable 0, capacity kept",
             r and r["allocatable"] == 0 and r["capacity"] == 4, str(r))
    nt.check("... the containers keep their devices",
             r and sorted(x["id"] for x in r["devices"] if x.get("pod")) ==
             sorted([held] + gid), str(r))
    rc, out, err = nt.nodecm("node", "admit", pod3, "--connect", d.socket, "--json")
    # no healthy device gives no hint: under single-numa-node the merge refuses first
    nt.check("... a new pod is refused as the kubelet refuses it",
             rc == 1 and '"reason": "TopologyAffinityError"' in out, out + err)
    gpu = dplib.Plugin(stubs, pdir, "gpu.sock", "example.com/gpu",
                       "--devices", "g0:0;g1:0;g2:1;g3:1", "--pre-start",
                       log=os.path.join(tmp, "gpu2.log"))
    nt.check("the plugin registers again", gpu.event("registered") is not None)
    r = wait_until(lambda: (devices_json(d.socket).get("example.com/gpu") or {}).get(
        "allocatable") == 4 and devices_json(d.socket)["example.com/gpu"])
    nt.check("its devices are healthy again, the allocations kept",
             r and sorted(x["id"] for x in r["devices"] if x.get("pod")) ==
             sorted([held] + gid), str(r))

    # kubelet.sock deleted: re-created, the plugin registers again
    os.unlink(os.path.join(pdir, "kubelet.sock"))
    nt.check("kubelet.sock re-created and the plugin registers again",
             gpu.event("kubelet-restarted") is not None and gpu.event("registered") is not None)

    # a nodecmd restart: sockets removed, plugins register again, allocations restored
    nt.check("nodecmd stops (SIGTERM)", d.stop() == 0)
    d.start()
    nt.check("after a restart the plugin notices and registers again",
             gpu.event("kubelet-restarted") is not None and gpu.event("registered") is not None)
    r = wait_until(lambda: (devices_json(d.socket).get("example.com/gpu") or {}).get(
        "allocatable") == 4 and devices_json(d.socket)["example.com/gpu"])
    nt.check("... with the allocations of the checkpoint",
             r and sorted(x["id"] for x in r["devices"] if x.get("pod")) ==
             sorted([held] + gid), str(r))

    # the plugin leaves for good: dropped after the grace period (2 s here)
    gpu.send("crash")
    gpu.kill()
    nt.check("a plugin that does not come back is dropped after the grace period",
             wait_until(lambda: (devices_json(d.socket).get("example.com/gpu") or {}).get(
                 "endpoint") == "none", 60), str(devices_json(d.socket)))
    nt.check("the removal is logged", d.wait_log("its plugin did not register again"))

    # a hanging Allocate: the admission fails after the timeout, other calls go on
    hang = dplib.Plugin(stubs, pdir, "hang.sock", "example.com/hang", "--devices", "h0:0;h1:1",
                        "--allocate-hang", log=os.path.join(tmp, "hang.log"))
    hang.event("registered")
    wait_until(lambda: (devices_json(d.socket).get("example.com/hang") or {}).get(
        "allocatable") == 2)
    pod4 = os.path.join(tmp, "p4.json")
    dplib.pod(pod4, "uid-4", "stuck", [("app", "1", {"example.com/hang": 1})])
    result = {}

    def admit_stuck():
        result["r"] = nt.nodecm("node", "admit", pod4, "--connect", d.socket, "--json")
    t = threading.Thread(target=admit_stuck)
    t.start()
    hang.event("allocate")
    pod5 = os.path.join(tmp, "p5.json")
    dplib.pod(pod5, "uid-5", "plain", [("app", "1", {})])
    rc, out, err = nt.nodecm("node", "admit", pod5, "--connect", d.socket, "--json")
    nt.check("while an Allocate hangs, another admission goes on",
             rc == 0 and json.loads(out).get("admitted") is True, out + err)
    t.join(60)
    rc, out, err = result.get("r", (None, "", ""))
    nt.check("the hanging admission is refused after the timeout with Go's deadline text",
             rc == 1 and "Allocate failed due to rpc error: code = DeadlineExceeded desc = "
             "context deadline exceeded, which is unexpected" in out, str(result))

    # SIGTERM while an Allocate hangs: the call is answered, nodecmd exits 0
    t = threading.Thread(target=admit_stuck)
    t.start()
    hang.event("allocate")
    t0 = time.monotonic()
    nt.check("SIGTERM during a hanging Allocate: nodecmd exits 0", d.stop(timeout=60) == 0)
    t.join(60)
    nt.check("... promptly (the hanging call is cut, not waited for)",
             time.monotonic() - t0 < 10 and "r" in result, str(result))
    hang.close()
    example(stubs, tmp)
    crashes(grpc, pb, svc, stubs, tmp)
    return nt.finish()


def crashes(grpc, pb, svc, stubs, tmp, rounds=int(os.environ.get("NCM_CRASH_ROUNDS", "25"))):
    """kill -9 of nodecmd at random moments of admissions and removals of device pods: a
    restart finds both checkpoints valid, every acknowledged admission with the device its
    reply named, every acknowledged removal gone, no device held twice, and the call in flight
    done wholly or not at all."""
    import random
    # a new seed each run covers more moments; NCM_CRASH_SEED=N replays a run
    seed = int(os.environ.get("NCM_CRASH_SEED", str(int(time.time() * 1000) % 1000003)))
    rng = random.Random(seed)
    print("# crash rounds: seed %d (NCM_CRASH_SEED=%d replays it)" % (seed, seed), flush=True)
    root = os.path.join(tmp, "crash")
    config = os.path.join(tmp, "crash.yaml")
    nt.write_config(config)
    d = nt.Daemon(config, root, os.path.join(tmp, "crash.log"), topology=TOPOLOGY)
    pdir = os.path.join(root, "device-plugins")
    plugin = None
    held = {}  # uid -> device id of acknowledged admissions
    bad = []
    for rnd in range(rounds):
        d.start()
        if plugin is None:
            plugin = dplib.Plugin(stubs, pdir, "c.sock", "example.com/c",
                                  "--devices", "c0:0;c1:0;c2:0;c3:1;c4:1;c5:1", "--envs-only",
                                  log=os.path.join(tmp, "crash-plugin.log"))
        if not wait_until(lambda: (devices_json(d.socket).get("example.com/c") or {}).get(
                "endpoint") == "running", 30):
            bad.append("round %d: the plugin did not register again" % rnd)
            break
        in_flight = [None]
        stop = threading.Event()

        def client(stop=stop, in_flight=in_flight, rnd=rnd):
            # this round's: a thread of an earlier round must not see the later rounds' state
            with grpc.insecure_channel(d.target()) as ch:
                stub = svc.NodeStub(ch)
                n = 0
                while not stop.is_set():
                    n += 1
                    if held and (len(held) >= 4 or rng.random() < 0.4):
                        uid = rng.choice(sorted(held))
                        in_flight[0] = ("remove", uid, None)
                        try:
                            stub.RemovePod(pb.RemovePodRequest(pod_uid=uid), timeout=30)
                        except grpc.RpcError:
                            return
                        del held[uid]
                    else:
                        uid = "c-%d-%d" % (rnd, n)
                        pod = nt.pod_json(uid, containers=[{"name": "app", "resources": {
                            "limits": {"cpu": "1", "memory": "64Mi", "example.com/c": "1"}}}])
                        in_flight[0] = ("admit", uid, pod)
                        try:
                            a = stub.Admit(pb.AdmitRequest(pod=pod.encode()), timeout=30)
                        except grpc.RpcError:
                            return
                        if a.admitted:
                            held[uid] = a.containers[0].devices[0].ids[0]
                    in_flight[0] = None
        t = threading.Thread(target=client)
        t.start()
        time.sleep(rng.random() * 0.3)
        d.kill()
        stop.set()
        t.join(60)
        if t.is_alive():
            bad.append("round %d: the client did not end" % rnd)
            break
        d.start()
        # the plugin registers again before anything is asked of it (a pod the node holds is
        # refused while its plugin is away, as by the kubelet: kubernetes issue 118559)
        if not wait_until(lambda: (devices_json(d.socket).get("example.com/c") or {}).get(
                "endpoint") == "running", 30):
            bad.append("round %d: the plugin did not register after the kill" % rnd)
            break
        for f in ("kubelet_internal_checkpoint", "cpu_manager_state"):
            rc, out, err = nt.nodecm("checkpoint", "verify", os.path.join(root, f))
            if rc != 0:
                bad.append("round %d: %s: %s" % (rnd, f, out + err))
        with open(os.path.join(root, "kubelet_internal_checkpoint")) as f:
            cp = json.load(f)
        owner = {}
        for e in cp["Data"]["PodDeviceEntries"] or []:
            for ids in e["DeviceIDs"].values():
                for i in ids:
                    if i in owner:
                        bad.append("round %d: %s held by %s and %s" % (rnd, i, owner[i],
                                                                      e["PodUID"]))
                    owner[i] = e["PodUID"]
        fl = in_flight[0]
        for uid, dev in held.items():
            # a removal in flight may have happened wholly: checked when it is sent again
            if owner.get(dev) != uid and not (fl and fl[0] == "remove" and fl[1] == uid):
                bad.append("round %d: acknowledged %s lost %s" % (rnd, uid, dev))
        if fl and fl[0] == "admit":
            mine = [i for i, u in owner.items() if u == fl[1]]
            if len(mine) > 1:
                bad.append("round %d: the call in flight got %s" % (rnd, mine))
            # a client sends a call that got no answer again: it ends held once
            with grpc.insecure_channel(d.target()) as ch:
                a = svc.NodeStub(ch).Admit(pb.AdmitRequest(pod=fl[2].encode()), timeout=60)
            if a.admitted:
                got = a.containers[0].devices[0].ids[0]
                if mine and mine != [got]:
                    bad.append("round %d: resent %s moved from %s to %s" % (rnd, fl[1], mine,
                                                                            got))
                held[fl[1]] = got
        elif fl and fl[0] == "remove":
            with grpc.insecure_channel(d.target()) as ch:
                svc.NodeStub(ch).RemovePod(pb.RemovePodRequest(pod_uid=fl[1]), timeout=60)
            held.pop(fl[1], None)
            owner = {i: u for i, u in owner.items() if u != fl[1]}
        for uid in [u for u in set(owner.values()) if u not in held and
                    not (fl and fl[1] == u)]:
            bad.append("round %d: %s holds a device no acknowledged call gave it" % (rnd, uid))
        d.kill()
    nt.check("kill -9 of nodecmd during device admissions, %d times: checkpoints valid, "
             "acknowledged calls kept, nothing held twice" % rounds, not bad, "; ".join(bad[:5]))
    if plugin:
        plugin.kill()


def example(stubs, tmp):
    """examples/device-plugins, as its README runs it."""
    src = os.environ.get("NCM_SOURCE_ROOT") or os.path.join(dplib.PEERS, "..", "..")
    ex = os.path.join(src, "examples", "device-plugins")
    root = os.path.join(tmp, "example")
    d = nt.Daemon(os.path.join(ex, "kubelet.yaml"), root, os.path.join(tmp, "example.log"),
                  topology="package:2 numa:1 core:4 pu:2").start()
    plug = dplib.Proc(["/usr/bin/python3", os.path.join(ex, "example-plugin.py"), "--stubs",
                       stubs, "--dir", os.path.join(root, "device-plugins")], "example-plugin",
                      os.path.join(tmp, "example-plugin.log"))
    ok = plug.wait(lambda m: m.get("raw") == "registered example.com/gpu", 30, "registered")
    nt.check("examples/device-plugins: the example plugin registers", ok is not None,
             plug.stderr_text())
    out = wait_until(lambda: "example.com/gpu: plugin running; capacity 4, allocatable 4" in
                     nt.nodecm("devices", "--connect", d.socket)[1] and
                     nt.nodecm("devices", "--connect", d.socket)[1])
    nt.check("examples/device-plugins: nodecm devices as the README shows",
             out and "  gpu0  healthy  NUMA 0  free" in out, str(out))
    rc, out, err = nt.nodecm("node", "admit", os.path.join(ex, "pod.yaml"), "--connect",
                             d.socket)
    nt.check("examples/device-plugins: pod.yaml is admitted with a GPU on its CPUs' NUMA node",
             rc == 0 and "admit trainer: admitted: app exclusive 2-3 (NUMA 0)" in out and
             "example.com/gpu=gpu0" in out, out + err)
    nt.check("examples/device-plugins: nodecmd stops", d.stop() == 0)
    plug.kill()


sys.exit(main())
