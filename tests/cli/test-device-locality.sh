#!/bin/sh
# Device locality through `nodecm simulate` on issue 24's fake machines (tests/data/topologies:
# fakepci-2s4r, two sockets whose PCI roots are each local to one L3; fakepci-nonuma, no NUMA
# node at all). The issue's "done when": a Guaranteed pod with the NIC on socket 1's second
# root, as a device plugin's VF or as a CDI device, gets that root's local CPUs with
# deviceLocalCPUs: prefer and the kubelet's CPUs without, under every topology manager policy;
# a DRA GPU on NUMA node 1 under single-numa-node draws its CPUs from node 1 with
# draTopologyHints: align (node 0, the kubelet's choice, without). Then devices spanning NUMA
# nodes, the pod scope, --explain, nodecm node, resize, isolated CPUs near the devices, and bad
# input.
. "$(dirname "$0")/lib.sh"

X=$(mktemp -d /dev/shm/nodecm-loc-XXXXXX 2>/dev/null || mktemp -d "$TMPD/x-XXXXXX")
trap 'rm -rf "$TMPD" "$X"' EXIT
for m in fakepci-2s4r fakepci-nonuma; do
        mkdir "$X/$m"
        tar -xjf "$DATA/topologies/$m.tar.bz2" -C "$X/$m" || fail "extract $m"
done
R=$X/fakepci-2s4r/fakepci-2s4r
R2=$X/fakepci-nonuma/fakepci-nonuma

# scenario ROOT POLICY deviceLocalCPUs draTopologyHints DEVICES ANNOTATION CPUS EXTRA-LIMITS
scenario() {
        cat >"$TMPD/s.yaml" <<EOF
node:
  topology: {fsroot: $1}
  kubelet:
    cpuManagerPolicy: static
    reservedSystemCPUs: "0,16"
    topologyManagerPolicy: $2
    deviceLocalCPUs: $3
    draTopologyHints: $4
  devices: $5
steps:
- admit:
    metadata: {uid: p1, name: p, annotations: {nodecm.io/cdi-devices: '$6'}}
    spec:
      containers:
      - name: app
        resources:
          limits: {cpu: "$7", memory: 1Gi$8}
EOF
}

# expect_cpus WHAT CPUS [NUMA]: the admission's CPUs (and NUMA nodes)
expect_cpus() {
        run simulate --json "$TMPD/s.yaml"
        expect_rc 0 "$1"
        line=$(printf '%s\n' "$OUT" | head -1)
        case "$line" in
        *"\"cpus\": \"$2\", \"numa\": [${3:-}"*) ;;
        *) fail "$1: expected CPUs $2 ${3:+(NUMA $3)}, got: $line" ;;
        esac
        run simulate --json --reference-merge "$TMPD/s.yaml"
        [ "$(printf '%s\n' "$OUT" | head -1)" = "$line" ] || fail "$1: the reference merge differs"
}

NIC='{example.com/nic: [{id: "0000:c1:00.2", numa: [1]}, {id: "0000:c1:00.3", numa: [1]}]}'
ONE_NIC=', example.com/nic: "1"'

# the NIC from a device plugin (its ids are its VFs' PCI addresses), every policy
for pol in best-effort restricted single-numa-node; do
        scenario "$R" $pol prefer ignore "$NIC" '{}' 4 "$ONE_NIC"
        expect_cpus "plugin NIC, $pol, prefer" "12-13,28-29" 1
        scenario "$R" $pol ignore ignore "$NIC" '{}' 4 "$ONE_NIC"
        expect_cpus "plugin NIC, $pol, ignore: the kubelet's" "8-9,24-25" 1
done
scenario "$R" none prefer ignore "$NIC" '{}' 4 "$ONE_NIC"
expect_cpus "plugin NIC, none, prefer" "12-13,28-29" 1
scenario "$R" none ignore ignore "$NIC" '{}' 4 "$ONE_NIC"
expect_cpus "plugin NIC, none, ignore: the kubelet's" "1-2,17-18" 0

