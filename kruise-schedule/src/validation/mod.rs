//! Upstream's validating webhooks of the workload kinds as pure functions: CloneSet, Advanced StatefulSet,
//! Advanced DaemonSet, BroadcastJob, AdvancedCronJob and ImagePullJob. Each kind's `validate` takes the
//! defaulted object (and, for an UPDATE, the defaulted stored object) in the version upstream validates
//! and returns every broken rule as a [`FieldError`] naming the field and the value, in Kubernetes' field
//! error style. The caller decodes the admission request, applies the defaults and answers.
//!
//! | kind | version | module |
//! |---|---|---|
//! | CloneSet | v1alpha1 | [`cloneset`] |
//! | Advanced StatefulSet | v1beta1 | [`statefulset`] |
//! | Advanced DaemonSet | v1alpha1 | [`daemonset`] |
//! | BroadcastJob | v1alpha1 | [`broadcastjob`] |
//! | AdvancedCronJob | v1alpha1 | [`advancedcronjob`] |
//! | ImagePullJob | v1alpha1 | [`imagepulljob`] |
//!
//! The pod template checks are a subset of Kubernetes' (named containers with images; see each
//! module's list); metadata rules other than the job kinds' name rule are the API server's.
//!
//! ```
//! use kruise_api::apps::v1alpha1::CloneSet;
//! use kruise_api::defaults::ApplyDefaults;
//! use kruise_schedule::validation::cloneset;
//!
//! let mut set: CloneSet = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "demo"},
//!     "spec": {"selector": {"matchLabels": {"app": "demo"}},
//!         "template": {"metadata": {"labels": {"app": "demo"}},
//!             "spec": {"containers": [{"name": "main", "image": "nginx"}]}},
//!         "updateStrategy": {"partition": "abc"}}
//! })).unwrap();
//! set.apply_defaults();
//! let errors = cloneset::validate(&set, None);
//! assert_eq!(errors.len(), 1);
//! assert!(errors[0].to_string().starts_with("spec.updateStrategy.partition: Invalid value: \"abc\""));
//! ```

pub mod advancedcronjob;
pub mod broadcastjob;
pub mod cloneset;
pub mod daemonset;
mod field_error;
pub mod imagepulljob;
mod number_rules;
mod object_name_rules;
mod pod_template_rules;
mod selector_rules;
pub mod statefulset;

pub use field_error::{FieldError, Problem};
pub(crate) use pod_template_rules::dns_label_problem;
