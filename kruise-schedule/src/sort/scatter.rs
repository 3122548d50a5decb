//! The scatter sorter (upstream `updatesort.ScatterSorter`): pods matching a `key=value` term are
//! spread evenly among the others, so that an update batch does not take them all at once.
//!
//! * With one term it is used as is. With several, each is counted over the pods being sorted (label present
//!   and equal), terms matching none are dropped, and the rest are applied one after the other, the most
//!   matched first.
//! * Per term: the pods being sorted split into matched and unmatched (a missing label reads as `""`, so a
//!   term with an empty value matches pods without the key). If either side has at most one pod nothing
//!   changes. Otherwise the last matched pod is held back (it goes to the very end), the group sizes come from
//!   [`group_by_density`] over the counts among all pods and among the pods being sorted, and the output is:
//!   the first `unmatchedRemainder` unmatched, then `groupNum` rounds of (`matchedGroupSize` matched,
//!   `unmatchedGroupSize` unmatched), then leftover matched, leftover unmatched, then the held-back pod.
//!
//! ```
//! use kruise_api::scatter::UpdateScatterTerm;
//! use kruise_schedule::sort::scatter::{group_by_density, ScatterGroup};
//!
//! // 2 matched (after holding one back) among 6 pods being sorted, 3 matched in 10 overall.
//! assert_eq!(group_by_density(2, 7, 2, 4), ScatterGroup { group_num: 2, matched_size: 1, unmatched_size: 2, unmatched_remainder: 0 });
//! # let _ = UpdateScatterTerm::default();
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::scatter::UpdateScatterTerm;

/// Where the scatter sorter reads a pod's labels: the pod (or a reference or `Arc` to it), or the pod's label
/// map alone (what a planner keeping compact per-pod facts holds).
pub trait PodLabels {
    /// The value of the label `key`.
    fn label(&self, key: &str) -> Option<&str>;
}

impl PodLabels for Pod {
    fn label(&self, key: &str) -> Option<&str> {
        kruise_api::pod::label(self, key)
    }
}

impl PodLabels for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl<T: PodLabels + ?Sized> PodLabels for &T {
    fn label(&self, key: &str) -> Option<&str> {
        (**self).label(key)
    }
}

impl<T: PodLabels + ?Sized> PodLabels for Arc<T> {
    fn label(&self, key: &str) -> Option<&str> {
        (**self).label(key)
    }
}

/// How one scatter term interleaves matched and unmatched pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScatterGroup {
    /// Rounds of (matched, unmatched).
    pub group_num: usize,
    /// Matched pods per round.
    pub matched_size: usize,
    /// Unmatched pods per round.
    pub unmatched_size: usize,
    /// Unmatched pods put before the first round.
    pub unmatched_remainder: usize,
}

fn go_round(numerator: usize, denominator: usize) -> usize {
    #[allow(clippy::cast_precision_loss)]
    let value = (numerator as f64 / denominator as f64).round();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rounded = value as usize;
    rounded
}

fn new_group(matched: usize, unmatched: usize) -> ScatterGroup {
    let group_num = matched.min(unmatched);
    if group_num == 0 {
        return ScatterGroup::default();
    }
    ScatterGroup {
        group_num,
        matched_size: go_round(matched, group_num),
        unmatched_size: go_round(unmatched, group_num),
        unmatched_remainder: 0,
    }
}

/// Upstream `calculateGroupByDensity`: the groups for the pods being sorted (`update_*`), unless the pods
/// overall are sparser in matched pods, in which case the overall group sizes are used for as many rounds as
/// the pods being sorted allow, and the unmatched pods left over go first. Ratios compare in `f32`, sizes
/// round half away from zero.
#[must_use]
pub fn group_by_density(
    total_matched: usize,
    total_unmatched: usize,
    update_matched: usize,
    update_unmatched: usize,
) -> ScatterGroup {
    let total = new_group(total_matched, total_unmatched);
    let update = new_group(update_matched, update_unmatched);
    #[allow(clippy::cast_precision_loss)]
    let sparser = total_unmatched as f32 / total_matched as f32
        >= update_unmatched as f32 / update_matched as f32;
    if sparser || total.matched_size == 0 || total.unmatched_size == 0 {
        return update;
    }
    let by_matched = update_matched / total.matched_size;
    let by_unmatched = update_unmatched / total.unmatched_size;
    let group_num = if by_matched < by_unmatched {
        by_matched
    } else {
        by_unmatched
    };
    ScatterGroup {
        group_num,
        matched_size: total.matched_size,
        unmatched_size: total.unmatched_size,
        unmatched_remainder: update_unmatched - group_num * total.unmatched_size,
    }
}

/// Whether `pod` matches `term` as the per-term rule reads it (a missing label is `""`).
#[must_use]
pub fn matches(pod: &(impl PodLabels + ?Sized), term: &UpdateScatterTerm) -> bool {
    pod.label(&term.key).unwrap_or("") == term.value
}

