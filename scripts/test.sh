#!/usr/bin/env bash
# Runs every test of kruise-rs: formatting, lints, unit/property/fixture/doc tests (the property tests include
# bounded fuzzing of every parser of untrusted input: `untrusted_input` in each crate, KRUISE_FUZZ_CASES cases
# each, 256 by default), a compile check of the cargo-fuzz targets on stable, the end-to-end tests against a
# local control plane, and the documentation build. Installs what it needs first (scripts/setup.sh; the
# control plane is built once into ~/.cache/kruise-rs, in the background while the lints run). Long benchmarks
# and long fuzzing runs have their own commands (see docs/architecture.md, "Test layers").
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh

step() { printf '\n==> %s\n' "$*" >&2; }

# A clean build writes about 7 GB under target/ (debug info is kept small in Cargo.toml); say what is free, so a
# linker that dies for lack of disk is recognised as such.
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

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

printf '\nall tests passed\n' >&2