# the NIC as a CDI device (a DRA claim's VF: /dev/vfio/40 of a spec in /var/run/cdi)
for pol in none best-effort restricted single-numa-node; do
        scenario "$R" $pol prefer align '{}' '{"app": ["example.com/nic=vf2"]}' 4 ''
        expect_cpus "CDI NIC, $pol, prefer" "12-13,28-29" 1
done
scenario "$R" none ignore ignore '{}' '{"app": ["example.com/nic=vf2"]}' 4 ''
expect_cpus "CDI NIC, none, both off: the kubelet's" "1-2,17-18" 0

# the DRA GPU on NUMA node 1 under single-numa-node (its driver's "common" device has no node)
GPU1='{"app": ["example.com/gpu=gpu1", "example.com/gpu=common"]}'
for pol in single-numa-node restricted best-effort; do
        scenario "$R" $pol ignore align '{}' "$GPU1" 4 ''
        expect_cpus "DRA GPU, $pol, align" "8-9,24-25" 1
done
scenario "$R" single-numa-node ignore ignore '{}' "$GPU1" 4 ''
expect_cpus "DRA GPU, ignore: the kubelet's node 0" "1-2,17-18" 0
# more CPUs than node 1 has free: single-numa-node cannot admit it next to the GPU
scenario "$R" single-numa-node ignore align '{}' "$GPU1" 18 ''
run simulate --json "$TMPD/s.yaml"
expect_rc 0 "DRA GPU, too many CPUs"
case "$OUT" in *'"admitted": false, "reason": "TopologyAffinityError"'*) ;;
*) fail "DRA GPU, too many CPUs: not refused: $OUT" ;; esac

# a plugin's GPU whose Allocate answer names a CDI device (the stand-in plugin's does)
GPU='{example.com/gpu: [{id: gpu0, numa: [0]}, {id: gpu1, numa: [1]}]}'
scenario "$R" single-numa-node prefer ignore "$GPU" '{}' 4 ', example.com/gpu: "1"'
expect_cpus "plugin GPU via its CDI device, prefer" "4-5,20-21" 0
scenario "$R" single-numa-node ignore ignore "$GPU" '{}' 4 ', example.com/gpu: "1"'
expect_cpus "plugin GPU, ignore" "1-2,17-18" 0

# no NUMA node at all: the NIC's root is local to the last L3
scenario "$R2" none prefer ignore '{example.com/nic: [{id: "0000:61:00.0"}]}' '{}' 4 "$ONE_NIC"
expect_cpus "no NUMA, prefer" "12-13,28-29" 0
scenario "$R2" none ignore ignore '{example.com/nic: [{id: "0000:61:00.0"}]}' '{}' 4 "$ONE_NIC"
expect_cpus "no NUMA, ignore" "1-2,17-18" 0

# a DRA device on both NUMA nodes (devicePCI: two functions): either node alone is preferred,
# as the kubelet prefers for a plugin's device that spans them; with the node-1 GPU, node 1
cat >"$TMPD/s.yaml" <<EOF
node:
  topology: {fsroot: $R}
  kubelet:
    cpuManagerPolicy: static
    reservedSystemCPUs: "0,16"
    topologyManagerPolicy: single-numa-node
    draTopologyHints: align
    devicePCI: {"example.com/fpga=f0": ["0000:41:00.0", "0000:81:00.0"]}
steps:
- admit:
    metadata: {uid: p1, name: a, annotations: {nodecm.io/cdi-devices: '{"app": ["example.com/fpga=f0"]}'}}
    spec: {containers: [{name: app, resources: {limits: {cpu: "2", memory: 1Gi}}}]}
- admit:
    metadata: {uid: p2, name: b, annotations: {nodecm.io/cdi-devices: '{"app": ["example.com/fpga=f0", "example.com/gpu=gpu1"]}'}}
    spec: {containers: [{name: app, resources: {limits: {cpu: "2", memory: 1Gi}}}]}
