//! One generation reconcile: a StatefulSet's or Advanced StatefulSet's annotations against the
//! PersistentPodState of its name, per [`kruise_schedule::persistent_pod_state::generated`].

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use kruise_api::apps::v1alpha1::PersistentPodState;
use kruise_runtime::actions::{self, is_not_found};
use kruise_runtime::harness::object_key;
use kruise_schedule::persistent_pod_state::generated::{
    Action as Generated, Workload, action, wanted,
};
use kube::api::DeleteParams;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, Resource};

use super::PersistentPodStateError;

/// What every generation reconcile shares.
pub(super) struct Shared {
    pub(super) client: Client,
    pub(super) states: Store<PersistentPodState>,
}

pub(super) async fn reconcile<K>(
    workload: Arc<K>,
    shared: Arc<Shared>,
) -> Result<Action, PersistentPodStateError>
where
    K: Resource<DynamicType = ()> + Debug,
{
    let meta = workload.meta();
    if meta.deletion_timestamp.is_some() {
        // The garbage collector deletes the generated object with its owner.
        return Ok(Action::await_change());
    }
    let namespace = meta.namespace.clone().unwrap_or_default();
    let name = meta.name.clone().unwrap_or_default();
    let uid = meta.uid.clone().unwrap_or_default();
    let empty = BTreeMap::new();
    let api_version = K::api_version(&());
    let kind = K::kind(&());
    let asked = wanted(&Workload {
        api_version: &api_version,
        kind: &kind,
        namespace: &namespace,
        name: &name,
        uid: &uid,
        annotations: meta.annotations.as_ref().unwrap_or(&empty),
    });
    let existing = shared.states.get(&ObjectRef::new(&name).within(&namespace));
    let api: Api<PersistentPodState> = Api::namespaced(shared.client.clone(), &namespace);
    match action(asked, existing.as_deref(), &uid) {
        Generated::Keep => {}
        Generated::Create(object) => match actions::create(&api, &object).await {
            Ok(_) => {
                tracing::info!(state = %object_key(object.as_ref()), "created the PersistentPodState");
            }
            // The store had not seen it yet: the next event decides again.
            Err(actions::ActionError::Conflict { .. }) => {}
            Err(error) => return Err(error.into()),
        },
        Generated::UpdateSpec(spec) => {
            if let Some(existing) = existing {
                let mut updated = (*existing).clone();
                updated.spec = *spec;
                actions::replace(&api, &updated).await?;
                tracing::info!(state = %object_key(&updated), "updated the PersistentPodState");
            }
        }
        Generated::Delete => match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {
                tracing::info!(state = %format!("{namespace}/{name}"), "deleted the PersistentPodState");
            }
            Err(error) if is_not_found(&error) => {}
            Err(error) => {
                return Err(
                    actions::ActionError::from_kube(format!("{namespace}/{name}"), error).into(),
                );
            }
        },
    }
    Ok(Action::await_change())
}
