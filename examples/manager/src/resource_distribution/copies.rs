//! What the controller knows of the copies: a metadata-only watch (`kube::runtime::metadata_watcher`) of
//! every Secret and ConfigMap, each kept as its name, namespace, UID, `resourceVersion` and the two
//! distribution annotations only (no data, no labels, no other annotations, no `managedFields`), so the
//! controller holds a few hundred bytes per object instead of the cluster's Secrets. Each change is also
//! sent on as a trigger, mapped to the distributors by the resource's kind and name and by the `from`
//! annotation.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use futures::channel::mpsc;
use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::keys::resource_distribution::{
    RESOURCE_FROM_ANNOTATION, RESOURCE_HASH_CODE_ANNOTATION,
};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watch_events};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tokio::task::AbortHandle;

/// One changed (or deleted) copy candidate: its kind, namespace, name and `from` annotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Touched {
    pub(super) kind: &'static str,
    pub(super) name: String,
    pub(super) from: Option<String>,
}

/// The metadata stores of Secrets and ConfigMaps, their watches stopped when this is dropped.
pub(super) struct CopyStores {
    secrets: Store<PartialObjectMeta<Secret>>,
    config_maps: Store<PartialObjectMeta<ConfigMap>>,
    watches: Vec<AbortHandle>,
}

impl Drop for CopyStores {
    fn drop(&mut self) {
        for watch in &self.watches {
            watch.abort();
        }
    }
}

impl CopyStores {
    /// Starts both watches; every change is sent on the returned stream.
    pub(super) fn start(client: &Client) -> (Self, impl Stream<Item = Touched> + Send + 'static) {
        let (sender, receiver) = mpsc::unbounded();
        let (secrets, secret_watch) = watch::<Secret>(client, "Secret", sender.clone());
        let (config_maps, config_map_watch) = watch::<ConfigMap>(client, "ConfigMap", sender);
        let stores = Self {
            secrets,
            config_maps,
            watches: vec![secret_watch, config_map_watch],
        };
        (stores, receiver)
    }

    /// Waits until both kinds are listed.
    pub(super) async fn wait_ready(&self) {
        let _ = self.secrets.wait_until_ready().await;
        let _ = self.config_maps.wait_until_ready().await;
    }

    /// The metadata of the `kind` object `namespace/name`, if it exists.
    pub(super) fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<ObjectMeta> {
        match kind {
            "Secret" => self
                .secrets
                .get(&ObjectRef::new(name).within(namespace))
                .map(|object| object.metadata.clone()),
            "ConfigMap" => self
                .config_maps
                .get(&ObjectRef::new(name).within(namespace))
                .map(|object| object.metadata.clone()),
            _ => None,
        }
    }
}

/// Keeps only what the controller reads.
fn slim(metadata: &mut ObjectMeta) {
    let kept: BTreeMap<String, String> = metadata
        .annotations
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter(|(key, _)| key == RESOURCE_FROM_ANNOTATION || key == RESOURCE_HASH_CODE_ANNOTATION)
        .collect();
    *metadata = ObjectMeta {
        name: metadata.name.take(),
        namespace: metadata.namespace.take(),
        uid: metadata.uid.take(),
        resource_version: metadata.resource_version.take(),
        deletion_timestamp: metadata.deletion_timestamp.take(),
        annotations: (!kept.is_empty()).then_some(kept),
        ..ObjectMeta::default()
    };
}

fn watch<K>(
    client: &Client,
    kind: &'static str,
    sender: mpsc::UnboundedSender<Touched>,
) -> (Store<PartialObjectMeta<K>>, AbortHandle)
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store::<PartialObjectMeta<K>>();
    let events = watch_events(
        Api::<PartialObjectMeta<K>>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .modify(|object: &mut PartialObjectMeta<K>| slim(&mut object.metadata))
    .reflect(writer);
    let task = tokio::spawn(async move {
        let mut events = std::pin::pin!(events);
        while let Some(event) = events.next().await {
            let objects: Vec<Arc<PartialObjectMeta<K>>> = match event {
                Ok(Event::Apply(object) | Event::Delete(object) | Event::InitApply(object)) => {
                    vec![Arc::new(object)]
                }
                Ok(Event::Init | Event::InitDone) => Vec::new(),
                Err(error) => {
                    tracing::warn!(%kind, %error, "metadata watch failed; retrying");
                    Vec::new()
                }
            };
            for object in objects {
                let touched = Touched {
                    kind,
                    name: object.metadata.name.clone().unwrap_or_default(),
                    from: object
                        .metadata
                        .annotations
                        .as_ref()
                        .and_then(|annotations| annotations.get(RESOURCE_FROM_ANNOTATION))
                        .cloned(),
                };
                if sender.unbounded_send(touched).is_err() {
                    return;
                }
            }
        }
    });
    (reader, task.abort_handle())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_distribution_annotations_and_identity_are_kept() {
        let mut metadata: ObjectMeta = serde_json::from_value(serde_json::json!({
            "name": "pull", "namespace": "web", "uid": "u1", "resourceVersion": "7",
            "labels": {"a": "b"},
            "annotations": {"note": "x", RESOURCE_FROM_ANNOTATION: "shared",
                RESOURCE_HASH_CODE_ANNOTATION: "h"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u"}],
            "managedFields": [{"manager": "kubectl"}]
        }))
        .unwrap();
        slim(&mut metadata);
        assert_eq!(
            serde_json::to_value(&metadata).unwrap(),
            serde_json::json!({"name": "pull", "namespace": "web", "uid": "u1", "resourceVersion": "7",
                "annotations": {RESOURCE_FROM_ANNOTATION: "shared", RESOURCE_HASH_CODE_ANNOTATION: "h"}})
        );
        let mut plain: ObjectMeta =
            serde_json::from_value(serde_json::json!({"name": "p", "annotations": {"note": "x"}}))
                .unwrap();
        slim(&mut plain);
        assert!(plain.annotations.is_none());
    }
}