EOF
run simulate --json --explain "$TMPD/s.yaml"
expect_rc 0 "spanning device"
case "$OUT" in *'"example.com/fpga": [{"numa": [0], "preferred": true}, {"numa": [1], "preferred": true}, {"numa": [0, 1], "preferred": false}]'*) ;;
*) fail "spanning device: hints: $OUT" ;; esac
line=$(printf '%s\n' "$OUT" | sed -n 2p)
case "$line" in *'"pod": "p2", "admitted": true, "containers": [{"name": "app", "exclusive": true, "cpus": "8,24", "numa": [1]'*) ;;
*) fail "spanning device with the GPU: $line" ;; esac

# the pod scope: two containers whose DRA devices sit on different nodes
cat >"$TMPD/s.yaml" <<EOF
node:
  topology: {fsroot: $R}
  kubelet:
    cpuManagerPolicy: static
    reservedSystemCPUs: "0,16"
    topologyManagerPolicy: single-numa-node
    topologyManagerScope: pod
    draTopologyHints: align
steps:
- admit:
    metadata: {uid: p1, name: a, annotations: {nodecm.io/cdi-devices: '{"a": ["example.com/gpu=gpu1"], "b": ["example.com/nic=vf2"]}'}}
    spec: {containers: [{name: a, resources: {limits: {cpu: "2", memory: 1Gi}}}, {name: b, resources: {limits: {cpu: "2", memory: 1Gi}}}]}
- admit:
    metadata: {uid: p2, name: b, annotations: {nodecm.io/cdi-devices: '{"a": ["example.com/gpu=gpu0"], "b": ["example.com/nic=vf3"]}'}}
    spec: {containers: [{name: a, resources: {limits: {cpu: "2", memory: 1Gi}}}, {name: b, resources: {limits: {cpu: "2", memory: 1Gi}}}]}
EOF
run simulate --json "$TMPD/s.yaml"
expect_rc 0 "pod scope"
case "$(printf '%s\n' "$OUT" | sed -n 1p)" in *'"admitted": true'*'"numa": [1]'*'"numa": [1]'*) ;;
*) fail "pod scope, both on node 1: $OUT" ;; esac
case "$(printf '%s\n' "$OUT" | sed -n 2p)" in *'"admitted": false, "reason": "TopologyAffinityError"'*) ;;
*) fail "pod scope, devices on two nodes: $OUT" ;; esac

# --explain: which device drew which CPUs (their local CPUs together are the first step: the
# packing takes the GPU's L3 first), where each DRA device is
scenario "$R" single-numa-node prefer align "$NIC" '{"app": ["example.com/gpu=gpu1"]}' 6 "$ONE_NIC"
run simulate --explain "$TMPD/s.yaml"
expect_rc 0 "explain"
for want in "dra hints: example.com/gpu: [1]*" \
        "device example.com/nic=0000:c1:00.2: PCI 0000:c1:00.2 by device ID, local CPUs 12-15,28-31: drew none" \
        "device example.com/gpu=gpu1: PCI 0000:81:00.0 by CDI /etc/cdi/example-gpu.yaml: /dev/dri/renderD129, local CPUs 8-11,24-27: drew 8-10,24-26" \
        "takeByTopologyNUMAPacked(6) from 8-15,24-31:" \
        "example.com/gpu=gpu1: PCI 0000:81:00.0 (NUMA 1) by CDI /etc/cdi/example-gpu.yaml: /dev/dri/renderD129: aligned with the hint"; do
        case "$OUT" in *"$want"*) ;; *) fail "explain: no \"$want\" in: $OUT" ;; esac
done

