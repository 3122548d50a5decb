#!/usr/bin/env bash
# The main job of kruise-rs. Until kruise-manager lands, it builds the `kruise` tool and prints every OpenKruise
# CustomResourceDefinition (both versions served, v1beta1 stored), ready for `kubectl apply -f -`.
# Extra arguments go to `kruise crds` (e.g. --api-version v1alpha1, -o json).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
cargo build --locked --quiet --bin kruise
exec ./target/debug/kruise crds "$@"
