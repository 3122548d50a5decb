//! An injection as the injected pod plus where its injected items sit: per list of the spec, how many items
//! come before the pod's own, how many are the pod's own, which of those were replaced, and the rest after.
//!
//! The admission patch is written from it ([`crate::admission_patch`]): only the injected items and the
//! annotations are serialised, and the pod's own containers are never compared (injection does not touch
//! them), only those replaced in place.
//!
//! Where the items go is upstream's merge (`pkg/util/pods.go`, as [`crate::container_merge`]): a
//! sidecar whose name is already among the pod's containers replaces that container in place (the last such
//! sidecar wins), the others go before the pod's containers (`BeforeAppContainer`) or after them; volumes and
//! pull secrets are appended first-wins; a list left empty is dropped.

use k8s_openapi::api::core::v1::{Container, Pod};

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

/// The items injected into one list, collected by place.
#[derive(Debug)]
pub(crate) struct Splice<T> {
    before: Vec<T>,
    replaced: Vec<(usize, T)>,
    after: Vec<T>,
    /// Room to reserve for the whole list once something goes before the pod's items.
    capacity: usize,
}

impl<T> Splice<T> {
    /// An empty splice; `capacity` is the room the whole list will need (a guess is fine).
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            before: Vec::new(),
            replaced: Vec::new(),
            after: Vec::new(),
            capacity,
        }
    }

    /// Adds an item, in injection order.
    pub(crate) fn push(&mut self, place: Place, item: T) {
        match place {
            Place::Before => {
                if self.before.capacity() == 0 {
                    self.before.reserve_exact(self.capacity.max(1));
                }
                self.before.push(item);
            }
            Place::Replace(index) => self.replaced.push((index, item)),
            Place::After => self.after.push(item),
        }
    }

    /// Whether nothing was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.before.is_empty() && self.replaced.is_empty() && self.after.is_empty()
    }

    /// The items added so far, in no particular order.
    pub(crate) fn items(&self) -> impl Iterator<Item = &T> {
        self.before
            .iter()
            .chain(self.replaced.iter().map(|(_, item)| item))
            .chain(&self.after)
    }

    /// Sorts the items (stably) as if the whole injection order were sorted: an item's place does not depend
    /// on the order, and items replacing the same container share its name.
    pub(crate) fn sort_by(&mut self, mut compare: impl FnMut(&T, &T) -> std::cmp::Ordering) {
        self.before.sort_by(&mut compare);
        self.after.sort_by(&mut compare);
    }

    /// The list after injection from the pod's items `own`, and where the injected items sit in it.
    pub(crate) fn assemble(self, own: Vec<T>) -> (Vec<T>, ListLayout) {
        let Self {
            before,
            replaced,
            after,
            ..
        } = self;
        let layout_before = before.len();
        let own_count = own.len();
        let mut list = if before.is_empty() {
            own
        } else {
            let mut list = before;
            list.reserve_exact(own_count + after.len());
            list.extend(own);
            list
        };
        let mut replaced_at: Vec<usize> = Vec::new();
        for (index, item) in replaced {
            if let Some(slot) = list.get_mut(layout_before + index) {
                *slot = item;
            }
            if !replaced_at.contains(&index) {
                replaced_at.push(index);
            }
        }
        replaced_at.sort_unstable();
        if list.is_empty() {
            list = after;
        } else if !after.is_empty() {
            list.reserve_exact(after.len());
            list.extend(after);
        }
        let layout = ListLayout {
            before: layout_before,
            own: own_count,
            replaced: replaced_at,
        };
        (list, layout)
    }
}

/// Where the injected items of a list sit: `before` items, then the pod's `own` items (those at `replaced`,
/// indexes among the pod's items, replaced), then the rest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ListLayout {
    pub(crate) before: usize,
    pub(crate) own: usize,
    pub(crate) replaced: Vec<usize>,
}

/// Where the injected items sit in the spec's init containers, containers and volumes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SpecLayout {
    pub(crate) init_containers: ListLayout,
    pub(crate) containers: ListLayout,
    pub(crate) volumes: ListLayout,
}

/// An injection: the admitted pod, the injected one, and where the injected items sit.
#[derive(Clone, Debug)]
pub(crate) struct InjectionDelta<'p> {
    /// The pod as admitted.
    pub(crate) admitted: &'p Pod,
    /// The pod after injection.
    pub(crate) pod: Pod,
    /// Where the injected items sit; `None` when the spec did not change (only annotations did).
    pub(crate) layout: Option<SpecLayout>,
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

    fn names(list: &[Container]) -> Vec<(String, String)> {
        list.iter()
            .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn splice_is_upstreams_merge() {
        let own = || {
            vec![
                container("main", "m"),
                container("log", "l"),
                container("log", "l2"),
            ]
        };
        let sidecars = [
            ("b1", "x", true),
            ("a1", "x", false),
            ("log", "new", true),
            ("main", "first", false),
            ("main", "second", true),
            ("b2", "x", true),
        ];
        let mut splice = Splice::with_capacity(9);
        for (name, image, before) in sidecars {
            splice.push(
                Place::of_container(&own(), name, before),
                container(name, image),
            );
        }
        let (merged, layout) = splice.assemble(own());
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
        assert_eq!(
            layout,
            ListLayout {
                before: 2,
                own: 3,
                replaced: vec![0, 1]
            }
        );
        // The same as the merge helper.
        let legacy = crate::container_merge::merge_sidecar_containers(
            own(),
            sidecars
                .iter()
                .map(
                    |(name, image, before)| kruise_api::apps::v1beta1::SidecarContainer {
                        container: container(name, image),
                        pod_inject_policy: Some(if *before {
                            kruise_api::apps::v1beta1::PodInjectPolicy::BeforeAppContainer
                        } else {
                            kruise_api::apps::v1beta1::PodInjectPolicy::AfterAppContainer
                        }),
                        ..Default::default()
                    },
                )
                .collect(),
        );
        assert_eq!(names(&legacy), names(&merged));
    }

    #[test]
    fn appended_items_follow_the_pods_own() {
        let mut splice = Splice::with_capacity(0);
        splice.push(Place::After, container("b", "1"));
        splice.push(Place::Replace(0), container("own", "new"));
        splice.push(Place::After, container("a", "1"));
        splice.sort_by(|a, b| a.name.cmp(&b.name));
        let (merged, layout) = splice.assemble(vec![container("own", "old")]);
        assert_eq!(
            names(&merged),
            [("own", "new"), ("a", "1"), ("b", "1")].map(|(n, i)| (n.to_owned(), i.to_owned()))
        );
        assert_eq!(layout.before, 0);
        assert_eq!(layout.own, 1);
        assert_eq!(layout.replaced, [0]);
        let (alone, _) = Splice::<Container>::with_capacity(0).assemble(Vec::new());
        assert!(alone.is_empty());
    }
}
