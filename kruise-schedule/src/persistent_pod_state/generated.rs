//! The PersistentPodState a StatefulSet or Advanced StatefulSet asks for through its annotations
//! (upstream `autoGeneratePersistentPodState` and `newStatefulSetPersistentPodState`).
//!
//! With `kruise.io/auto-generate-persistent-pod-state: "true"` and a non-empty
//! `kruise.io/required-persistent-topology` or `kruise.io/preferred-persistent-topology`, the workload
//! gets a PersistentPodState of its own name, controlled by it (so it goes with it), targeting it: the
//! required keys, the preferred keys as one term of weight 100, and the
//! `kruise.io/persistent-pod-annotations` keys, each list split at commas as written. With the switch on
//! but neither topology annotation, nothing is done (upstream logs a warning). With the switch off, the
//! object is deleted; unlike upstream, only when the workload controls it (see `docs/deviations.md`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kruise_api::apps::v1alpha1::{
    NodeTopologyTerm, PersistentPodAnnotation, PersistentPodState, PersistentPodStateSpec,
    PreferredTopologyTerm,
};
use kruise_api::apps::v1beta1::TargetReference;
use kruise_api::keys::persistent_pod_state::{
    AUTO_GENERATE_ANNOTATION, PERSISTENT_POD_ANNOTATIONS_ANNOTATION, PREFERRED_TOPOLOGY_ANNOTATION,
    REQUIRED_TOPOLOGY_ANNOTATION,
};

/// The weight of the preferred term made from `kruise.io/preferred-persistent-topology`.
pub const GENERATED_PREFERRED_WEIGHT: i32 = 100;

/// The workload whose annotations are read.
#[derive(Clone, Copy, Debug)]
pub struct Workload<'a> {
    /// `apps/v1` or `apps.kruise.io/v1beta1`.
    pub api_version: &'a str,
    /// `StatefulSet`.
    pub kind: &'a str,
    /// Its namespace.
    pub namespace: &'a str,
    /// Its name (also the PersistentPodState's).
    pub name: &'a str,
    /// Its UID (the owner reference's).
    pub uid: &'a str,
    /// Its annotations.
    pub annotations: &'a BTreeMap<String, String>,
}

/// What the workload's annotations ask for.
#[derive(Clone, Debug, PartialEq)]
pub enum Wanted {
    /// This object, created if missing, its spec replaced when it differs.
    Object(Box<PersistentPodState>),
    /// The switch is on without a topology annotation: leave whatever exists.
    Incomplete,
    /// The switch is off: delete the object of the workload's name if the workload controls it.
    Nothing,
}

/// What to do with the existing object of the workload's name.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Nothing.
    Keep,
    /// Create this object.
    Create(Box<PersistentPodState>),
    /// Replace the existing object's spec with this one.
    UpdateSpec(Box<PersistentPodStateSpec>),
    /// Delete the existing object.
    Delete,
}

