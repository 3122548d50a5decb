//! Whether a lifecycle hook holds a pod (upstream `pkg/util/lifecycle/lifecycle_utils.go`).
//!
//! A hook is a set of labels (`labelsHandler`) and finalizers (`finalizersHandler`) that a user's operator
//! puts on a pod and later takes off. Two readings exist, and the state machine uses both:
//!
//! * [`is_hooked`] — **any** handler finalizer is present or **any** handler label matches. Used to decide
//!   whether to hold a pod (enter `PreparingUpdate` / `PreparingDelete`, or wait there).
//! * [`is_all_hooked`] — **all** finalizers present and **all** labels match; a missing hook is `false`. Used
//!   to decide whether the hook has been re-armed (`Updated → Normal`, `PreparingNormal → Normal`).
//!
//! Labels compare like Go's `pod.Labels[k] == v`: a handler label whose value is empty also matches a pod
//! that lacks the label.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_api::lifecycle::LifecycleHook;
//! use kruise_lifecycle::hook::{is_all_hooked, is_hooked};
//!
//! let hook = LifecycleHook {
//!     finalizers_handler: vec!["example.com/a".into(), "example.com/b".into()],
//!     ..Default::default()
//! };
//! let mut pod = Pod::default();
//! pod.metadata.finalizers = Some(vec!["example.com/a".into()]);
//! assert!(is_hooked(Some(&hook), &pod));
//! assert!(!is_all_hooked(Some(&hook), &pod));
//! assert!(!is_hooked(None, &pod) && !is_all_hooked(None, &pod));
//! ```

use k8s_openapi::api::core::v1::Pod;
use kruise_api::lifecycle::LifecycleHook;

use crate::change::MetadataChange;

fn has_finalizer(pod: &Pod, finalizer: &str) -> bool {
    pod.metadata
        .finalizers
        .as_ref()
        .is_some_and(|finalizers| finalizers.iter().any(|f| f == finalizer))
}

fn label_matches(pod: &Pod, key: &str, value: &str) -> bool {
    // Go reads a missing key as "", so an empty handler value matches an absent label.
    kruise_api::pod::label(pod, key).unwrap_or("") == value
}

/// Whether `hook` holds `pod`: any handler finalizer is present, or any handler label has its value
/// (upstream `IsPodHooked`). A missing hook holds nothing.
#[must_use]
pub fn is_hooked(hook: Option<&LifecycleHook>, pod: &Pod) -> bool {
    let Some(hook) = hook else {
        return false;
    };
    hook.finalizers_handler
        .iter()
        .any(|finalizer| has_finalizer(pod, finalizer))
        || hook
            .labels_handler
            .iter()
            .any(|(key, value)| label_matches(pod, key, value))
}

/// Whether every handler finalizer is present and every handler label has its value (upstream
/// `IsPodAllHooked`). A missing hook is **not** all-hooked; an empty hook (no labels, no finalizers) is.
#[must_use]
pub fn is_all_hooked(hook: Option<&LifecycleHook>, pod: &Pod) -> bool {
    let Some(hook) = hook else {
        return false;
    };
    hook.finalizers_handler
        .iter()
        .all(|finalizer| has_finalizer(pod, finalizer))
        && hook
            .labels_handler
            .iter()
            .all(|(key, value)| label_matches(pod, key, value))
}

/// The metadata change that arms `hook` on a pod: every handler label set to its value and every handler
/// finalizer added (never removing anything). The state machine uses it for `Updated → PreparingUpdate`; a
/// user's operator can use it to re-arm a hook after its work is done.
///
/// ```
/// use kruise_api::lifecycle::LifecycleHook;
/// use kruise_lifecycle::hook;
///
/// let inplace = LifecycleHook {
///     labels_handler: [("example.com/unready-blocker-inplace".to_owned(), "true".to_owned())].into(),
///     ..Default::default()
/// };
/// let change = hook::arm(&inplace);
/// assert_eq!(
///     change.strategic_merge_patch().unwrap().to_string(),
///     r#"{"metadata":{"labels":{"example.com/unready-blocker-inplace":"true"}}}"#
/// );
/// ```
#[must_use]
pub fn arm(hook: &LifecycleHook) -> MetadataChange {
    let mut change = MetadataChange::default();
    for (key, value) in &hook.labels_handler {
        change = change.with_label(key, value);
    }
    for finalizer in &hook.finalizers_handler {
        change = change.with_finalizer(finalizer);
    }
    change
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn hook(labels: &[(&str, &str)], finalizers: &[&str]) -> LifecycleHook {
        LifecycleHook {
            labels_handler: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            finalizers_handler: finalizers.iter().map(|f| (*f).to_owned()).collect(),
            mark_pod_not_ready: false,
        }
    }

    fn pod(labels: &[(&str, &str)], finalizers: &[&str]) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        );
        pod.metadata.finalizers = Some(finalizers.iter().map(|f| (*f).to_owned()).collect());
        pod
    }

    #[test]
    fn any_versus_all() {
        let h = hook(&[("a", "1"), ("b", "1")], &["f1", "f2"]);
        // (pod labels, pod finalizers, hooked, all hooked)
        type Row<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], bool, bool);
        let cases: &[Row<'_>] = &[
            (&[], &[], false, false),
            (&[("a", "1")], &[], true, false),
            (&[("a", "2")], &[], false, false),
            (&[], &["f2"], true, false),
            (&[("a", "1"), ("b", "1")], &["f1"], true, false),
            (&[("a", "1"), ("b", "1")], &["f2", "f1", "x"], true, true),
        ];
        for (labels, finalizers, hooked, all) in cases {
            let p = pod(labels, finalizers);
            assert_eq!(
                is_hooked(Some(&h), &p),
                *hooked,
                "{labels:?} {finalizers:?}"
            );
            assert_eq!(
                is_all_hooked(Some(&h), &p),
                *all,
                "{labels:?} {finalizers:?}"
            );
        }
    }

    #[test]
    fn missing_and_empty_hooks() {
        let p = pod(&[("a", "1")], &["f1"]);
        assert!(!is_hooked(None, &p));
        assert!(!is_all_hooked(None, &p), "a nil hook is never all-hooked");
        let empty = LifecycleHook::default();
        assert!(!is_hooked(Some(&empty), &p));
        assert!(
            is_all_hooked(Some(&empty), &p),
            "vacuously true, as upstream"
        );
    }

    #[test]
    fn empty_label_value_matches_an_absent_label() {
        let h = hook(&[("gone", "")], &[]);
        assert!(is_hooked(Some(&h), &Pod::default()));
        assert!(is_all_hooked(Some(&h), &Pod::default()));
        assert!(!is_hooked(Some(&h), &pod(&[("gone", "x")], &[])));
    }
}
