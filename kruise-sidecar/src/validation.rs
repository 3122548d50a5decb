//! The SidecarSet validation rules (upstream `pkg/webhook/sidecarset/validating`) as a pure function (the checks a
//! SidecarSet validating webhook answers with): every problem is a [`Violation`] naming the field and the value.
//! The caller decodes the admission request, applies the defaults and reads the other SidecarSets and the
//! whitelist; [`validate`] only decides.
//!
//! * `spec.selector` is set, non-empty and valid; `spec.namespaceSelector` is valid;
//! * a non-zero `updateStrategy.partition` and `updateStrategy.selector` are not both set;
//! * `HotUpgrade` only for containers (not init containers), with a `hotUpgradeEmptyImage` that differs from
//!   the image; `upgradeType` of an existing container never changes (UPDATE);
//! * container, init container and volume names do not collide with another SidecarSet that may select the
//!   same pods (same volume name with the same definition is allowed);
//! * non-`Retain` `patchPodMetadata` keys are not patched by another such SidecarSet, and every key is
//!   allowed by the whitelist ([`validate_patch_metadata`]);
//! * a canary SidecarSet names its base and does not use `RollingUpdate`.
//!
//! Two SidecarSets "may select the same pods" unless their namespace selectors pin disjoint namespaces or
//! their `matchLabels` require different values for one key (a conservative reading: expressions are not
//! compared).
//!
//! ```
//! use kruise_sidecar::validation::validate;
//!
//! let set = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "s"},
//!     "spec": {"containers": [{"name": "c", "image": "busybox"}]}
//! })).unwrap();
//! let violations = validate(&set, None, &[], None, false);
//! assert_eq!(violations[0].field, "spec.selector");
//! ```

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{SidecarContainer, SidecarSet, SidecarSetUpdateStrategyType};
use kruise_api::keys::sidecarset as keys;
use kruise_api::label_selector;

use crate::hot_upgrade::is_hot_upgrade;
use crate::matching::{canary_base, indexed_namespaces};
use crate::metadata::{PatchMetadataWhitelist, conflicting_patch_keys, validate_patch_metadata};

/// One broken rule; displayed `field: message`, the line a webhook answers with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
#[non_exhaustive]
pub struct Violation {
    /// The field (`spec.containers[0].upgradeStrategy`, ...).
    pub field: String,
    /// What is wrong, naming the value.
    pub message: String,
}

fn violation(field: impl Into<String>, message: impl Into<String>) -> Violation {
    Violation {
        field: field.into(),
        message: message.into(),
    }
}

