//! The `--pods` file: the pods, claims, ControllerRevisions and Nodes a planner reads.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod};
use serde_json::Value;

use super::decode::{decode, invalid};
use crate::CliError;
use crate::input::read_objects;

/// A ControllerRevision read from the pods file.
pub(super) struct KnownRevision {
    /// `metadata.name`.
    pub(super) name: String,
    /// `data`.
    pub(super) data: Value,
    /// `metadata.annotations`.
    pub(super) annotations: Option<BTreeMap<String, String>>,
    /// The whole object, for the planners that read ControllerRevisions as they are (DaemonSet, SidecarSet).
    object: Value,
    /// Where it was read (`file: object i (ControllerRevision "name")`).
    at: String,
}

impl KnownRevision {
    /// The ControllerRevision object.
    ///
    /// # Errors
    /// It does not decode (the error names the file, the object and the field).
    pub(super) fn controller_revision(&self) -> Result<ControllerRevision, CliError> {
        decode(&self.at, &self.object)
    }
}

/// Everything the pods file holds.
#[derive(Default)]
pub(super) struct Owned {
    /// The pods.
    pub(super) pods: Vec<Pod>,
    /// The PersistentVolumeClaims.
    pub(super) claims: Vec<PersistentVolumeClaim>,
    /// The ControllerRevisions.
    pub(super) revisions: Vec<KnownRevision>,
    /// The Nodes.
    pub(super) nodes: Vec<Node>,
}

impl Owned {
    /// Every ControllerRevision, decoded.
    ///
    /// # Errors
    /// One does not decode.
    pub(super) fn controller_revisions(&self) -> Result<Vec<ControllerRevision>, CliError> {
        self.revisions
            .iter()
            .map(KnownRevision::controller_revision)
            .collect()
    }
}

/// Reads the pods file: pods, claims, ControllerRevisions and nodes.
pub(super) fn read_owned(path: &str) -> Result<Owned, CliError> {
    owned_from_objects(path, read_objects(&[path.to_owned()])?)
}

/// Sorts `objects` (read from `path`, which names them in errors) into pods, claims, ControllerRevisions
/// and nodes.
pub(super) fn owned_from_objects(path: &str, objects: Vec<Value>) -> Result<Owned, CliError> {
    let mut owned = Owned::default();
    for (index, object) in objects.into_iter().enumerate() {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("Pod");
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let at = format!("{path}: object {index} ({kind} {name:?})");
        match kind {
            "Pod" => owned.pods.push(decode(&at, &object)?),
            "PersistentVolumeClaim" => owned.claims.push(decode(&at, &object)?),
            "Node" => owned.nodes.push(decode(&at, &object)?),
            "ControllerRevision" => {
                let data = object
                    .get("data")
                    .cloned()
                    .filter(|data| !data.is_null())
                    .ok_or_else(|| invalid(&at, "data: missing"))?;
                let annotations = match object.pointer("/metadata/annotations") {
                    None | Some(Value::Null) => None,
                    Some(value) => {
                        Some(serde_json::from_value(value.clone()).map_err(|error| {
                            invalid(&at, format!("metadata.annotations: {error}"))
                        })?)
                    }
                };
                owned.revisions.push(KnownRevision {
                    name,
                    data,
                    annotations,
                    object,
                    at,
                });
            }
            other => {
                return Err(invalid(
                    &at,
                    format!(
                        "kind: expected Pod, PersistentVolumeClaim, ControllerRevision or Node, found {other:?}"
                    ),
                ));
            }
        }
    }
    Ok(owned)
}
