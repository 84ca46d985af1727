# SPDX-License-Identifier: Apache-2.0
"""The node map in a real browser (Debian's chromium, headless): four scenes -- this machine
(`nodecm node status --html`), the web/database example (`simulate --html`), the 64-NUMA example,
and the live /map of a running nodecmd -- each loaded by Chromium, its DOM dumped and checked:
every CPU of the node drawn once, with its holder as the node's own JSON says, in the colour
the browser computes for its holder's legend swatch; every pod has its card, and every pod that
holds CPUs or devices its legend entry; the hover panel shows the pod; no script error. Each scene
is also screenshotted (into the build directory; tools/map-screenshots.sh makes docs/'s). Then
the live page's explanations (/map/explain, which its hover panel fetches) and its event stream:
one event after changes, carrying their count, and the page made again once."""
import html.parser
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

NODECM = os.environ.get("NCM_NODECM", "")
NODECMD = os.environ.get("NCM_NODECMD", "")
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.environ.get("NCM_TEST_BUILD", tempfile.gettempdir())
EX = os.path.join(SRC, "examples")
WEB_DB_TOPOLOGY = ("package:2 numa:1 l3:1 core:8 pu:2(indexes=0,16,1,17,2,18,3,19,4,20,5,21,6,"
                   "22,7,23,8,24,9,25,10,26,11,27,12,28,13,29,14,30,15,31)")

failures = []
procs = []


def check(name, cond, detail=""):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else " " + str(detail)[:2000]))
    sys.stdout.flush()
    if not cond:
        failures.append(name)
    return cond


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def nodecm(*args, ok=(0,)):
    p = subprocess.run([NODECM] + list(args), capture_output=True, text=True)
    if p.returncode not in ok:
        raise RuntimeError("nodecm %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def cpus_of(s):
    out = set()
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def truth_from_state(line, reserved):
    """CPU -> holder from a state line ({"op": "state", ...}); every CPU the state names."""
    state = json.loads(line)
    holders = {}
    for c in cpus_of(state["defaultCpuSet"]):
        holders[c] = "reserved" if c in reserved else "shared"
    for uid, ctrs in state["entries"].items():
        for name, s in ctrs.items():
            for c in cpus_of(s):
                # an init container's CPUs reused by an app container: either is right
                holders.setdefault(c, set())
                if isinstance(holders[c], str):
                    holders[c] = set()
                holders[c].add(uid + "/" + name)
    return holders


def truth_from_status(status):
    """CPU -> holder and the pods, from `nodecm node status --json`."""
    holders = {}
    for c in status["cpus"]:
        if c["use"] == "exclusive":
            holders[c["cpu"]] = {h["pod"] + "/" + h["container"] for h in c["holders"]}
        elif c["use"] == "free":
            holders[c["cpu"]] = "free"
        else:
            holders[c["cpu"]] = c["use"]
    return holders, [p["uid"] for p in status["pods"]]


class Dom(html.parser.HTMLParser):
    """What the checks read from a dumped DOM."""

    def __init__(self):
        super().__init__()
        self.cpus = {}      # cpu -> (holder, computed fill)
        self.dups = []
        self.legend = {}    # key -> computed swatch background
        self.cards = set()
        self.devices = {}
        self.attrs = {}     # of <html>
        self._legend = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.attrs = a
        if "data-cpu" in a:
            cpu = int(a["data-cpu"])
            if cpu in self.cpus:
                self.dups.append(cpu)
            self.cpus[cpu] = (a.get("data-holder"), a.get("data-fill"))
        if "data-device" in a:
            self.devices[a["data-device"]] = a.get("data-holder")
        if "data-legend" in a:
            self._legend = a["data-legend"]
        cls = (a.get("class") or "").split()
        if "sw" in cls and self._legend is not None:
            self.legend[self._legend] = a.get("data-bg")
            self._legend = None
        if "data-pod-uid" in a:
            self.cards.add(a["data-pod-uid"])


# Run in the page after it loaded: what the browser computed, and the hover panel at work.
PROBE = """<script>
document.querySelectorAll('rect[data-cpu]').forEach(function (r) {
  r.setAttribute('data-fill', getComputedStyle(r).fill); });
document.querySelectorAll('[data-legend] .sw').forEach(function (s) {
  s.setAttribute('data-bg', getComputedStyle(s).backgroundColor); });
var g = document.querySelector('#map [data-pod]'), tip = document.getElementById('tip');
if (g) {
  g.querySelector('rect').dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
  var card = document.getElementById('pod-' + g.dataset.pod);
  document.documentElement.setAttribute('data-tip', !tip.hidden &&
      tip.textContent.indexOf(card.querySelector('h3').textContent) >= 0 &&
      tip.querySelector('details') !== null && tip.querySelector('details').open ? 'shown' : 'not');
} else {
  document.documentElement.setAttribute('data-tip', 'no pod');
}
setTimeout(function () {
  var p = tip.querySelector('pre');
  document.documentElement.setAttribute('data-explained', p ? p.textContent.slice(0, 60) : '');
}, 2000);
</script>"""

CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]


