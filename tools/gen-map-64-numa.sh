#!/bin/sh
# Write examples/many-numa/map-64-numa.yaml: a busy 64-NUMA machine for the node map
# (docs/map.md): 1,024 CPUs, 16 GPUs and 8 NICs by NUMA locality, 120 pods of 2 to 24
# exclusive CPUs (some with a device, some Burstable) admitted with the restricted policy,
# then every seventh one removed again, so that the picture shows holes to fill.
#   tools/gen-map-64-numa.sh > examples/many-numa/map-64-numa.yaml
set -eu
cat <<'HEADER'
# A two-socket machine with 64 NUMA nodes and 1,024 CPUs (16 per NUMA node: 8 cores x 2
# threads), 16 GPUs (one on every fourth NUMA node) and 8 NICs, as the node map draws it:
#
#   nodecm simulate examples/many-numa/map-64-numa.yaml --html map.html
#
# The kubelet runs the static CPU manager with full-pcpus-only (whole cores), reserves core 0
# (CPUs 0-1), and the topology manager's restricted policy (max-allowable-numa-nodes: 64)
# keeps each container on the fewest NUMA nodes its CPUs and devices fit. 120 pods are
# admitted, then every seventh is removed again.
#
# Written by tools/gen-map-64-numa.sh.
description: 64 NUMA nodes, 1,024 CPUs, GPUs and NICs, 120 pods
node:
  topology:
    synthetic: "package:2 numa:32 core:8 pu:2"
  kubelet:
    cpuManagerPolicy: static
    cpuManagerPolicyOptions:
      full-pcpus-only: "true"
    reservedSystemCPUs: "0-1"
    topologyManagerPolicy: restricted
    topologyManagerScope: container
    topologyManagerPolicyOptions:
      max-allowable-numa-nodes: "64"
  devices:
    example.com/gpu:
HEADER
i=0
while [ $i -lt 16 ]; do
        echo "      - {id: gpu$i, numa: [$((i * 4))]}"
        i=$((i + 1))
done
echo "    example.com/nic:"
i=0
while [ $i -lt 8 ]; do
        echo "      - {id: nic$i, numa: [$((i * 8 + 2))]}"
        i=$((i + 1))
done
echo "steps:"
pod() { # NAME CPU [RESOURCE]
        dev=""
        [ -n "${3:-}" ] && dev=", $3: \"1\""
        echo "  - admit: {metadata: {name: $1, namespace: batch, uid: $1}, spec: {containers: [{name: app, resources: {limits: {cpu: \"$2\", memory: 1Gi$dev}}}]}}"
}
i=0
while [ $i -lt 120 ]; do
        case $((i % 10)) in
        0 | 9) pod "p$i" 2 ;;
        1 | 6) pod "p$i" 4 ;;
        2) pod "p$i" 8 ;;
        3) pod "p$i" 16 ;;
        4) pod "gpu$i" 6 example.com/gpu ;;
        5) echo "  - admit: {metadata: {name: web$i, namespace: web, uid: web$i}, spec: {containers: [{name: app, resources: {requests: {cpu: 500m, memory: 1Gi}}}]}}" ;;
        7) pod "net$i" 8 example.com/nic ;;
        8) pod "p$i" 24 ;;
        esac
        i=$((i + 1))
done
i=0
while [ $i -lt 120 ]; do
        case $((i % 10)) in
        4) echo "  - removePod: gpu$i" ;;
        5) echo "  - removePod: web$i" ;;
        7) echo "  - removePod: net$i" ;;
        *) echo "  - removePod: p$i" ;;
        esac
        i=$((i + 7))
done
