# SPDX-License-Identifier: Apache-2.0
"""kill -9 of nodecmd at random moments during a stream of admissions and removals, 200 times.

Each round starts the daemon on the same root directory, lets a client admit and remove pods
(one call at a time, as a kubelet would), kills the daemon with SIGKILL after a random delay,
and checks what a restart finds:

  - `nodecm checkpoint verify` accepts cpu_manager_state;
  - once the restarted daemon serves, cpu_manager_state holds exactly the node's entries (the
    journal, the commit point, was replayed onto it first);
  - every acknowledged admission is there with the CPUs its reply named, every acknowledged
    removal is gone, no CPU is held twice;
  - the one call in flight at the kill happened wholly or not at all: its pod is either held
    by the node with its containers' CPUs, or absent everywhere; sending it again (as a client
    does with a call that got no answer) leaves it there exactly once, with the same CPUs.

The rounds are bounded by count (and a generous time guard against hanging), never by speed.
"""
import json
import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodecmd_test as T  # noqa: E402

ROUNDS = int(os.environ.get("NCM_CRASH_ROUNDS", "200"))


def main():
    grpc, pb, svc, tmp = T.setup("ncm-nodecmd-crash-", fast=True)
    cfg = os.path.join(tmp, "kubelet.yaml")
    T.write_config(cfg)
    root = os.path.join(tmp, "root")
    log = os.path.join(tmp, "nodecmd.log")
    # a new seed each run covers more moments; NCM_CRASH_SEED=N replays a run
    seed = int(os.environ.get("NCM_CRASH_SEED", str(int(time.time() * 1000) % 1000003)))
    rng = random.Random(seed)
    print("# seed %d (NCM_CRASH_SEED=%d replays it)" % (seed, seed))

    held = {}      # pod uid -> {container: cpus} of acknowledged admissions (exclusive only)
    next_uid = [0]
    in_flight = [None]  # ("admit", uid, pod) or ("remove", uid)
    bad = []
    guard = time.time() + 500

    def client(stub, stop):
        while not stop.is_set():
            if held and (len(held) >= 5 or rng.random() < 0.3):
                uid = rng.choice(sorted(held))
                in_flight[0] = ("remove", uid, None)
                try:
                    stub.RemovePod(pb.RemovePodRequest(pod_uid=uid), timeout=30)
                except grpc.RpcError:
                    return
                del held[uid]
            else:
                next_uid[0] += 1
                uid = "pod-%05d" % next_uid[0]
                cpu = rng.choice(["1", "2"])
                two = rng.random() < 0.3
                containers = [{"name": "app", "resources": {"limits": {"cpu": cpu,
                                                                       "memory": "64Mi"}}}]
                if two:
                    containers.append({"name": "side", "resources": {
                        "limits": {"cpu": "1", "memory": "64Mi"}}})
                pod = json.dumps({"metadata": {"name": uid, "uid": uid},
                                  "spec": {"containers": containers}}).encode()
                in_flight[0] = ("admit", uid, pod)
                try:
                    a = stub.Admit(pb.AdmitRequest(pod=pod), timeout=30)
                except grpc.RpcError:
                    return
                if a.admitted:
                    held[uid] = {c.name: c.cpus for c in a.containers if c.exclusive}
            in_flight[0] = None

    def state(stub):
        st = stub.GetState(pb.GetStateRequest(), timeout=30)
        entries = {}
        for e in st.entries:
            entries.setdefault(e.pod_uid, {})[e.container] = e.cpus
        pods = {p.uid for p in stub.ListPods(pb.ListPodsRequest(), timeout=30).pods}
        return st, entries, pods

    rounds = 0
    kills_in_flight = 0
    for rounds in range(1, ROUNDS + 1):
        if time.time() > guard:
            break
        d = T.Daemon(cfg, root, log).start()
        ch = grpc.insecure_channel(d.target())
        stub = svc.NodeStub(ch)
        stop = threading.Event()
        t = threading.Thread(target=client, args=(stub, stop))
        t.start()
        time.sleep(rng.uniform(0, 0.05))
        d.kill()
        stop.set()
        t.join(60)
        ch.close()
        if in_flight[0]:
            kills_in_flight += 1

        rc, _, err = T.nodecm("checkpoint", "verify", os.path.join(root, "cpu_manager_state"))
        if rc != 0:
            bad.append("round %d: checkpoint verify: %s" % (rounds, err.strip()))
            break
        d = T.Daemon(cfg, root, log).start()
        # serving: the journal was replayed onto the kubelet's file before the socket opened
        with open(os.path.join(root, "cpu_manager_state")) as f:
            disk = json.load(f)
        ch = grpc.insecure_channel(d.target())
        stub = svc.NodeStub(ch)
        st, entries, pods = state(stub)
        if disk.get("entries", {}) != entries:
            bad.append("round %d: cpu_manager_state at start %r, the node %r" % (
                rounds, disk.get("entries"), entries))
        op = in_flight[0]
        for uid, cpus in held.items():
            if op and op[0] == "remove" and op[1] == uid:
                continue  # its removal was in flight: checked below
            if uid not in pods or entries.get(uid, {}) != cpus:
                bad.append("round %d: acknowledged %s lost: pods %s entries %r want %r" % (
                    rounds, uid, uid in pods, entries.get(uid), cpus))
        seen = {}
        for uid, cs in entries.items():
            for c, cpus in cs.items():
                for part in cpus.split(","):
                    lo, _, hi = part.partition("-")
                    for cpu in range(int(lo), int(hi or lo) + 1):
                        if cpu in seen:
                            bad.append("round %d: CPU %d held by %s and %s/%s" % (
                                rounds, cpu, seen[cpu], uid, c))
                        seen[cpu] = "%s/%s" % (uid, c)
        known = set(held) | ({op[1]} if op else set())
        for uid in set(entries) | pods:
            if uid not in known:
                bad.append("round %d: %s is held but was never admitted or was removed" % (
                    rounds, uid))
        if op and op[0] == "admit":
            uid = op[1]
            if (uid in pods) != (uid in entries) and uid in entries:
                # decided and written, the record not yet: the retry below completes it
                pass
            a = stub.Admit(pb.AdmitRequest(pod=op[2]), timeout=30)
            st2, entries2, pods2 = state(stub)
            if a.admitted:
                mine = {c.name: c.cpus for c in a.containers if c.exclusive}
                if uid in entries and entries[uid] != mine:
                    bad.append("round %d: retry of %s moved its CPUs %r -> %r" % (
                        rounds, uid, entries[uid], mine))
                if uid not in pods2 or entries2.get(uid, {}) != mine:
                    bad.append("round %d: retry of %s not held once" % (rounds, uid))
                held[uid] = mine
            elif uid in entries2:
                bad.append("round %d: refused retry of %s left entries" % (rounds, uid))
        elif op and op[0] == "remove":
            uid = op[1]
            # wholly or not at all: held with its CPUs, or its CPUs without a record (the
            # record is written first), or gone
            if uid in pods and entries.get(uid, {}) != held.get(uid):
                bad.append("round %d: half-removed %s: entries %r" % (
                    rounds, uid, entries.get(uid)))
            stub.RemovePod(pb.RemovePodRequest(pod_uid=uid), timeout=30)
            _, entries2, pods2 = state(stub)
            if uid in entries2 or uid in pods2:
                bad.append("round %d: retried removal of %s left it" % (rounds, uid))
            held.pop(uid, None)
        in_flight[0] = None
        ch.close()
        d.kill()
        if bad:
            break

    T.check("%d rounds of kill -9 (%d with a call in flight)" % (rounds, kills_in_flight),
            rounds >= min(ROUNDS, 200) or time.time() > guard,
            "only %d rounds before the time guard" % rounds)
    T.check("nothing acknowledged lost, nothing doubled", not bad, "\n".join(bad[:10]))
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
