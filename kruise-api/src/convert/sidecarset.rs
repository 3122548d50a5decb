//! `SidecarSet` v1alpha1 ⇄ v1beta1 (upstream `apis/apps/v1alpha1/sidecarset_conversion.go`).
//!
//! * `spec.namespace: X` ⇒ `namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: X}}`, replacing
//!   any v1alpha1 `namespaceSelector` (upstream: the namespace wins). Back, a selector of exactly that form
//!   (one `matchLabels` entry with that key and a non-empty value, no `matchExpressions`) becomes
//!   `namespace: X` again, where upstream keeps it as a selector; both mean "pods of namespace X". So the
//!   mapping is injective except for a v1alpha1 object that sets both fields, or whose own
//!   `namespaceSelector` already has exactly that form: those two rare cases are told apart by the stash.
//! * The label `apps.kruise.io/sidecarset-custom-version` ⇒ `spec.customVersion`, and the label is removed
//!   from the v1beta1 object (as upstream); back, a non-empty `customVersion` becomes the label. Unlike
//!   upstream, a label with an empty value stays a label (`customVersion` cannot tell "" from unset), so
//!   nothing is lost.
//! * Everything else has the same name and shape in both versions (sidecar containers, volumes, update and
//!   injection strategies, pull secrets, revision history, pod metadata patches, status).
//!
//! v1beta1 → v1alpha1: a `customVersion` overwrites a label of the same key on the v1beta1 object (such a
//! label only exists on objects edited as v1beta1).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};
use crate::keys;

impl HubConversion for v1alpha1::SidecarSet {
    type Hub = v1beta1::SidecarSet;

    fn to_hub_fields(&self) -> v1beta1::SidecarSet {
        let spec = &self.spec;
        let mut metadata = self.metadata.clone();
        let custom_version = take_custom_version_label(&mut metadata.labels);
        let namespace_selector = if spec.namespace.is_empty() {
            spec.namespace_selector.clone()
        } else {
            Some(namespace_name_selector(&spec.namespace))
        };
        v1beta1::SidecarSet {
            metadata,
            spec: v1beta1::SidecarSetSpec {
                selector: spec.selector.clone(),
                namespace_selector,
                init_containers: spec.init_containers.clone(),
                containers: spec.containers.clone(),
                volumes: spec.volumes.clone(),
                update_strategy: spec.update_strategy.clone(),
                injection_strategy: spec.injection_strategy.clone(),
                image_pull_secrets: spec.image_pull_secrets.clone(),
                revision_history_limit: spec.revision_history_limit,
                patch_pod_metadata: spec.patch_pod_metadata.clone(),
                custom_version,
            },
            status: self.status.clone(),
        }
    }

    fn from_hub_fields(hub: &v1beta1::SidecarSet) -> Self {
        let spec = &hub.spec;
        let mut metadata = hub.metadata.clone();
        if !spec.custom_version.is_empty() {
            metadata.labels.get_or_insert_with(BTreeMap::new).insert(
                keys::sidecarset::CUSTOM_VERSION_LABEL.to_owned(),
                spec.custom_version.clone(),
            );
        }
        let (namespace, namespace_selector) =
            match spec.namespace_selector.as_ref().and_then(pinned_namespace) {
                Some(namespace) => (namespace.to_owned(), None),
                None => (String::new(), spec.namespace_selector.clone()),
            };
        v1alpha1::SidecarSet {
            metadata,
            spec: v1alpha1::SidecarSetSpec {
                selector: spec.selector.clone(),
                namespace,
                namespace_selector,
                init_containers: spec.init_containers.clone(),
                containers: spec.containers.clone(),
                volumes: spec.volumes.clone(),
                update_strategy: spec.update_strategy.clone(),
                injection_strategy: spec.injection_strategy.clone(),
                image_pull_secrets: spec.image_pull_secrets.clone(),
                revision_history_limit: spec.revision_history_limit,
                patch_pod_metadata: spec.patch_pod_metadata.clone(),
            },
            status: hub.status.clone(),
        }
    }
}

