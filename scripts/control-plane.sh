#!/usr/bin/env bash
# A real Kubernetes control plane on loopback: etcd + kube-apiserver v1.20.2 (+ kube-controller-manager for
# garbage collection, namespaces, service accounts and Jobs). Nothing is mocked; there is no scheduler and no
# kubelet (the node simulator plays those).
#
#   scripts/control-plane.sh install          build kube-apiserver/kube-controller-manager once (cached)
#   scripts/control-plane.sh start            start everything, write a kubeconfig, wait for /readyz
#   scripts/control-plane.sh stop             stop by the recorded PIDs and remove the state (with
#                                             KRUISE_CP_KEEP_LOGS=1: keep the run directory's *.log files)
#   scripts/control-plane.sh status           say whether it runs and where (exit 1 when it does not)
#   scripts/control-plane.sh env              print `export KUBECONFIG=...` for eval
#   scripts/control-plane.sh restart-apiserver [SECONDS]
#                                             restart kube-apiserver on the same port (down for at least
#                                             SECONDS); every watch from before the restart gets 410 Gone
#
# Environment:
#   KRUISE_RS_CACHE   cache for the built binaries (default ~/.cache/kruise-rs); the build tree is deleted
#   KRUISE_CP_DIR     run directory with the kubeconfig, logs, PIDs (default $KRUISE_RS_CACHE/run/default);
#                     use a different one to run two control planes side by side
#   KRUISE_CP_NO_CONTROLLER_MANAGER=1   start without kube-controller-manager
#   KRUISE_CP_KCM_CONTROLLERS           kube-controller-manager's --controllers (default
#                     garbagecollector,namespace,serviceaccount,serviceaccount-token,job; scripts/race.sh adds
#                     deployment,replicaset,statefulset,daemonset to race them against kruise-manager)
#
# The API server writes an audit log of every write request (level Metadata: user, user agent, verb,
# object, timestamps) to $KRUISE_CP_DIR/audit.log.
#
# How it works (details in docs/local-control-plane.md): the binaries are built from Debian's kubernetes source
# package with two fixes for Go 1.19 (Debian's reflect2/json-iterator; go-openapi's zero-value check), and the
# API server uses TLS with a static token because v1.20 refuses a plain HTTP port.
# Exit codes: 0 ok, 1 failure (one line on stderr naming the log), 3 unavailable here (not installed, or
# install impossible: no apt-get, no network, not root); the e2e tests skip on 3.
set -euo pipefail

K8S_VERSION="v1.20.2"
# Bumped whenever the build recipe changes (source fixes below), so cached binaries are rebuilt.
BUILD_RECIPE=2
CACHE="${KRUISE_RS_CACHE:-$HOME/.cache/kruise-rs}"
BIN_DIR="$CACHE/k8s-$K8S_VERSION-r$BUILD_RECIPE/bin"
RUN_DIR="${KRUISE_CP_DIR:-$CACHE/run/default}"
INSTALL_LOG="$CACHE/install.log"

log() { printf '[control-plane] %s\n' "$*" >&2; }
fail() { printf '[control-plane] error: %s\n' "$*" >&2; exit 1; }
unavailable() { printf '[control-plane] unavailable: %s\n' "$*" >&2; exit 3; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"; else
    unavailable "need root (or passwordless sudo) to run: $*"; fi
}

installed() {
  [ -x "$BIN_DIR/kube-apiserver" ] && [ -x "$BIN_DIR/kube-controller-manager" ] && command -v etcd >/dev/null 2>&1 \
    && command -v curl >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1
}

# ---------------------------------------------------------------------------------------------------- install

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq </dev/null >>"$INSTALL_LOG" 2>&1 || unavailable "apt-get update failed (network?); see $INSTALL_LOG"
  # etcd-server's maintainer scripts would start a system etcd on :2379 where an init system exists; we
  # never want that one, so service starts are refused while installing (policy-rc.d, removed afterwards).
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [ ! -e "$policy" ]; then
    as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy" && created_policy=1
  fi
  local rc=0
  as_root apt-get install -y -qq --no-install-recommends "$@" </dev/null >>"$INSTALL_LOG" 2>&1 || rc=$?
  [ "$created_policy" -eq 1 ] && as_root rm -f "$policy"
  [ "$rc" -eq 0 ] || unavailable "apt-get install $* failed; see $INSTALL_LOG"
}