/// What `workload`'s annotations ask for.
#[must_use]
pub fn wanted(workload: &Workload<'_>) -> Wanted {
    let annotation = |key: &str| workload.annotations.get(key).map_or("", String::as_str);
    if annotation(AUTO_GENERATE_ANNOTATION) != "true" {
        return Wanted::Nothing;
    }
    let required = annotation(REQUIRED_TOPOLOGY_ANNOTATION);
    let preferred = annotation(PREFERRED_TOPOLOGY_ANNOTATION);
    if required.is_empty() && preferred.is_empty() {
        return Wanted::Incomplete;
    }
    let split = |text: &str| -> Vec<String> { text.split(',').map(str::to_owned).collect() };
    let annotations = annotation(PERSISTENT_POD_ANNOTATIONS_ANNOTATION);
    let spec = PersistentPodStateSpec {
        target_reference: TargetReference {
            api_version: workload.api_version.to_owned(),
            kind: workload.kind.to_owned(),
            name: workload.name.to_owned(),
        },
        persistent_pod_annotations: if annotations.is_empty() {
            Vec::new()
        } else {
            split(annotations)
                .into_iter()
                .map(|key| PersistentPodAnnotation { key })
                .collect()
        },
        required_persistent_topology: (!required.is_empty()).then(|| NodeTopologyTerm {
            node_topology_keys: split(required),
        }),
        preferred_persistent_topology: if preferred.is_empty() {
            Vec::new()
        } else {
            vec![PreferredTopologyTerm {
                weight: GENERATED_PREFERRED_WEIGHT,
                preference: NodeTopologyTerm {
                    node_topology_keys: split(preferred),
                },
            }]
        },
        persistent_pod_state_retention_policy: None,
    };
    Wanted::Object(Box::new(PersistentPodState {
        metadata: ObjectMeta {
            name: Some(workload.name.to_owned()),
            namespace: Some(workload.namespace.to_owned()),
            owner_references: Some(vec![OwnerReference {
                api_version: workload.api_version.to_owned(),
                kind: workload.kind.to_owned(),
                name: workload.name.to_owned(),
                uid: workload.uid.to_owned(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            ..ObjectMeta::default()
        },
        spec,
        status: None,
    }))
}

/// What to do given what is wanted and the existing object of the workload's name (`workload_uid`: the
/// workload's UID, to tell whether it controls that object).
#[must_use]
pub fn action(wanted: Wanted, existing: Option<&PersistentPodState>, workload_uid: &str) -> Action {
    match (wanted, existing) {
        (Wanted::Object(object), None) => Action::Create(object),
        (Wanted::Object(object), Some(existing)) if existing.spec == object.spec => Action::Keep,
        (Wanted::Object(object), Some(_)) => Action::UpdateSpec(Box::new(object.spec)),
        (Wanted::Nothing, Some(existing)) if is_controlled_by(existing, workload_uid) => {
            Action::Delete
        }
        (Wanted::Nothing | Wanted::Incomplete, _) => Action::Keep,
    }
}

/// Whether the object's controller owner reference has `uid`.
fn is_controlled_by(object: &PersistentPodState, uid: &str) -> bool {
    object
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|owner| owner.controller == Some(true) && owner.uid == uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    fn wanted_for(pairs: &[(&str, &str)]) -> Wanted {
        let annotations = annotations(pairs);
        wanted(&Workload {
            api_version: "apps.kruise.io/v1beta1",
            kind: "StatefulSet",
            namespace: "prod",
            name: "web",
            uid: "uid-web",
            annotations: &annotations,
        })
    }

    fn object(wanted: Wanted) -> PersistentPodState {
        match wanted {
            Wanted::Object(object) => *object,
            other => panic!("expected an object, got {other:?}"),
        }
    }

    #[test]
    fn the_annotations_make_the_spec() {
        let made = object(wanted_for(&[
            (AUTO_GENERATE_ANNOTATION, "true"),
            (REQUIRED_TOPOLOGY_ANNOTATION, "topology.kubernetes.io/zone"),
            (PREFERRED_TOPOLOGY_ANNOTATION, "kubernetes.io/hostname,rack"),
            (PERSISTENT_POD_ANNOTATIONS_ANNOTATION, "ip,mac"),
        ]));
        let expected: PersistentPodState = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "PersistentPodState",
            "metadata": {"name": "web", "namespace": "prod", "ownerReferences": [{
                "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web",
                "uid": "uid-web", "controller": true}]},
            "spec": {
                "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web"},
                "requiredPersistentTopology": {"nodeTopologyKeys": ["topology.kubernetes.io/zone"]},
                "preferredPersistentTopology": [{"weight": 100,
                    "preference": {"nodeTopologyKeys": ["kubernetes.io/hostname", "rack"]}}],
                "persistentPodAnnotations": [{"key": "ip"}, {"key": "mac"}],
            }
        }))
        .unwrap();
        assert_eq!(made, expected);
        // Only a preferred topology: no required term, no annotations.
        let preferred_only = object(wanted_for(&[
            (AUTO_GENERATE_ANNOTATION, "true"),
            (PREFERRED_TOPOLOGY_ANNOTATION, "rack"),
        ]));
        assert_eq!(preferred_only.spec.required_persistent_topology, None);
        assert!(preferred_only.spec.persistent_pod_annotations.is_empty());
        assert_eq!(preferred_only.spec.preferred_persistent_topology.len(), 1);
    }

    #[test]
    fn the_switch_must_be_true_and_a_topology_given() {
        let rows: [(&[(&str, &str)], Wanted); 4] = [
            (
                &[
                    (AUTO_GENERATE_ANNOTATION, "True"),
                    (REQUIRED_TOPOLOGY_ANNOTATION, "zone"),
                ],
                Wanted::Nothing,
            ),
            (&[(REQUIRED_TOPOLOGY_ANNOTATION, "zone")], Wanted::Nothing),
            (&[(AUTO_GENERATE_ANNOTATION, "true")], Wanted::Incomplete),
            (
                &[
                    (AUTO_GENERATE_ANNOTATION, "true"),
                    (PERSISTENT_POD_ANNOTATIONS_ANNOTATION, "ip"),
                ],
                Wanted::Incomplete,
            ),
        ];
        for (pairs, expected) in rows {
            assert_eq!(wanted_for(pairs), expected, "{pairs:?}");
        }
    }

    #[test]
    fn actions_create_update_keep_and_delete_only_what_the_workload_controls() {
        let on = [
            (AUTO_GENERATE_ANNOTATION, "true"),
            (REQUIRED_TOPOLOGY_ANNOTATION, "zone"),
        ];
        let made = object(wanted_for(&on));
        assert_eq!(
            action(wanted_for(&on), None, "uid-web"),
            Action::Create(Box::new(made.clone()))
        );
        assert_eq!(
            action(wanted_for(&on), Some(&made), "uid-web"),
            Action::Keep
        );
        let mut edited = made.clone();
        edited.spec.required_persistent_topology = None;
        assert_eq!(
            action(wanted_for(&on), Some(&edited), "uid-web"),
            Action::UpdateSpec(Box::new(made.spec.clone()))
        );
        assert_eq!(
            action(Wanted::Nothing, Some(&made), "uid-web"),
            Action::Delete
        );
        assert_eq!(
            action(Wanted::Nothing, Some(&made), "uid-other"),
            Action::Keep
        );
        assert_eq!(action(Wanted::Nothing, None, "uid-web"), Action::Keep);
        assert_eq!(
            action(Wanted::Incomplete, Some(&made), "uid-web"),
            Action::Keep
        );
    }
}