# nodecm node: the --fsroot machine is the one whose devices are located
cat >"$TMPD/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
rootDirectory: $TMPD/node
enforcement: none
cpuManagerPolicy: static
reservedSystemCPUs: "0,16"
topologyManagerPolicy: single-numa-node
draTopologyHints: align
EOF
cat >"$TMPD/pod.yaml" <<EOF
metadata: {uid: p1, name: train, annotations: {nodecm.io/cdi-devices: '{"app": ["example.com/gpu=gpu1"]}'}}
spec: {containers: [{name: app, resources: {limits: {cpu: "2", memory: 1Gi}}}]}
EOF
run node init --fsroot "$R" --config "$TMPD/kubelet.yaml"
expect_rc 0 "node init"
run node admit --fsroot "$R" --config "$TMPD/kubelet.yaml" "$TMPD/pod.yaml"
expect_rc 0 "node admit"
case "$OUT" in *"app exclusive 8,24 (NUMA 1)"*) ;; *) fail "node admit: $OUT" ;; esac
# the record keeps the pod's CDI devices
grep -q 'nodecm.io/cdi-devices' "$TMPD/node/nodecm_pods" "$TMPD/node/nodecm_pods_journal" 2>/dev/null ||
        fail "node admit: nodecm_pods lost the CDI devices"

# nodecm node resize: a pod that names no CDI devices (as the CRI proxy's updates name none)
# keeps its own, in the decision and in the record
sed -e "s|rootDirectory: .*|rootDirectory: $TMPD/node2|" "$TMPD/kubelet.yaml" >"$TMPD/kubelet2.yaml"
printf 'deviceLocalCPUs: prefer\nfeatureGates: {InPlacePodVerticalScalingExclusiveCPUs: true}\n' >>"$TMPD/kubelet2.yaml"
cat >"$TMPD/pod4.yaml" <<EOF
metadata: {uid: p1, name: train}
spec: {containers: [{name: app, resources: {limits: {cpu: "4", memory: 1Gi}}}]}
EOF
run node init --fsroot "$R" --config "$TMPD/kubelet2.yaml"
expect_rc 0 "node init, resize"
run node admit --fsroot "$R" --config "$TMPD/kubelet2.yaml" "$TMPD/pod.yaml"
expect_rc 0 "node admit, resize"
run node resize --fsroot "$R" --config "$TMPD/kubelet2.yaml" --explain "$TMPD/pod4.yaml"
expect_rc 0 "node resize"
for want in "resize train: resized: app exclusive 8-9,24-25 (NUMA 1)" \
        "app: dra hints: example.com/gpu: [1]*" "drew 9,25"; do
        case "$OUT" in *"$want"*) ;; *) fail "node resize: no \"$want\" in: $OUT" ;; esac
done
last=$(tail -n 1 "$TMPD/node2/nodecm_pods_journal" 2>/dev/null)
case "$last" in *'nodecm.io/cdi-devices'*'"cpu": "4"'*) ;;
*) fail "node resize: the record lost the CDI devices: $last" ;; esac

# in-place resize with locality on (docs/cpu-manager.md "CPUs near the devices"): the CPUs a
# resize chooses are chosen as at admission. 2 -> 10 adds the NIC's CPUs first, then the rest of
# its node; 10 -> 6 keeps the promise and, of the others, those near the NIC. The kubelet's
# choice (ignore) packs from the node's first cores instead.
# resize_scenario deviceLocalCPUs
resize_scenario() {
        cat >"$TMPD/s.yaml" <<EOF
node:
  topology: {fsroot: $R}
  kubelet:
    cpuManagerPolicy: static
    reservedSystemCPUs: "0,16"
    topologyManagerPolicy: single-numa-node
    deviceLocalCPUs: $1
    featureGates: {InPlacePodVerticalScalingExclusiveCPUs: true}
  devices: $NIC
steps:
- admit:
    metadata: {uid: p1, name: p}
    spec: {containers: [{name: app, resources: {limits: {cpu: "2", memory: 1Gi$ONE_NIC}}}]}
- resize:
    metadata: {uid: p1, name: p}
    spec: {containers: [{name: app, resources: {limits: {cpu: "10", memory: 1Gi$ONE_NIC}}}]}
- resize:
    metadata: {uid: p1, name: p}
    spec: {containers: [{name: app, resources: {limits: {cpu: "6", memory: 1Gi$ONE_NIC}}}]}
EOF
}
resize_scenario prefer
run simulate "$TMPD/s.yaml"
expect_rc 0 "resize, prefer"
for want in "step 0: admit p: admitted: app exclusive 12,28 (NUMA 1)" \
        "step 1: resize p: resized: app exclusive 8,12-15,24,28-31 (NUMA 1)" \
        "step 2: resize p: resized: app exclusive 12-14,28-30 (NUMA 1)"; do
        case "$OUT" in *"$want"*) ;; *) fail "resize, prefer: no \"$want\" in: $OUT" ;; esac
