#!/usr/bin/env bash
# The main job of kruise-rs: a local Kubernetes control plane (installed on first use, cached), the node
# simulator playing kubelet for three nodes, and kruise-manager (CRDs, leader election, pod webhook, the
# CloneSet controller). It shows what runs, creates the demo CloneSet (examples/manifests/samples/
# cloneset-demo.yaml), updates its image and prints the rollout as it progresses (pods by revision and
# lifecycle state, with `kruise cloneset watch`): in place, one pod at a time, held by the partition,
# then finished by lowering it. Then it follows the logs until Ctrl-C, which stops everything cleanly.
#
# With KUBECONFIG set, kruise-manager runs against that cluster instead (no local control plane, no
# simulated nodes, no webhook: a cluster cannot call back into this machine; deploy
# examples/manifests/ for that).
#
# Environment: KRUISE_RS_CACHE (control-plane cache), KRUISE_RUN_NODES (simulated nodes, default 3),
# KRUISE_CP_DIR (control-plane run directory, default $KRUISE_RS_CACHE/run/demo), CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n==> %s\n' "$*" >&2; }
fail() { printf 'run: error: %s\n' "$*" >&2; exit 1; }

./scripts/setup.sh
say "building kruise-manager, kruise-node-simulator and kruise"
cargo build --locked --quiet --bin kruise-manager --bin kruise-node-simulator --bin kruise

CACHE="${KRUISE_RS_CACHE:-$HOME/.cache/kruise-rs}"
export KRUISE_CP_DIR="${KRUISE_CP_DIR:-$CACHE/run/demo}"
BIN="${CARGO_TARGET_DIR:-target}/debug"
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

# The demo workload (examples/manifests/samples/cloneset-demo.yaml), driven through the API server with curl
# (no kubectl needed) and followed with `kruise cloneset watch`.
SAMPLE=examples/manifests/samples/cloneset-demo.yaml
SAMPLE_URL=/apis/apps.kruise.io/v1beta1/namespaces/default/clonesets
api_call() {
  local server token ca
  server="$(awk '/server:/ {print $2; exit}' "$KUBECONFIG")"
  token="$(awk '/token:/ {print $2; exit}' "$KUBECONFIG")"
  ca="$(awk '/certificate-authority:/ {print $2; exit}' "$KUBECONFIG")"
  local path=$1
  shift
  curl -fsS --cacert "$ca" -H "Authorization: Bearer $token" "$@" "$server$path"
}

watch_sample() {
  "$BIN"/kruise cloneset watch cs-demo --namespace default --interval 1s --timeout 300s --until "$1" \
    || fail "the demo CloneSet did not become $1; see $LOGS/kruise-manager.log"
}

run_sample() {
  # A fresh demo on every run: remove the CloneSet of an earlier run (its pods go with it).
  if api_call "$SAMPLE_URL/cs-demo" >/dev/null 2>&1; then
    api_call "$SAMPLE_URL/cs-demo" -X DELETE -H 'Content-Type: application/json' \
      --data '{"propagationPolicy":"Foreground"}' >/dev/null || true
    local deadline=$((SECONDS + 60))
    while api_call "$SAMPLE_URL/cs-demo" >/dev/null 2>&1 && [ "$SECONDS" -lt "$deadline" ]; do sleep 1; done
  fi
  say "creating CloneSet cs-demo: 5 replicas, InPlaceIfPossible, partition 2, maxUnavailable 1, preDelete hook"
  api_call "$SAMPLE_URL" -X POST -H 'Content-Type: application/yaml' --data-binary "@$SAMPLE" >/dev/null \
    || fail "creating the demo CloneSet failed"
  watch_sample ready
  say "updating the image to nginx:1.26-alpine: 3 pods are updated in place, one at a time; the partition keeps 2"
  api_call "$SAMPLE_URL/cs-demo" -X PATCH -H 'Content-Type: application/json-patch+json' \
    --data '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.26-alpine"}]' \
    >/dev/null || fail "updating the image failed"
  watch_sample partitioned
  say "lowering the partition to 0: the last 2 pods follow"
  api_call "$SAMPLE_URL/cs-demo" -X PATCH -H 'Content-Type: application/merge-patch+json' \
    --data '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}' >/dev/null \
    || fail "lowering the partition failed"
  watch_sample complete
  say "rollout complete: same pods (names, UIDs, nodes), new image, one restart each"
}

if [ -n "${KUBECONFIG:-}" ]; then
  say "KUBECONFIG is set: running kruise-manager against $KUBECONFIG"
  metrics_port="$(free_port)"
  start kruise-manager "$BIN"/kruise-manager --no-webhook --create-namespace --metrics-bind-address "127.0.0.1:$metrics_port"
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
start kruise-node-simulator "$BIN"/kruise-node-simulator --nodes "${KRUISE_RUN_NODES:-3}" \
  --node-prefix kruise-sim --delete-nodes-on-exit
metrics_port="$(free_port)"
webhook_port="$(free_port)"
start kruise-manager "$BIN"/kruise-manager --create-namespace \
  --metrics-bind-address "127.0.0.1:$metrics_port" --webhook-bind-address "127.0.0.1:$webhook_port" \
  --webhook-url "https://127.0.0.1:$webhook_port/mutate-pod"
wait_ready "$metrics_port"
sleep 2

say "cluster"
show_cluster
run_sample
say "running; metrics at http://127.0.0.1:$metrics_port/metrics; KUBECONFIG=$KUBECONFIG; Ctrl-C stops everything"
printf 'try: KUBECONFIG=%s %s/kruise cloneset watch cs-demo\n' "$KUBECONFIG" "$BIN" >&2
tail -n +1 -f "$LOGS/kruise-manager.log" "$LOGS/kruise-node-simulator.log" &
TAIL_PID=$!
wait -n "${PIDS[@]}" || true
fail "a process exited on its own; see $LOGS"
