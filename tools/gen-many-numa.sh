#!/bin/sh
# Write examples/many-numa/*.yaml: machines with many NUMA nodes admitting and removing 1,000
# pods with the restricted topology manager policy (a sliding window of CPUs / 7 running pods:
# 73 on 512 CPUs, so that about two thirds of the machine is in use).
#   tools/gen-many-numa.sh NUMA_PER_SOCKET [PODS] > FILE
# (PODS: 1,000 by default; bench/RESULTS.md's streaming row uses 5,000.)
# Pods cycle through 1, 2, 4 and 8 exclusive CPUs, a 24-CPU pod that needs two NUMA nodes,
# a pod with an init container and two app containers, and a Burstable pod.
set -eu
per_socket=${1:-16}
pods=${2:-1000}
nodes=$((per_socket * 2))
cpus=$((nodes * 16))
window=$((cpus / 7))
cat <<HEADER
# A two-socket machine with $nodes NUMA nodes and $cpus CPUs (16 per NUMA node: 8 cores x 2
# threads), as "L3 as NUMA" or sub-NUMA clustering present large servers. The kubelet runs the
# static CPU manager (core 0, CPUs 0-1, reserved) and the topology manager's restricted policy,
# which the kubelet itself refuses past 8 NUMA nodes unless max-allowable-numa-nodes allows
# more, and then needs 2^$nodes hints per container.
#
# 1,000 pods are admitted and removed again, $window running at a time: pods of 1, 2, 4 and 8
# exclusive CPUs (one NUMA node each), 24 CPUs (two NUMA nodes), an init container followed by
# two app containers, and a Burstable pod on the shared pool.
#
#   nodecm simulate examples/many-numa/restricted-$nodes-numa.yaml
#
# Written by tools/gen-many-numa.sh $per_socket.
description: $nodes NUMA nodes, $pods pods admitted and removed with the restricted policy
node:
  topology:
    synthetic: "package:2 numa:$per_socket core:8 pu:2"
  kubelet:
    cpuManagerPolicy: static
    reservedSystemCPUs: "0-1"
    topologyManagerPolicy: restricted
    topologyManagerScope: container
    topologyManagerPolicyOptions:
      max-allowable-numa-nodes: "$nodes"
steps:
HEADER
i=0
while [ $i -lt $pods ]; do
        case $((i % 7)) in
        0) c=1 ;; 1) c=2 ;; 2) c=4 ;; 3) c=8 ;; 4) c=24 ;; 5) c=init ;; 6) c=burst ;;
        esac
        case $c in
        init)
                echo "  - admit: {metadata: {name: p$i, uid: p$i}, spec: {initContainers: [{name: init, resources: {limits: {cpu: \"2\", memory: 1Gi}}}], containers: [{name: app, resources: {limits: {cpu: \"2\", memory: 1Gi}}}, {name: side, resources: {limits: {cpu: \"1\", memory: 1Gi}}}]}}"
                ;;
        burst)
                echo "  - admit: {metadata: {name: p$i, uid: p$i}, spec: {containers: [{name: app, resources: {requests: {cpu: 500m, memory: 1Gi}}}]}}"
                ;;
        *)
                echo "  - admit: {metadata: {name: p$i, uid: p$i}, spec: {containers: [{name: app, resources: {limits: {cpu: \"$c\", memory: 1Gi}}}]}}"
                ;;
        esac
        if [ $i -ge $window ]; then
                echo "  - removePod: p$((i - window))"
        fi
        i=$((i + 1))
done
i=$((pods - window))
while [ $i -lt $pods ]; do
        echo "  - removePod: p$i"
        i=$((i + 1))
done