/// Checks `sidecarset` (and, on UPDATE, against `old`) among the `others` stored, with the
/// `patchPodMetadata` whitelist (`defaults_allowed`: gate `SidecarSetPatchPodMetadataDefaultsAllowed`):
/// upstream's `sidecarset_create_update_handler.go`. Every violation found, in the order of the module's
/// rules; empty when the SidecarSet is valid. `others` may include `sidecarset` itself (skipped by name).
#[must_use]
pub fn validate<'a>(
    sidecarset: &SidecarSet,
    old: Option<&SidecarSet>,
    others: impl IntoIterator<Item = &'a SidecarSet>,
    whitelist: Option<&PatchMetadataWhitelist>,
    defaults_allowed: bool,
) -> Vec<Violation> {
    let mut found = Vec::new();
    let spec = &sidecarset.spec;
    match &spec.selector {
        None => found.push(violation("spec.selector", "is required")),
        Some(selector) if label_selector::is_empty(selector) => {
            found.push(violation("spec.selector", "must not be empty"));
        }
        Some(selector) => {
            if let Err(error) = label_selector::validate(selector) {
                found.push(violation("spec.selector", error.to_string()));
            }
        }
    }
    if let Some(selector) = &spec.namespace_selector
        && let Err(error) = label_selector::validate(selector)
    {
        found.push(violation("spec.namespaceSelector", error.to_string()));
    }
    let strategy = &spec.update_strategy;
    if let Some(partition) = strategy.partition.as_ref().filter(|p| !is_zero(p))
        && strategy.selector.is_some()
    {
        let value = match partition {
            IntOrString::Int(number) => number.to_string(),
            IntOrString::String(text) => format!("{text:?}"),
        };
        found.push(violation(
            "spec.updateStrategy",
            format!("a non-zero partition ({value}) and a selector cannot both be set"),
        ));
    }
    for (index, init) in spec.init_containers.iter().enumerate() {
        if is_hot_upgrade(init) {
            found.push(violation(
                format!("spec.initContainers[{index}].upgradeStrategy.upgradeType"),
                format!(
                    "HotUpgrade is not allowed for init container {:?}",
                    init.container.name
                ),
            ));
        }
    }
    for (index, sidecar) in spec.containers.iter().enumerate() {
        if is_hot_upgrade(sidecar) {
            let empty = &sidecar.upgrade_strategy.hot_upgrade_empty_image;
            let field = format!("spec.containers[{index}].upgradeStrategy.hotUpgradeEmptyImage");
            if empty.is_empty() {
                found.push(violation(
                    field,
                    format!(
                        "is required for HotUpgrade container {:?}",
                        sidecar.container.name
                    ),
                ));
            } else if sidecar.container.image.as_deref() == Some(empty.as_str()) {
                found.push(violation(
                    field,
                    format!("{empty:?} must differ from the container's image"),
                ));
            }
        }
        if let Some(old) = old
            && let Some(before) = old
                .spec
                .containers
                .iter()
                .find(|c| c.container.name == sidecar.container.name)
            && is_hot_upgrade(before) != is_hot_upgrade(sidecar)
        {
            found.push(violation(
                format!("spec.containers[{index}].upgradeStrategy.upgradeType"),
                format!("is immutable (container {:?})", sidecar.container.name),
            ));
        }
    }
    let name = sidecarset.metadata.name.as_deref().unwrap_or_default();
    let overlapping: Vec<&SidecarSet> = others
        .into_iter()
        .filter(|other| other.metadata.name.as_deref() != Some(name))
        .filter(|other| may_overlap(sidecarset, other))
        .collect();
    for other in &overlapping {
        let other_name = other.metadata.name.as_deref().unwrap_or_default();
        let names = |set: &SidecarSet| -> Vec<String> {
            set.spec
                .containers
                .iter()
                .chain(&set.spec.init_containers)
                .map(|c: &SidecarContainer| c.container.name.clone())
                .collect()
        };
        let theirs = names(other);
        for mine in names(sidecarset) {
            if theirs.contains(&mine) {
                found.push(violation(
                    "spec.containers",
                    format!("container name {mine:?} is also used by SidecarSet {other_name:?}"),
                ));
            }
        }
        for volume in &spec.volumes {
            if let Some(same) = other.spec.volumes.iter().find(|v| v.name == volume.name)
                && same != volume
            {
                found.push(violation(
                    "spec.volumes",
                    format!(
                        "volume {:?} is defined differently by SidecarSet {other_name:?}",
                        volume.name
                    ),
                ));
            }
        }
    }
    for (key, other) in conflicting_patch_keys(sidecarset, overlapping.iter().copied()) {
        found.push(violation(
            "spec.patchPodMetadata",
            format!("annotation {key:?} is also patched by SidecarSet {other:?}"),
        ));
    }
    if let Err(error) = validate_patch_metadata(sidecarset, whitelist, defaults_allowed) {
        found.push(violation("spec.patchPodMetadata", error.to_string()));
    }
    let canary = sidecarset
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::CANARY_ANNOTATION))
        .is_some_and(|value| value == "true");
    if canary {
        if canary_base(sidecarset).is_none() {
            found.push(violation(
                format!("metadata.annotations[{}]", keys::BASE_ANNOTATION),
                "a canary SidecarSet must name its base",
            ));
        }
        if strategy.type_ != Some(SidecarSetUpdateStrategyType::NotUpdate) {
            found.push(violation(
                "spec.updateStrategy.type",
                "a canary SidecarSet cannot use RollingUpdate",
            ));
        }
    }
    found
}

/// Whether a partition keeps no pod back (`0`, `"0"`, `"0%"`).
fn is_zero(partition: &IntOrString) -> bool {
    match partition {
        IntOrString::Int(number) => *number == 0,
        IntOrString::String(text) => text
            .trim_end_matches('%')
            .parse::<i64>()
            .is_ok_and(|n| n == 0),
    }
}

