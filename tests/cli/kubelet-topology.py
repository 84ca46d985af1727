#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# An independent model of the table the kubelet builds from a machine's sysfs, written
# straight from cadvisor's utils/sysinfo (GetNodesInfo, getCPUTopology, getCoresInfo,
# addCacheInfo) and utils/sysfs (GetCacheInfo, IsCPUOnline), and the kubelet's
# cpumanager/topology Discover, step by step and without nodecm's code. The CLI test
# test-topology-dumps.sh compares `nodecm topology --fsroot ROOT --json` with it on every dump.
#
# Two readings of a dump, the same as nodecm's (docs/topology.md):
#  - a NUMA node's CPUs are the names of its nodeN/cpuM entries, and a CPU's files are read
#    from /sys/devices/system/cpu/cpuM (the links' target on a live kernel; some dumps'
#    links point elsewhere); a node without such entries takes its CPUs from cpulist, else
#    cpumap;
#  - s390 (cadvisor built for s390x) is recognised by the book_id file of the first CPU read.
#
# Usage: kubelet-topology.py ROOT   prints the table as nodecm's JSON, or "error: TEXT".
import os
import re
import sys

ROOT = sys.argv[1]


def path(p):
    return os.path.join(ROOT, p.lstrip("/"))


def read(p):
    with open(path(p), "rb") as f:
        return f.read().decode("latin-1")


def exists(p):
    return os.path.exists(path(p))


# Go's unicode.IsSpace, which strings.TrimSpace trims (the file is read as bytes: latin-1
# here, so a UTF-8 space is matched on its encoded form).
GO_SPACES = [b" ", b"\t", b"\n", b"\v", b"\f", b"\r", "\u0085".encode(), "\u00a0".encode(),
             "\u1680".encode(), "\u2028".encode(), "\u2029".encode(), "\u202f".encode(),
             "\u205f".encode(), "\u3000".encode()] + [chr(c).encode() for c in range(0x2000, 0x200b)]
GO_SPACES = [x.decode("latin-1") for x in GO_SPACES]


def trim_space(s):
    """strings.TrimSpace."""
    changed = True
    while changed:
        changed = False
        for sp in GO_SPACES:
            if s.startswith(sp):
                s = s[len(sp):]
                changed = True
            if s.endswith(sp) and s:
                s = s[:-len(sp)]
                changed = True
    return s


def parse_uint(s, limit=2**64 - 1):
    """strconv.ParseUint(s, 10, 64): decimal digits only."""
    if not s or any(ch not in "0123456789" for ch in s):
        raise ValueError(s)
    v = int(s)
    if v > limit:
        raise ValueError(s)
    return v


def atoi(s):
    """strconv.Atoi: optional sign, decimal digits, nothing else, within int64."""
    t = s[1:] if s[:1] in "+-" else s
    v = parse_uint(t)
    v = -v if s[:1] == "-" else v
    if not -2**63 <= v < 2**63:
        raise ValueError(s)
    return v


def sscan_int(s, unsigned=False):
    """fmt.Sscanf(s, "%d"): spaces (no newline) skipped, then a number; returns (value, rest)."""
    i = 0
    while i < len(s) and s[i] in " \t\v\f\r":
        if s[i] == "\r" and s[i + 1:i + 2] == "\n":
            raise ValueError(s)
        i += 1
    j = i
    if not unsigned and j < len(s) and s[j] in "+-":
        j += 1
    k = j
    while k < len(s) and s[k].isdigit() and s[k] in "0123456789":
        k += 1
    if k == j:
        raise ValueError(s)
    v = int(s[i:k])
    if unsigned and v >= 2**64 or not unsigned and not -2**63 <= v < 2**63:
        raise ValueError(s)
    return v, s[k:]


def parse_list(text):
    """A kernel CPU list ("0-3,8")."""
    out = []
    text = text.strip("\0").strip()
    if not text:
        return out
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), int(b) + 1)
        else:
            out.append(int(part))
    return out


def parse_mask(text):
    """A kernel CPU mask ("00000000,0000000f")."""
    v = int(text.strip("\0").strip().replace(",", ""), 16)
    return [i for i in range(v.bit_length()) if v >> i & 1]


# --- online: cadvisor's IsCPUOnline reads the machine's list only -----------------------
ONLINE = None  # None: no file, every CPU is online
if exists("/sys/devices/system/cpu/online"):
    try:
        ONLINE = read("/sys/devices/system/cpu/online")
    except OSError:
        ONLINE = ""


