#!/usr/bin/env bash
# Container images of kruise-manager and kruise-daemon, built without docker and without network: one OCI image
# archive each (oci-layout tar, `ctr images import`-able, also `skopeo copy oci-archive:...` to push), holding
#   /usr/local/bin/kruise-manager (or kruise-daemon)   the binary, the image's Entrypoint
#   the shared libraries it loads (found with ldd: glibc, libgcc_s, libm, the dynamic loader)
#   /etc/passwd, /etc/group                           root and nonroot (65532), as distroless images have
#   /etc/ssl/certs/ca-certificates.crt                the host's CA bundle (rustls-native-certs reads it)
#   /tmp
# User 65532 for kruise-manager; kruise-daemon runs as root (the CRI socket), as upstream's does.
# examples/image/Dockerfile builds the same layout with docker (multi-stage, distroless/cc).
#
#   scripts/image.sh [--profile release|debug] [--bin-dir DIR] [--out DIR] [--repository REPO] [--no-build]
#
#   --profile      which cargo profile's binaries (default release); they are built first unless --no-build
#   --bin-dir      take the binaries from DIR instead (implies --no-build)
#   --out          where the archives go (default target/images)
#   --repository   image name prefix (default ghcr.io/kruise-rs, as the manifests of `kruise install`)
#
# Writes OUT/kruise-manager-VERSION.tar and OUT/kruise-daemon-VERSION.tar (VERSION: the workspace version in
# Cargo.toml) and prints their paths and image names. Import into containerd:
#   ctr -n k8s.io images import target/images/kruise-manager-0.1.0.tar
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
PROFILE=release
BIN_DIR=""
OUT="$ROOT/target/images"
REPOSITORY=ghcr.io/kruise-rs
BUILD=1
NONROOT=65532

fail() { printf '[image] error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '/^#   scripts\/image.sh/,/^#   --repository/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --profile) [ $# -ge 2 ] || usage; PROFILE=$2; shift 2 ;;
    --bin-dir) [ $# -ge 2 ] || usage; BIN_DIR=$2; BUILD=0; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; OUT=$2; shift 2 ;;
    --repository) [ $# -ge 2 ] || usage; REPOSITORY=${2%/}; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) usage ;;
    *) printf '[image] error: unknown argument %s\n' "$1" >&2; usage ;;
  esac
done
case "$PROFILE" in release|debug) ;; *) fail "--profile $PROFILE: release or debug" ;; esac

# The workspace version: the first `version = "..."` of [workspace.package].
VERSION="$(awk '/^\[workspace.package\]/{p=1; next} /^\[/{p=0} p && /^version *=/{gsub(/[" ]/, "", $0); sub(/version=/, "", $0); print; exit}' "$ROOT/Cargo.toml")"
[ -n "$VERSION" ] || fail "no version in [workspace.package] of $ROOT/Cargo.toml"

if [ -z "$BIN_DIR" ]; then
  BIN_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/$PROFILE"
fi
if [ "$BUILD" -eq 1 ]; then
  flags=()
  [ "$PROFILE" = release ] && flags=(--release)
  printf '[image] cargo build %s (kruise-manager, kruise-daemon)\n' "${flags[*]:-}" >&2
  (cd "$ROOT" && cargo build "${flags[@]}" -p kruise-examples --bin kruise-manager --bin kruise-daemon) >&2
fi
command -v ldd >/dev/null 2>&1 || fail "ldd is missing (libc-bin)"
command -v python3 >/dev/null 2>&1 || fail "python3 is missing"

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT

# Copies FILE to the same path under ROOTFS (the file's content, symbolic links followed).
copy_into() {
  local rootfs=$1 file=$2
  mkdir -p "$rootfs$(dirname "$file")"
  cp -L "$file" "$rootfs$file"
  chmod 0755 "$rootfs$file"
}

# The absolute paths of the shared libraries BINARY loads, the dynamic loader among them.
shared_libraries() {
  local binary=$1 out
  out="$(ldd "$binary" 2>&1)" || {
    # A static binary: nothing to add ("not a dynamic executable").
    case "$out" in *"not a dynamic executable"*|*"statically linked"*) return 0 ;; esac
    fail "ldd $binary: $out"
  }
  printf '%s\n' "$out" | grep -q 'not found' && fail "ldd $binary: a library is missing: $(printf '%s\n' "$out" | grep 'not found' | head -n1)"
  printf '%s\n' "$out" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u
}

# build NAME USER: stages the root filesystem of NAME and writes its archive.
build() {
  local name=$1 user=$2 binary="$BIN_DIR/$1" rootfs="$STAGE/$1"
  [ -x "$binary" ] || fail "$binary does not exist: build it (cargo build --release -p kruise-examples --bin $name) or pass --profile/--bin-dir"
  mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$rootfs/home/nonroot"
  chmod 1777 "$rootfs/tmp"
  cp -L "$binary" "$rootfs/usr/local/bin/$name"
  chmod 0755 "$rootfs/usr/local/bin/$name"
  local library
  for library in $(shared_libraries "$binary"); do
    copy_into "$rootfs" "$library"
  done
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%s:%s:nonroot:/home/nonroot:/sbin/nologin\n' \
    "$NONROOT" "$NONROOT" >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnonroot:x:%s:\n' "$NONROOT" >"$rootfs/etc/group"
  chmod 0644 "$rootfs/etc/passwd" "$rootfs/etc/group"
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
    chmod 0644 "$rootfs/etc/ssl/certs/ca-certificates.crt"
  else
    printf '[image] warning: no /etc/ssl/certs/ca-certificates.crt on this machine: %s has no CA bundle\n' "$name" >&2
  fi
  chmod 0755 "$rootfs/home/nonroot"
  local ref="$REPOSITORY/$name:$VERSION" archive="$OUT/$name-$VERSION.tar"
  local config
  config="$(printf '{"Entrypoint": ["/usr/local/bin/%s"], "User": "%s:%s", "Env": ["PATH=/usr/local/bin:/usr/bin:/bin"], "WorkingDir": "/", "Labels": {"org.opencontainers.image.version": "%s", "org.opencontainers.image.source": "https://github.com/kruise-rs/kruise-rs"}}' \
    "$name" "$user" "$user" "$VERSION")"
  python3 "$HERE/cri-image.py" --rootfs "$rootfs" "$ref" "$archive" "$config"
  printf '%s %s\n' "$archive" "$ref"
}

mkdir -p "$OUT"
build kruise-manager "$NONROOT"
build kruise-daemon 0
