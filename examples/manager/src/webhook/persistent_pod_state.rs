//! The PersistentPodState part of the pod mutating webhook (upstream `persistentPodStateMutatingPod`,
//! always on: upstream has no feature gate for it). A pod CREATE whose controller is a StatefulSet or
//! Advanced StatefulSet with a PersistentPodState recording the pod's name gets the recorded zone (or
//! other node labels) back: `nodeSelector` entries for the required topology keys, weighted preferred node
//! affinity terms for the preferred ones, and the `kruise.io/injected-persistent-pod-state` annotation.
//! The decisions are [`kruise_schedule::persistent_pod_state::injection`]'s; the PersistentPodStates come
//! from the process's shared informer (no API call on the request path). Until its first list arrives the
//! store is empty and pods are admitted unchanged.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1alpha1::PersistentPodState;
use kruise_runtime::informer::object_namespace;
use kruise_runtime::{Indexed, Informer, Informers};
use kruise_schedule::persistent_pod_state::injection::inject;
use serde_json::Value;

/// The index of PersistentPodStates by namespace.
const BY_NAMESPACE: &str = "persistentpodstates-by-namespace";

/// The PersistentPodStates of the process (v1alpha1, as upstream's webhook and controller read them),
/// by namespace.
#[derive(Clone)]
pub struct PersistentPodStateStores {
    by_namespace: Indexed<PersistentPodState>,
}

impl std::fmt::Debug for PersistentPodStateStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentPodStateStores")
            .field("states", &self.by_namespace.informer().len())
            .finish()
    }
}

impl PersistentPodStateStores {
    /// The process's shared PersistentPodState informer (its watch starts now if nothing started it).
    #[must_use]
    pub fn shared(informers: &Informers) -> Self {
        Self::from_informer(&informers.get())
    }

    /// The PersistentPodStates of `informer` (tests, or an informer fed elsewhere).
    #[must_use]
    pub fn from_informer(informer: &Informer<PersistentPodState>) -> Self {
        let by_namespace = informer.index(
            BY_NAMESPACE,
            Arc::new(object_namespace::<PersistentPodState>),
        );
        Self { by_namespace }
    }

    /// The PersistentPodStates of `namespace`, by name (upstream lists them from its cache, name order).
    #[must_use]
    pub fn in_namespace(&self, namespace: &str) -> Vec<Arc<PersistentPodState>> {
        let mut states = self.by_namespace.get(namespace);
        states.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        states
    }

    /// The informer behind the stores.
    #[must_use]
    pub fn informer(&self) -> &Informer<PersistentPodState> {
        self.by_namespace.informer()
    }
}

/// The JSON patch operations that give `pod` its recorded placement, computed on `pod` as the
/// operations `pending` (earlier mutations of the same review, not yet in `pod`) leave it; none when no
/// PersistentPodState records the pod.
///
/// # Errors
/// A message when `pending` does not apply to `pod` (a bug of an earlier mutation).
pub fn patch(
    pod: &Pod,
    pending: &[Value],
    stores: &PersistentPodStateStores,
) -> Result<Vec<Value>, String> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let candidates = stores.in_namespace(&namespace);
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let mut current =
        serde_json::to_value(pod).map_err(|error| format!("reading the pod: {error}"))?;
    if !pending.is_empty() {
        let earlier: json_patch::Patch = serde_json::from_value(Value::Array(pending.to_vec()))
            .map_err(|error| format!("reading the earlier operations: {error}"))?;
        json_patch::patch(&mut current, &earlier)
            .map_err(|error| format!("applying the earlier operations: {error}"))?;
    }
    let mut mutated: Pod = serde_json::from_value(current.clone())
        .map_err(|error| format!("decoding the pod: {error}"))?;
    if inject(&mut mutated, candidates.iter().map(AsRef::as_ref)).is_none() {
        return Ok(Vec::new());
    }
    let after =
        serde_json::to_value(&mutated).map_err(|error| format!("reading the pod: {error}"))?;
    match serde_json::to_value(json_patch::diff(&current, &after)) {
        Ok(Value::Array(operations)) => Ok(operations),
        Ok(other) => Err(format!("the placement patch is not a list: {other}")),
        Err(error) => Err(format!("encoding the placement patch: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;

    fn stores_with(states: &[Value]) -> PersistentPodStateStores {
        let informer = Informer::new("persistentpodstates");
        informer.apply(Event::Init);
        for state in states {
            informer.apply(Event::InitApply(
                serde_json::from_value(state.clone()).unwrap(),
            ));
        }
        informer.apply(Event::InitDone);
        PersistentPodStateStores::from_informer(&informer)
    }

    fn web_state(namespace: &str) -> Value {
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "PersistentPodState",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web"},
                "requiredPersistentTopology": {"nodeTopologyKeys": ["zone"]}},
            "status": {"observedGeneration": 1, "podStates": {"web-0": {"nodeName": "n-1",
                "nodeTopologyLabels": {"zone": "zone-b"}}}},
        })
    }

    fn web_pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "prod", "ownerReferences": [{
                "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web",
                "uid": "u", "controller": true}]},
            "spec": {"containers": [{"name": "main", "image": "nginx"}]},
        }))
        .unwrap()
    }

    fn applied(pod: &Pod, operations: Vec<Value>) -> Value {
        let mut value = serde_json::to_value(pod).unwrap();
        let patch: json_patch::Patch = serde_json::from_value(Value::Array(operations)).unwrap();
        json_patch::patch(&mut value, &patch).unwrap();
        value
    }

    #[test]
    fn the_recorded_zone_becomes_a_node_selector_after_earlier_annotations() {
        let stores = stores_with(&[web_state("prod")]);
        let pod = web_pod();
        // An earlier mutation of the same review created the annotations map.
        let earlier =
            vec![json!({"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}})];
        let operations = patch(&pod, &earlier, &stores).unwrap();
        let mut all = earlier;
        all.extend(operations);
        let result = applied(&pod, all);
        assert_eq!(result["spec"]["nodeSelector"], json!({"zone": "zone-b"}));
        assert_eq!(
            result["metadata"]["annotations"],
            json!({"a": "b", "kruise.io/injected-persistent-pod-state": "web"})
        );
    }

    #[test]
    fn another_namespace_or_an_unrecorded_pod_gets_nothing() {
        let elsewhere = stores_with(&[web_state("other")]);
        assert_eq!(
            patch(&web_pod(), &[], &elsewhere).unwrap(),
            Vec::<Value>::new()
        );
        let stores = stores_with(&[web_state("prod")]);
        let mut unrecorded = web_pod();
        unrecorded.metadata.name = Some("web-7".to_owned());
        assert_eq!(
            patch(&unrecorded, &[], &stores).unwrap(),
            Vec::<Value>::new()
        );
    }

    #[test]
    fn earlier_operations_that_do_not_apply_are_reported() {
        let stores = stores_with(&[web_state("prod")]);
        let broken = vec![json!({"op": "remove", "path": "/metadata/labels/missing"})];
        let error = patch(&web_pod(), &broken, &stores).unwrap_err();
        assert!(error.contains("earlier operations"), "{error}");
    }
}