add_deb_src() {
  local file=/etc/apt/sources.list.d/kruise-rs-deb-src.sources
  if grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ || grep -qs '^deb-src' /etc/apt/sources.list; then
    return 0
  fi
  log "adding a deb-src entry for bookworm main ($file)"
  as_root sh -c "cat > $file" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  as_root apt-get update -qq </dev/null >>"$INSTALL_LOG" 2>&1 || unavailable "apt-get update (deb-src) failed; see $INSTALL_LOG"
}

build_kubernetes() {
  local build="$CACHE/build"
  rm -rf "$build" && mkdir -p "$build"
  log "downloading Debian's kubernetes source package"
  (cd "$build" && apt-get source --download-only kubernetes </dev/null >>"$INSTALL_LOG" 2>&1) \
    || unavailable "apt-get source kubernetes failed; see $INSTALL_LOG"
  local orig
  orig="$(find "$build" -maxdepth 1 -name 'kubernetes_*really1.20.2.orig.tar.gz' | head -n1)"
  [ -n "$orig" ] || fail "no kubernetes_*really1.20.2.orig.tar.gz in the source package; see $INSTALL_LOG"
  mkdir -p "$build/src"
  tar -xzf "$orig" -C "$build/src" --strip-components=1 >>"$INSTALL_LOG" 2>&1 || fail "cannot unpack $orig; see $INSTALL_LOG"

  # The vendored reflect2 v1.0.1 crashes at run time when built with Go >= 1.18: use Debian's copies.
  local gocode=/usr/share/gocode/src/github.com
  for dep in modern-go/reflect2 json-iterator/go; do
    [ -d "$gocode/$dep" ] || fail "missing $gocode/$dep (golang-github-* packages); see $INSTALL_LOG"
    rm -rf "$build/src/vendor/github.com/$dep"
    cp -rL "$gocode/$dep" "$build/src/vendor/github.com/$dep"
  done

  # Required fix 2: the vendored go-openapi/validate treats any zero value as null ("" fails `type: string`
  # in every custom resource and CRD default) when built with Go >= 1.19, whose reflect.Zero and
  # reflect.ValueOf share one zero buffer. Newer go-openapi and Kubernetes check `data == nil` only.
  local zero_check='data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data))'
  local patched
  patched="$(grep -rlF "$zero_check" "$build/src/vendor" "$build/src/staging" 2>/dev/null || true)"
  [ -n "$patched" ] || fail "go-openapi validate zero-value check not found in the source; see $INSTALL_LOG"
  local file
  for file in $patched; do
    sed -i "s/data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data))/data == nil/" "$file"
    log "patched the zero-value check in ${file#"$build/src/"}"
  done

  log "building kube-apiserver and kube-controller-manager $K8S_VERSION (about 5 minutes on 2 cores; log: $INSTALL_LOG)"
  local attempt
  for attempt in 1 2; do
    rm -rf "$build/src/_output"
    if (cd "$build/src" && GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local KUBE_GIT_VERSION="$K8S_VERSION" \
      KUBE_GIT_TREE_STATE=clean make WHAT="cmd/kube-apiserver cmd/kube-controller-manager" \
      </dev/null >>"$INSTALL_LOG" 2>&1); then
      break
    fi
    [ "$attempt" -eq 2 ] && fail "building kubernetes failed; see $INSTALL_LOG"
    log "build attempt $attempt failed, retrying from a clean _output"
  done
  local out="$build/src/_output/bin"
  mkdir -p "$BIN_DIR"
  install -m 0755 "$out/kube-apiserver" "$out/kube-controller-manager" "$BIN_DIR/" \
    || fail "the build produced no binaries; see $INSTALL_LOG"
  rm -rf "$build"
}

