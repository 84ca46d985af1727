# SPDX-License-Identifier: Apache-2.0
"""Device locality with real peers (issue 24): a python3-grpcio device plugin whose device ids
are PCI addresses, as the SR-IOV plugin's are, registered with nodecmd.

On issue 24's fake machine (nodecmd --fsroot fakepci-2s4r, nothing enforced): the plugin's NIC
VFs sit on socket 1's second PCI root; with deviceLocalCPUs: prefer a Guaranteed pod holding
one gets that root's local CPUs, with the setting off the kubelet's; `nodecm devices
--locations` says where every device is (the plugin's by their ids, the machine's CDI devices
by their specs' device nodes). On this machine: a plugin device named by one of its real PCI
functions is located with the kernel's numa_node and local CPUs, read here from sysfs.
Every process is killed when the test ends.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodecmd_test as nt  # noqa: E402
import dplib  # noqa: E402

DATA = os.environ.get("NCM_TEST_DATA", "")


def locations(sock):
    rc, out, err = nt.nodecm("devices", "--connect", sock, "--json", "--locations")
    if rc != 0:
        return {"error": err}
    return {x["device"]: x for x in json.loads(out).get("locations", [])}


def admit(sock, path):
    rc, out, err = nt.nodecm("node", "admit", path, "--connect", sock, "--json")
    return json.loads(out) if rc == 0 and out else {"error": out + err}


def fake_machine(tmp):
    subprocess.run(["tar", "-xjf", os.path.join(DATA, "topologies", "fakepci-2s4r.tar.bz2"),
                    "-C", tmp], check=True)
    return os.path.join(tmp, "fakepci-2s4r")


def issue_machine(grpc_tmp, stubs, prefer):
    tmp = os.path.join(grpc_tmp, "prefer" if prefer else "ignore")
    os.makedirs(tmp)
    root = fake_machine(tmp)
    config = os.path.join(tmp, "kubelet.yaml")
    nt.write_config(config, reservedSystemCPUs='"0,16"',
                    deviceLocalCPUs="prefer" if prefer else "ignore")
    d = nt.Daemon(config, os.path.join(tmp, "node"), os.path.join(tmp, "nodecmd.log"),
                  extra=("--fsroot", root))
    d.argv = [a for a in d.argv if a not in ("--synthetic", nt.TOPOLOGY)]
    d.start()
    pdir = os.path.join(tmp, "node", "device-plugins")
    nic = dplib.Plugin(stubs, pdir, "nic.sock", "example.com/nic",
                       "--devices", "0000:c1:00.2@1;0000:c1:00.3@1",
                       log=os.path.join(tmp, "nic.log"))
    nt.check("a plugin whose device ids are PCI addresses registers",
             nic.event("registered") is not None)
    locs = dplib.wait_until(lambda: (lambda l: l if "example.com/nic=0000:c1:00.2" in l
                                     else None)(locations(d.socket)))
    vf = (locs or {}).get("example.com/nic=0000:c1:00.2", {})
    nt.check("`nodecm devices --locations`: a VF by its id, on socket 1's second root",
             vf.get("located") is True and vf.get("how") == "device ID" and
             vf.get("pci") == ["0000:c1:00.2"] and vf.get("numa") == [1] and
             vf.get("local_cpus") == "12-15,28-31", str(locs))
    gpu = (locs or {}).get("example.com/gpu=gpu1", {})
    nt.check("... and the machine's CDI devices by their specs' device nodes",
             gpu.get("pci") == ["0000:81:00.0"] and
             gpu.get("how") == "CDI /etc/cdi/example-gpu.yaml: /dev/dri/renderD129", str(locs))
    pod = dplib.pod(os.path.join(tmp, "p.json"), "uid-1", "dpdk",
                    [("app", "4", {"example.com/nic": 1})])
    a = admit(d.socket, pod)
    c = (a.get("containers") or [{}])[0]
    want = "12-13,28-29" if prefer else "8-9,24-25"
    nt.check("deviceLocalCPUs %s: CPUs %s" % ("prefer" if prefer else "ignore", want),
             a.get("admitted") is True and c.get("cpus") == want and c.get("numa") == [1],
             str(a))
    nic.kill()
    d.stop()


def this_machine(grpc_tmp, stubs):
    """A plugin device named by a real PCI function of this machine."""
    devs = "/sys/bus/pci/devices"
    try:
        funcs = sorted(os.listdir(devs))
    except OSError:
        funcs = []
    if not funcs:
        print("ok - # SKIP this machine has no PCI devices")
        return
    addr = funcs[-1]

    def attr(name):
        try:
            with open(os.path.join(devs, addr, name)) as f:
                return f.read().strip()
        except OSError:
            return None
    numa = attr("numa_node")
    tmp = os.path.join(grpc_tmp, "here")
    os.makedirs(tmp)
    config = os.path.join(tmp, "kubelet.yaml")
    nt.write_config(config, deviceLocalCPUs="prefer", topologyManagerPolicy="none")
    # the machine's own CPUs, so that its local CPUs are the topology's
    d = nt.Daemon(config, os.path.join(tmp, "node"), os.path.join(tmp, "nodecmd.log"))
    d.argv = [a for a in d.argv if a not in ("--synthetic", nt.TOPOLOGY)]
    d.start()
    pdir = os.path.join(tmp, "node", "device-plugins")
    p = dplib.Plugin(stubs, pdir, "nic.sock", "example.com/nic", "--devices", addr + "@-",
                     log=os.path.join(tmp, "nic.log"))
    nt.check("a plugin naming this machine's %s registers" % addr,
             p.event("registered") is not None)
    key = "example.com/nic=" + addr
    locs = dplib.wait_until(lambda: (lambda l: l if key in l else None)(locations(d.socket)))
    got = (locs or {}).get(key, {})
    want_numa = [int(numa)] if numa not in (None, "-1") else None
    nt.check("located by its id, with the kernel's numa_node (%s) and local CPUs (%s)"
             % (numa, attr("local_cpulist")),
             got.get("located") is True and got.get("pci") == [addr] and
             got.get("numa") == want_numa and got.get("how") == "device ID", str(got))
    p.kill()
    d.stop()


def main():
    grpc, pb, svc, tmp = nt.setup("ncm-locality-")
    if not DATA:
        nt.skip("run through meson test (NCM_TEST_DATA is not set)")
    stubs = dplib.gen_stubs()
    sys.path.insert(0, stubs)
    issue_machine(tmp, stubs, prefer=True)
    issue_machine(tmp, stubs, prefer=False)
    this_machine(tmp, stubs)
    return nt.finish()


if __name__ == "__main__":
    sys.exit(main())