/// A scatter strategy ready to sort pods.
#[derive(Clone, Copy, Debug)]
pub struct Scatter<'a> {
    terms: &'a [UpdateScatterTerm],
}

impl<'a> Scatter<'a> {
    /// The sorter for `terms`.
    #[must_use]
    pub fn new(terms: &'a [UpdateScatterTerm]) -> Self {
        Self { terms }
    }

    /// Whether there are terms.
    #[must_use]
    pub fn is_active(&self) -> bool {
        !self.terms.is_empty()
    }

    /// The terms applied to `indexes`, in order (upstream `getScatterTerms`).
    #[must_use]
    pub fn terms_for<P: PodLabels>(
        &self,
        pods: &[P],
        indexes: &[usize],
    ) -> Vec<&'a UpdateScatterTerm> {
        if self.terms.len() == 1 {
            return self.terms.iter().collect();
        }
        let mut counted: Vec<(usize, &UpdateScatterTerm)> = Vec::new();
        for term in self.terms {
            let count = indexes
                .iter()
                .filter_map(|&index| pods.get(index))
                .filter(|pod| pod.label(&term.key) == Some(term.value.as_str()))
                .count();
            if count > 0 && !counted.iter().any(|(_, seen)| *seen == term) {
                counted.push((count, term));
            }
        }
        counted.sort_by_key(|entry| std::cmp::Reverse(entry.0));
        counted.into_iter().map(|(_, term)| term).collect()
    }

    /// Scatters `indexes` (already in their base order) over all `pods`.
    #[must_use]
    pub fn sort<P: PodLabels>(&self, pods: &[P], indexes: Vec<usize>) -> Vec<usize> {
        if self.terms.is_empty() || indexes.len() <= 1 {
            return indexes;
        }
        let mut order = indexes;
        for term in self.terms_for(pods, &order) {
            let (total_matched, total_unmatched) = totals(pods, term);
            order = by_term(pods, term, order, total_matched, total_unmatched);
        }
        order
    }
}

/// How many of all `pods` match `term`, and how many do not.
#[must_use]
pub fn totals<P: PodLabels>(pods: &[P], term: &UpdateScatterTerm) -> (usize, usize) {
    let matched = pods.iter().filter(|pod| matches(*pod, term)).count();
    (matched, pods.len() - matched)
}

/// One term over the whole ordered list, with the counts of matched and unmatched pods among all pods.
pub(crate) fn by_term<P: PodLabels>(
    pods: &[P],
    term: &UpdateScatterTerm,
    order: Vec<usize>,
    total_matched: usize,
    total_unmatched: usize,
) -> Vec<usize> {
    let (mut matched, unmatched): (Vec<usize>, Vec<usize>) = order
        .iter()
        .partition(|&&index| pods.get(index).is_some_and(|pod| matches(pod, term)));
    if matched.len() <= 1 || unmatched.len() <= 1 {
        return order;
    }
    let Some(last) = matched.pop() else {
        return order;
    };
    let limit = order.len();
    interleave(
        Sequence::full(&matched),
        Sequence::full(&unmatched),
        Some(last),
        total_matched,
        total_unmatched,
        limit,
    )
}

/// A prefix of an ordered sequence and the sequence's full length.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sequence<'s> {
    pub(crate) prefix: &'s [usize],
    pub(crate) len: usize,
}

impl<'s> Sequence<'s> {
    pub(crate) fn full(items: &'s [usize]) -> Self {
        Self {
            prefix: items,
            len: items.len(),
        }
    }
}

/// The first `limit` items of one term's output, reading only as much of each sequence as needed.
/// `matched` excludes the held-back pod `last`; `total_matched` still counts it.
pub(crate) fn interleave(
    matched: Sequence<'_>,
    unmatched: Sequence<'_>,
    last: Option<usize>,
    total_matched: usize,
    total_unmatched: usize,
    limit: usize,
) -> Vec<usize> {
    let group = group_by_density(
        total_matched.saturating_sub(1),
        total_unmatched,
        matched.len,
        unmatched.len,
    );
    let mut out = Vec::with_capacity(limit.min(matched.len + unmatched.len + 1));
    let (mut m, mut u) = (0usize, 0usize);
    let take = |seq: Sequence<'_>, cursor: &mut usize, count: usize, out: &mut Vec<usize>| {
        let end = (*cursor + count).min(seq.len);
        while *cursor < end && out.len() < limit {
            match seq.prefix.get(*cursor) {
                Some(&item) => out.push(item),
                None => return,
            }
            *cursor += 1;
        }
    };
    take(unmatched, &mut u, group.unmatched_remainder, &mut out);
    for _ in 0..group.group_num {
        if out.len() >= limit {
            break;
        }
        take(matched, &mut m, group.matched_size, &mut out);
        take(unmatched, &mut u, group.unmatched_size, &mut out);
    }
    take(matched, &mut m, usize::MAX / 2, &mut out);
    take(unmatched, &mut u, usize::MAX / 2, &mut out);
    if out.len() < limit
        && let Some(last) = last
    {
        out.push(last);
    }
    out
}