cmd_install() {
  mkdir -p "$CACHE"
  exec 9>"$CACHE/install.lock"
  flock 9
  if installed; then
    log "installed: $BIN_DIR (etcd: $(command -v etcd))"
    return 0
  fi
  : >"$INSTALL_LOG"
  local started=$SECONDS
  command -v apt-get >/dev/null 2>&1 || unavailable "no apt-get on this machine; install etcd and build kube-apiserver $K8S_VERSION by hand into $BIN_DIR"
  log "installing build tools and etcd with apt-get (log: $INSTALL_LOG)"
  apt_install golang-go make rsync etcd-server openssl curl dpkg-dev ca-certificates \
    golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev
  if [ ! -x "$BIN_DIR/kube-apiserver" ] || [ ! -x "$BIN_DIR/kube-controller-manager" ]; then
    add_deb_src
    build_kubernetes
  fi
  installed || fail "install finished but binaries are missing; see $INSTALL_LOG"
  # Binaries of older build recipes are not used any more.
  find "$CACHE" -maxdepth 1 -name "k8s-$K8S_VERSION*" ! -name "k8s-$K8S_VERSION-r$BUILD_RECIPE" -exec rm -rf {} +
  log "installed in $((SECONDS - started)) s: $BIN_DIR"
}

# ------------------------------------------------------------------------------------------------------ start

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
  local port i
  for i in $(seq 1 200); do
    port=$((20000 + RANDOM % 30000))
    if port_free "$port" && ! grep -qx "$port" "$RUN_DIR/ports" 2>/dev/null; then
      echo "$port" >>"$RUN_DIR/ports"
      echo "$port"
      return 0
    fi
  done
  fail "no free loopback port found"
}

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# spawn NAME LOG CMD...: start CMD in its own session, record its PID.
spawn() {
  local name=$1 logfile=$2
  shift 2
  setsid "$@" </dev/null >"$logfile" 2>&1 &
  echo "$!" >"$RUN_DIR/$name.pid"
}

wait_for() {
  local what=$1 logfile=$2 pid=$3 timeout=$4
  shift 4
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    alive "$pid" || { stop_all; fail "$what exited during start; see $logfile"; }
    [ "$SECONDS" -lt "$deadline" ] || { stop_all; fail "$what not ready after ${timeout}s; see $logfile"; }
    sleep 0.2
  done
}

# spawn_apiserver: starts kube-apiserver on the ports recorded in the run directory (its log appended to,
# so a restart keeps the earlier lines; the audit log is appended to as well).
spawn_apiserver() {
  local etcd_port api_port
  etcd_port="$(cat "$RUN_DIR/etcd-port")"
  api_port="$(cat "$RUN_DIR/api-port")"
  setsid "$BIN_DIR/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" --insecure-port 0 \
    --cert-dir "$RUN_DIR/certs" --token-auth-file "$RUN_DIR/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$RUN_DIR/certs/sa.pub" \
    --service-account-signing-key-file "$RUN_DIR/certs/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 --allow-privileged=true \
    --disable-admission-plugins ServiceAccount \
    --audit-policy-file "$RUN_DIR/audit-policy.yaml" --audit-log-path "$RUN_DIR/audit.log" \
    --audit-log-format json --audit-log-mode blocking --v 1 \
    </dev/null >>"$RUN_DIR/kube-apiserver.log" 2>&1 &
  echo "$!" >"$RUN_DIR/kube-apiserver.pid"
}

