#!/usr/bin/env bash
# Measures kruise-manager's SidecarSet webhook on the local control plane: latency of pod CREATE reviews with
# two matching SidecarSets under 200 concurrent kept-alive HTTPS connections on loopback (p50/p90/p99, and
# the manager's own histogram), then the manager's RSS with 100 SidecarSets and 5,000 pods in its stores.
# Release build (the manager's speed is what is measured); KRUISE_E2E_MEASURE_REQUESTS and
# KRUISE_E2E_MEASURE_PODS change the sizes; MEASURE_PROFILE=dev measures the debug build instead.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=(--release)
if [ "${MEASURE_PROFILE:-release}" = dev ]; then profile=(); fi
KRUISE_E2E_MEASURE=1 KRUISE_E2E_SCENARIO_TIMEOUT="${KRUISE_E2E_SCENARIO_TIMEOUT:-1800}" \
  cargo test "${profile[@]}" -p kruise-examples --test e2e -- sidecarset_measure_webhook_and_memory
