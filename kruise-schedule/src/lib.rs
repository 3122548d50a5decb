//! Rollout math and planners, and the AdvancedCronJob scheduler, as OpenKruise does them, without I/O.
//!
//! It holds the planners of the workload controllers (CloneSet, Advanced StatefulSet, Advanced DaemonSet,
//! BroadcastJob), the AdvancedCronJob scheduler, the pure decisions of the other controllers and webhooks,
//! and the primitives every planner uses: the three IntOrString scalers and the partition rule.
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
//!
//! The cron scheduler ([`cron`]) reads schedules exactly as the AdvancedCronJob controller's robfig/cron v3
//! does, and [`advanced_cron_job::plan`] makes that controller's decisions for one reconcile:
//!
//! ```
//! use chrono::{DateTime, Utc};
//! use kruise_schedule::cron::{Schedule, Zone};
//!
//! let schedule = Schedule::parse("TZ=America/New_York 0 2 * * *").unwrap();
//! let after: DateTime<Utc> = "2024-03-09T12:00:00Z".parse().unwrap();
//! // 02:00 does not exist in New York on 2024-03-10, so the next run is on the 11th (EDT).
//! let next = schedule.next_after(after, Zone::UTC).unwrap();
//! assert_eq!(next.to_rfc3339(), "2024-03-11T06:00:00+00:00");
//! ```

pub mod advanced_cron_job;
pub mod broadcast_job;
pub mod cloneset;
pub mod cron;
pub mod daemonset;
pub mod ephemeral_job;
pub mod image_pull;
pub mod int_or_percent;
pub mod partition;
pub mod persistent_pod_state;
pub mod planning;
pub mod pod_probe;
mod pod_view;
pub mod protection;
pub mod resource_distribution;
pub mod selector_string;
pub mod sort;
pub mod split_mix;
pub mod spread;
pub mod statefulset;
pub mod united_deployment;
pub mod validation;
