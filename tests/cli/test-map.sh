# The node map from the command line (docs/map.md): simulate --html and --html-steps, node status
# --html (with a root directory), what they write and refuse, and the 64-NUMA example (its
# generator, every CPU on its page, the page under 1 MB). The pages in a real browser:
# tests/integration/test-map-browser.py.
. "$(dirname "$0")/lib.sh"

EX="$DATA/../../examples"
TOOLS="$DATA/../../tools"

# count FILE TEXT: how many times TEXT occurs in FILE
count() {
        grep -o -F -- "$2" "$1" | wc -l | tr -d ' '
}

# check_holders PAGE STATE_LINE: every exclusive CPU of the state line is drawn as its holder's
check_holders() {
        printf '%s\n' "$2" | python3 -c '
import json, re, sys
state = json.loads(sys.stdin.readline())
page = open(sys.argv[1]).read()
drawn = dict(re.findall(r"data-cpu=\"(\d+)\" data-holder=\"([^\"]*)\"", page))
def cpus(s):
    out = []
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out
bad = []
for uid, ctrs in state["entries"].items():
    for name, s in ctrs.items():
        for c in cpus(s):
            if drawn.get(str(c)) != uid + "/" + name:
                bad.append((c, drawn.get(str(c)), uid + "/" + name))
for c in cpus(state["defaultCpuSet"]):
    if drawn.get(str(c)) not in ("shared", "reserved"):
        bad.append((c, drawn.get(str(c)), "shared"))
if bad:
    sys.exit("wrong holders: %r" % bad[:5])
' "$1" || fail "$1: holders differ from the state"
}

# ---- simulate --html ----------------------------------------------------------------------------