def online(cpu):
    """isCPUOnline: entries left to right; a malformed one ends the search (offline)."""
    if ONLINE is None:
        return True
    if not ONLINE:
        return False
    for entry in trim_space(ONLINE).split(","):
        parts = entry.split("-", 2)
        try:
            if len(parts) == 3:
                return False
            if len(parts) == 2:
                lo, hi = parse_uint(parts[0], 65535), parse_uint(parts[1], 65535)
                if lo > hi:
                    return False
            else:
                lo = hi = parse_uint(entry, 65535)
        except ValueError:
            return False
        if lo <= cpu % 65536 <= hi:
            return True
    return False


# --- per-CPU files ------------------------------------------------------------------------
S390 = None


def cpu_file(cpu, name):
    """The trimmed content of cpuN/topology/NAME, or None when the file does not exist."""
    p = "/sys/devices/system/cpu/cpu%d/topology/%s" % (cpu, name)
    if not exists(p):
        return None
    return trim_space(read(p))


def cores_info(cpus):
    """cadvisor's getCoresInfo over CPU ids in glob order."""
    global S390
    cores = []
    for cpu in cpus:
        if not online(cpu):
            continue
        raw = cpu_file(cpu, "core_id")
        if raw is None:
            continue
        core_id = atoi(raw)
        raw = cpu_file(cpu, "physical_package_id")
        if raw is None:
            continue
        package = atoi(raw)
        if S390 is None:
            S390 = exists("/sys/devices/system/cpu/cpu%d/topology/book_id" % cpu)
        book = drawer = None
        if S390:
            book = cpu_file(cpu, "book_id")
            if book is None:
                continue
            drawer = cpu_file(cpu, "drawer_id")
            if drawer is None:
                continue
        match = None
        for c in cores:
            if c["id"] == core_id and c["socket"] == package and \
                    (not S390 or (c["book"] == book and c["drawer"] == drawer)):
                match = c
        if match is None:
            match = {"id": core_id, "socket": package, "book": book, "drawer": drawer,
                     "threads": [], "uncore": []}
            cores.append(match)
        match["threads"].append(cpu)
    return cores


def cache_info(cpu):
    """cadvisor's GetCacheInfo: every index* entry, or None when any file fails."""
    d = "/sys/devices/system/cpu/cpu%d/cache" % cpu
    try:
        names = sorted(os.listdir(path(d)))
    except OSError:
        return None
    out = []
    for name in names:
        if not name.startswith("index"):
            continue
        base = d + "/" + name
        try:
            cid, _ = sscan_int(read(base + "/id"))
            _, rest = sscan_int(read(base + "/size"), unsigned=True)
            if not rest.startswith("K"):
                return None
            level, _ = sscan_int(read(base + "/level"))
            read(base + "/type")
            count = 0
            for word in read(base + "/shared_cpu_map").split(","):
                count += bin(int(hex_word(trim_space(word)), 16)).count("1")
        except (OSError, ValueError, IndexError):
            return None
        out.append({"id": cid, "level": level, "cpus": count})
    return out


def hex_word(w):
    """strconv.ParseUint(w, 16, 64): hex digits only (no prefix, sign or underscore)."""
    if not w or any(ch not in "0123456789abcdefABCDEF" for ch in w) or int(w, 16) >= 2**64:
        raise ValueError(w)
    return w


def add_cache_info(cores):
    """cadvisor's addCacheInfo: stops at the first core whose caches cannot be read."""
    for core in cores:
        caches = cache_info(core["threads"][0])
        if caches is None:
            return
        per_node = len(cores) * len(core["threads"])
        for c in caches:
            if c["level"] > 2 and c["cpus"] != per_node:
                if c not in core["uncore"]:
                    core["uncore"].append(c)


def glob_key(n):
    return str(n)


def node_cpus(nid):
    d = "/sys/devices/system/node/node%d" % nid
    names = [n for n in os.listdir(path(d)) if n.startswith("cpu") and n[3:].isdigit()]
    cpus = [int(n[3:]) for n in names]
    if not cpus:
        if exists(d + "/cpulist"):
            cpus = parse_list(read(d + "/cpulist"))
        elif exists(d + "/cpumap"):
            cpus = parse_mask(read(d + "/cpumap"))
    return sorted(cpus, key=glob_key)


