# SPDX-License-Identifier: Apache-2.0
"""Compare nodecm's PCI devices of a machine with hwloc's (lstopo-no-graphics --whole-io).

Usage: pci-lstopo.py NODECM ROOT

Runs `NODECM topology --fsroot ROOT --json` and `lstopo-no-graphics --input ROOT --whole-io
--of xml`, and checks, for every PCI function: both list it (hwloc's PCIDev and Bridge objects
with a bus id), with the same class (hwloc's pci_type "CCSS [VVVV:DDDD]"), vendor and device,
the same PCI bridges above it (hwloc's Bridge ancestors), and the same locality: hwloc hangs the
PCI tree under the smallest object whose CPUs hold the function's local CPUs (the whole machine
when the kernel gives none), so that object's CPU set is the smallest one of the machine that
holds nodecm's local_cpus. Prints one line per difference and exits 1 when there is any; exit 77
when lstopo-no-graphics is missing.
"""
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET


def cpuset(text):
    """hwloc's "0x00000011,0x11111111" as a set of CPU ids."""
    bits, n = set(), 0
    for word in reversed(text.split(",")):
        v = int(word or "0", 16)
        for b in range(32):
            if v >> b & 1:
                bits.add(n + b)
        n += 32
    return bits


def cpulist(text):
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def hwloc_devices(root):
    xml = subprocess.run(["lstopo-no-graphics", "--input", root, "--whole-io", "--of", "xml"],
                         check=True, capture_output=True, text=True).stdout
    tree = ET.fromstring(xml)
    devices, sets = {}, []

    def walk(node, locality, bridges):
        for obj in node.findall("object"):
            t = obj.get("type")
            busid = obj.get("pci_busid")
            if t in ("PCIDev", "Bridge"):
                if busid:
                    ctype = obj.get("pci_type").split()
                    ids = ctype[1].strip("[]").split(":")
                    devices[busid] = {"class": int(ctype[0], 16), "vendor": int(ids[0], 16),
                                      "device": int(ids[1], 16), "locality": locality,
                                      "bridges": list(bridges)}
                walk(obj, locality, bridges + [busid] if t == "Bridge" and busid else bridges)
            elif t in ("OSDev", "Misc"):
                continue
            else:
                cs = obj.get("cpuset")
                here = cpuset(cs) if cs else locality
                if cs:
                    sets.append(here)
                walk(obj, here, bridges)

    machine = tree.find("object")
    walk(tree, cpuset(machine.get("cpuset")), [])
    return devices, sets, cpuset(machine.get("cpuset"))


def main():
    nodecm, root = sys.argv[1], sys.argv[2]
    if not shutil.which("lstopo-no-graphics"):
        print("lstopo-no-graphics is not installed (Debian hwloc-nox)")
        return 77
    out = subprocess.run([nodecm, "topology", "--fsroot", root, "--json"], check=True,
                         capture_output=True, text=True).stdout
    ours = {d["address"]: d for d in json.loads(out).get("pci", [])}
    theirs, sets, machine = hwloc_devices(root)
    bad = []
    for a in sorted(set(ours) | set(theirs)):
        if a not in theirs and len(a.split(":")[0]) > 4:
            # hwloc keeps 16-bit PCI domains unless built with --enable-32bits-pci-domain
            # (Debian's is not); nodecm lists every function the kernel lists
            print("%s: skipped (a 32-bit PCI domain, which this lstopo leaves out)" % a)
            continue
        if a not in theirs:
            bad.append("%s: nodecm lists it, lstopo does not" % a)
            continue
        if a not in ours:
            bad.append("%s: lstopo lists it, nodecm does not" % a)
            continue
        o, t = ours[a], theirs[a]
        # an id the kernel did not give is 0 for hwloc, null for nodecm
        got = tuple(int(o[k] or "0", 16) for k in ("class", "vendor", "device"))
        got = (got[0] >> 8,) + got[1:]
        want = (t["class"], t["vendor"], t["device"])
        if got != want:
            bad.append("%s: class/vendor/device %s, lstopo %s" % (a, got, want))
        if o["bridges"] != t["bridges"]:
            bad.append("%s: bridges %s, lstopo %s" % (a, o["bridges"], t["bridges"]))
        local = cpulist(o["local_cpus"]) & machine if o["local_cpus"] else set()
        if not local:
            local = machine
        holders = [s for s in sets + [machine] if local <= s]
        smallest = min(holders, key=len)
        if smallest != t["locality"]:
            bad.append("%s: local CPUs %s lie in %s, lstopo hangs it under %s"
                       % (a, sorted(local), sorted(smallest), sorted(t["locality"])))
    for line in bad:
        print(line)
    print("%d PCI functions, %d differences" % (len(ours), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
