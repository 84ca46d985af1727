# SPDX-License-Identifier: Apache-2.0
"""Build a fake machine root (sys/ and proc/) from a small JSON description.

Usage: make-fake.py SPEC.json OUTDIR      (writes OUTDIR/<name>/sys, .../proc)
       make-fake.py --tar SPEC.json TARBALL (the same, packed as tests/data/topologies keeps dumps)

The tree has what the kernel shows and nodecm, cadvisor and hwloc read:
  - CPUs: /sys/devices/system/cpu/{online,cpuN/topology/*,cpuN/cache/index{0..3}/*}, packages
    of cores of threads numbered as Intel numbers them (thread t of core c of package p is
    CPU t * ncores_total + p * cores + c), L3 caches splitting a package's cores evenly;
  - NUMA nodes (unless "numa": false): /sys/devices/system/node/nodeN/{cpulist,cpumap,distance,
    meminfo,cpuM}, splitting each package's cores evenly;
  - PCI: each root "pciDDDD:BB" under /sys/devices with its functions, the bridges between, the
    /sys/bus/pci/devices links, class/vendor/device/uevent/numa_node/local_cpus/local_cpulist
    and a 64-byte config (a bridge's bus range: the bus of the functions behind it);
  - device nodes' links: "char": "MAJ:MIN" (and "block") of a function become
    /sys/dev/char/MAJ:MIN -> ../../devices/.../<function>/<subsystem>/<name>; "iommu_group"
    fills /sys/kernel/iommu_groups/N/devices; "nvidia_minor" writes
    /proc/driver/nvidia/gpus/ADDR/information;
  - files: any other file, verbatim ("files": {"etc/cdi/x.yaml": "..."}).
A spec with "base": "<dump>" starts from that dump of tests/data/topologies instead of making
CPUs ("cpus": how many it has), and adds its PCI devices and files.

The description (see fake/*.json):
  {"name": "fakepci-2s4r", "packages": 2, "cores": 8, "threads": 2, "l3_per_package": 2,
   "numa": true,
   "pci": [{"root": "pci0000:00", "numa": 0, "local_cpus": "0-7,16-23",
            "functions": [{"address": "0000:00:01.0", "class": "0x060400", "vendor": "0x8086",
                           "device": "0x2030"},
                          {"address": "0000:01:00.0", "bridges": ["0000:00:01.0"],
                           "class": "0x020000", ..., "char": "231:192",
                           "char_name": "infiniband_verbs/uverbs0"}]}],
   "files": {...}}
A function's numa and local_cpus default to its root's.
"""
import json
import os
import sys
import tarfile
import tempfile


