//! Recomputing the pod's `Ready` condition from its readiness gates when a lifecycle write flips a gate
//! condition (`KruisePodReady`): the one implementation is [`kruise_api::pod_condition`], re-exported here.

pub use kruise_api::pod_condition::{
    CONTAINERS_READY, READINESS_GATES_NOT_READY_REASON, READY, recompute_ready,
};
