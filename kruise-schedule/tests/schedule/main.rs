//! The integration tests of `kruise-schedule`, in one test binary (one link instead of one per file). Each
//! module below was a test file of its own; `support` holds the builders and generators they share. Run one
//! module with a name filter, e.g. `cargo test -p kruise-schedule --test schedule cron_corpus`.
//!
//! Proptest keeps its regression seeds in `tests/proptest-regressions/<module>.txt`: with a `main.rs` here, its
//! default `FileFailurePersistence::SourceParallel` resolves `tests/schedule/X.rs` to that path.

mod support;

mod acj_runs;
mod acj_status;
mod broadcast_job;
mod cloneset_bounds;
mod cloneset_cache;
mod cloneset_diff_table;
mod cloneset_fleet;
mod cloneset_plan_scale;
mod cloneset_plan_update;
mod cron_corpus;
mod cron_next_table;
mod cron_oracle;
mod cron_parse_table;
mod cron_properties;
mod daemonset_budgets;
mod daemonset_in_place;
mod daemonset_manage;
mod daemonset_node_fit;
mod daemonset_properties;
mod daemonset_rolling;
mod daemonset_status;
mod daemonset_surge;
mod daemonset_update_order;
mod resource_distribution;
mod sort_orders;
mod statefulset_claim_resize;
mod statefulset_claims;
mod statefulset_inplace;
mod statefulset_ordinals;
mod statefulset_properties;
mod statefulset_scale;
mod statefulset_update;
mod untrusted_input;
mod validation_cloneset;
mod validation_daemonset;
mod validation_jobs;
mod validation_statefulset;
