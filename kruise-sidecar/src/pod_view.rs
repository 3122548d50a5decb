//! [`PodView`]: what the SidecarSet controller's planner ([`crate::plan()`]) and the readers it calls
//! ([`crate::status`], [`crate::consistency`], [`crate::hot_upgrade`], [`crate::upgrade`], [`crate::records`])
//! read of a pod, so that they plan from a whole [`Pod`] or from the compact [`crate::pod_facts::PodFacts`]
//! a controller keeps between reconciles, with the same decisions.
//!
//! Containers and container statuses are read as `(name, image)` and [`StatusView`]s; an absent image reads
//! as `""`, as every reader here compares it.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use kruise_api::keys::sidecarset as keys;
use kruise_schedule::sort::active::ActiveKey;

/// One container status as the planner reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusView<'a> {
    /// The container's name.
    pub name: &'a str,
    /// The image the container runs.
    pub image: &'a str,
    /// The image's ID (with its scheme, as the kubelet reports it).
    pub image_id: &'a str,
    /// Whether the container is ready.
    pub ready: bool,
}

/// The pod fields the SidecarSet planner reads.
pub trait PodView {
    /// The pod's name (`""` when absent).
    fn name(&self) -> &str;
    /// The pod's namespace (`""` when absent).
    fn namespace(&self) -> &str;
    /// The pod's `resourceVersion`.
    fn resource_version(&self) -> Option<&str>;
    /// The pod's labels (empty when it has none).
    fn labels(&self) -> &BTreeMap<String, String>;
    /// The value of one of the sidecar annotations the planner reads (see
    /// [`crate::pod_facts::KEPT_ANNOTATIONS`]); other keys may read as absent.
    fn annotation(&self, key: &str) -> Option<&str>;
    /// Not `Succeeded` or `Failed`, and not being deleted.
    fn is_active(&self) -> bool;
    /// Phase `Running`, `Ready=True` and not being deleted (upstream `IsRunningAndReady`).
    fn is_running_and_ready(&self) -> bool;
    /// The `SidecarSetUpgradable` condition, if the pod has one.
    fn upgradable_condition(&self) -> Option<&PodCondition>;
    /// How many containers the spec has.
    fn container_count(&self) -> usize;
    /// The containers' `(name, image)`, in spec order.
    fn containers(&self) -> impl Iterator<Item = (&str, &str)>;
    /// How many container statuses the pod reports.
    fn status_count(&self) -> usize;
    /// The container statuses, in status order.
    fn container_statuses(&self) -> impl Iterator<Item = StatusView<'_>>;
    /// The pod's key in Kubernetes' `ActivePods` order.
    fn active_key(&self) -> ActiveKey<'_>;

    /// The image of the container `name` (`""` when it has none), if the pod has that container.
    fn container_image(&self, name: &str) -> Option<&str> {
        self.containers()
            .find(|(container, _)| *container == name)
            .map(|(_, image)| image)
    }

    /// `namespace/name`, for messages.
    fn key(&self) -> String {
        format!("{}/{}", self.namespace(), self.name())
    }
}

impl PodView for Pod {
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("")
    }

    fn resource_version(&self) -> Option<&str> {
        self.metadata.resource_version.as_deref()
    }

    fn labels(&self) -> &BTreeMap<String, String> {
        kruise_api::pod::labels(self)
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        kruise_api::pod::annotation(self, key)
    }

    fn is_active(&self) -> bool {
        kruise_api::pod::is_active(self)
    }

    fn is_running_and_ready(&self) -> bool {
        kruise_api::pod::phase(self) == "Running"
            && kruise_api::pod::is_ready(self)
            && self.metadata.deletion_timestamp.is_none()
    }

    fn upgradable_condition(&self) -> Option<&PodCondition> {
        self.status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .find(|condition| condition.type_ == keys::UPGRADABLE_CONDITION)
    }

    fn container_count(&self) -> usize {
        self.spec.as_ref().map_or(0, |spec| spec.containers.len())
    }

    fn containers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.spec.iter().flat_map(|spec| {
            spec.containers.iter().map(|container| {
                (
                    container.name.as_str(),
                    container.image.as_deref().unwrap_or(""),
                )
            })
        })
    }

    fn status_count(&self) -> usize {
        self.status
            .as_ref()
            .and_then(|status| status.container_statuses.as_ref())
            .map_or(0, Vec::len)
    }

    fn container_statuses(&self) -> impl Iterator<Item = StatusView<'_>> {
        self.status
            .iter()
            .flat_map(|status| status.container_statuses.iter().flatten())
            .map(|status| StatusView {
                name: &status.name,
                image: &status.image,
                image_id: &status.image_id,
                ready: status.ready,
            })
    }

    fn active_key(&self) -> ActiveKey<'_> {
        ActiveKey::of(self)
    }
}

macro_rules! forward_pod_view {
    ($($pointer:ty),*) => {$(
        impl<T: PodView + ?Sized> PodView for $pointer {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn namespace(&self) -> &str {
                (**self).namespace()
            }
            fn resource_version(&self) -> Option<&str> {
                (**self).resource_version()
            }
            fn labels(&self) -> &BTreeMap<String, String> {
                (**self).labels()
            }
            fn annotation(&self, key: &str) -> Option<&str> {
                (**self).annotation(key)
            }
            fn is_active(&self) -> bool {
                (**self).is_active()
            }
            fn is_running_and_ready(&self) -> bool {
                (**self).is_running_and_ready()
            }
            fn upgradable_condition(&self) -> Option<&PodCondition> {
                (**self).upgradable_condition()
            }
            fn container_count(&self) -> usize {
                (**self).container_count()
            }
            fn containers(&self) -> impl Iterator<Item = (&str, &str)> {
                (**self).containers()
            }
            fn status_count(&self) -> usize {
                (**self).status_count()
            }
            fn container_statuses(&self) -> impl Iterator<Item = StatusView<'_>> {
                (**self).container_statuses()
            }
            fn active_key(&self) -> ActiveKey<'_> {
                (**self).active_key()
            }
        }
    )*};
}

forward_pod_view!(&T, Arc<T>);
