//! An injection computed but not yet applied: the admitted pod, its copy with the annotations after
//! injection, and per list of the spec the injected items and where they go among the pod's own.
//!
//! The admission patch is written from it ([`crate::admission_patch`]): only the injected items and the
//! annotations are serialised, and the pod's own containers are never compared (injection does not touch
//! them). [`InjectionDelta::into_pod`] then applies it, moving the injected items into the copy.
//!
//! Where the items go is upstream's merge (spec 3c "Merge into the pod", as [`crate::container_merge`]): a
//! sidecar whose name is already among the pod's containers replaces that container in place (the last such
//! sidecar wins), the others go before the pod's containers (`BeforeAppContainer`) or after them; volumes and
//! pull secrets are appended first-wins; a list left empty is dropped.

use k8s_openapi::api::core::v1::{Container, LocalObjectReference, Pod, PodSpec, Volume};
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};

use crate::container_merge::append_first_wins;

/// Where an injected item goes in its list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Before the pod's items.
    Before,
    /// In place of the pod's item at this index.
    Replace(usize),
    /// After the pod's items.
    After,
}

impl Place {
    /// Where a sidecar container goes among the pod's containers `own`.
    pub(crate) fn of_container(own: &[Container], name: &str, before: bool) -> Self {
        match own.iter().position(|container| container.name == name) {
            Some(index) => Self::Replace(index),
            None if before => Self::Before,
            None => Self::After,
        }
    }
}

/// Items injected into a list of the pod's own items, in injection order, each with its place.
#[derive(Clone, Debug)]
pub(crate) struct Splice<T> {
    pub(crate) items: Vec<(Place, T)>,
}

impl<T> Splice<T> {
    /// The items inserted before the pod's, in order.
    pub(crate) fn before(&self) -> impl Iterator<Item = &T> {
        self.placed(Place::Before)
    }

    /// The items appended after the pod's, in order.
    pub(crate) fn after(&self) -> impl Iterator<Item = &T> {
        self.placed(Place::After)
    }

    fn placed(&self, wanted: Place) -> impl Iterator<Item = &T> {
        self.items
            .iter()
            .filter(move |(place, _)| *place == wanted)
            .map(|(_, item)| item)
    }

    /// How many items are inserted before or after the pod's.
    pub(crate) fn inserted(&self) -> usize {
        self.items
            .iter()
            .filter(|(place, _)| !matches!(place, Place::Replace(_)))
            .count()
    }

    /// The replaced items by index, the last one for an index winning.
    pub(crate) fn replacements(&self) -> Vec<(usize, &T)> {
        let mut replaced: Vec<(usize, &T)> = Vec::new();
        for (place, item) in &self.items {
            if let Place::Replace(index) = place {
                match replaced.iter_mut().find(|(at, _)| at == index) {
                    Some((_, existing)) => *existing = item,
                    None => replaced.push((*index, item)),
                }
            }
        }
        replaced.sort_by_key(|(index, _)| *index);
        replaced
    }

    /// The items inserted before and after the pod's, as one JSON array (the list when the pod has none).
    pub(crate) fn inserted_list(&self) -> InsertedList<'_, T> {
        InsertedList(self)
    }

    /// The pod's items with the splice applied.
    pub(crate) fn apply(self, mut list: Vec<T>) -> Vec<T> {
        let inserted = self.inserted();
        let before = self.before().count();
        if before == 0 {
            list.reserve_exact(inserted);
            for (place, item) in self.items {
                match place {
                    Place::Replace(index) => replace(&mut list, index, item),
                    Place::Before | Place::After => list.push(item),
                }
            }
            return list;
        }
        let mut merged = Vec::with_capacity(list.len() + inserted);
        let mut after = Vec::with_capacity(inserted - before);
        for (place, item) in self.items {
            match place {
                Place::Before => merged.push(item),
                Place::Replace(index) => replace(&mut list, index, item),
                Place::After => after.push(item),
            }
        }
        merged.append(&mut list);
        merged.append(&mut after);
        merged
    }
}

