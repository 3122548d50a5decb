//! An injection computed but not yet applied: the admitted pod, its copy with the annotations after
//! injection, and per list of the spec the injected items and where they go among the pod's own.
//!
//! The admission patch is written from it ([`crate::admission_patch`]): only the injected items and the
//! annotations are serialised, and the pod's own containers are never compared, since injection does not
//! touch them. [`InjectionDelta::into_pod`] then applies it, moving the injected items into the copy.
//!
//! How the items are placed is upstream's merge (spec 3c "Merge into the pod", [`crate::container_merge`]): a
//! sidecar whose name is already among the pod's containers replaces that container in place (the last such
//! sidecar wins), the others go before the pod's containers (`BeforeAppContainer`) or after them; volumes and
//! pull secrets are appended first-wins; a list left empty is dropped.

use k8s_openapi::api::core::v1::{Container, LocalObjectReference, Pod, PodSpec, Volume};

use crate::container_merge::merge_pull_secrets;

/// A sidecar container ready to merge, and whether it goes before the pod's containers.
#[derive(Clone, Debug)]
pub(crate) struct Sidecar {
    pub(crate) container: Container,
    pub(crate) before: bool,
}

/// Items injected around a list of the pod's own items: before them, in place of some, after them.
#[derive(Clone, Debug)]
pub(crate) struct Splice<T> {
    /// Inserted before the pod's items, in order.
    pub(crate) before: Vec<T>,
    /// `(index among the pod's items, new item)`, by index, one per index.
    pub(crate) replaced: Vec<(usize, T)>,
    /// Appended after the pod's items, in order.
    pub(crate) after: Vec<T>,
}

impl<T> Default for Splice<T> {
    fn default() -> Self {
        Self {
            before: Vec::new(),
            replaced: Vec::new(),
            after: Vec::new(),
        }
    }
}

impl Splice<Container> {
    /// Upstream's `mergeSidecarContainers` against the pod's containers `own`, in the sidecars' order.
    pub(crate) fn of_sidecars(own: &[Container], sidecars: Vec<Sidecar>) -> Self {
        let mut splice = Self::default();
        for sidecar in sidecars {
            if let Some(index) = own
                .iter()
                .position(|container| container.name == sidecar.container.name)
            {
                match splice.replaced.iter_mut().find(|(at, _)| *at == index) {
                    Some((_, existing)) => *existing = sidecar.container,
                    None => splice.replaced.push((index, sidecar.container)),
                }
            } else if sidecar.before {
                splice.before.push(sidecar.container);
            } else {
                splice.after.push(sidecar.container);
            }
        }
        splice.replaced.sort_by_key(|(index, _)| *index);
        splice
    }
}

impl<T> Splice<T> {
    /// Appends `items` after the pod's.
    pub(crate) fn appending(items: Vec<T>) -> Self {
        Self {
            after: items,
            ..Self::default()
        }
    }

    /// Whether nothing is inserted (replacements aside).
    pub(crate) fn inserts_nothing(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }

    /// The pod's items with the splice applied.
    pub(crate) fn apply(self, mut list: Vec<T>) -> Vec<T> {
        let Self {
            before,
            replaced,
            after,
        } = self;
        for (index, item) in replaced {
            if let Some(slot) = list.get_mut(index) {
                *slot = item;
            }
        }
        if before.is_empty() && after.is_empty() {
            return list;
        }
        let mut merged = Vec::with_capacity(before.len() + list.len() + after.len());
        merged.extend(before);
        merged.append(&mut list);
        merged.extend(after);
        merged
    }
}

/// What injection puts into the pod's spec.
#[derive(Clone, Debug)]
pub(crate) struct SpecDelta {
    pub(crate) init_containers: Splice<Container>,
    pub(crate) containers: Splice<Container>,
    /// Appended only: the sidecars' volumes whose name the pod (or an earlier sidecar) does not use.
    pub(crate) volumes: Splice<Volume>,
    /// The list after injection: the pod's pull secrets then the sidecars', de-duplicated by name (`None`
    /// when empty).
    pub(crate) image_pull_secrets: Option<Vec<LocalObjectReference>>,
}