done
run simulate --explain "$TMPD/s.yaml"
expect_rc 0 "resize, prefer, explain"
for want in "upsize: keeps 12,28, adds 8,13-15,24,29-31 (NUMA 1)" \
        "device example.com/nic=0000:c1:00.2: PCI 0000:c1:00.2 by device ID, local CPUs 12-15,28-31: drew 13-15,29-31" \
        "downsize: keeps the promise and 12-14,28-30 in all, gives back 8,15,24,31" \
        "device example.com/nic=0000:c1:00.2: PCI 0000:c1:00.2 by device ID, local CPUs 12-15,28-31: drew 13-14,29-30"; do
        case "$OUT" in *"$want"*) ;; *) fail "resize, prefer, explain: no \"$want\" in: $OUT" ;; esac
done
resize_scenario ignore
run simulate "$TMPD/s.yaml"
expect_rc 0 "resize, ignore"
for want in "step 0: admit p: admitted: app exclusive 8,24 (NUMA 1)" \
        "step 1: resize p: resized: app exclusive 8-12,24-28 (NUMA 1)" \
        "step 2: resize p: resized: app exclusive 8-10,24-26 (NUMA 1)"; do
        case "$OUT" in *"$want"*) ;; *) fail "resize, ignore: no \"$want\" in: $OUT" ;; esac
done

# a resize keeps the DRA devices: a resized pod that names none keeps its own (their hints
# still count: an upsize beyond the GPU's node is refused), one naming others is an error
cat >"$TMPD/s.yaml" <<EOF
node:
  topology: {fsroot: $R}
  kubelet:
    cpuManagerPolicy: static
    reservedSystemCPUs: "0,16"
    topologyManagerPolicy: single-numa-node
    draTopologyHints: align
    deviceLocalCPUs: prefer
    featureGates: {InPlacePodVerticalScalingExclusiveCPUs: true}
steps:
- admit:
    metadata: {uid: p1, name: train, annotations: {nodecm.io/cdi-devices: '{"app": ["example.com/gpu=gpu1"]}'}}
    spec: {containers: [{name: app, resources: {limits: {cpu: "2", memory: 1Gi}}}]}
- resize:
    metadata: {uid: p1, name: train}
    spec: {containers: [{name: app, resources: {limits: {cpu: "6", memory: 1Gi}}}]}
- resize:
    metadata: {uid: p1, name: train}
    spec: {containers: [{name: app, resources: {limits: {cpu: "18", memory: 1Gi}}}]}
EOF
run simulate --explain "$TMPD/s.yaml"
expect_rc 0 "resize with a DRA GPU"
step1=$(printf '%s\n' "$OUT" | sed -n '/^step 1:/,/^step 2:/p')
for want in "step 1: resize train: resized: app exclusive 8-10,24-26 (NUMA 1)" \
        "    app: dra hints: example.com/gpu: [1]*
    app: merged [1]*" \
        "device example.com/gpu=gpu1: PCI 0000:81:00.0 by CDI /etc/cdi/example-gpu.yaml: /dev/dri/renderD129, local CPUs 8-11,24-27: drew 9-10,25-26" \
        "resize: the devices stay (DRA devices are not resized)" \
        "step 2: resize train: not resized: Infeasible: Resources cannot be allocated with Topology locality"; do
        case "$step1" in *"$want"*) ;; *) fail "resize with a DRA GPU: no \"$want\" in: $step1" ;; esac