/// Whether two SidecarSets may select the same pod (see the module doc).
#[must_use]
pub fn may_overlap(a: &SidecarSet, b: &SidecarSet) -> bool {
    if let (Some(left), Some(right)) = (indexed_namespaces(a), indexed_namespaces(b))
        && left.is_disjoint(&right)
    {
        return false;
    }
    let labels = |set: &SidecarSet| {
        set.spec
            .selector
            .as_ref()
            .and_then(|s| s.match_labels.clone())
            .unwrap_or_default()
    };
    let (left, right) = (labels(a), labels(b));
    !left
        .iter()
        .any(|(key, value)| right.get(key).is_some_and(|other| other != value))
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)] // test fixtures take json! literals
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn set(name: &str, spec: Value) -> SidecarSet {
        let mut base = json!({"selector": {"matchLabels": {"app": "nginx"}},
            "containers": [{"name": format!("{name}-c"), "image": "busybox"}]});
        if let (Some(base), Some(extra)) = (base.as_object_mut(), spec.as_object()) {
            for (key, value) in extra {
                base.insert(key.clone(), value.clone());
            }
        }
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": base})).unwrap()
    }

    fn fields(violations: &[Violation]) -> Vec<&str> {
        violations.iter().map(|v| v.field.as_str()).collect()
    }

    #[test]
    fn a_plain_sidecarset_is_valid() {
        assert!(validate(&set("a", json!({})), None, &[], None, false).is_empty());
    }

    #[test]
    fn selector_and_strategy_rules() {
        let empty = set("a", json!({"selector": {}}));
        assert_eq!(
            fields(&validate(&empty, None, &[], None, false)),
            ["spec.selector"]
        );
        let bad = set(
            "a",
            json!({"selector": {"matchExpressions": [{"key": "k", "operator": "Bogus"}]}}),
        );
        assert_eq!(
            fields(&validate(&bad, None, &[], None, false)),
            ["spec.selector"]
        );
        let both = set(
            "a",
            json!({"updateStrategy": {"partition": 1, "selector": {"matchLabels": {"x": "y"}}}}),
        );
        assert_eq!(
            fields(&validate(&both, None, &[], None, false)),
            ["spec.updateStrategy"]
        );
        for zero in [json!(0), json!("0%")] {
            let canary = set(
                "a",
                json!({"updateStrategy": {"partition": zero, "selector": {"matchLabels": {"x": "y"}}}}),
            );
            assert!(validate(&canary, None, &[], None, false).is_empty());
        }
    }

    #[test]
    fn hot_upgrade_rules() {
        let hot = |empty: &str| {
            json!([{"name": "proxy", "image": "proxy:1",
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": empty}}])
        };
        let init = set("a", json!({"initContainers": hot("empty:1")}));
        assert_eq!(
            fields(&validate(&init, None, &[], None, false)),
            ["spec.initContainers[0].upgradeStrategy.upgradeType"]
        );
        let missing = set("a", json!({"containers": hot("")}));
        assert_eq!(
            fields(&validate(&missing, None, &[], None, false)),
            ["spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage"]
        );
        let same = set("a", json!({"containers": hot("proxy:1")}));
        assert!(
            validate(&same, None, &[], None, false)[0]
                .message
                .contains("proxy:1")
        );
        let good = set("a", json!({"containers": hot("empty:1")}));
        assert!(validate(&good, None, &[], None, false).is_empty());
        let cold = set(
            "a",
            json!({"containers": [{"name": "proxy", "image": "proxy:1"}]}),
        );
        assert_eq!(
            fields(&validate(&good, Some(&cold), &[], None, false)),
            ["spec.containers[0].upgradeStrategy.upgradeType"]
        );
    }

    #[test]
    fn names_collide_only_with_overlapping_sidecarsets() {
        let mine = set(
            "a",
            json!({"containers": [{"name": "log", "image": "x"}],
            "volumes": [{"name": "v", "emptyDir": {}}]}),
        );
        let same_pods = set(
            "b",
            json!({"containers": [{"name": "log", "image": "y"}],
            "volumes": [{"name": "v", "hostPath": {"path": "/x"}}]}),
        );
        let violations = validate(&mine, None, std::slice::from_ref(&same_pods), None, false);
        assert_eq!(fields(&violations), ["spec.containers", "spec.volumes"]);
        assert!(violations[0].message.contains("\"b\""));
        let other_pods = set(
            "c",
            json!({"selector": {"matchLabels": {"app": "redis"}},
            "containers": [{"name": "log", "image": "y"}]}),
        );
        assert!(validate(&mine, None, &[other_pods], None, false).is_empty());
        let other_namespace = set(
            "d",
            json!({
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "other"}},
            "containers": [{"name": "log", "image": "y"}]}),
        );
        let pinned = set(
            "a",
            json!({
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "mine"}},
            "containers": [{"name": "log", "image": "x"}]}),
        );
        assert!(validate(&pinned, None, &[other_namespace], None, false).is_empty());
        // Itself (an UPDATE) is not a collision.
        assert!(validate(&mine, None, std::slice::from_ref(&mine), None, false).is_empty());
    }

    #[test]
    fn patch_metadata_needs_the_whitelist_and_no_conflict() {
        let patch = json!([{"annotations": {"k": "v"}, "patchPolicy": "Overwrite"}]);
        let mine = set("a", json!({"patchPodMetadata": patch}));
        let violations = validate(&mine, None, &[], None, false);
        assert_eq!(fields(&violations), ["spec.patchPodMetadata"]);
        assert!(validate(&mine, None, &[], None, true).is_empty());
        let whitelist =
            PatchMetadataWhitelist::parse(r#"{"rules": [{"allowedAnnotationKeyExprs": ["^k$"]}]}"#)
                .unwrap();
        assert!(validate(&mine, None, &[], Some(&whitelist), false).is_empty());
        let other = set("b", json!({"patchPodMetadata": patch}));
        let violations = validate(&mine, None, &[other], Some(&whitelist), false);
        assert!(violations[0].message.contains("\"k\""), "{violations:?}");
    }

    #[test]
    fn canaries_name_their_base_and_do_not_roll() {
        let mut canary = set("a", json!({}));
        canary.metadata.annotations =
            Some([(keys::CANARY_ANNOTATION.to_owned(), "true".to_owned())].into());
        let found = validate(&canary, None, &[], None, false);
        assert_eq!(found.len(), 2, "{found:?}");
        let mut fixed = set("a", json!({"updateStrategy": {"type": "NotUpdate"}}));
        fixed.metadata.annotations = Some(
            [
                (keys::CANARY_ANNOTATION.to_owned(), "true".to_owned()),
                (keys::BASE_ANNOTATION.to_owned(), "base".to_owned()),
            ]
            .into(),
        );
        assert!(validate(&fixed, None, &[], None, false).is_empty());
    }
}
