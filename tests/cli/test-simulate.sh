# nodecm simulate: goldens for every example (human, --json, --explain), state directories,
# restart, exit statuses, and one error line naming the field for each kind of bad input.
. "$(dirname "$0")/lib.sh"

EX="$DATA/../../examples"
S="$DATA/scenarios"

run simulate --help
expect_rc 0 "--help"
case "$OUT" in *"Usage: nodecm simulate"*) ;; *) fail "--help: no usage text" ;; esac
run simulate
expect_rc 2 "no SCENARIO"
expect_err_contains "missing SCENARIO" "no SCENARIO"
run simulate --nope "$EX/web-db.yaml"
expect_rc 2 "unknown option"
expect_err_contains "unknown option '--nope'" "unknown option"
run simulate "$EX/web-db.yaml" extra
expect_rc 2 "two scenarios"
run simulate "$TMPD/absent.yaml"
expect_rc 2 "missing file"
expect_err_contains "absent.yaml" "missing file"

# Every example, in every output mode, with a golden (the reference merge gives the same bytes).
for f in "$EX"/*.yaml; do
        name=$(basename "$f" .yaml)
        want=0
        [ "$name" = reserved-cpus-change ] && want=1
        for mode in human json explain json-explain; do
                case $mode in
                human) set -- ;;
                json) set -- --json ;;
                explain) set -- --explain ;;
                json-explain) set -- --json --explain ;;
                esac
                run simulate "$@" "$f"
                expect_rc $want "$name $mode"
                if [ $want = 0 ]; then
                        expect_golden "scenarios/golden/$name.$mode" "$name $mode"
                        [ -z "$ERR" ] || fail "$name $mode: stderr not empty: $ERR"
                        OUT1=$OUT
                        run simulate --reference-merge "$@" "$f"
                        [ "$OUT" = "$OUT1" ] || fail "$name $mode: reference merge differs"
                else
                        [ -z "$OUT" ] || fail "$name $mode: output on a failed run"
                        expect_err_contains 'steps[1].restart: start cpu manager error: not all reserved cpus: "0-3,8-11" are present in defaultCpuSet: "0,3-8,11-15"' "$name $mode"
                fi
        done
done

# The DESIGN.md example, JSON in, JSON out.
run simulate --json "$S/design.json"
expect_rc 0 "design example"
expect_golden "scenarios/golden/design.json-out" "design example"

# Standard input (relative paths then resolve against the current directory).
"$NODECM" simulate --json - <"$S/design.json" >"$TMPD/out" 2>"$TMPD/err"
RC=$?
OUT=$(cat "$TMPD/out")
expect_rc 0 "stdin"
expect_golden "scenarios/golden/design.json-out" "stdin"

# --state-dir: the kubelet's file, identical to what the state line says, checksum valid.
mkdir "$TMPD/state"
run simulate --json --state-dir "$TMPD/state" "$EX/restart-checkpoint.yaml"
expect_rc 0 "state dir"
[ -f "$TMPD/state/cpu_manager_state" ] || fail "state dir: no cpu_manager_state"
run checkpoint verify "$TMPD/state/cpu_manager_state"
expect_rc 0 "state dir: the file verifies"
run checkpoint show --json "$TMPD/state/cpu_manager_state"
case "$OUT" in *'"defaultCpuSet":{"text":"0,6-8,14-15"'*) ;; *) fail "state dir: file content: $OUT" ;; esac
# the same run without a state directory gives the same output
run simulate --json "$EX/restart-checkpoint.yaml"
OUT1=$OUT
run simulate --json --state-dir "$TMPD/state" "$EX/restart-checkpoint.yaml"
[ "$OUT" = "$OUT1" ] || fail "state dir changes the output"
# a failed admission leaves the file as it was (byte for byte)
cat >"$TMPD/rollback.yaml" <<'EOF'
node:
  topology: {synthetic: "package:2 numa:1 l3:1 core:4 pu:2"}
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0", topologyManagerPolicy: best-effort}
steps:
  - admit:
      metadata: {uid: p1}
      spec: {containers: [{name: a, resources: {limits: {cpu: "3", memory: 1G}}}]}
  - admit:
      metadata: {uid: p2}
      spec:
        containers:
          - {name: a, resources: {limits: {cpu: "4", memory: 1G}}}
          - {name: b, resources: {limits: {cpu: "20", memory: 1G}}}
EOF
mkdir "$TMPD/rb"
cat >"$TMPD/first.yaml" <<'EOF'
node:
  topology: {synthetic: "package:2 numa:1 l3:1 core:4 pu:2"}
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0", topologyManagerPolicy: best-effort}
steps:
  - admit:
      metadata: {uid: p1}
      spec: {containers: [{name: a, resources: {limits: {cpu: "3", memory: 1G}}}]}
EOF
mkdir "$TMPD/rb1"
run simulate --state-dir "$TMPD/rb1" "$TMPD/first.yaml"
run simulate --json --state-dir "$TMPD/rb" "$TMPD/rollback.yaml"
expect_rc 0 "rollback"
case "$OUT" in *'"pod": "p2", "admitted": false, "reason": "UnexpectedAdmissionError", "message": "Allocate failed due to not enough cpus available to satisfy request: requested=12, available=0, which is unexpected"'*) ;;
*) fail "rollback: $OUT" ;; esac
cmp -s "$TMPD/rb/cpu_manager_state" "$TMPD/rb1/cpu_manager_state" || fail "rollback: the file differs from the one before the step"
run simulate --state-dir "$TMPD/absent-dir" "$EX/web-db.yaml"
expect_rc 2 "state dir missing"
expect_err_contains "absent-dir" "state dir missing"

# --fail-on-reject: the output is complete, the status says a pod was refused.
run simulate --fail-on-reject "$EX/web-db.yaml"
expect_rc 1 "fail-on-reject"
expect_golden "scenarios/golden/web-db.human" "fail-on-reject output"
expect_err_contains "1 of 10 admissions refused" "fail-on-reject"
run simulate --fail-on-reject "$EX/init-sidecar.yaml"
expect_rc 0 "fail-on-reject, nothing refused"

# bad NAME RC MESSAGE < scenario: exit RC, no output, one line containing MESSAGE.
bad() {
        cat >"$TMPD/bad.yaml"
        run simulate "$TMPD/bad.yaml"
        expect_rc "$2" "$1"
        [ -z "$OUT" ] || fail "$1: output on a failed run: $OUT"
        expect_err_contains "$3" "$1"
}

NODE='node:
  topology: {synthetic: "package:2 numa:1 l3:1 core:4 pu:2"}'
POD='{metadata: {uid: p1}, spec: {containers: [{name: a, resources: {limits: {cpu: "2", memory: 1G}}}]}}'

bad "unknown cpu policy" 2 'node.kubelet.cpuManagerPolicy: unknown policy: "foo"' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: foo}
EOF
bad "unknown tm policy" 2 'node.kubelet.topologyManagerPolicy: unknown policy: "foo"' <<EOF
$NODE
  kubelet: {topologyManagerPolicy: foo}
EOF
bad "unknown tm scope" 2 'node.kubelet.topologyManagerScope: unknown scope: "node"' <<EOF
$NODE
  kubelet: {topologyManagerScope: node}
EOF
bad "unknown cpu option" 2 'node.kubelet.cpuManagerPolicyOptions: new static policy error: unknown CPU Manager Policy option: "fast"' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0", cpuManagerPolicyOptions: {fast: "true"}}
EOF
bad "alpha option without gate" 2 'CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" provided' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0", cpuManagerPolicyOptions: {align-by-socket: "true"}}
EOF
bad "unquoted option value" 2 'node.kubelet.cpuManagerPolicyOptions.full-pcpus-only: expected string, got boolean' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0", cpuManagerPolicyOptions: {full-pcpus-only: true}}
EOF
bad "unknown tm option" 2 'node.kubelet.topologyManagerPolicyOptions: unknown Topology Manager Policy option: "fast"' <<EOF
$NODE
  kubelet: {topologyManagerPolicy: restricted, topologyManagerPolicyOptions: {fast: "true"}}
EOF
bad "options to the none policy" 2 'node.kubelet.cpuManagerPolicyOptions: new none policy error: None policy: received unsupported options=map[full-pcpus-only:true]' <<EOF
$NODE
  kubelet: {cpuManagerPolicyOptions: {full-pcpus-only: "true"}}
EOF
bad "static without reservation" 2 'node.kubelet: [cpumanager] unable to determine reserved CPU resources for static policy' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static}
EOF
bad "static with zero reservation" 2 '[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, kubeReserved: {cpu: "0"}, systemReserved: {memory: 1Gi}}
EOF
bad "reserved CPUs not parseable" 2 'node.kubelet.reservedSystemCPUs: invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 0-x, error: strconv.Atoi: parsing "x": invalid syntax' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0-x"}
EOF
bad "reserved CPUs not on the machine" 2 'node.kubelet.reservedSystemCPUs: reserved-cpus: 16 is not a subset of online-cpus: 0-15' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "16"}
EOF
bad "bad reserved quantity" 2 'node.kubelet.kubeReserved.cpu: failed to parse quantity "1x" for "cpu" resource' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, kubeReserved: {cpu: 1x}}
EOF
bad "reserving a gpu" 2 'node.kubelet.systemReserved: cannot reserve "nvidia.com/gpu" resource' <<EOF
$NODE
  kubelet: {systemReserved: {nvidia.com/gpu: "1"}}
EOF
bad "locked gate" 2 'node.kubelet.featureGates: cannot set feature gate CPUManagerPolicyOptions to false, feature is locked to true' <<EOF
$NODE
  kubelet: {featureGates: {CPUManagerPolicyOptions: false}}
EOF
bad "misspelt field" 2 'node.kubelet: strict decoding error: unknown field "cpuManagerPolcy" (did you mean "cpuManagerPolicy"?)' <<EOF
$NODE
  kubelet: {cpuManagerPolcy: static}
EOF
# a scenario's node.kubelet is decoded strictly; --config-decoding lenient reads it as the
# kubelet reads its file (amazon-eks-ami's "CPUManagerPolicy": ignored, the none policy)
cat >"$TMPD/eks.yaml" <<EOF
$NODE
  kubelet: {CPUManagerPolicy: static}
steps: [{admit: $POD}]
EOF
run simulate "$TMPD/eks.yaml"
expect_rc 2 "strict node.kubelet"
expect_err_contains 'node.kubelet: strict decoding error: unknown field "CPUManagerPolicy"' \
        "strict node.kubelet"
run simulate --config-decoding lenient "$TMPD/eks.yaml"
expect_rc 0 "lenient node.kubelet"
case "$OUT" in *"p1"*) ;; *) fail "lenient node.kubelet: [$OUT]" ;; esac
expect_err_contains 'node.kubelet: unknown field "CPUManagerPolicy"' "lenient node.kubelet warning"
run simulate --config-decoding sloppy "$TMPD/eks.yaml"
expect_rc 2 "bad --config-decoding"

# The kubelet's resource-fit admission runs in a simulation as in the kubelet: with the none
# policy nothing else stops a pod that does not fit; node.capacity gives what the topology
# does not know (memory), less evictionHard's 100Mi.
cat >"$TMPD/fit.yaml" <<EOF
node:
  topology: {synthetic: "package:1 core:4 pu:1"}
  capacity: {memory: 4Gi}
steps:
- admit: {metadata: {uid: a}, spec: {containers: [{name: c, resources: {requests: {cpu: "3", memory: 3Gi}}}]}}
- admit: {metadata: {uid: b}, spec: {containers: [{name: c, resources: {requests: {memory: 2Gi}}}]}}
- admit: {metadata: {uid: c}, spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
EOF
run simulate --json "$TMPD/fit.yaml"
expect_rc 0 "resource fit"
case "$OUT" in
*'"pod": "b", "admitted": false, "reason": "OutOfmemory", "message": "Node didn'"'"'t have enough resource: memory, requested: 2147483648, used: 3221225472, capacity: 4190109696"'*'"pod": "c", "admitted": false, "reason": "OutOfcpu", "message": "Node didn'"'"'t have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000"'*) ;;
*) fail "resource fit: [$OUT]" ;;
esac
# fitAdmission: never, as behind a kubelet
sed 's/^  capacity: {memory: 4Gi}$/  capacity: {memory: 4Gi}\n  kubelet: {fitAdmission: never}/' "$TMPD/fit.yaml" >"$TMPD/fit-never.yaml"
run simulate --json "$TMPD/fit-never.yaml"
case "$OUT" in *'"pod": "c", "admitted": true'*) ;; *) fail "fitAdmission never: [$OUT]" ;; esac
bad "negative capacity" 2 'node.capacity.memory: -1: must not be negative' <<EOF
$NODE
  capacity: {memory: "-1"}
EOF

bad "align-by-socket with single-numa-node" 2 'Topolgy manager single-numa-node policy is incompatible with CPUManager align-by-socket policy option' <<EOF
$NODE
  kubelet:
    cpuManagerPolicy: static
    reservedSystemCPUs: "0"
    cpuManagerPolicyOptions: {align-by-socket: "true"}
    featureGates: {CPUManagerPolicyAlphaOptions: true}
    topologyManagerPolicy: single-numa-node
EOF
bad "memory manager" 2 'node.kubelet.memoryManagerPolicy: the total amount "0" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable feature' <<EOF
$NODE
  kubelet: {memoryManagerPolicy: Static}
EOF
bad "bad quantity" 2 'steps[0].admit.spec.containers[0].resources.limits.cpu: invalid quantity "2x"' <<EOF
$NODE
steps:
  - admit: {metadata: {uid: p1}, spec: {containers: [{name: a, resources: {limits: {cpu: 2x}}}]}}
EOF
bad "pod without uid" 2 'steps[1].admit.metadata.uid: required' <<EOF
$NODE
steps:
  - admit: $POD
  - admit: {metadata: {name: x}, spec: {containers: [{name: a}]}}
EOF
bad "duplicate container names" 2 'steps[0].admit.spec.containers[1].name: duplicate container name "a"' <<EOF
$NODE
steps:
  - admit: {metadata: {uid: p1}, spec: {containers: [{name: a}, {name: a}]}}
EOF
bad "unknown step" 2 'steps[1]: unknown step "evict" (expected admit, remove, removePod, restart or resize)' <<EOF
$NODE
steps:
  - admit: $POD
  - evict: p1
EOF
bad "two kinds in one step" 2 'steps[0]: a step is an object with one key' <<EOF
$NODE
steps:
  - {admit: $POD, restart: {}}
EOF
bad "remove without container" 2 'steps[0].remove.container: required' <<EOF
$NODE
steps:
  - remove: {pod: p1}
EOF
bad "unknown node field" 2 'node.devicez: unknown field' <<EOF
$NODE
  devicez: {}
EOF
bad "unknown top-level field" 2 'stepz: unknown field' <<EOF
$NODE
stepz: []
EOF
bad "two topology sources" 2 'node.topology: give one of synthetic, fsroot, xml, file or inline cpus/numa' <<EOF
node:
  topology: {synthetic: "core:2", xml: x.xml}
EOF
bad "bad synthetic" 2 'node.topology.synthetic' <<EOF
node:
  topology: {synthetic: "banana:2"}
EOF
bad "inline topology field" 2 'node.topology.cpus[0].core' <<EOF
node:
  topology: {cpus: [{cpu: 0, core: x, socket: 0, numa: 0, uncore: 0}]}
EOF
bad "restart with a bad configuration" 2 'steps[0].restart.kubelet.topologyManagerPolicy: unknown policy: "nope"' <<EOF
$NODE
steps:
  - restart: {kubelet: {topologyManagerPolicy: nope}}
EOF
bad "not a scenario" 2 'expected a scenario object, got array' <<EOF
- 1
EOF
bad "YAML syntax" 2 'bad.yaml:' <<EOF
node: [
EOF

# Devices: what the scheduler or the API server would refuse, and a bad devices section.
DEVNODE="$NODE
  devices:
    example.com/gpu: [{id: gpu0, numa: [0]}, {id: gpu1, numa: [1]}]"
bad "unknown extended resource" 2 'steps[0].admit.spec.containers[0].resources.limits.example.com/fpga: unknown resource: node.devices has no "example.com/fpga"' <<EOF
$DEVNODE
steps:
  - admit: {metadata: {uid: a}, spec: {containers: [{name: c, resources: {limits: {example.com/fpga: 1}}}]}}
EOF
bad "more devices than the node has" 2 'steps[0].admit.spec.containers[0].resources.limits.example.com/gpu: 3 devices requested, node.devices has 2' <<EOF
$DEVNODE
steps:
  - admit: {metadata: {uid: a}, spec: {containers: [{name: c, resources: {limits: {example.com/gpu: 3}}}]}}
EOF
bad "device requests differ from limits" 2 'steps[0].admit.spec.containers[0].resources.requests.example.com/gpu: invalid value "1": must be equal to example.com/gpu limit of 2' <<EOF
$DEVNODE
steps:
  - admit: {metadata: {uid: a}, spec: {containers: [{name: c, resources: {requests: {example.com/gpu: 1}, limits: {example.com/gpu: 2}}}]}}
EOF
bad "fractional devices" 2 'steps[0].admit: container "i": resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer' <<EOF
$DEVNODE
steps:
  - admit: {metadata: {uid: a}, spec: {initContainers: [{name: i, resources: {limits: {example.com/gpu: 500m}}}], containers: [{name: c}]}}
EOF
bad "duplicate device ids" 2 'node.devices: example.com/gpu: duplicate device ID "gpu0"' <<EOF
$NODE
  devices:
    example.com/gpu: [{id: gpu0, numa: [0]}, {id: gpu0, numa: [1]}]
EOF
bad "bad resource name" 2 'node.devices: the ResourceName "gpu" is invalid' <<EOF
$NODE
  devices:
    gpu: [{id: gpu0}]
EOF
bad "device without id" 2 'node.devices: example.com/gpu[0].id: required' <<EOF
$NODE
  devices:
    example.com/gpu: [{numa: [0]}]
EOF

# A refused pod gives its devices back: the next pod gets gpu0 again, the file forgets pod a.
cat >"$TMPD/devrb.yaml" <<EOF
$DEVNODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0-1", topologyManagerPolicy: best-effort}
steps:
  - admit: {metadata: {uid: a}, spec: {containers: [{name: c, resources: {limits: {example.com/gpu: 1, cpu: 1, memory: 1G}}}, {name: d, resources: {limits: {cpu: 40, memory: 1G}}}]}}
  - admit: {metadata: {uid: b}, spec: {containers: [{name: c, resources: {limits: {example.com/gpu: 2}}}]}}
EOF
mkdir "$TMPD/devsd"
run simulate --json --state-dir "$TMPD/devsd" "$TMPD/devrb.yaml"
expect_rc 0 "device rollback"
case "$OUT" in *'"pod": "b", "admitted": true, "containers": [{"name": "c", "exclusive": false, "cpus": "0-15", "numa": [0, 1], "devices": {"example.com/gpu": ["gpu0", "gpu1"]}}]'*) ;;
*) fail "device rollback: $OUT" ;; esac
run checkpoint verify "$TMPD/devsd/kubelet_internal_checkpoint"
expect_rc 0 "device checkpoint verifies"
run checkpoint show --json "$TMPD/devsd/kubelet_internal_checkpoint"
case "$OUT" in *'"a"'*) fail "device rollback: pod a in the checkpoint: $OUT" ;; esac

# States the kubelet refuses to start with: exit 1, one line, nothing on standard output.
bad "state overlaps" 1 'node.state: start cpu manager error: pod: p9, container: c cpuset: "1-2" overlaps with default cpuset "0-15"' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}
  state: {defaultCpuSet: "0-15", entries: {p9: {c: "1-2"}}}
EOF
bad "state misses CPUs" 1 'node.state: start cpu manager error: current set of available CPUs "0-15" doesn'"'"'t match with CPUs in state "0-7"' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}
  state: {defaultCpuSet: "0-7"}
EOF
bad "state without reserved CPUs" 1 'node.state: start cpu manager error: not all reserved cpus: "0" are present in defaultCpuSet: "1-15"' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}
  state: {defaultCpuSet: "1-15", entries: {p9: {c: "0"}}}
EOF
bad "state of another policy" 1 'node.state: could not restore state from checkpoint: configured policy "static" differs from state checkpoint policy "none"' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}
  state: {policyName: none, defaultCpuSet: ""}
EOF
bad "state with a bad checksum" 1 'node.state: could not restore state from checkpoint: checkpoint is corrupted' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}
  state: {policyName: static, defaultCpuSet: "0-15", checksum: 12345}
EOF
bad "state cpuset syntax" 1 'could not parse default cpu set "0-x"' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}
  state: {defaultCpuSet: "0-x"}
EOF
bad "state file absent" 2 'node.state.file' <<EOF
$NODE
  state: {file: absent/cpu_manager_state}
EOF

# kubelet generations: node.kubelet.kubeletVersion, and --kubelet-version over it. On the
# hybrid machine with reservedSystemCPUs 2,11,14,19, kubelet 1.36 gives a 2-CPU pod core 2-3,
# reserved CPU 2 included (kubernetes issue #140495); the newest gives E-cores 12-13.
gen_scenario() {
        cat <<EOG
node:
  topology: {file: "$DATA/cpumanager/topo/hybrid-6p8e.json"}
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "2,11,14,19"$1}
steps:
  - admit: $POD
EOG
}
gen_scenario ', kubeletVersion: "1.36"' >"$TMPD/gen.yaml"
run simulate --json "$TMPD/gen.yaml"
expect_rc 0 "kubeletVersion 1.36"
case "$OUT" in *'"cpus": "2-3"'*) ;; *) fail "kubeletVersion 1.36: $OUT" ;; esac
run simulate --json --kubelet-version 1.37 "$TMPD/gen.yaml"
case "$OUT" in *'"cpus": "12-13"'*) ;; *) fail "--kubelet-version over kubeletVersion: $OUT" ;; esac
gen_scenario '' >"$TMPD/gen.yaml"
run simulate --json "$TMPD/gen.yaml"
case "$OUT" in *'"cpus": "12-13"'*) ;; *) fail "newest by default: $OUT" ;; esac
run simulate --json --kubelet-version 1.32 "$TMPD/gen.yaml"
case "$OUT" in *'"cpus": "2-3"'*) ;; *) fail "--kubelet-version 1.32: $OUT" ;; esac
bad "kubeletVersion as a number" 2 'node.kubelet.kubeletVersion: expected string, got number (quote it, e.g. "1.35")' <<EOF
$NODE
  kubelet: {kubeletVersion: 1.35}
EOF
bad "kubeletVersion too old" 2 'node.kubelet.kubeletVersion: kubelet version 1.20: nodecm reproduces kubelet 1.32 and newer' <<EOF
$NODE
  kubelet: {kubeletVersion: "1.20"}
EOF
bad "option not in that release" 2 'node.kubelet.cpuManagerPolicyOptions: new static policy error: CPU Manager Policy Alpha-level Options not enabled, but option "strict-cpu-reservation" provided' <<EOF
$NODE
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0", kubeletVersion: "1.32",
            cpuManagerPolicyOptions: {strict-cpu-reservation: "true"}}
EOF
run simulate --kubelet-version 2 "$TMPD/gen.yaml"
expect_rc 2 "--kubelet-version 2"
expect_err_contains 'kubelet version "2": expected MAJOR.MINOR' "--kubelet-version 2"

# node.topology.rules: nodecm's reading of the machine on request (the kubelet's by default)
cat >"$TMPD/rules.yaml" <<'EOF'
node:
  topology: {synthetic: "package:2 numa:2 l3:1 core:2 pu:2", rules: nodecm}
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}
steps:
  - admit:
      metadata: {uid: p1}
      spec: {containers: [{name: a, resources: {limits: {cpu: "2", memory: 1G}}}]}
EOF
run simulate "$TMPD/rules.yaml"
expect_rc 0 "topology rules nodecm"
sed 's/rules: nodecm/rules: hwloc/' "$TMPD/rules.yaml" >"$TMPD/rules-bad.yaml"
run simulate "$TMPD/rules-bad.yaml"
expect_rc 2 "unknown topology rules"
expect_err_contains 'node.topology.rules: unknown rules "hwloc" (cadvisor or nodecm)' "unknown topology rules"

finish