def cpulist(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def parse_list(text):
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def cpumask(cpus, width):
    """The kernel's mask: 32-bit hex words, most significant first."""
    words = []
    for w in range((width + 31) // 32):
        v = 0
        for b in range(32):
            if w * 32 + b in cpus:
                v |= 1 << b
        words.append("%08x" % v)
    return ",".join(reversed(words))


def put(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def link(root, rel, target):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def graft_base(spec, root):
    """Start from a dump of tests/data/topologies (spec "base"): its machine, renamed."""
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(os.path.join(here, spec["base"] + ".tar.bz2")) as t:
            t.extractall(tmp)
        for dirpath, dirnames, _ in os.walk(tmp):
            if "sys" in dirnames:
                os.rename(dirpath, root)
                return
    raise RuntimeError("%s: no sys/ in the base dump" % spec["base"])


def secondary_buses(spec):
    """The bus behind each bridge: that of the functions whose last bridge it is."""
    out = {}
    for r in spec.get("pci", []):
        for f in r.get("functions", []):
            if f.get("bridges"):
                out.setdefault(f["bridges"][-1], int(f["address"].split(":")[-2], 16))
    return out


def build(spec, out):
    root = os.path.join(out, spec["name"])
    if "base" in spec:
        graft_base(spec, root)
        add_pci(spec, root, spec["cpus"])
        return root
    np, nc, nt = spec["packages"], spec["cores"], spec.get("threads", 1)
    nl3 = spec.get("l3_per_package", 1)
    nnuma = spec.get("numa_per_package", 1)
    total_cores = np * nc
    ncpu = total_cores * nt
    width = max(32, ncpu)
    sysd = "sys/devices/system"
    put(root, sysd + "/cpu/online", "0-%d\n" % (ncpu - 1))
    put(root, sysd + "/cpu/possible", "0-%d\n" % (ncpu - 1))
    put(root, sysd + "/cpu/present", "0-%d\n" % (ncpu - 1))

    def cpu_of(p, c, t):
        return t * total_cores + p * nc + c

    def core_cpus(p, c):
        return {cpu_of(p, c, t) for t in range(nt)}

    l3_of, numa_of = {}, {}
    for p in range(np):
        for c in range(nc):
            l3_of[(p, c)] = p * nl3 + c * nl3 // nc
            numa_of[(p, c)] = p * nnuma + c * nnuma // nc
    for p in range(np):
        pkg = set().union(*(core_cpus(p, c) for c in range(nc)))
        for c in range(nc):
            sib = core_cpus(p, c)
            l3 = set().union(*(core_cpus(p, k) for k in range(nc) if l3_of[(p, k)] == l3_of[(p, c)]))
            for t in range(nt):
                cpu = cpu_of(p, c, t)
                d = sysd + "/cpu/cpu%d" % cpu
                put(root, d + "/online", "1\n")
                put(root, d + "/topology/physical_package_id", "%d\n" % p)
                put(root, d + "/topology/die_id", "0\n")
                put(root, d + "/topology/core_id", "%d\n" % c)
                put(root, d + "/topology/thread_siblings_list", cpulist(sib) + "\n")
                put(root, d + "/topology/thread_siblings", cpumask(sib, width) + "\n")
                put(root, d + "/topology/core_siblings_list", cpulist(pkg) + "\n")
                put(root, d + "/topology/core_siblings", cpumask(pkg, width) + "\n")
                caches = [(1, "Data", sib, "48K"), (1, "Instruction", sib, "32K"),
                          (2, "Unified", sib, "1024K"), (3, "Unified", l3, "32768K")]
                for i, (lvl, typ, shared, size) in enumerate(caches):
                    cd = d + "/cache/index%d" % i
                    put(root, cd + "/level", "%d\n" % lvl)
                    put(root, cd + "/type", typ + "\n")
                    put(root, cd + "/size", size + "\n")
                    put(root, cd + "/id", "%d\n" % (l3_of[(p, c)] if lvl == 3 else p * nc + c))
                    put(root, cd + "/shared_cpu_map", cpumask(shared, width) + "\n")
                    put(root, cd + "/shared_cpu_list", cpulist(shared) + "\n")
    if spec.get("numa", True):
        nodes = sorted(set(numa_of.values()))
        put(root, sysd + "/node/online", cpulist(nodes) + "\n")
        put(root, sysd + "/node/possible", cpulist(nodes) + "\n")
        for n in nodes:
            cpus = set().union(*(core_cpus(p, c) for (p, c), v in numa_of.items() if v == n))
            d = sysd + "/node/node%d" % n
            put(root, d + "/cpulist", cpulist(cpus) + "\n")
            put(root, d + "/cpumap", cpumask(cpus, width) + "\n")
            dist = []
            for m in nodes:
                same_pkg = m // nnuma == n // nnuma
                dist.append("10" if m == n else ("12" if same_pkg else "21"))
            put(root, d + "/distance", " ".join(dist) + "\n")
            put(root, d + "/meminfo", "Node %d MemTotal:       65536000 kB\n" % n)
            for cpu in cpus:
                link(root, d + "/cpu%d" % cpu, "../../cpu/cpu%d" % cpu)
    put(root, "proc/meminfo", "MemTotal:       %d kB\n" % (65536000 * max(1, np)))
    add_pci(spec, root, ncpu)
    return root


def add_pci(spec, root, ncpu):
    width = max(32, ncpu)
    behind = secondary_buses(spec)
    for r in spec.get("pci", []):
        rootdir = "sys/devices/" + r["root"]
        for f in r.get("functions", []):
            a = f["address"]
            chain = f.get("bridges", [])
            rel = "/".join([rootdir] + chain + [a])
            numa = f.get("numa", r.get("numa", -1))
            local = parse_list(f.get("local_cpus", r.get("local_cpus", cpulist(range(ncpu)))))
            put(root, rel + "/class", f.get("class", "0x000000") + "\n")
            put(root, rel + "/vendor", f.get("vendor", "0x8086") + "\n")
            put(root, rel + "/device", f.get("device", "0x0000") + "\n")
            put(root, rel + "/uevent",
                "PCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SLOT_NAME=%s\n"
                % (int(f.get("class", "0x000000"), 16), int(f.get("vendor", "0x8086"), 16),
                   int(f.get("device", "0x0000"), 16), a))
            put(root, rel + "/numa_node", "%d\n" % numa)
            put(root, rel + "/local_cpus", cpumask(local, width) + "\n")
            put(root, rel + "/local_cpulist", cpulist(local) + "\n")
            cfg = bytearray(64)
            cls = int(f.get("class", "0x000000"), 16)
            if cls >> 8 == 0x0604:
                bus = int(a.split(":")[-2], 16)
                sec = f.get("secondary", behind.get(a, bus + 1))
                cfg[0x0e] = 1
                cfg[0x18] = bus
                cfg[0x19] = sec
                cfg[0x1a] = f.get("subordinate", sec)
            with open(os.path.join(root, rel, "config"), "wb") as fp:
                fp.write(bytes(cfg))
            link(root, "sys/bus/pci/devices/" + a, "../../../" + rel[len("sys/"):])
            for kind in ("char", "block"):
                if kind in f:
                    name = f.get(kind + "_name", "node")
                    put(root, rel + "/" + name + "/dev", f[kind] + "\n")
                    link(root, "sys/dev/%s/%s" % (kind, f[kind]),
                         "../../" + rel[len("sys/"):] + "/" + name)
            if "iommu_group" in f:
                g = f["iommu_group"]
                link(root, "sys/kernel/iommu_groups/%s/devices/%s" % (g, a),
                     "../../../../" + rel[len("sys/"):])
                link(root, "sys/dev/char/%s" % f["vfio_char"],
                     "../../devices/virtual/vfio/%s" % g)
                put(root, "sys/devices/virtual/vfio/%s/dev" % g, f["vfio_char"] + "\n")
            if "nvidia_minor" in f:
                put(root, "proc/driver/nvidia/gpus/%s/information" % a,
                    "Model: \t\t Fake GPU\nBus Location: \t %s\nDevice Minor: \t %d\n"
                    % (a, f["nvidia_minor"]))
    for rel, text in spec.get("files", {}).items():
        put(root, rel, text)


def main():
    if sys.argv[1] == "--tar":
        spec = json.load(open(sys.argv[2]))
        with tempfile.TemporaryDirectory() as tmp:
            build(spec, tmp)
            with tarfile.open(sys.argv[3], "w:bz2") as t:
                # sorted and owned by no one in particular: the same bytes on every run
                def norm(ti):
                    ti.uid = ti.gid = 0
                    ti.uname = ti.gname = ""
                    ti.mtime = 0
                    return ti
                for dirpath, dirnames, filenames in os.walk(tmp):
                    dirnames.sort()
                    for n in sorted(dirnames + filenames):
                        full = os.path.join(dirpath, n)
                        t.add(full, os.path.relpath(full, tmp), recursive=False, filter=norm)
        return 0
    spec = json.load(open(sys.argv[1]))
    print(build(spec, sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