done
sed -i 's|metadata: {uid: p1, name: train}$|metadata: {uid: p1, name: train, annotations: {nodecm.io/cdi-devices: '"'"'{"app": ["example.com/gpu=gpu0"]}'"'"'}}|' "$TMPD/s.yaml"
run simulate "$TMPD/s.yaml"
expect_rc 2 "resize naming other DRA devices"
expect_err_contains "steps[1].resize: resize of pod 'p1': container 'app': its CDI devices may not change" "resize naming other DRA devices"

# isolatedCPUs with deviceLocalCPUs: prefer (docs/cpu-manager.md, "With isolated CPUs"):
# isolation restricts the candidates, locality orders them
# iso_scenario ISOLATED MODE ANNOTATION CPUS: the NIC's VF, single-numa-node
iso_scenario() {
        printf '%s\n' "$1" >"$R/sys/devices/system/cpu/isolated"
        scenario "$R" single-numa-node prefer ignore "$NIC" '{}' "$4" "$ONE_NIC"
        sed -i "s/^    deviceLocalCPUs: prefer\$/&\n    isolatedCPUs: $2/" "$TMPD/s.yaml"
        [ -z "$3" ] || sed -i "s|annotations: {|&nodecm.io/isolated-cpus: $3, |" "$TMPD/s.yaml"
}
# the NIC's L3 is isolated: a container that asks gets it, one that does not never does
iso_scenario 12-15,28-31 exclusive-only require 4
expect_cpus "NIC on isolated CPUs, require" "12-13,28-29" 1
iso_scenario 12-15,28-31 exclusive-only '' 4
expect_cpus "NIC on isolated CPUs, not asking" "8-9,24-25" 1
run simulate --explain "$TMPD/s.yaml"
case "$OUT" in *"local CPUs 12-15,28-31: drew none (isolatedCPUs keeps 12-15,28-31 from it)"*) ;;
*) fail "NIC on isolated CPUs: explain: $OUT" ;; esac
iso_scenario 12-15,28-31 exclude prefer 4
expect_cpus "NIC on isolated CPUs, exclude" "8-9,24-25" 1
# the pool is node 1's other L3: an isolated container never takes the NIC's CPUs
iso_scenario 8-11,24-27 exclusive-only require 4
expect_cpus "NIC off the isolated pool, require" "8-9,24-25" 1
iso_scenario 8-11,24-27 exclusive-only '' 4
expect_cpus "NIC off the isolated pool, not asking" "12-13,28-29" 1
rm -f "$R/sys/devices/system/cpu/isolated"

# bad input: one line naming the field
scenario "$R" single-numa-node maybe ignore '{}' '{}' 2 ''
run simulate "$TMPD/s.yaml"
expect_rc 2 "bad deviceLocalCPUs"
expect_err_contains 'node.kubelet.deviceLocalCPUs: unknown value "maybe" (ignore or prefer)' "bad deviceLocalCPUs"
scenario "$R" single-numa-node ignore align '{}' '{"db": ["example.com/gpu=gpu1"]}' 2 ''
run simulate "$TMPD/s.yaml"
expect_rc 2 "annotation for an unknown container"
expect_err_contains 'steps[0].admit.metadata.annotations[nodecm.io/cdi-devices]: the pod has no container "db"' "annotation for an unknown container"
scenario "$R" single-numa-node ignore align '{}' '{"app": ["gpu1"]}' 2 ''
run simulate "$TMPD/s.yaml"
expect_rc 2 "unqualified CDI name"
expect_err_contains 'unqualified device "gpu1", missing vendor' "unqualified CDI name"
printf 'node:\n  topology: {synthetic: "package:1 core:2 pu:1", pci: [{address: "3b:00"}]}\n  kubelet: {}\nsteps: []\n' >"$TMPD/s.yaml"
run simulate "$TMPD/s.yaml"
expect_rc 2 "bad inline pci"
expect_err_contains "node.topology.pci[0].address: not a PCI address" "bad inline pci"
finish
