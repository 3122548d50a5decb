#!/usr/bin/env bash
# Runs every test of kruise-rs: formatting, lints, unit/property/fixture/doc tests and the documentation build.
# Installs what it needs first (scripts/setup.sh). Long benchmarks and fuzzing have their own commands.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh

step() { printf '\n==> %s\n' "$*" >&2; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test (unit, property, fixture and doc tests)"
cargo test --workspace --locked

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

printf '\nall tests passed\n' >&2
