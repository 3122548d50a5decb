#!/usr/bin/env bash
# Makes sure this machine can build and test kruise-rs: a Rust toolchain with rustfmt and clippy, a C
# compiler and make for the crates that build C code, a C++ compiler for libFuzzer (built when the test command
# checks the fuzz targets), protoc for the CRI client, and containerd for the node-agent tests. Installs what is
# missing (apt-get for system packages, rustup for toolchain components) and says clearly what it could not
# install. Safe to run again.
set -euo pipefail

log() { printf '[setup] %s\n' "$*" >&2; }
fail() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    fail "need root to run: $*"; fi
}

apt_packages=()
command -v cc >/dev/null 2>&1 || apt_packages+=(gcc)
# tikv-jemalloc-sys's build script (kruise-manager's allocator) runs jemalloc's configure and make.
command -v make >/dev/null 2>&1 || apt_packages+=(make)
# libfuzzer-sys's build script (fuzz/, checked by scripts/test.sh) compiles libFuzzer's C++ sources.
command -v c++ >/dev/null 2>&1 || apt_packages+=(g++)
command -v pkg-config >/dev/null 2>&1 || apt_packages+=(pkg-config)
command -v git >/dev/null 2>&1 || apt_packages+=(git)
# k8s-cri's build script (the CRI v1 client of kruise-daemon) compiles the CRI protos with protoc.
command -v protoc >/dev/null 2>&1 || apt_packages+=(protobuf-compiler)
if [ "${#apt_packages[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || fail "missing ${apt_packages[*]} and no apt-get to install them"
  log "installing ${apt_packages[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq </dev/null
  as_root apt-get install -y -qq "${apt_packages[@]}" </dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || fail "no Rust toolchain: install one with rustup (https://rustup.rs), Rust 1.89 or newer"

for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    command -v rustup >/dev/null 2>&1 || fail "cargo $component is missing and rustup is not available to add it"
    log "adding the $component component with rustup"
    rustup component add "$component" </dev/null || fail "could not add $component with rustup"
  fi
done

required="1.89.0"
current="$(rustc --version | awk '{print $2}')"
if [ "$(printf '%s\n%s\n' "$required" "$current" | sort -V | head -n1)" != "$required" ]; then
  fail "rustc $current is older than the required $required (rustup update stable)"
fi
log "toolchain ready: $(cargo --version)"

# A real container runtime for the node-agent end-to-end tests (containerd with its CRI plugin, runc, a local
# registry, test images built from busybox-static). Cached; exit 3 means it cannot run here (not root, no
# apt-get, no network): those scenarios then skip with a message instead of failing.
containerd_status=0
"$(dirname "$0")/containerd.sh" install || containerd_status=$?
case "$containerd_status" in
  0) log "containerd ready for the node-agent tests" ;;
  3)
    # Under CI nothing may be skipped silently: a runtime that cannot be installed fails the run.
    [ "${CI:-}" = true ] && fail "containerd cannot be installed here, and CI=true forbids skipping its scenarios"
    log "containerd is unavailable here: the node-agent end-to-end scenarios will be skipped" ;;
  *) fail "scripts/containerd.sh install failed (exit $containerd_status)" ;;
esac
