//! The PersistentPodState decisions (upstream `pkg/controller/persistentpodstate` and the pod mutating
//! webhook's `persistent_pod_state.go`) as pure functions, on the v1alpha1 types the upstream controller
//! reads:
//!
//! * [`status`]: the next `status.podStates` from the target workload's pods and their nodes' labels:
//!   which pods are recorded (Ready, with a node) and which records go (`WhenScaled`: ordinals beyond the
//!   replicas, `reserveOrdinals` skipped, once the pod is gone; all of them when the workload is gone);
//! * [`generated`]: the PersistentPodState a StatefulSet or Advanced StatefulSet asks for with its
//!   `kruise.io/auto-generate-persistent-pod-state` annotations, and when that object is deleted;
//! * [`injection`]: what the pod webhook adds to a pod CREATE of a recorded pod name: the recorded values
//!   of the required topology keys in `nodeSelector`, and one weighted preferred node affinity term per
//!   preferred topology.
//!
//! ```
//! use std::collections::BTreeMap;
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_api::apps::v1alpha1::PersistentPodState;
//! use kruise_schedule::persistent_pod_state::injection::inject;
//!
//! let state: PersistentPodState = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web", "namespace": "default"},
//!     "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web"},
//!         "requiredPersistentTopology": {"nodeTopologyKeys": ["topology.kubernetes.io/zone"]}},
//!     "status": {"observedGeneration": 1, "podStates": {"web-1": {"nodeName": "n-3",
//!         "nodeTopologyLabels": {"topology.kubernetes.io/zone": "zone-b"}}}}
//! })).unwrap();
//! let mut pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-1", "namespace": "default", "ownerReferences": [{"apiVersion":
//!         "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web", "uid": "u", "controller": true}]},
//!     "spec": {"containers": [{"name": "main", "image": "nginx"}]}
//! })).unwrap();
//! assert_eq!(inject(&mut pod, [&state]).as_deref(), Some("web"));
//! let selector = pod.spec.unwrap().node_selector.unwrap_or_default();
//! assert_eq!(selector, BTreeMap::from([("topology.kubernetes.io/zone".to_owned(), "zone-b".to_owned())]));
//! ```

pub mod generated;
pub mod injection;
pub mod status;
mod target;

pub use self::target::{is_supported_workload, same_workload};
