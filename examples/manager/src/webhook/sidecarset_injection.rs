//! The SidecarSet step of the pod webhook: the process's shared informers of SidecarSets, Namespaces and
//! ControllerRevisions (the same watches and copies the controllers read, kept for the whole process, so a
//! standby replica's webhook has them too), read on every pod CREATE without any API call.
//!
//! [`SidecarSetStores::inject`] keeps the SidecarSets whose namespace and selector admit the pod (a
//! read-only pass over shared `Arc`s; only the candidates are cloned), hands them with the revisions of
//! those SidecarSets to [`kruise_sidecar::inject()`], and returns the injected pod with its RFC 6902 patch;
//! [`SidecarSetStores::inject_json`] does the same with the patch as JSON text
//! ([`kruise_sidecar::inject_json`]), which is what the webhook uses.
//! The pod webhook then runs its own mutations on the injected pod, so their operations apply after the
//! injection's ([`super::admission`]).
//!
//! ```
//! use kruise_manager::webhook::sidecarset_injection::SidecarSetStores;
//!
//! let stores = SidecarSetStores::empty();
//! let pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "p", "namespace": "default", "labels": {"app": "nginx"}},
//!     "spec": {"containers": [{"name": "app", "image": "nginx"}]},
//! })).unwrap();
//! let injection = stores.inject(&pod, "uid-1", "2024-05-01T10:00:00Z".parse().unwrap()).unwrap();
//! assert!(!injection.changed());
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_sidecar::matching::{is_active_pod, pod_matches, pod_namespace};
use kruise_sidecar::{InjectRequest, Injection, JsonInjection, Options, SeededChance};
use kube::runtime::reflector::{ObjectRef, Store};

use crate::sidecarset::reconcile::revisions_by_sidecarset;
use kruise_runtime::{Indexed, Informer, Informers};

/// What the SidecarSet injection reads: the process's shared informers of SidecarSets and Namespaces, and the
/// SidecarSets' ControllerRevisions through the SidecarSet controller's index.
#[derive(Clone)]
pub struct SidecarSetStores {
    sidecarsets: Informer<SidecarSet>,
    namespaces: Informer<Namespace>,
    revisions: Indexed<ControllerRevision>,
    options: Options,
}

impl fmt::Debug for SidecarSetStores {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("SidecarSetStores")
            .field("sidecarsets", &self.sidecarsets.store().len())
            .field("namespaces", &self.namespaces.store().len())
            .finish_non_exhaustive()
    }
}

impl SidecarSetStores {
    /// Stores that stay empty (nothing is ever injected; never synced).
    #[must_use]
    pub fn empty() -> Self {
        Self::from_informers(
            Informer::new("sidecarsets"),
            Informer::new("namespaces"),
            &Informer::new("controllerrevisions"),
            "kruise-system",
        )
    }

    /// Stores reading the given informers (tests, or informers fed elsewhere); the SidecarSets' revisions are
    /// those in `revision_namespace`.
    #[must_use]
    pub fn from_informers(
        sidecarsets: Informer<SidecarSet>,
        namespaces: Informer<Namespace>,
        revisions: &Informer<ControllerRevision>,
        revision_namespace: &str,
    ) -> Self {
        Self {
            sidecarsets,
            namespaces,
            revisions: revisions_by_sidecarset(revisions, revision_namespace),
            options: Options::default(),
        }
    }

    /// The process's shared informers (their watches start now if no controller has started them): every
    /// SidecarSet, every Namespace, the SidecarSet revisions of `revision_namespace`.
    #[must_use]
    pub fn shared(informers: &Informers, revision_namespace: &str) -> Self {
        Self::from_informers(
            informers.get(),
            informers.get(),
            &informers.get(),
            revision_namespace,
        )
    }

    /// The same stores with upstream's feature gates set.
    #[must_use]
    pub fn with_options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The SidecarSet store (shared with the SidecarSet validating webhook).
    #[must_use]
    pub fn sidecarset_store(&self) -> Store<SidecarSet> {
        self.sidecarsets.store()
    }

    /// Waits until every informer has stored its first list (pods admitted before would miss their
    /// sidecars).
    pub async fn wait_synced(&self) {
        self.sidecarsets.wait_synced().await;
        self.namespaces.wait_synced().await;
        self.revisions.wait_synced().await;
    }

