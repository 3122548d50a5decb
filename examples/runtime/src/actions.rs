//! Executing a controller's planned actions with optimistic concurrency: every write that replaces an
//! existing object carries the `resourceVersion` it was decided on, so a concurrent change makes it fail
//! with 409 ([`ActionError::Conflict`], requeue and decide again) instead of being overwritten.
//!
//! ```no_run
//! # async fn demo(client: kube::Client, pod: k8s_openapi::api::core::v1::Pod) -> Result<(), Box<dyn std::error::Error>> {
//! use kruise_runtime::actions::{self, ActionError};
//!
//! let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::namespaced(client, "default");
//! match actions::replace(&pods, &pod).await {
//!     Ok(updated) => println!("now at {:?}", updated.metadata.resource_version),
//!     Err(ActionError::Conflict { .. }) => println!("stale: requeue"),
//!     Err(other) => return Err(other.into()),
//! }
//! # Ok(()) }
//! ```

use std::fmt::Debug;
use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::{Api, Resource, ResourceExt};

use crate::harness::object_key;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why an action was not carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ActionError {
    /// The object changed (or was created) since it was read: decide again from the newer state.
    #[error("{object}: conflict, the object changed since it was read")]
    Conflict {
        /// `namespace/name` of the object.
        object: String,
    },
    /// The object is gone.
    #[error("{object}: not found")]
    NotFound {
        /// `namespace/name` of the object.
        object: String,
    },
    /// The object has no `resourceVersion`, so the write would be a blind overwrite.
    #[error("{object}: refusing to replace an object without a resourceVersion")]
    NoResourceVersion {
        /// `namespace/name` of the object.
        object: String,
    },
    /// Any other API failure.
    #[error("{object}: {source}")]
    Api {
        /// `namespace/name` of the object.
        object: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

impl ActionError {
    /// How soon to reconcile again: conflicts at once (the watch brings the new state), others after a
    /// back-off.
    #[must_use]
    pub fn requeue_after(&self) -> Duration {
        match self {
            Self::Conflict { .. } | Self::NotFound { .. } => Duration::from_millis(100),
            Self::NoResourceVersion { .. } | Self::Api { .. } => Duration::from_secs(5),
        }
    }

    /// Classifies an API failure on `object` (`namespace/name`): 409 is a conflict, 404 not found.
    #[must_use]
    pub fn from_kube(object: String, error: kube::Error) -> Self {
        match &error {
            error if is_conflict(error) => Self::Conflict { object },
            error if is_not_found(error) => Self::NotFound { object },
            _ => Self::Api {
                object,
                source: error,
            },
        }
    }
}

/// Whether the API server answered 409 Conflict: the object changed since it was read (or already exists);
/// decide again from the newer state.
#[must_use]
pub fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409)
}

/// Whether the API server answered 404 Not Found.
#[must_use]
pub fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}

/// Creates the object; 409 (it already exists) is a [`ActionError::Conflict`].
///
/// # Errors
/// See [`ActionError`].
pub async fn create<K>(api: &Api<K>, object: &K) -> Result<K, ActionError>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
{
    api.create(&PostParams::default(), object)
        .await
        .map_err(|error| ActionError::from_kube(object_key(object), error))
}

/// Replaces the object; it must carry the `resourceVersion` it was read at.
///
/// # Errors
/// See [`ActionError`].
pub async fn replace<K>(api: &Api<K>, object: &K) -> Result<K, ActionError>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
{
    if object.resource_version().is_none() {
        return Err(ActionError::NoResourceVersion {
            object: object_key(object),
        });
    }
    api.replace(&object.name_any(), &PostParams::default(), object)
        .await
        .map_err(|error| ActionError::from_kube(object_key(object), error))
}

