#!/usr/bin/env bash
# Races kruise-manager's workloads against kube-controller-manager's on one local control plane and one set
# of simulated nodes (release build): Deployment vs CloneSet ReCreate and InPlaceIfPossible, StatefulSet
# (OrderedReady and Parallel) vs Advanced StatefulSet (Parallel, maxUnavailable 10%, in place), DaemonSet vs
# Advanced DaemonSet. For each: the time to create all pods Ready, the time to roll out a new image, and the
# controller's API writes per pod (from the API server's audit log). Prints a table at the end.
#
# Environment: KRUISE_E2E_RACE_PODS (default 1000) pods per replicated workload; KRUISE_E2E_RACE_NODES
# (default 50) simulated nodes, and so pods per daemon set; KRUISE_E2E_RACE_ONLY=deployment,cloneset-inplace
# races only those (names: deployment, cloneset-recreate, cloneset-inplace, statefulset-ordered,
# statefulset-parallel, asts-inplace, daemonset, ads-standard, ads-inplace); MEASURE_PROFILE=dev races the
# debug build. Not part of the test command: with 1,000 pods it takes about an hour, most of it the
# OrderedReady StatefulSet.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=(--release)
if [ "${MEASURE_PROFILE:-release}" = dev ]; then profile=(); fi
KRUISE_CP_KCM_CONTROLLERS="garbagecollector,namespace,serviceaccount,serviceaccount-token,job,deployment,replicaset,statefulset,daemonset" \
  KRUISE_E2E_RACE=1 KRUISE_E2E_SCENARIO_TIMEOUT="${KRUISE_E2E_SCENARIO_TIMEOUT:-14400}" \
  cargo test "${profile[@]}" -p kruise-examples --test e2e -- race_against_kube_controller_manager
