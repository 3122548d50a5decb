#!/usr/bin/env bash
# Runs every test of kruise-rs: formatting, lints, unit/property/fixture/doc tests (the property tests include
# bounded fuzzing of every parser of untrusted input: `untrusted_input` in each crate, KRUISE_FUZZ_CASES cases
# each, 256 by default), a compile check of the cargo-fuzz targets on stable, the end-to-end tests against a
# local control plane, and the documentation build. Installs what it needs first (scripts/setup.sh; the
# control plane is built once into ~/.cache/kruise-rs, in the background while the lints run), and the libraries
# packaged, documented as docs.rs does and checked on their minimum Rust. Long benchmarks
# and long fuzzing runs have their own commands (see docs/architecture.md, "Test layers").
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh

step() { printf '\n==> %s\n' "$*" >&2; }

# No incremental compilation: this script builds everything once, and the incremental caches of the
# workspace's crates were half of a clean build (8.3 GB under target/ with them, 4.2 GB without, after the
# clippy and test builds on a fresh clone; debug info is kept small in Cargo.toml). A CI machine ran out
# of disk in the middle of the test build (its linker died of SIGBUS). CARGO_INCREMENTAL=1 turns them back on.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# Say what is free, so a linker that dies for lack of disk is recognised as such.
step "free disk for target/"
df -h . >&2 || true

# The control plane for the end-to-end tests: installed (cached after the first time) while the lints run.
control_plane_log="$(mktemp "${TMPDIR:-/tmp}/kruise-rs-control-plane.XXXXXX")"
./scripts/control-plane.sh install >"$control_plane_log" 2>&1 &
control_plane_install=$!

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

# The cargo-fuzz targets are their own workspace (running them needs nightly); compiling them on stable keeps
# them in step with the libraries and their lock file consistent. Their build script compiles libFuzzer (C++).
step "cargo check of the fuzz targets (fuzz/, stable, without cargo-fuzz)"
cargo check --manifest-path fuzz/Cargo.toml --locked --bins

step "local control plane for the end-to-end tests"
install_status=0
wait "$control_plane_install" || install_status=$?
cat "$control_plane_log" >&2
rm -f "$control_plane_log"
case "$install_status" in
  0) ;;
  3)
    if [ "${CI:-}" = true ]; then
      printf 'the local control plane cannot be installed here, and CI=true forbids skipping the end-to-end tests\n' >&2
      exit 1
    fi
    export KRUISE_E2E_SKIP="the local control plane cannot be installed on this machine (see above)" ;;
  *) printf 'control plane install failed (exit %s)\n' "$install_status" >&2; exit "$install_status" ;;
esac

step "cargo test (unit, property, fixture, doc and end-to-end tests)"
cargo test --workspace --locked

# The offline `cargo run --example` programs of the libraries run (not only compile); they exit non-zero on error.
step "the library examples"
cargo run -q --locked -p kruise-schedule --example cloneset_plan >/dev/null
cargo run -q --locked -p kruise-schedule --example cron_dst >/dev/null
cargo run -q --locked -p kruise-sidecar --example inject_sidecarsets >/dev/null
cargo run -q --locked -p kruise-inplace --example inplace_update >/dev/null

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

# The five libraries as crates.io and docs.rs would take them: each packaged and built from its package alone
# (with its siblings from the same run; k8s-openapi's version from K8S_OPENAPI_ENABLED_VERSION, as a library
# enables none), and each documented the way docs.rs does (`[package.metadata.docs.rs]`).
libraries=(-p kruise-api -p kruise-lifecycle -p kruise-inplace -p kruise-schedule -p kruise-sidecar)
step "cargo package of the libraries (built from the packages)"
# Cargo verifies each package against its siblings through a local registry of this run's packages. It takes
# a registry crate of a given name and version to be immutable: its unpacked sources
# ($CARGO_HOME/registry/src/-<hash>/) and its build are reused by the next run of the same version, which
# would then check the last run's code. So the verification builds in its own target directory (kept, so
# only the five libraries are rebuilt), and both copies of the libraries are removed first.
package_target=target/package-verify
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/kruise-{api,lifecycle,inplace,schedule,sidecar}-[0-9]*
rm -rf "$package_target"/debug/.fingerprint/kruise-* "$package_target"/debug/deps/libkruise_* "$package_target"/debug/deps/kruise_*
CARGO_TARGET_DIR="$package_target" K8S_OPENAPI_ENABLED_VERSION=1.37 \
  cargo package "${libraries[@]}" --locked --allow-dirty --quiet

step "cargo doc of the libraries as docs.rs builds them"
for library in kruise-api kruise-lifecycle kruise-inplace kruise-schedule kruise-sidecar; do
  RUSTDOCFLAGS="-D warnings" cargo doc -p "$library" --features k8s-openapi/latest --no-deps --locked --quiet
done

# The libraries promise Rust 1.89 (`rust-version`): checked with that toolchain when rustup can install it.
step "the libraries on their minimum Rust (1.89)"
if timeout 300 rustup toolchain install 1.89 --profile minimal >/dev/null 2>&1; then
  K8S_OPENAPI_ENABLED_VERSION=1.37 cargo +1.89 check "${libraries[@]}" --locked
else
  printf 'not checked: rustup cannot install Rust 1.89 on this machine (only the default toolchain is available)\n' >&2
fi

printf '\nall tests passed\n' >&2
