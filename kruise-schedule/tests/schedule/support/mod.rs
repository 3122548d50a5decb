//! Support code shared by the test modules of this binary, declared once here and used as
//! `crate::support::...`.

// Test code: each test module uses some of these; a panic is a failed test.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

/// AdvancedCronJob builders and plan accessors (`acj_runs`, `acj_status`).
pub mod acj;
/// Advanced StatefulSet builders (`statefulset_*`).
pub mod asts;
/// Cron generators (`cron_properties`, `cron_oracle`).
pub mod cron;
/// Advanced DaemonSet builders (`daemonset_*`).
pub mod daemonset;
/// CloneSet builders, planning helpers and the fleet simulation (`cloneset_*`, `sort_orders`).
pub mod rollout;
/// Validation table rows (`validation_*`).
pub mod validation_table;
