//! One informer per kind for a whole process.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};

use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::task::AbortHandle;

use super::{Informer, InformerHealth};

/// The informers of a process: [`Informers::get`] starts a kind's watch the
/// first time it is asked for and hands out the same informer afterwards. Dropping the last clone stops
/// every watch.
#[derive(Clone)]
pub struct Informers {
    registry: Arc<Registry>,
}

struct Registry {
    client: Client,
    health: InformerHealth,
    informers: Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>,
    watches: Mutex<Vec<AbortHandle>>,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let watches = self
            .watches
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for watch in watches.drain(..) {
            watch.abort();
        }
    }
}

impl Informers {
    /// No informer yet; watches will use `client`.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self::counted(client, InformerHealth::new())
    }

    /// [`Informers::new`], every informer counting its lists and watch errors in `health`.
    #[must_use]
    pub fn counted(client: Client, health: InformerHealth) -> Self {
        Self {
            registry: Arc::new(Registry {
                client,
                health,
                informers: Mutex::new(HashMap::new()),
                watches: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The client the watches use.
    #[must_use]
    pub fn client(&self) -> &Client {
        &self.registry.client
    }

    /// The cluster-wide informer of `K`, its watch started on first use (inside a Tokio runtime). Pods
    /// (core `v1` `Pod`, the many large objects of a cluster) are kept [packed](Informer::packed); every
    /// other kind whole.
    #[must_use]
    pub fn get<K>(&self) -> Informer<K>
    where
        K: Resource<DynamicType = ()>
            + Clone
            + Debug
            + Serialize
            + DeserializeOwned
            + Send
            + Sync
            + 'static,
    {
        let mut informers = self
            .registry
            .informers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(informer) = informers
            .get(&TypeId::of::<K>())
            .and_then(|informer| informer.downcast_ref::<Informer<K>>())
        {
            return informer.clone();
        }
        let name = K::plural(&()).into_owned();
        let informer = if is_pod::<K>() {
            Informer::<K>::packed(name)
        } else {
            Informer::<K>::new(name)
        };
        let watch = tokio::spawn(informer.clone().watch_counted(
            Api::all(self.registry.client.clone()),
            self.registry.health.clone(),
        ));
        self.registry
            .watches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(watch.abort_handle());
        informers.insert(TypeId::of::<K>(), Box::new(informer.clone()));
        informer
    }
}

/// Whether `K` is the core pod kind.
fn is_pod<K: Resource<DynamicType = ()>>() -> bool {
    K::group(&()).is_empty() && K::kind(&()) == "Pod"
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Node, Pod};

    use super::is_pod;

    #[test]
    fn only_pods_are_packed() {
        assert!(is_pod::<Pod>());
        assert!(!is_pod::<Node>());
    }
}