MEMTOTAL = re.compile(r"MemTotal:[\t\n\f\r ]*([0-9]+) kB")


def node_memory(d):
    """cadvisor's getNodeMemInfo and GetHugePagesInfo: (bytes, [(page KiB, pages)])."""
    mem = 0
    if exists(d + "/meminfo"):
        m = MEMTOTAL.search(read(d + "/meminfo"))
        if not m:
            raise ValueError("meminfo without MemTotal")
        mem = int(m.group(1)) * 1024
    pools = []
    hd = d + "/hugepages"
    if os.path.isdir(path(hd)):
        for name in os.listdir(path(hd)):
            size = int(name.split("-")[1].split("kB")[0])
            raw = read(hd + "/" + name + "/nr_hugepages").strip()
            pools.append((size, int(raw)))
    return mem, sorted(pools)


def memory_json(memory, nid):
    if not memory:
        return ""
    mem, pools = memory.get(nid, (0, []))
    return ', "memory": %d, "hugepages": [%s]' % (mem, ", ".join(
        '{"page_size": %d, "num_pages": %d}' % p for p in pools))


def main():
    nodes = []  # (id, cores, distance row)
    memory = {}  # node id -> (bytes, pools), only with node directories
    node_dir = "/sys/devices/system/node"
    names = []
    if os.path.isdir(path(node_dir)):
        names = [n for n in os.listdir(path(node_dir)) if n.startswith("node") and n[4:].isdigit()]
    if names:
        found = 0
        for name in sorted(names):
            nid = int(name[4:])
            cores = cores_info(node_cpus(nid))
            found += sum(len(c["threads"]) for c in cores)
            add_cache_info(cores)
            dist = None
            dp = node_dir + "/" + name + "/distance"
            if exists(dp):
                dist = [parse_uint(x, 2**32 - 1) for x in trim_space(read(dp)).split(" ")]
            nodes.append((nid, cores, dist))
            memory[nid] = node_memory(node_dir + "/" + name)
        if found == 0:
            print("error: could not detect number of cpus")
            return
    else:
        dirs = [n for n in os.listdir(path("/sys/devices/system/cpu"))
                if n.startswith("cpu") and n[3:].isdigit()]
        groups = {}
        for name in sorted(dirs):
            cpu = int(name[3:])
            raw = cpu_file(cpu, "physical_package_id")
            if raw is None:
                continue
            groups.setdefault(atoi(raw), []).append(cpu)
        for pkg, cpus in groups.items():
            cores = cores_info(cpus)
            add_cache_info(cores)
            nodes.append((pkg, cores, None))

    # the kubelet's Discover: a later node overwrites a CPU's entry
    details = {}
    for nid, cores, _ in nodes:
        for core in cores:
            uncore = core["uncore"][0]["id"] if core["uncore"] else core["socket"]
            for cpu in core["threads"]:
                details[cpu] = {"cpu": cpu, "core": min(core["threads"]), "socket": core["socket"],
                                "numa": nid, "uncore": uncore}

    ids = sorted(n[0] for n in nodes)
    rows = {n[0]: n[2] for n in nodes}
    matrix = []
    for i, a in enumerate(ids):
        row = []
        for j, b in enumerate(ids):
            v = None
            if rows.get(a) is not None and len(rows[a]) == len(ids):
                v = rows[a][j]
            elif rows.get(b) is not None and len(rows[b]) == len(ids):
                v = rows[b][i]
            row.append(v if v is not None else (10 if i == j else 20))
        matrix.append(row)

    cpus = [details[c] for c in sorted(details)]
    out = '{"cpus": ['
    out += ",\n          ".join(
        '{"cpu": %d, "core": %d, "socket": %d, "numa": %d, "uncore": %d}'
        % (c["cpu"], c["core"], c["socket"], c["numa"], c["uncore"]) for c in cpus)
    out += '],\n "numa": ['
    out += ",\n          ".join(
        '{"id": %d, "distances": [%s]%s}' % (nid, ", ".join(str(v) for v in matrix[i]),
                                             memory_json(memory, nid))
        for i, nid in enumerate(ids))
    out += "]}"
    print(out)


if __name__ == "__main__":
    try:
        main()
    except ValueError as e:
        print("error: bad value %s" % e)