impl SpecDelta {
    /// The spec lists, the pod's pull secrets then the sidecars' (`secrets`), first name wins.
    pub(crate) fn new(
        spec: Option<&PodSpec>,
        init_containers: Splice<Container>,
        containers: Splice<Container>,
        volumes: Splice<Volume>,
        secrets: Vec<LocalObjectReference>,
    ) -> Self {
        let own = spec
            .and_then(|spec| spec.image_pull_secrets.clone())
            .unwrap_or_default();
        let merged = merge_pull_secrets(own, secrets);
        Self {
            init_containers,
            containers,
            volumes,
            image_pull_secrets: (!merged.is_empty()).then_some(merged),
        }
    }

    /// Applies the delta to a spec.
    pub(crate) fn apply(self, spec: &mut PodSpec) {
        let init = self
            .init_containers
            .apply(spec.init_containers.take().unwrap_or_default());
        spec.init_containers = (!init.is_empty()).then_some(init);
        spec.containers = self.containers.apply(std::mem::take(&mut spec.containers));
        let volumes = self
            .volumes
            .apply(spec.volumes.take().unwrap_or_default());
        spec.volumes = (!volumes.is_empty()).then_some(volumes);
        spec.image_pull_secrets = self.image_pull_secrets;
    }
}

/// An injection before it is applied.
#[derive(Clone, Debug)]
pub(crate) struct InjectionDelta<'p> {
    /// The pod as admitted.
    pub(crate) admitted: &'p Pod,
    /// A copy of the admitted pod with the annotations after injection; its spec is still the admitted one.
    pub(crate) pod: Pod,
    /// What goes into the spec; `None` when the spec does not change.
    pub(crate) spec: Option<SpecDelta>,
}

impl InjectionDelta<'_> {
    /// The injected pod.
    pub(crate) fn into_pod(self) -> Pod {
        let mut pod = self.pod;
        if let Some(delta) = self.spec {
            delta.apply(pod.spec.get_or_insert_with(Default::default));
        }
        pod
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(name: &str, image: &str) -> Container {
        Container {
            name: name.into(),
            image: Some(image.into()),
            ..Container::default()
        }
    }

    fn sidecar(name: &str, image: &str, before: bool) -> Sidecar {
        Sidecar {
            container: container(name, image),
            before,
        }
    }

    #[test]
    fn splice_matches_upstream_merge() {
        let own = vec![container("main", "m"), container("log", "l"), container("log", "l2")];
        let sidecars = vec![
            sidecar("b1", "x", true),
            sidecar("a1", "x", false),
            sidecar("log", "new", true),
            sidecar("main", "first", false),
            sidecar("main", "second", true),
            sidecar("b2", "x", true),
        ];
        let splice = Splice::of_sidecars(&own, sidecars);
        let replaced: Vec<_> = splice
            .replaced
            .iter()
            .map(|(index, c)| (*index, c.image.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(replaced, [(0, "second"), (1, "new")]);
        let merged = splice.apply(own);
        let names: Vec<_> = merged
            .iter()
            .map(|c| (c.name.as_str(), c.image.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            names,
            [
                ("b1", "x"),
                ("b2", "x"),
                ("main", "second"),
                ("log", "new"),
                ("log", "l2"),
                ("a1", "x")
            ]
        );
    }

    #[test]
    fn empty_lists_are_dropped_and_secrets_deduplicated() {
        let secret = |name: &str| LocalObjectReference { name: name.into() };
        let mut spec = PodSpec {
            init_containers: Some(Vec::new()),
            volumes: Some(Vec::new()),
            image_pull_secrets: Some(vec![secret("a"), secret("a")]),
            ..PodSpec::default()
        };
        let delta = SpecDelta::new(
            Some(&spec),
            Splice::default(),
            Splice::appending(vec![container("s", "x")]),
            Splice::default(),
            vec![secret("b"), secret("a")],
        );
        delta.apply(&mut spec);
        assert_eq!(spec.init_containers, None);
        assert_eq!(spec.volumes, None);
        assert_eq!(spec.containers.len(), 1);
        assert_eq!(
            spec.image_pull_secrets,
            Some(vec![secret("a"), secret("b")])
        );
    }
}
