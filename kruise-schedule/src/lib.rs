//! Rollout math and planners, and the AdvancedCronJob scheduler, as OpenKruise does them, without I/O.
//!
//! This crate grows with the issues "kruise-schedule rollout" (CloneSet / Advanced StatefulSet / Advanced
//! DaemonSet planners) and "kruise-schedule cron". It starts with the primitives every planner uses (spec
//! 3.0): the three IntOrString scalers and the partition rule.
//!
//! ```
//! use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
//! use kruise_schedule::int_or_percent::{Rounding, legacy_scaled};
//! use kruise_schedule::partition::partition_replicas;
//!
//! let max_unavailable = IntOrString::String("20%".into());
//! assert_eq!(legacy_scaled(&max_unavailable, 7, Rounding::Up).unwrap(), 2);
//! // A string partition short of 100% always lets at least one pod update.
//! assert_eq!(partition_replicas(Some(&IntOrString::String("99%".into())), Some(5)).unwrap(), 4);
//! ```

pub mod advanced_cron_job;
pub mod cron;
pub mod int_or_percent;
pub mod partition;
