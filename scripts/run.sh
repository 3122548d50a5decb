#!/usr/bin/env bash
# The main job of kruise-rs: a local Kubernetes control plane (installed on first use, cached), the node
# simulator playing kubelet for three nodes, and kruise-manager (CRDs, leader election, pod webhook,
# controllers). It shows what runs, then follows the logs until Ctrl-C, which stops everything cleanly.
#
# With KUBECONFIG set, kruise-manager runs against that cluster instead (no local control plane, no
# simulated nodes, no webhook: a cluster cannot call back into this machine; deploy
# examples/manifests/ for that).
#
# Environment: KRUISE_RS_CACHE (control-plane cache), KRUISE_RUN_NODES (simulated nodes, default 3).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n==> %s\n' "$*" >&2; }
fail() { printf 'run: error: %s\n' "$*" >&2; exit 1; }

./scripts/setup.sh
say "building kruise-manager and kruise-node-simulator"
cargo build --locked --quiet --bin kruise-manager --bin kruise-node-simulator

CACHE="${KRUISE_RS_CACHE:-$HOME/.cache/kruise-rs}"
export KRUISE_CP_DIR="$CACHE/run/demo"
LOGS="$(mktemp -d "${TMPDIR:-/tmp}/kruise-rs-run.XXXXXX")"
PIDS=()
TAIL_PID=""
OWN_CONTROL_PLANE=0

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  say "stopping"
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  sleep 0.3
  if [ -n "$TAIL_PID" ]; then kill "$TAIL_PID" 2>/dev/null || true; fi
  if [ "$OWN_CONTROL_PLANE" -eq 1 ]; then ./scripts/control-plane.sh stop || true; fi
  printf 'logs kept in %s\n' "$LOGS" >&2
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 30000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

# start NAME COMMAND...: run in the background, output to $LOGS/NAME.log, remember the PID.
start() {
  local name=$1
  shift
  "$@" >"$LOGS/$name.log" 2>&1 &
  PIDS+=("$!")
  printf '%s started (pid %s, log %s)\n' "$name" "$!" "$LOGS/$name.log" >&2
}

wait_ready() {
  local port=$1 deadline=$((SECONDS + 120))
  until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
    for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a process exited early; see $LOGS"; done
    [ "$SECONDS" -lt "$deadline" ] || fail "kruise-manager not ready after 120s; see $LOGS/kruise-manager.log"
    sleep 0.5
  done
}

# What the cluster looks like now, read with the admin token (no kubectl needed).
show_cluster() {
  local server token ca
  server="$(awk '/server:/ {print $2; exit}' "$KUBECONFIG")"
  token="$(awk '/token:/ {print $2; exit}' "$KUBECONFIG")"
  ca="$(awk '/certificate-authority:/ {print $2; exit}' "$KUBECONFIG")"
  api() { curl -fsS --cacert "$ca" -H "Authorization: Bearer $token" "$server$1"; }
  printf 'API server: %s\n' "$server"
  printf 'nodes:      %s\n' "$(api /api/v1/nodes | grep -o '"kubernetes.io/hostname": *"[^"]*"' | sed 's/.*: *"//; s/"$//' | tr '\n' ' ')"
  printf 'leader:     %s\n' "$(api /apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/kruise-manager \
    | grep -o '"holderIdentity": *"[^"]*"' | sed 's/.*: *"//; s/"$//')"
  printf 'CRDs:       %s OpenKruise kinds\n' "$(api /apis/apiextensions.k8s.io/v1/customresourcedefinitions \
    | grep -o '"name": *"[a-z]*\.\(apps\|policy\)\.kruise\.io"' | sort -u | wc -l)"
}

# Applies the demo workload. The CloneSet controller registers in kruise-manager (src/bin/kruise-manager.rs);
# until it does, this shows the pod path the controller will use: a pod owned by the sample CloneSet gets
# its readiness gates from the webhook and is run by the simulated kubelet.
apply_sample() {
  local server token ca
  server="$(awk '/server:/ {print $2; exit}' "$KUBECONFIG")"
  token="$(awk '/token:/ {print $2; exit}' "$KUBECONFIG")"
  ca="$(awk '/certificate-authority:/ {print $2; exit}' "$KUBECONFIG")"
  api() {
    curl -fsS --cacert "$ca" -H "Authorization: Bearer $token" -H 'Content-Type: application/yaml' "$@"
  }
  api -X POST --data-binary @examples/samples/cloneset.yaml \
    "$server/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets" >/dev/null || true
  local uid
  uid="$(api "$server/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets/sample" \
    | grep -o '"uid": *"[^"]*"' | head -n1 | sed 's/.*: *"//; s/"$//')"
  sed "s/OWNER_UID/$uid/" examples/samples/owned-pod.yaml \
    | api -X POST --data-binary @- "$server/api/v1/namespaces/default/pods" >/dev/null || true
  sleep 3
  printf 'pod sample-demo: %s\n' "$(api "$server/api/v1/namespaces/default/pods/sample-demo" \
    | grep -o '"conditionType": *"[^"]*"\|"phase": *"[^"]*"' | sed 's/.*: *"//; s/"$//' | tr '\n' ' ')"
}

if [ -n "${KUBECONFIG:-}" ]; then
  say "KUBECONFIG is set: running kruise-manager against $KUBECONFIG"
  metrics_port="$(free_port)"
  start kruise-manager ./target/debug/kruise-manager --no-webhook --create-namespace --metrics-bind-address "127.0.0.1:$metrics_port"
  wait_ready "$metrics_port"
  say "kruise-manager is ready (metrics: http://127.0.0.1:$metrics_port/metrics); Ctrl-C stops it"
  tail -n +1 -f "$LOGS/kruise-manager.log" &
  TAIL_PID=$!
  wait "${PIDS[0]}" || fail "kruise-manager exited; see $LOGS/kruise-manager.log"
  exit 0
fi

say "local control plane (first use installs it: about 5-20 minutes, cached in $CACHE)"
./scripts/control-plane.sh install
./scripts/control-plane.sh start
OWN_CONTROL_PLANE=1
eval "$(./scripts/control-plane.sh env)"

say "node simulator and kruise-manager"
start kruise-node-simulator ./target/debug/kruise-node-simulator --nodes "${KRUISE_RUN_NODES:-3}" \
  --node-prefix kruise-sim --delete-nodes-on-exit
metrics_port="$(free_port)"
webhook_port="$(free_port)"
start kruise-manager ./target/debug/kruise-manager --create-namespace \
  --metrics-bind-address "127.0.0.1:$metrics_port" --webhook-bind-address "127.0.0.1:$webhook_port" \
  --webhook-url "https://127.0.0.1:$webhook_port/mutate-pod"
wait_ready "$metrics_port"
sleep 2

say "cluster"
show_cluster
say "sample"
apply_sample
say "running; metrics at http://127.0.0.1:$metrics_port/metrics; KUBECONFIG=$KUBECONFIG; Ctrl-C stops everything"
tail -n +1 -f "$LOGS/kruise-manager.log" "$LOGS/kruise-node-simulator.log" &
TAIL_PID=$!
wait -n "${PIDS[@]}" || true
fail "a process exited on its own; see $LOGS"
