#!/usr/bin/env bash
# Measures kruise-manager with a 1,000-pod CloneSet on the local control plane with the node simulator:
# time to 1,000 Ready pods, spec change -> first pod write, pod Ready -> next pod update during an in-place
# rollout, the rollout time, reconcile durations (the manager's histogram) and the manager's RSS.
# KRUISE_E2E_MEASURE_REPLICAS changes the size; MEASURE_PROFILE=release measures the release build (default:
# the debug build, as the recorded timings were). Prints the numbers at the end, and writes a plot of the pods
# per revision and the unavailable pods over time, from creation through the rollout, as SVG (and its samples
# as CSV next to it) to KRUISE_E2E_MEASURE_PLOT (default: target/measurements/cloneset-rollout-<profile>.svg).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=()
if [ "${MEASURE_PROFILE:-dev}" = release ]; then profile=(--release); fi
plot="${KRUISE_E2E_MEASURE_PLOT:-$PWD/target/measurements/cloneset-rollout-${MEASURE_PROFILE:-dev}.svg}"
case "$plot" in /*) ;; *) plot="$PWD/$plot" ;; esac # the test runs in examples/
KRUISE_E2E_MEASURE=1 KRUISE_E2E_MEASURE_PLOT="$plot" KRUISE_E2E_SCENARIO_TIMEOUT="${KRUISE_E2E_SCENARIO_TIMEOUT:-1800}" \
  cargo test "${profile[@]}" -p kruise-examples --test e2e -- cloneset_measure_1000_pods