def chromium(url, tmp, *extra):
    """Chromium on URL with a fresh profile; (stdout, script errors)."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp)
    p = subprocess.run([CHROMIUM] + CHROME_FLAGS + ["--user-data-dir=" + profile] +
                       list(extra) + [url], capture_output=True, text=True, timeout=120)
    shutil.rmtree(profile, ignore_errors=True)
    errors = [l for l in p.stderr.splitlines() if "CONSOLE" in l and ("Uncaught" in l or
                                                                        "Error" in l)]
    return p.stdout, errors


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def check_scene(name, page, holders, pods, tmp, window, url=None, probed_url=None):
    """Load PAGE (a file; PROBED_URL serves it with the probe) with the probe; check it
    against HOLDERS and PODS; screenshot it (URL, else PAGE)."""
    if not probed_url:
        with open(page) as f:
            text = f.read()
        probed = os.path.join(tmp, name + "-probed.html")
        with open(probed, "w") as f:
            f.write(text.replace("</body>", PROBE + "</body>"))
        probed_url = "file://" + probed
    # virtual time: the probe's timer fires, after the explanation a live page fetches
    out, errors = chromium(probed_url, tmp, "--dump-dom", "--virtual-time-budget=5000")
    check(name + ": no script error", not errors, errors)
    dom = Dom()
    dom.feed(out)
    check(name + ": the page loaded", "data-tip" in dom.attrs, out[:300])
    check(name + ": every CPU drawn once", set(dom.cpus) == set(holders) and not dom.dups,
          "missing %s extra %s dups %s" % (sorted(set(holders) - set(dom.cpus))[:10],
                                           sorted(set(dom.cpus) - set(holders))[:10], dom.dups))
    wrong = []
    for cpu, want in holders.items():
        got = dom.cpus.get(cpu, (None, None))[0]
        if (got not in want) if isinstance(want, set) else (got != want):
            wrong.append((cpu, got, want))
    check(name + ": each CPU's holder is the node's", not wrong, wrong[:5])
    bad = []
    for cpu, (holder, fill) in dom.cpus.items():
        key = holder.split("/")[0] if "/" in holder else holder
        if not fill or dom.legend.get(key) != fill:
            bad.append((cpu, holder, fill, dom.legend.get(key)))
    check(name + ": each CPU has its holder's colour", not bad, bad[:5])
    holding = {h.split("/")[0] for h, _ in dom.cpus.values() if "/" in h}
    holding |= {h.split("/")[0] for h in dom.devices.values() if h and "/" in h}
    check(name + ": every pod has its card", set(pods) <= dom.cards, set(pods) - dom.cards)
    check(name + ": every pod holding CPUs or devices is in the legend",
          holding <= set(dom.legend), holding - set(dom.legend))
    colours = [dom.legend[k] for k in holding if k in dom.legend]
    if len(colours) <= 12:
        check(name + ": the pods' colours differ", len(set(colours)) == len(colours), colours)
    if holding:
        check(name + ": hovering a CPU shows its pod", dom.attrs.get("data-tip") == "shown",
              dom.attrs.get("data-tip"))
        explained = dom.attrs.get("data-explained", "")
        check(name + ": ... and why it holds what it holds",
              explained.startswith("admit ") or explained.startswith("Decided again now"),
              explained)
    shot = os.path.join(OUT, "map-%s.png" % name)
    if os.path.exists(shot):
        os.unlink(shot)
    _, errors = chromium(url or "file://" + page, tmp, "--screenshot=" + shot,
                         "--window-size=%d,%d" % window)
    size = png_size(shot) if os.path.exists(shot) else None
    check(name + ": screenshot", size == window and os.path.getsize(shot) > 20000,
          (size, os.path.getsize(shot) if size else 0))
    return dom


def scene_vm(tmp):
    """This machine, as `nodecm node` sees it, with a pod when it has room."""
    cfg = os.path.join(tmp, "vm.yaml")
    with open(cfg, "w") as f:
        f.write("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\nenforcement: none\n")
    root = os.path.join(tmp, "vm-root")
    common = ["--root-dir", root, "--config", cfg]
    nodecm("node", "init", *common)
    # the pod needs 2 CPUs (one of its own): on a 1-CPU machine it is refused, which is fine
    nodecm("node", "admit", os.path.join(EX, "node", "pod.yaml"), *common, ok=(0, 1))
    page = os.path.join(tmp, "vm.html")
    nodecm("node", "status", "--html", page, *common)
    holders, pods = truth_from_status(json.loads(nodecm("node", "status", "--json", *common)))
    check_scene("vm", page, holders, pods, tmp, (1100, 700))


def scene_simulated(name, scenario, reserved, tmp, window):
    page = os.path.join(tmp, name + ".html")
    nodecm("simulate", scenario, "--html", page)
    last = nodecm("simulate", "--json", scenario).strip().splitlines()[-1]
    holders = truth_from_state(last, reserved)
    pods = list(json.loads(last)["entries"])
    dom = check_scene(name, page, holders, pods, tmp, window)
    return dom


def get(addr, path):
    host, port = addr.rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=30)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def metric(addr, name):
    _, body = get(addr, "/metrics")
    m = re.search(r"^%s (\S+)$" % re.escape(name), body.decode(), re.M)
    return float(m.group(1)) if m else None


def start_proxy(addr):
    """A server on another loopback port that serves the daemon's /map with the probe in it,
    forwards the rest, and ends event streams at once (204: EventSource does not retry)."""
    class Proxy(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.startswith("/map/events"):
                self.send_response(204)
                self.end_headers()
                return
            code, body = get(addr, self.path)
            if self.path == "/map":
                body = body.replace(b"</body>", PROBE.encode() + b"</body>")
            self.send_response(code)
            self.send_header("Content-Type", "text/html; charset=utf-8" if self.path == "/map"
                             else "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def scene_live(tmp):
    """nodecmd with the web/database node, its pods admitted through the control socket."""
    if not NODECMD:
        check("live: nodecmd built", False)
        return
    cfg = os.path.join(tmp, "live.yaml")
    with open(os.path.join(EX, "nodecmd", "web-db.yaml")) as f:
        text = f.read()
    with open(cfg, "w") as f:
        f.write(text.replace("nodecmd:\n", "nodecmd:\n  metricsAddress: 127.0.0.1:0\n"))
    root = os.path.join(tmp, "live-root")
    log = open(os.path.join(tmp, "nodecmd.log"), "w+")
    d = subprocess.Popen(["setpriv", "--pdeathsig", "KILL", "--", NODECMD, "--config", cfg,
                          "--root-dir", root, "--synthetic", WEB_DB_TOPOLOGY],
                         stderr=log)
    procs.append(d)
    sock = os.path.join(root, "nodecm.sock")
    addr = None
    for _ in range(400):
        log.seek(0)
        m = re.search(r"address=(127\.0\.0\.1:\d+)", log.read())
        if m and os.path.exists(sock):
            addr = m.group(1)
            break
        if d.poll() is not None:
            break
        time.sleep(0.05)
    if not check("live: nodecmd serves", addr is not None):
        log.seek(0)
        print(log.read())
        return
    pods_dir = os.path.join(EX, "nodecmd", "web-db")
    for p in sorted(os.listdir(pods_dir)):
        nodecm("node", "admit", os.path.join(pods_dir, p), "--connect", sock, ok=(0, 1))
    status = json.loads(nodecm("node", "status", "--json", "--connect", sock))
    holders, pods = truth_from_status(status)
    url = "http://%s/map" % addr
    # the live page as the browser gets it: every CPU and pod, with their holders
    out, errors = chromium(url, tmp, "--dump-dom")
    check("live /map: no script error", not errors, errors)
    dom = Dom()
    dom.feed(out)
    check("live /map: every CPU drawn once, as its holder",
          set(dom.cpus) == set(holders) and all(
              (dom.cpus[c][0] in h) if isinstance(h, set) else dom.cpus[c][0] == h
              for c, h in holders.items()), (sorted(dom.cpus.items())[:5], holders))
    check("live /map: every pod has its card", set(pods) <= dom.cards, set(pods) - dom.cards)
    check("live /map: it follows the node's events", "new EventSource('/map/events')" in out)
    # the same page through the colour and hover checks, served with the probe by a proxy of
    # the daemon (same origin: the hover fetches the pod's explanation from /map/explain)
    status_code, body = get(addr, "/map")
    page = os.path.join(tmp, "live.html")
    with open(page, "wb") as f:
        f.write(body)
    check("live /map: 200", status_code == 200)
    proxy = start_proxy(addr)
    check_scene("live", page, holders, pods, tmp, (1200, 900), url=url,
                probed_url="http://127.0.0.1:%d/map" % proxy.server_address[1])
    proxy.shutdown()
    uid = next(iter(sorted(pods)))
    code, text = get(addr, "/map/explain?pod=" + uid)
    check("live /map/explain: the pod's explanation", code == 200 and
          text.startswith(b"Decided again now") and b"admit " in text, (code, text[:200]))
    code2, text2 = get(addr, "/map/explain?pod=" + uid)
    check("live /map/explain: the same until the node changes", (code2, text2) == (code, text))
    check("live /map/explain: an unknown pod", get(addr, "/map/explain?pod=nope")[0] == 404)
    check("live /map/explain: no pod", get(addr, "/map/explain")[0] == 400)
    check("live /map/explain: a bad escape", get(addr, "/map/explain?pod=%zz")[0] == 400)

    # the event stream: one event after changes, carrying how many there were
    host, port = addr.rsplit(":", 1)
    s = http.client.HTTPConnection(host, int(port), timeout=30)
    s.request("GET", "/map/events")
    r = s.getresponse()
    check("live events: a stream", r.status == 200 and
          r.getheader("Content-Type") == "text/event-stream")
    check("live events: the client's retry", r.fp.readline() == b"retry: 2000\n" and
          r.fp.readline() == b"\n")
    renders = metric(addr, "nodecm_map_renders_total")
    changes_before = int(metric(addr, "nodecm_map_changes_total"))
    removed = [p for p in status["pods"] if p["name"].startswith("web-")]
    for p in removed:
        nodecm("node", "remove", p["uid"], "--connect", sock)
    changes = changes_before + len(removed)
    events = []
    while True:
        lines = []
        while True:
            line = r.fp.readline()
            if not line or line == b"\n":
                break
            lines.append(line.decode().rstrip("\n"))
        if not lines:
            break
        data = [l[6:] for l in lines if l.startswith("data: ")]
        if data:
            events.append(int(data[0]))
        if events and events[-1] >= changes:
            break
    s.close()
    check("live events: the last one counts every change", events and events[-1] == changes,
          events)
    check("live events: no more events than changes", 0 < len(events) <= len(removed), events)
    after = metric(addr, "nodecm_map_renders_total")
    check("live events: one page made per event", after - renders <= len(events),
          (renders, after, events))
    _, body = get(addr, "/map")
    gone = [p["uid"] for p in removed if ('data-pod-uid="%s"' % p["uid"]).encode() in body]
    check("live /map: the removed pods are gone", not gone, gone)
    d.send_signal(signal.SIGTERM)
    check("live: nodecmd stops", d.wait(timeout=60) == 0)


def main():
    global CHROMIUM
    CHROMIUM = shutil.which("chromium")
    if not CHROMIUM:
        skip("no chromium (tools/setup.sh installs Debian's)")
    if not NODECM:
        skip("NCM_NODECM not set (run through meson test)")
    tmp = tempfile.mkdtemp(prefix="map-browser-", dir=OUT if os.path.isdir(OUT) else None)
    try:
        scene_vm(tmp)
        scene_simulated("web-db", os.path.join(EX, "web-db.yaml"), {0, 16}, tmp, (1200, 900))
        scene_simulated("numa64", os.path.join(EX, "many-numa", "map-64-numa.yaml"), {0, 1},
                        tmp, (1280, 1100))
        scene_live(tmp)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("FAILED: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