cmd_start() {
  installed || unavailable "not installed: run '$0 install' first (builds kube-apiserver once, about 5-20 minutes)"
  if [ -f "$RUN_DIR/kubeconfig" ] && cmd_status >/dev/null 2>&1; then
    log "already running: KUBECONFIG=$RUN_DIR/kubeconfig"
    return 0
  fi
  [ -d "$RUN_DIR" ] && stop_all
  mkdir -p "$RUN_DIR/certs"
  : >"$RUN_DIR/ports"
  local started=$SECONDS

  local token
  token="$(openssl rand -hex 16)"
  printf '%s,admin,admin-uid,"system:masters"\n' "$token" >"$RUN_DIR/tokens.csv"
  openssl genrsa -out "$RUN_DIR/certs/sa.key" 2048 >/dev/null 2>&1 || fail "openssl genrsa failed"
  openssl rsa -in "$RUN_DIR/certs/sa.key" -pubout -out "$RUN_DIR/certs/sa.pub" >/dev/null 2>&1 || fail "openssl rsa failed"

  local etcd_port etcd_peer api_port etcd_dir
  etcd_port="$(free_port)"
  etcd_peer="$(free_port)"
  api_port="$(free_port)"
  etcd_dir="$(mktemp -d /dev/shm/kruise-rs-etcd.XXXXXX)"
  echo "$etcd_dir" >"$RUN_DIR/etcd-dir"
  # Every write request (who, what, when; no bodies) goes to $RUN_DIR/audit.log, one JSON event a line,
  # so tests can prove which client wrote and when (e.g. no write from a deposed leader).
  cat >"$RUN_DIR/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
EOF

  spawn etcd "$RUN_DIR/etcd.log" etcd --name kruise-rs --data-dir "$etcd_dir" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "kruise-rs=http://127.0.0.1:$etcd_peer" --log-level warn
  wait_for etcd "$RUN_DIR/etcd.log" "$(cat "$RUN_DIR/etcd.pid")" 30 \
    curl -fsS "http://127.0.0.1:$etcd_port/health"

  echo "$etcd_port" >"$RUN_DIR/etcd-port"
  echo "$api_port" >"$RUN_DIR/api-port"
  spawn_apiserver
  local api_pid
  api_pid="$(cat "$RUN_DIR/kube-apiserver.pid")"
  wait_for kube-apiserver "$RUN_DIR/kube-apiserver.log" "$api_pid" 30 test -s "$RUN_DIR/certs/apiserver.crt"

  cat >"$RUN_DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kruise-rs
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $RUN_DIR/certs/apiserver.crt
users:
- name: admin
  user:
    token: $token
contexts:
- name: kruise-rs
  context:
    cluster: kruise-rs
    user: admin
    namespace: default
current-context: kruise-rs
EOF
  wait_for kube-apiserver "$RUN_DIR/kube-apiserver.log" "$api_pid" 90 \
    curl -fsS --cacert "$RUN_DIR/certs/apiserver.crt" -H "Authorization: Bearer $token" \
    "https://127.0.0.1:$api_port/readyz"

  if [ "${KRUISE_CP_NO_CONTROLLER_MANAGER:-0}" != "1" ]; then
    spawn kube-controller-manager "$RUN_DIR/kube-controller-manager.log" "$BIN_DIR/kube-controller-manager" \
      --kubeconfig "$RUN_DIR/kubeconfig" \
      --controllers "${KRUISE_CP_KCM_CONTROLLERS:-garbagecollector,namespace,serviceaccount,serviceaccount-token,job}" \
      --leader-elect=false --port 0 --secure-port 0 --use-service-account-credentials=false \
      --service-account-private-key-file "$RUN_DIR/certs/sa.key" --root-ca-file "$RUN_DIR/certs/apiserver.crt"
    sleep 0.5
    alive "$(cat "$RUN_DIR/kube-controller-manager.pid")" \
      || { stop_all; fail "kube-controller-manager exited during start; see $RUN_DIR/kube-controller-manager.log"; }
  fi
  log "started in $((SECONDS - started)) s: https://127.0.0.1:$api_port (KUBECONFIG=$RUN_DIR/kubeconfig)"
}

# ------------------------------------------------------------------------------------------- stop, status, env

stop_all() {
  local name pid
  for name in kube-controller-manager kube-apiserver etcd; do
    pid="$(cat "$RUN_DIR/$name.pid" 2>/dev/null || true)"
    alive "$pid" && kill -TERM "$pid" 2>/dev/null || true
  done
  for name in kube-controller-manager kube-apiserver etcd; do
    pid="$(cat "$RUN_DIR/$name.pid" 2>/dev/null || true)"
    local i
    for i in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  done
  local etcd_dir
  etcd_dir="$(cat "$RUN_DIR/etcd-dir" 2>/dev/null || true)"
  case "$etcd_dir" in /dev/shm/kruise-rs-etcd.*) rm -rf "$etcd_dir" ;; esac
  if [ "${KRUISE_CP_KEEP_LOGS:-}" = 1 ]; then
    find "$RUN_DIR" -mindepth 1 -type f ! -name '*.log' -delete
    find "$RUN_DIR" -mindepth 1 -depth -type d -empty -delete
  else
    rm -rf "$RUN_DIR"
  fi
}