fn replace<T>(list: &mut [T], index: usize, item: T) {
    if let Some(slot) = list.get_mut(index) {
        *slot = item;
    }
}

/// See [`Splice::inserted_list`].
pub(crate) struct InsertedList<'a, T>(&'a Splice<T>);

impl<T: Serialize> Serialize for InsertedList<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.inserted()))?;
        for item in self.0.before().chain(self.0.after()) {
            seq.serialize_element(item)?;
        }
        seq.end()
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
    /// The spec lists; pull secrets are the pod's then `secrets`, first name wins.
    pub(crate) fn new(
        spec: Option<&PodSpec>,
        init_containers: Splice<Container>,
        containers: Splice<Container>,
        volumes: Splice<Volume>,
        secrets: &[&LocalObjectReference],
    ) -> Self {
        let own = spec
            .and_then(|spec| spec.image_pull_secrets.as_deref())
            .unwrap_or_default();
        let candidates: Vec<&LocalObjectReference> = own.iter().chain(secrets.iter().copied()).collect();
        let mut merged = Vec::with_capacity(candidates.len());
        append_first_wins(&mut merged, &[], &candidates, |secret| secret.name.as_str());
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

    #[test]
    fn splice_is_upstreams_merge() {
        let own = vec![
            container("main", "m"),
            container("log", "l"),
            container("log", "l2"),
        ];
        let sidecars = [
            ("b1", "x", true),
            ("a1", "x", false),
            ("log", "new", true),
            ("main", "first", false),
            ("main", "second", true),
            ("b2", "x", true),
        ];
        let splice = Splice {
            items: sidecars
                .iter()
                .map(|(name, image, before)| {
                    (
                        Place::of_container(&own, name, *before),
                        container(name, image),
                    )
                })
                .collect(),
        };
        let replaced: Vec<_> = splice
            .replacements()
            .iter()
            .map(|(index, c)| (*index, c.image.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(replaced, [(0, "second"), (1, "new")]);
        assert_eq!(splice.inserted(), 3);
        let names = |list: &[Container]| -> Vec<(String, String)> {
            list.iter()
                .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
                .collect()
        };
        let merged = splice.apply(own);
        let expected = [
            ("b1", "x"),
            ("b2", "x"),
            ("main", "second"),
            ("log", "new"),
            ("log", "l2"),
            ("a1", "x"),
        ];
        assert_eq!(
            names(&merged),
            expected.map(|(n, i)| (n.to_owned(), i.to_owned()))
        );
        // The same with the old merge helper.
        let legacy = crate::container_merge::merge_sidecar_containers(
            vec![
                container("main", "m"),
                container("log", "l"),
                container("log", "l2"),
            ],
            sidecars
                .iter()
                .map(|(name, image, before)| kruise_api::apps::v1beta1::SidecarContainer {
                    container: container(name, image),
                    pod_inject_policy: Some(if *before {
                        kruise_api::apps::v1beta1::PodInjectPolicy::BeforeAppContainer
                    } else {
                        kruise_api::apps::v1beta1::PodInjectPolicy::AfterAppContainer
                    }),
                    ..Default::default()
                })
                .collect(),
        );
        assert_eq!(names(&legacy), names(&merged));
    }

    #[test]
    fn appending_only_keeps_the_pods_items_first() {
        let splice = Splice {
            items: vec![
                (Place::After, container("a", "1")),
                (Place::Replace(0), container("own", "new")),
                (Place::After, container("b", "1")),
            ],
        };
        let merged = splice.apply(vec![container("own", "old")]);
        let names: Vec<_> = merged
            .iter()
            .map(|c| (c.name.as_str(), c.image.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(names, [("own", "new"), ("a", "1"), ("b", "1")]);
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
        let (b, a) = (secret("b"), secret("a"));
        let delta = SpecDelta::new(
            Some(&spec),
            Splice { items: Vec::new() },
            Splice {
                items: vec![(Place::After, container("s", "x"))],
            },
            Splice { items: Vec::new() },
            &[&b, &a],
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
