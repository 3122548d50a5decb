//! One namespace's copy (upstream's `distributeResource` and `cleanupResource`): what to do with it, and the
//! object to write.
//!
//! A copy belongs to a distributor when its `kruise.io/resourcedistribution.resource.from` annotation names
//! it; an object of the same kind and name without that annotation (or naming another distributor) is a
//! conflict and is never overwritten. A copy is rewritten only when its
//! `kruise.io/resourcedistribution.resource.hashcode` differs from the source's hash, so changes made to
//! a copy by hand survive until the source changes (as upstream).
//!
//! ```
//! use kruise_schedule::resource_distribution::copy::{CopyDecision, CopyMeta, decide};
//!
//! let mine = CopyMeta { from: Some("shared"), hash: Some("old") };
//! assert_eq!(decide("shared", true, Some(mine), "new"), CopyDecision::Update);
//! assert_eq!(decide("shared", true, Some(mine), "old"), CopyDecision::Unchanged);
//! assert_eq!(decide("shared", false, Some(mine), "old"), CopyDecision::Delete);
//! assert_eq!(decide("other", false, Some(mine), "old"), CopyDecision::Leave);
//! ```

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::apps::v1alpha1::ResourceDistribution;
use kruise_api::keys::resource_distribution::{
    RESOURCE_FROM_ANNOTATION, RESOURCE_HASH_CODE_ANNOTATION,
};
use serde_json::{Map, Value, json};

/// What the decision needs of an existing object of the distributed kind and name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyMeta<'a> {
    /// Its `kruise.io/resourcedistribution.resource.from` annotation.
    pub from: Option<&'a str>,
    /// Its `kruise.io/resourcedistribution.resource.hashcode` annotation.
    pub hash: Option<&'a str>,
}

impl<'a> CopyMeta<'a> {
    /// The two annotations of `meta`.
    #[must_use]
    pub fn of(meta: &'a ObjectMeta) -> Self {
        let annotation = |key: &str| {
            meta.annotations
                .as_ref()
                .and_then(|annotations| annotations.get(key))
                .map(String::as_str)
        };
        Self {
            from: annotation(RESOURCE_FROM_ANNOTATION),
            hash: annotation(RESOURCE_HASH_CODE_ANNOTATION),
        }
    }

    /// Whether the object was distributed by the distributor named `distributor`.
    #[must_use]
    pub fn is_from(&self, distributor: &str) -> bool {
        self.from == Some(distributor)
    }
}

/// What to do in one namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyDecision {
    /// A target without the object: create the copy.
    Create,
    /// A target holding a copy of an older source: replace it.
    Update,
    /// A target holding an up-to-date copy.
    Unchanged,
    /// A target holding an object of the same kind and name that this distributor did not write.
    Conflict,
    /// Not a target, holding a copy from this distributor: delete it.
    Delete,
    /// Not a target, and nothing of this distributor there.
    Leave,
}

/// The decision for one namespace: `targeted` says whether it is a target, `existing` describes the object
/// of the distributed kind and name there (if any), `source_hash` is [`super::hash::resource_hash`] of the
/// source.
#[must_use]
pub fn decide(
    distributor: &str,
    targeted: bool,
    existing: Option<CopyMeta<'_>>,
    source_hash: &str,
) -> CopyDecision {
    match (targeted, existing) {
        (true, None) => CopyDecision::Create,
        (true, Some(meta)) if !meta.is_from(distributor) => CopyDecision::Conflict,
        (true, Some(meta)) if meta.hash == Some(source_hash) => CopyDecision::Unchanged,
        (true, Some(_)) => CopyDecision::Update,
        (false, Some(meta)) if meta.is_from(distributor) => CopyDecision::Delete,
        (false, _) => CopyDecision::Leave,
    }
}

/// Why a copy cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CopyError {
    /// `spec.resource` (or its `metadata`) is not a JSON object.
    #[error("ResourceDistribution {distributor}: spec.resource{field}: must be an object")]
    NotAnObject {
        /// The distributor's name.
        distributor: String,
        /// `""` or `.metadata`.
        field: &'static str,
    },
    /// The distributor has no `metadata.uid` (it was not read from the API server).
    #[error("ResourceDistribution {distributor}: metadata.uid is missing")]
    NoUid {
        /// The distributor's name.
        distributor: String,
    },
}

/// Metadata fields of `spec.resource` that belong to one stored object and are not copied.
const SERVER_FIELDS: [&str; 9] = [
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
    "managedFields",
];

/// The copy of `distributor`'s resource for `namespace`: the resource as written in `spec.resource`, with
/// `metadata.namespace` set, the fields of a stored object removed, the `from` and `hashcode` annotations
/// added to the resource's own, and one owner reference: the distributor, as controller, so the garbage
/// collector deletes the copies with it. Owner references and finalizers written in `spec.resource` are
/// not copied. An UPDATE sends the same object with the existing copy's `resourceVersion`.
///
/// # Errors
/// `spec.resource` is not an object, or the distributor has no UID.
pub fn copy_object(
    distributor: &ResourceDistribution,
    namespace: &str,
    source_hash: &str,
) -> Result<Value, CopyError> {
    let name = distributor.metadata.name.clone().unwrap_or_default();
    let Some(uid) = distributor.metadata.uid.as_deref() else {
        return Err(CopyError::NoUid { distributor: name });
    };
    let mut object = distributor.spec.resource.clone();
    let Some(fields) = object.as_object_mut() else {
        return Err(CopyError::NotAnObject {
            distributor: name,
            field: "",
        });
    };
    fields.remove("status");
    let metadata = fields
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(metadata) = metadata.as_object_mut() else {
        return Err(CopyError::NotAnObject {
            distributor: name,
            field: ".metadata",
        });
    };
    for field in SERVER_FIELDS {
        metadata.remove(field);
    }
    metadata.remove("finalizers");
    metadata.insert("namespace".to_owned(), Value::String(namespace.to_owned()));
    let mut annotations: BTreeMap<String, Value> = metadata
        .get("annotations")
        .and_then(Value::as_object)
        .map(|annotations| {
            annotations
                .iter()
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        })
        .unwrap_or_default();
    annotations.insert(
        RESOURCE_FROM_ANNOTATION.to_owned(),
        Value::String(name.clone()),
    );
    annotations.insert(
        RESOURCE_HASH_CODE_ANNOTATION.to_owned(),
        Value::String(source_hash.to_owned()),
    );
    metadata.insert(
        "annotations".to_owned(),
        Value::Object(annotations.into_iter().collect()),
    );
    metadata.insert(
        "ownerReferences".to_owned(),
        json!([{
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "ResourceDistribution",
            "name": name,
            "uid": uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }]),
    );
    Ok(object)
}