cmd_stop() {
  if [ ! -d "$RUN_DIR" ]; then
    log "not running ($RUN_DIR does not exist)"
    return 0
  fi
  stop_all
  if [ "${KRUISE_CP_KEEP_LOGS:-}" = 1 ]; then
    log "stopped; kept the logs in $RUN_DIR"
  else
    log "stopped; removed $RUN_DIR"
  fi
}

# apiserver_ready: whether the API server of the run directory answers /readyz.
apiserver_ready() {
  local server token
  server="$(awk '/server:/ {print $2}' "$RUN_DIR/kubeconfig")"
  token="$(awk '/token:/ {print $2}' "$RUN_DIR/kubeconfig")"
  curl -fsS --cacert "$RUN_DIR/certs/apiserver.crt" -H "Authorization: Bearer $token" "$server/readyz"
}

# restart-apiserver [SECONDS]: stops kube-apiserver (SIGTERM, SIGKILL 3 s later: requests in flight fail),
# writes one key to etcd while it is down, waits SECONDS (default 0) and starts it again on the same
# port with the same certificates. The write moves etcd's revision past everything a client has seen, so
# every watch resumed from before the restart is answered 410 Gone (the new API server's watch cache starts
# after it): clients must list again.
cmd_restart_apiserver() {
  local down=${1:-0}
  case "$down" in '' | *[!0-9.]*) fail "restart-apiserver: SECONDS must be a number, not '$down'" ;; esac
  [ -f "$RUN_DIR/kubeconfig" ] || fail "not running: start it with '$0 start'"
  local pid i
  pid="$(cat "$RUN_DIR/kube-apiserver.pid" 2>/dev/null || true)"
  alive "$pid" || fail "kube-apiserver is not running (see $RUN_DIR/kube-apiserver.log)"
  local started=$SECONDS
  # kube-apiserver's own graceful stop waits up to 60 s for connections with open watches to go idle,
  # serving them all the while; 3 s of grace, then SIGKILL, cuts the requests in flight as a crash would.
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 30); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && fail "kube-apiserver (pid $pid) did not die"
  local etcd_port key value
  etcd_port="$(cat "$RUN_DIR/etcd-port")"
  key="$(printf '/kruise-rs/api-server-restarted' | base64 -w0)"
  value="$(date +%s%N | base64 -w0)"
  curl -fsS -X POST "http://127.0.0.1:$etcd_port/v3/kv/put" -d "{\"key\":\"$key\",\"value\":\"$value\"}" >/dev/null \
    || fail "could not write to etcd at 127.0.0.1:$etcd_port while kube-apiserver was down"
  sleep "$down"
  spawn_apiserver
  pid="$(cat "$RUN_DIR/kube-apiserver.pid")"
  wait_for kube-apiserver "$RUN_DIR/kube-apiserver.log" "$pid" 90 apiserver_ready
  log "kube-apiserver restarted in $((SECONDS - started)) s"
}

cmd_status() {
  [ -f "$RUN_DIR/kubeconfig" ] || { log "not running"; return 1; }
  local name pid
  for name in etcd kube-apiserver; do
    pid="$(cat "$RUN_DIR/$name.pid" 2>/dev/null || true)"
    alive "$pid" || { log "$name is not running (see $RUN_DIR/$name.log)"; return 1; }
  done
  local server token
  server="$(awk '/server:/ {print $2}' "$RUN_DIR/kubeconfig")"
  token="$(awk '/token:/ {print $2}' "$RUN_DIR/kubeconfig")"
  curl -fsS --cacert "$RUN_DIR/certs/apiserver.crt" -H "Authorization: Bearer $token" "$server/readyz" >/dev/null 2>&1 \
    || { log "kube-apiserver at $server is not ready (see $RUN_DIR/kube-apiserver.log)"; return 1; }
  log "running: $server (KUBECONFIG=$RUN_DIR/kubeconfig)"
}

cmd_env() {
  [ -f "$RUN_DIR/kubeconfig" ] || fail "not running: start it with '$0 start'"
  printf 'export KUBECONFIG=%q\n' "$RUN_DIR/kubeconfig"
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  restart-apiserver) cmd_restart_apiserver "${2:-0}" ;;
  *)
    printf 'usage: %s install|start|stop|status|env|restart-apiserver [SECONDS]\n' "$0" >&2
    exit 2
    ;;
esac