    /// Whether every informer has stored its first list. Before that an injection would miss SidecarSets
    /// (or their namespaces and revisions) the cluster has, so the pod webhook refuses to answer instead.
    #[must_use]
    pub fn is_synced(&self) -> bool {
        self.sidecarsets.is_synced() && self.namespaces.is_synced() && self.revisions.is_synced()
    }

    /// Injects the matching SidecarSets into a pod being created; `uid` (the admission request's) seeds
    /// the `Partial` injection policy, `now` goes into the hash annotations.
    ///
    /// # Errors
    /// See [`kruise_sidecar::inject()`]: an invalid selector, a revision that cannot be restored, ...
    pub fn inject(
        &self,
        pod: &Pod,
        uid: &str,
        now: Timestamp,
    ) -> Result<Injection, kruise_sidecar::Error> {
        let Some(selected) = self.select(pod) else {
            return Ok(Injection {
                pod: pod.clone(),
                patch: json_patch::Patch(Vec::new()),
                sidecarsets: Vec::new(),
            });
        };
        let request = selected.request(pod, now, self.options);
        kruise_sidecar::inject(&request, &mut SeededChance::new(seed_of(uid)))
    }

    /// [`SidecarSetStores::inject`] with the patch as the JSON text of the admission response
    /// ([`kruise_sidecar::inject_json`]): the same injection and the same operations, without building the
    /// typed patch.
    ///
    /// # Errors
    /// As [`SidecarSetStores::inject`].
    pub fn inject_json(
        &self,
        pod: &Pod,
        uid: &str,
        now: Timestamp,
    ) -> Result<JsonInjection, kruise_sidecar::Error> {
        let Some(selected) = self.select(pod) else {
            return Ok(JsonInjection {
                pod: pod.clone(),
                patch: "[]".to_owned(),
                sidecarsets: Vec::new(),
            });
        };
        let request = selected.request(pod, now, self.options);
        kruise_sidecar::inject_json(&request, &mut SeededChance::new(seed_of(uid)))
    }

    /// The candidate SidecarSets for a pod with their revisions and the namespace's labels; `None` when
    /// nothing can be injected.
    fn select(&self, pod: &Pod) -> Option<Selected> {
        let sidecarsets = self.sidecarsets.store();
        if sidecarsets.is_empty() || !is_active_pod(pod) {
            return None;
        }
        let namespace = self.namespaces.get(&ObjectRef::new(pod_namespace(pod)));
        let labels: Option<&BTreeMap<String, String>> = namespace
            .as_deref()
            .and_then(|object| object.metadata.labels.as_ref());
        // Candidates: those that match (an invalid selector is kept so the library reports it).
        let candidates: Vec<SidecarSet> = sidecarsets
            .state()
            .iter()
            .filter(|set| !set.spec.injection_strategy.paused)
            .filter(|set| pod_matches(set, pod, labels).unwrap_or(true))
            .map(|set| {
                // As upstream's SidecarSet webhook would have stored it (this manager has none).
                let mut defaulted = set.as_ref().clone();
                defaulted.apply_defaults();
                defaulted
            })
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let revisions: Vec<ControllerRevision> = candidates
            .iter()
            .filter_map(|set| set.metadata.name.as_deref())
            .flat_map(|name| self.revisions.get(name))
            .map(|revision| revision.as_ref().clone())
            .collect();
        Some(Selected {
            candidates,
            revisions,
            namespace,
        })
    }
}

/// What a pod's injection reads from the stores.
struct Selected {
    candidates: Vec<SidecarSet>,
    revisions: Vec<ControllerRevision>,
    namespace: Option<Arc<Namespace>>,
}

impl Selected {
    fn request<'a>(&'a self, pod: &'a Pod, now: Timestamp, options: Options) -> InjectRequest<'a> {
        InjectRequest {
            pod,
            old_pod: None,
            sidecarsets: &self.candidates,
            revisions: &self.revisions,
            namespace_labels: self
                .namespace
                .as_deref()
                .and_then(|object| object.metadata.labels.as_ref()),
            now,
            options,
        }
    }
}

/// A stable seed from the request UID (the same request always makes the same `Partial` choice).
fn seed_of(uid: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    uid.hash(&mut hasher);
    hasher.finish()
}

/// The seed and matching are pure; tests feed the stores directly.
#[cfg(test)]
#[allow(clippy::needless_pass_by_value)] // test fixtures take json! literals
pub(crate) mod tests {
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;

