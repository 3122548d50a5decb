//! [`PodFacts`]: the compact copy of what the SidecarSet planner reads of a pod ([`PodView`]), built once
//! per pod version with [`PodFacts::of`], so a controller can keep it between reconciles instead of the
//! whole pod (an injected pod with six containers takes tens of KB as `k8s_openapi` structs; its facts a
//! few hundred bytes plus its labels and sidecar annotations). [`crate::plan::plan_steps`] plans from facts
//! exactly as [`crate::plan()`] does from pods; only the pods a plan acts on are needed whole, to build
//! their patches ([`crate::plan::pod_outcome`]).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_sidecar::pod_facts::PodFacts;
//! use kruise_sidecar::pod_view::PodView;
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-0", "namespace": "default", "resourceVersion": "7",
//!                  "annotations": {"kruise.io/sidecarset-injected-list": "log",
//!                                  "unrelated": "dropped"}},
//!     "spec": {"containers": [{"name": "log", "image": "busybox:1"}, {"name": "app"}]},
//! })).unwrap();
//! let facts = PodFacts::of(&pod);
//! assert_eq!(facts.resource_version(), Some("7"));
//! assert_eq!(facts.annotation("kruise.io/sidecarset-injected-list"), Some("log"));
//! assert_eq!(facts.annotation("unrelated"), None);
//! assert_eq!(facts.containers().collect::<Vec<_>>(), [("log", "busybox:1"), ("app", "")]);
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use kruise_api::keys::sidecarset as keys;
use kruise_schedule::sort::active::ActiveKey;

use crate::pod_view::{PodView, StatusView};

/// The pod annotations the planner reads, and so the ones [`PodFacts`] keeps.
pub const KEPT_ANNOTATIONS: [&str; 5] = [
    keys::HASH_ANNOTATION,
    keys::HASH_WITHOUT_IMAGE_ANNOTATION,
    keys::INJECTED_LIST_ANNOTATION,
    keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION,
    keys::INPLACE_UPDATE_STATE_ANNOTATION,
];

/// One container status, compact.
#[derive(Clone, Debug, PartialEq, Eq)]
struct StatusFacts {
    name: Box<str>,
    image: Box<str>,
    image_id: Box<str>,
    ready: bool,
}

/// What the SidecarSet planner reads of one pod version (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct PodFacts {
    name: Box<str>,
    namespace: Box<str>,
    resource_version: Option<Box<str>>,
    labels: BTreeMap<String, String>,
    /// The values of [`KEPT_ANNOTATIONS`], in that order.
    annotations: [Option<Box<str>>; KEPT_ANNOTATIONS.len()],
    active: bool,
    running_and_ready: bool,
    upgradable: Option<Box<PodCondition>>,
    containers: Box<[(Box<str>, Box<str>)]>,
    statuses: Box<[StatusFacts]>,
    /// The `ActivePods` key without the name (read from `name`).
    active_key: ActiveKey<'static>,
}

impl PodFacts {
    /// The facts of `pod`.
    #[must_use]
    pub fn of(pod: &Pod) -> Self {
        let boxed = |text: &str| Box::<str>::from(text);
        Self {
            name: boxed(pod.name()),
            namespace: boxed(pod.namespace()),
            resource_version: pod.resource_version().map(boxed),
            labels: pod.labels().clone(),
            annotations: KEPT_ANNOTATIONS.map(|key| pod.annotation(key).map(boxed)),
            active: pod.is_active(),
            running_and_ready: pod.is_running_and_ready(),
            upgradable: pod.upgradable_condition().cloned().map(Box::new),
            containers: pod
                .containers()
                .map(|(name, image)| (boxed(name), boxed(image)))
                .collect(),
            statuses: pod
                .container_statuses()
                .map(|status| StatusFacts {
                    name: boxed(status.name),
                    image: boxed(status.image),
                    image_id: boxed(status.image_id),
                    ready: status.ready,
                })
                .collect(),
            active_key: unnamed(&pod.active_key()),
        }
    }
}

/// The key without its name.
fn unnamed(key: &ActiveKey<'_>) -> ActiveKey<'static> {
    ActiveKey {
        scheduled: key.scheduled,
        phase: key.phase,
        ready: key.ready,
        ready_since: key.ready_since,
        restarts: key.restarts,
        created: key.created,
        name: "",
    }
}

impl PodView for PodFacts {
    fn name(&self) -> &str {
        &self.name
    }

    fn namespace(&self) -> &str {
        &self.namespace
    }

    fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }

    fn labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        KEPT_ANNOTATIONS
            .iter()
            .position(|kept| *kept == key)
            .and_then(|index| self.annotations.get(index))
            .and_then(|value| value.as_deref())
    }

    fn is_active(&self) -> bool {
        self.active
    }

    fn is_running_and_ready(&self) -> bool {
        self.running_and_ready
    }

    fn upgradable_condition(&self) -> Option<&PodCondition> {
        self.upgradable.as_deref()
    }

    fn container_count(&self) -> usize {
        self.containers.len()
    }

    fn containers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.containers
            .iter()
            .map(|(name, image)| (&**name, &**image))
    }

    fn status_count(&self) -> usize {
        self.statuses.len()
    }

    fn container_statuses(&self) -> impl Iterator<Item = StatusView<'_>> {
        self.statuses.iter().map(|status| StatusView {
            name: &status.name,
            image: &status.image,
            image_id: &status.image_id,
            ready: status.ready,
        })
    }

    fn active_key(&self) -> ActiveKey<'_> {
        ActiveKey {
            name: &self.name,
            ..self.active_key
        }
    }
}