hub_conversion!(v1alpha1::SidecarSet => v1beta1::SidecarSet);

/// Removes a non-empty custom-version label and returns its value (an empty value stays a label). A label
/// map left empty disappears, so that converting back restores exactly the map there was.
fn take_custom_version_label(labels: &mut Option<BTreeMap<String, String>>) -> String {
    let Some(map) = labels.as_mut() else {
        return String::new();
    };
    let value = match map.get(keys::sidecarset::CUSTOM_VERSION_LABEL) {
        Some(value) if !value.is_empty() => value.clone(),
        _ => return String::new(),
    };
    map.remove(keys::sidecarset::CUSTOM_VERSION_LABEL);
    if map.is_empty() {
        *labels = None;
    }
    value
}

/// The v1beta1 form of the v1alpha1 `namespace` field.
fn namespace_name_selector(namespace: &str) -> LabelSelector {
    LabelSelector {
        match_labels: Some(BTreeMap::from([(
            keys::kubernetes::NAMESPACE_NAME_LABEL.to_owned(),
            namespace.to_owned(),
        )])),
        match_expressions: None,
    }
}

/// The namespace a selector of exactly the form [`namespace_name_selector`] makes pinned.
fn pinned_namespace(selector: &LabelSelector) -> Option<&str> {
    if selector.match_expressions.is_some() {
        return None;
    }
    let labels = selector.match_labels.as_ref()?;
    let (key, value) = labels.first_key_value()?;
    (labels.len() == 1 && key == keys::kubernetes::NAMESPACE_NAME_LABEL && !value.is_empty())
        .then_some(value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;

    const BASE: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: demo
spec:
  selector: {matchLabels: {app: nginx}}
  containers:
  - name: sidecar1
    image: busybox
    shareVolumePolicy: {type: enabled}
    upgradeStrategy: {upgradeType: ColdUpgrade}
";

    fn with(extra: &str) -> v1alpha1::SidecarSet {
        serde_saphyr::from_str(&format!("{BASE}{extra}")).unwrap()
    }

    fn round_trip(alpha: &v1alpha1::SidecarSet) -> v1beta1::SidecarSet {
        let beta = v1beta1::SidecarSet::from(alpha);
        assert_eq!(&v1alpha1::SidecarSet::from(&beta), alpha, "round trip");
        beta
    }

    fn stashed(beta: &v1beta1::SidecarSet) -> bool {
        beta.metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(STASH_ANNOTATION))
    }

    fn labels(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn namespace_becomes_a_namespace_name_selector() {
        let beta = round_trip(&with("  namespace: team-a\n"));
        assert!(!stashed(&beta));
        assert_eq!(
            beta.spec.namespace_selector,
            Some(namespace_name_selector("team-a"))
        );
        let json = serde_json::to_value(&beta.spec).unwrap();
        assert_eq!(
            json["namespaceSelector"],
            serde_json::json!({"matchLabels": {"kubernetes.io/metadata.name": "team-a"}})
        );
        assert!(json.get("namespace").is_none());
    }

    #[test]
    fn namespace_selectors_stay_selectors() {
        for selector in [
            "{matchLabels: {env: prod}}",
            "{matchLabels: {kubernetes.io/metadata.name: a, env: prod}}",
            "{matchLabels: {kubernetes.io/metadata.name: a}, matchExpressions: []}",
            "{matchLabels: {kubernetes.io/metadata.name: ''}}",
            "{matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [a, b]}]}",
            "{}",
        ] {
            let alpha = with(&format!("  namespaceSelector: {selector}\n"));
            let beta = round_trip(&alpha);
            assert!(!stashed(&beta), "{selector}");
            assert_eq!(beta.spec.namespace_selector, alpha.spec.namespace_selector);
        }
    }

    #[test]
    fn namespace_wins_over_namespace_selector() {
        let alpha = with("  namespace: team-a\n  namespaceSelector: {matchLabels: {env: prod}}\n");
        let beta = round_trip(&alpha);
        assert_eq!(
            beta.spec.namespace_selector,
            Some(namespace_name_selector("team-a")),
            "upstream: the namespace wins"
        );
        assert!(stashed(&beta), "the dropped selector is kept by the stash");
        let pinned_selector =
            with("  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-a}}\n");
        assert!(
            stashed(&round_trip(&pinned_selector)),
            "a v1alpha1 selector that looks like a converted namespace needs the stash"
        );
    }

    #[test]
    fn custom_version_label_becomes_the_field() {
        let mut alpha = with("");
        alpha.metadata.labels = labels(&[(keys::sidecarset::CUSTOM_VERSION_LABEL, "v2")]);
        let beta = round_trip(&alpha);
        assert!(!stashed(&beta));
        assert_eq!(beta.spec.custom_version, "v2");
        assert_eq!(beta.metadata.labels, None, "upstream removes the label");

        alpha.metadata.labels = labels(&[
            (keys::sidecarset::CUSTOM_VERSION_LABEL, "v3"),
            ("team", "infra"),
        ]);
        let beta = round_trip(&alpha);
        assert!(!stashed(&beta));
        assert_eq!(beta.metadata.labels, labels(&[("team", "infra")]));

        alpha.metadata.labels = labels(&[(keys::sidecarset::CUSTOM_VERSION_LABEL, "")]);
        let beta = round_trip(&alpha);
        assert!(!stashed(&beta));
        assert_eq!(beta.spec.custom_version, "");
        assert_eq!(
            beta.metadata.labels, alpha.metadata.labels,
            "an empty label stays"
        );
    }

    #[test]
    fn v1beta1_custom_version_becomes_the_label() {
        let beta: v1beta1::SidecarSet = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata: {name: demo, labels: {team: infra}}
spec:
  selector: {matchLabels: {app: nginx}}
  customVersion: canary
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-a}}
",
        )
        .unwrap();
        let alpha = v1alpha1::SidecarSet::from(&beta);
        assert_eq!(
            alpha.metadata.labels,
            labels(&[
                (keys::sidecarset::CUSTOM_VERSION_LABEL, "canary"),
                ("team", "infra")
            ])
        );
        assert_eq!(alpha.spec.namespace, "team-a");
        assert_eq!(alpha.spec.namespace_selector, None);
        assert_eq!(v1beta1::SidecarSet::from(&alpha), beta);
    }

    #[test]
    fn containers_and_strategies_are_copied() {
        let alpha = with(
            "
  initContainers:
  - name: init-proxy
    image: proxy:v1
    restartPolicy: Always
    podInjectPolicy: AfterAppContainer
    shareVolumeDevicePolicy: {type: enabled}
    resourcesPolicy:
      targetContainersMode: max
      resourcesExpr: {limits: {cpu: 'max(cpu*50%, 50m)'}}
  updateStrategy: {type: NotUpdate, partition: '10%', maxUnavailable: 2, paused: true,
                   scatterStrategy: [{key: zone, value: '*'}]}
  injectionStrategy: {paused: true, revision: {customVersion: v1, policy: Partial}}
  imagePullSecrets: [{name: regcred}]
  revisionHistoryLimit: 5
  patchPodMetadata: [{annotations: {a: b}, patchPolicy: Overwrite}]
status: {observedGeneration: 2, matchedPods: 3, updatedPods: 1, readyPods: 2, latestRevision: demo-abc}
",
        );
        let beta = round_trip(&alpha);
        assert!(!stashed(&beta));
        assert_eq!(beta.spec.init_containers, alpha.spec.init_containers);
        assert_eq!(beta.spec.update_strategy, alpha.spec.update_strategy);
        assert_eq!(beta.spec.injection_strategy, alpha.spec.injection_strategy);
        assert_eq!(beta.status, alpha.status);
    }
}
