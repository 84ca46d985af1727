#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Group commit seen from clients (issue 27): admit+remove pairs per second of 1 and 4
python3-grpcio clients (threads, a channel each) on a node kept on ext4 (/var/tmp), and the
group sizes nodecmd's metrics report (nodecm_journal_syncs_total, _synced_calls_total).

  MODE=group|each NCM_NODECMD=build-bench/nodecmd NCM_NODECM=build/nodecm \
      NCM_API_DIR=lib/api /usr/bin/python3 bench/bench-group-commit.py
"""
import os, sys, threading, time, socket, http.client, re
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
import nodecmd_test as T
grpc, pb, svc, tmp = T.setup("ncm-bench-group-")
cfg = os.path.join(tmp, "k.yaml"); T.write_config(cfg, nodecmd={"commit": os.environ.get("MODE", "group")})
root = "/var/tmp/ncm-bench-group-commit-%d" % os.getpid()
os.system("rm -rf " + root)
d = T.Daemon(cfg, root, os.path.join(tmp, "log")).start()
def client(k, n):
    ch = grpc.insecure_channel(d.target()); st = svc.NodeStub(ch)
    for i in range(n):
        uid = "c%d-%d" % (k, i)
        st.Admit(pb.AdmitRequest(pod=T.pod_json(uid, "1").encode()), timeout=30)
        st.RemovePod(pb.RemovePodRequest(pod_uid=uid), timeout=30)
    ch.close()
class U(http.client.HTTPConnection):
    def __init__(s, p): super().__init__("localhost", timeout=30); s.p = p
    def connect(s): s.sock = socket.socket(socket.AF_UNIX); s.sock.connect(s.p)
def metrics():
    c = U(os.path.join(root, "metrics.sock")); c.request("GET", "/metrics"); t = c.getresponse().read().decode()
    return int(re.search(r"\nnodecm_journal_syncs_total (\d+)", t).group(1)), int(re.search(r"\nnodecm_journal_synced_calls_total (\d+)", t).group(1))
for nc in (1, 4):
    a = metrics(); t0 = time.time()
    ths = [threading.Thread(target=client, args=(k, 100)) for k in range(nc)]
    [t.start() for t in ths]; [t.join() for t in ths]
    dt = time.time() - t0; b = metrics()
    print("%d clients: %.0f pairs/s, %d syncs for %d calls (%.2f calls/sync)" % (nc, nc*100/dt, b[0]-a[0], b[1]-a[1], (b[1]-a[1])/max(1,b[0]-a[0])))
d.stop()
os.system("rm -rf " + root)