run simulate "$EX/web-db.yaml"
PLAIN=$OUT
run simulate "$EX/web-db.yaml" --html "$TMPD/web-db.html"
expect_rc 0 "simulate --html"
[ "$OUT" = "$PLAIN" ] || fail "simulate --html: the output changed"
[ -z "$ERR" ] || fail "simulate --html: stderr: $ERR"
head -c 15 "$TMPD/web-db.html" | grep -q '^<!DOCTYPE html>' || fail "simulate --html: not a page"
[ "$(count "$TMPD/web-db.html" 'data-cpu="')" = 32 ] || fail "web-db: not 32 CPUs drawn"
[ "$(count "$TMPD/web-db.html" '<li value=')" = 12 ] || fail "web-db: not 12 steps listed"
grep -q 'two-socket hyper-threaded web/database node' "$TMPD/web-db.html" ||
        fail "web-db: the description is not the title"
grep -q 'why (at its admission)' "$TMPD/web-db.html" || fail "web-db: no explanation"
grep -q -e '<script src' -e '<link' -e '@import' -e 'https\?://[a-z]' "$TMPD/web-db.html" &&
        fail "web-db: the page fetches something"
run simulate --json "$EX/web-db.yaml"
check_holders "$TMPD/web-db.html" "$(printf '%s\n' "$OUT" | tail -1)"
# the same scenario, the same bytes
"$NODECM" simulate "$EX/web-db.yaml" --html "$TMPD/again.html" >/dev/null
cmp -s "$TMPD/web-db.html" "$TMPD/again.html" || fail "simulate --html: two runs differ"

# ---- simulate --html-steps ----------------------------------------------------------------------

run simulate "$EX/web-db.yaml" --html-steps "$TMPD/steps"
expect_rc 0 "simulate --html-steps"
[ "$(ls "$TMPD/steps" | wc -l)" = 13 ] || fail "--html-steps: not 12 steps and an index"
grep -q '<b>step 3 of 12</b>' "$TMPD/steps/step-0003.html" || fail "--html-steps: step 3's nav"
grep -q 'href="step-0004.html"' "$TMPD/steps/step-0003.html" || fail "--html-steps: next link"
grep -q 'class="now"' "$TMPD/steps/step-0003.html" || fail "--html-steps: the step is not marked"
grep -q '>last step (11)</a>' "$TMPD/steps/index.html" || fail "--html-steps: the index"
[ "$(count "$TMPD/steps/step-0000.html" 'data-holder="5c0ae6b1-db00-4c1b-9a0e-000000000001/postgres"')" = 8 ] ||
        fail "--html-steps: step 0 does not show postgres-0's 8 CPUs"
[ "$(count "$TMPD/steps/step-0000.html" '<li value=')" = 1 ] || fail "--html-steps: step 0 lists later steps"

# ---- what is refused ------------------------------------------------------------------------------

run simulate "$EX/web-db.yaml" --html "$TMPD/none/x.html"
expect_rc 2 "--html into a missing directory"
expect_err_contains "--html" "--html into a missing directory"
[ -z "$OUT" ] || fail "--html into a missing directory: output printed"
: >"$TMPD/file"
run simulate "$EX/web-db.yaml" --html-steps "$TMPD/file"
expect_rc 2 "--html-steps on a file"
expect_err_contains "--html-steps" "--html-steps on a file"
run simulate "$EX/reserved-cpus-change.yaml" --html "$TMPD/failed.html"
expect_rc 1 "--html of a scenario that fails"
[ -e "$TMPD/failed.html" ] && fail "--html of a scenario that fails: a page was written"
run simulate "$EX/web-db.yaml" --html
expect_rc 2 "--html without FILE"

# ---- node status --html ---------------------------------------------------------------------------

CFG="$TMPD/kubelet.yaml"
printf '%s\n' "apiVersion: kubelet.config.k8s.io/v1beta1" "kind: KubeletConfiguration" \
        "cpuManagerPolicy: static" "reservedSystemCPUs: \"0\"" \
        "topologyManagerPolicy: single-numa-node" "enforcement: none" >"$CFG"
SYN="package:2 numa:1 core:4 pu:2"
run node init --root-dir "$TMPD/node" --config "$CFG" --synthetic "$SYN"
expect_rc 0 "node init"
run node admit "$EX/node/pod.yaml" --root-dir "$TMPD/node" --config "$CFG" --synthetic "$SYN"
expect_rc 0 "node admit"
run node status --html "$TMPD/node.html" --root-dir "$TMPD/node" --config "$CFG" --synthetic "$SYN"
expect_rc 0 "node status --html"
[ -z "$OUT" ] || fail "node status --html: printed [$OUT]"
[ "$(count "$TMPD/node.html" 'data-cpu="')" = 16 ] || fail "node status --html: not 16 CPUs"
grep -q 'data-legend="6b5f5a52-0000-4000-8000-00000000db01"' "$TMPD/node.html" ||
        fail "node status --html: the pod is not in the legend"
grep -q 'why (decided again now)' "$TMPD/node.html" || fail "node status --html: no explanation"
grep -q '<p class="gen">[0-9-]* [0-9:]* UTC</p>' "$TMPD/node.html" || fail "node status --html: no date"
run node status --json --root-dir "$TMPD/node" --config "$CFG" --synthetic "$SYN"
check_holders "$TMPD/node.html" "$OUT"
run node admit "$EX/node/pod.yaml" --html "$TMPD/x.html" --root-dir "$TMPD/node" --config "$CFG" --synthetic "$SYN"
expect_rc 2 "node admit --html"
expect_err_contains "--html is for status only" "node admit --html"
run node status --html "$TMPD/x.html" --json --root-dir "$TMPD/node" --config "$CFG" --synthetic "$SYN"
expect_rc 2 "node status --html --json"
run node status --html "$TMPD/none/x.html" --root-dir "$TMPD/node" --config "$CFG" --synthetic "$SYN"
expect_rc 2 "node status --html into a missing directory"
expect_err_contains "--html: " "node status --html into a missing directory"

# ---- 64 NUMA nodes ------------------------------------------------------------------------------

sh "$TOOLS/gen-map-64-numa.sh" >"$TMPD/gen.yaml"
cmp -s "$TMPD/gen.yaml" "$EX/many-numa/map-64-numa.yaml" ||
        fail "examples/many-numa/map-64-numa.yaml is not what tools/gen-map-64-numa.sh writes"
run simulate "$EX/many-numa/map-64-numa.yaml" --html "$TMPD/64.html"
expect_rc 0 "64 NUMA"
[ "$(count "$TMPD/64.html" 'data-cpu="')" = 1024 ] || fail "64 NUMA: not 1024 CPUs drawn"
[ "$(count "$TMPD/64.html" 'data-numa="')" = 64 ] || fail "64 NUMA: not 64 NUMA nodes drawn"
grep -q '<svg id="map" class="compact"' "$TMPD/64.html" || fail "64 NUMA: not folded"
[ "$(wc -c <"$TMPD/64.html")" -le 1048576 ] || fail "64 NUMA: the page is above 1 MB"
run simulate --json "$EX/many-numa/map-64-numa.yaml"
check_holders "$TMPD/64.html" "$(printf '%s\n' "$OUT" | tail -1)"

finish