/// Replaces the whole status of `object` with `status` through the status subresource (a PUT of `object`
/// with the new status), conditional on `object`'s `resourceVersion`. A whole replacement clears what the
/// new status leaves out (a merge patch would keep the old value of every field serialised away when empty
/// or zero, such as a count back at 0 or a list now empty).
///
/// # Errors
/// See [`ActionError`]; [`ActionError::Api`] when `object` with `status` does not serialise as `K`.
pub async fn replace_status<K, S>(api: &Api<K>, object: &K, status: &S) -> Result<K, ActionError>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
    S: Serialize,
{
    if object.resource_version().is_none() {
        return Err(ActionError::NoResourceVersion {
            object: object_key(object),
        });
    }
    let replaced = with_status(object, status).map_err(|error| ActionError::Api {
        object: object_key(object),
        source: kube::Error::SerdeError(error),
    })?;
    api.replace_status(&object.name_any(), &PostParams::default(), &replaced)
        .await
        .map_err(|error| ActionError::from_kube(object_key(object), error))
}

/// Merges `fields` (a JSON object of status fields) into the status of `object` through the status
/// subresource, conditional on `object`'s `resourceVersion`: for writers that own only some status fields
/// and must keep the others (a field left out keeps its value; write `null` to remove one). To write a
/// whole status, use [`replace_status`].
///
/// # Errors
/// See [`ActionError`].
pub async fn merge_status<K>(
    api: &Api<K>,
    object: &K,
    fields: &serde_json::Value,
) -> Result<K, ActionError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let Some(resource_version) = object.resource_version() else {
        return Err(ActionError::NoResourceVersion {
            object: object_key(object),
        });
    };
    let patch = serde_json::json!({
        "metadata": { "resourceVersion": resource_version },
        "status": fields,
    });
    api.patch_status(
        &object.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map_err(|error| ActionError::from_kube(object_key(object), error))
}

/// `object` with its status replaced by `status` and without `managedFields` (the API server keeps its own).
fn with_status<K, S>(object: &K, status: &S) -> Result<K, serde_json::Error>
where
    K: Serialize + DeserializeOwned,
    S: Serialize,
{
    let mut value = serde_json::to_value(object)?;
    if let Some(map) = value.as_object_mut() {
        map.insert("status".to_owned(), serde_json::to_value(status)?);
        if let Some(metadata) = map
            .get_mut("metadata")
            .and_then(serde_json::Value::as_object_mut)
        {
            metadata.remove("managedFields");
        }
    }
    serde_json::from_value(value)
}

/// Patches the object named `name` (or its `subresource`, e.g. `status`). The patch itself must carry the
/// precondition (a `test` of `/metadata/resourceVersion` in a JSON patch, `metadata.resourceVersion` in a
/// merge or strategic-merge patch) when it replaces what was read.
///
/// # Errors
/// See [`ActionError`].
pub async fn patch<K, P>(
    api: &Api<K>,
    object: &str,
    name: &str,
    subresource: Option<&str>,
    patch: &Patch<P>,
) -> Result<K, ActionError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
    P: Serialize + Debug,
{
    let params = PatchParams::default();
    let result = match subresource {
        Some(subresource) => {
            api.patch_subresource(subresource, name, &params, patch)
                .await
        }
        None => api.patch(name, &params, patch).await,
    };
    result.map_err(|error| ActionError::from_kube(object.to_owned(), error))
}

/// Deletes the object if it is still the one that was read (same UID and `resourceVersion`); a missing
/// object counts as deleted.
///
/// # Errors
/// See [`ActionError`].
pub async fn delete<K>(api: &Api<K>, object: &K) -> Result<(), ActionError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: object.uid(),
            resource_version: object.resource_version(),
        }),
        ..DeleteParams::default()
    };
    match api.delete(&object.name_any(), &params).await {
        Ok(_) => Ok(()),
        Err(error) => match ActionError::from_kube(object_key(object), error) {
            ActionError::NotFound { .. } => Ok(()),
            other => Err(other),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_requeue_fast() {
        let conflict = ActionError::Conflict {
            object: "ns/a".into(),
        };
        assert_eq!(conflict.requeue_after(), Duration::from_millis(100));
        assert!(conflict.to_string().contains("ns/a"));
        let blind = ActionError::NoResourceVersion {
            object: "ns/a".into(),
        };
        assert_eq!(blind.requeue_after(), Duration::from_secs(5));
    }
}