    /// Stores holding `sidecarsets` and one namespace `default` with `labels`.
    pub(crate) fn stores_with(
        sidecarsets: &[serde_json::Value],
        labels: serde_json::Value,
    ) -> SidecarSetStores {
        let sets = Informer::<SidecarSet>::new("sidecarsets");
        sets.apply(Event::Init);
        for value in sidecarsets {
            let mut set: SidecarSet = serde_json::from_value(value.clone()).unwrap();
            kruise_api::defaults::ApplyDefaults::apply_defaults(&mut set);
            sets.apply(Event::InitApply(set));
        }
        sets.apply(Event::InitDone);
        let namespaces = Informer::<Namespace>::new("namespaces");
        namespaces.apply(Event::Init);
        namespaces.apply(Event::InitApply(
            serde_json::from_value(json!({"metadata": {"name": "default", "labels": labels}}))
                .unwrap(),
        ));
        namespaces.apply(Event::InitDone);
        let revisions = Informer::<ControllerRevision>::new("controllerrevisions");
        revisions.apply(Event::Init);
        revisions.apply(Event::InitDone);
        SidecarSetStores::from_informers(sets, namespaces, &revisions, "kruise-system")
    }

    pub(crate) fn log_sidecarset() -> serde_json::Value {
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": "test-sidecarset"},
            "spec": {"selector": {"matchLabels": {"app": "nginx"}},
                "containers": [{"name": "sidecar1", "image": "busybox", "command": ["sleep", "999d"],
                    "volumeMounts": [{"name": "log-volume", "mountPath": "/var/log"}]}],
                "volumes": [{"name": "log-volume", "emptyDir": {}}]}})
    }

    fn pod(labels: serde_json::Value) -> Pod {
        serde_json::from_value(
            json!({"metadata": {"name": "p", "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}),
        )
        .unwrap()
    }

    const NOW: &str = "2024-05-01T10:00:00Z";

    #[test]
    fn matching_pods_get_the_sidecar_and_its_volume() {
        let stores = stores_with(&[log_sidecarset()], json!({}));
        let injection = stores
            .inject(&pod(json!({"app": "nginx"})), "u", NOW.parse().unwrap())
            .unwrap();
        assert_eq!(injection.sidecarsets, ["test-sidecarset"]);
        let spec = injection.pod.spec.unwrap();
        let names: Vec<_> = spec.containers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["sidecar1", "app"]);
        assert_eq!(spec.volumes.unwrap()[0].name, "log-volume");
        let other = stores
            .inject(&pod(json!({"app": "other"})), "u", NOW.parse().unwrap())
            .unwrap();
        assert!(!other.changed());
    }

    #[test]
    fn namespace_labels_come_from_the_store() {
        let mut set = log_sidecarset();
        set["spec"]["namespaceSelector"] = json!({"matchLabels": {"team": "a"}});
        let injected = stores_with(std::slice::from_ref(&set), json!({"team": "a"}))
            .inject(&pod(json!({"app": "nginx"})), "u", NOW.parse().unwrap())
            .unwrap();
        assert!(injected.changed());
        let skipped = stores_with(&[set], json!({"team": "b"}))
            .inject(&pod(json!({"app": "nginx"})), "u", NOW.parse().unwrap())
            .unwrap();
        assert!(!skipped.changed());
    }

    #[test]
    fn the_json_patch_is_the_typed_patch() {
        let stores = stores_with(&[log_sidecarset()], json!({}));
        for labels in [json!({"app": "nginx"}), json!({"app": "other"})] {
            let typed = stores
                .inject(&pod(labels.clone()), "u", NOW.parse().unwrap())
                .unwrap();
            let text = stores
                .inject_json(&pod(labels), "u", NOW.parse().unwrap())
                .unwrap();
            assert_eq!(text.pod, typed.pod);
            assert_eq!(text.sidecarsets, typed.sidecarsets);
            let parsed: serde_json::Value = serde_json::from_str(&text.patch).unwrap();
            assert_eq!(parsed, serde_json::to_value(&typed.patch).unwrap());
        }
        let empty = SidecarSetStores::empty()
            .inject_json(&pod(json!({"app": "nginx"})), "u", NOW.parse().unwrap())
            .unwrap();
        assert_eq!(empty.patch, "[]");
    }

    #[test]
    fn seeds_are_stable_per_uid() {
        assert_eq!(seed_of("a"), seed_of("a"));
        assert_ne!(seed_of("a"), seed_of("b"));
    }
}
