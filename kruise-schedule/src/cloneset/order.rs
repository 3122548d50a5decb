//! The update order of candidates (upstream `SortUpdateIndexes`): `ActivePods`, then the priority strategy,
//! then the scatter strategy, then `PreparingUpdate` pods first; only the first `k` are needed, so they are
//! selected rather than sorted whenever the strategy allows it.

use std::cmp::Ordering;

use kruise_api::scatter::UpdateScatterTerm;

use super::facts::{self, PodFacts};
use super::plan::Ctx;
use crate::pod_view::State;
use crate::sort::LatestFirst;
use crate::sort::active::ActiveKey;
use crate::sort::priority::PriorityKey;
use crate::sort::scatter::{self, Scatter, Sequence};
use crate::sort::select;

/// The base key: priority first, then `ActivePods` (with the pod name last), packed into integers so that
/// comparing two keys is a run of integer comparisons and the keys being sorted stay small. The first 16
/// bytes of the name ([`facts::name_head`]) come before the name itself, so that ties of the other rules
/// rarely read the names.
#[derive(Clone, Copy, Debug)]
struct Key<'a> {
    rank: Rank,
    name: &'a str,
}

/// The integer form of the key without the name; its derived order is the key's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Rank {
    /// The priority key: the variant (the same for every pod of a plan), then its numbers.
    priority: (u8, i64, i64),
    /// Rules 1 to 3: scheduled, phase, ready (`scheduled << 3 | phase << 1 | ready`; phases are 0 to 2).
    head: u8,
    /// Rule 4 as [`latest_first`] (`None` for pods that are not ready, so it only separates ready pods).
    ready_since: (i64, i32),
    /// Rule 5: more restarts first.
    restarts: i64,
    /// Rule 6 as [`latest_first`].
    created: (i64, i32),
    /// The first 16 bytes of the name, big-endian.
    name_head: (u64, u64),
}

/// `LatestFirst` as integers: no time first, then later times first. Seconds and nanoseconds (both truncated
/// toward zero, so they share the time's sign) order as the time does; negated, they order latest first.
fn latest_first(time: LatestFirst) -> (i64, i32) {
    time.0.map_or((i64::MIN, i32::MIN), |time| {
        (-time.as_second(), -time.subsec_nanosecond())
    })
}

impl<'a> Key<'a> {
    fn new(priority: PriorityKey, active: ActiveKey<'a>, name_head: Option<u128>) -> Self {
        let priority = match priority {
            PriorityKey::Equal => (0, 0, 0),
            PriorityKey::Weight(weight) => (1, weight, 0),
            PriorityKey::Order(level, order) => (2, level, order),
        };
        let head = name_head.unwrap_or_else(|| facts::name_head(active.name));
        #[allow(clippy::cast_possible_truncation)]
        let name_head = ((head >> 64) as u64, head as u64);
        Self {
            rank: Rank {
                priority,
                head: (u8::from(active.scheduled) << 3)
                    | (active.phase.min(3) << 1)
                    | u8::from(active.ready),
                ready_since: latest_first(active.ready_since),
                restarts: -i64::from(active.restarts.0),
                created: latest_first(active.created),
                name_head,
            },
            name: active.name,
        }
    }
}

impl PartialEq for Key<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key<'_> {}

impl PartialOrd for Key<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank
            .cmp(&other.rank)
            .then_with(|| self.name.cmp(other.name))
    }
}

/// The first `k` candidates in the update order.
pub(crate) fn first<'a>(
    ctx: &Ctx<'a>,
    candidates: Vec<&'a PodFacts<'a>>,
    k: usize,
) -> Vec<&'a PodFacts<'a>> {
    if k == 0 || candidates.is_empty() {
        return Vec::new();
    }
    let rolling = ctx.settings.rolling;
    let terms: &[UpdateScatterTerm] = rolling.map_or(&[], |r| r.scatter_strategy.as_slice());
    let keys = &ctx.facts;
    let key = |facts: &&'a PodFacts<'a>| {
        let (priority, active) = keys.sort_key(facts);
        Key::new(priority, active, keys.known_name_head(facts))
    };
    let preparing = candidates
        .iter()
        .any(|facts| facts.state == State::PreparingUpdate);
    if preparing || terms.len() > 1 {
        return full(ctx, candidates, k, key, Scatter::new(terms));
    }
    match terms.first() {
        Some(term) if candidates.len() > 1 => one_term(ctx, candidates, k, key, terms, term),
        _ => select::first_k(candidates, k, key),
    }
}

/// Sorts everything, scatters, puts `PreparingUpdate` first, keeps `k`.
fn full<'a, K: Ord>(
    ctx: &Ctx<'a>,
    candidates: Vec<&'a PodFacts<'a>>,
    k: usize,
    key: impl FnMut(&&'a PodFacts<'a>) -> K,
    scatter: Scatter<'_>,
) -> Vec<&'a PodFacts<'a>> {
    let len = candidates.len();
    let sorted = select::first_k(candidates, len, key);
    // The scatter sorter works on positions into `sorted`.
    let pods: Vec<&k8s_openapi::api::core::v1::Pod> =
        sorted.iter().map(|facts| facts.pod).collect();
    let mut order: Vec<usize> = (0..sorted.len()).collect();
    let terms = ctx
        .settings
        .rolling
        .map_or(&[][..], |r| r.scatter_strategy.as_slice());
    if scatter.is_active() && order.len() > 1 {
        for term in scatter.terms_for(&pods, &order) {
            let (matched, unmatched) = totals(ctx, terms, term);
            order = scatter::by_term(&pods, term, order, matched, unmatched);
        }
    }
    let mut out: Vec<&'a PodFacts<'a>> = order
        .iter()
        .filter_map(|&position| sorted.get(position).copied())
        .collect();
    out.sort_by(|a, b| match (a.state, b.state) {
        (State::PreparingUpdate, State::PreparingUpdate) => Ordering::Equal,
        (State::PreparingUpdate, _) => Ordering::Less,
        (_, State::PreparingUpdate) => Ordering::Greater,
        _ => Ordering::Equal,
    });
    out.truncate(k);
    out
}

/// How many active pods match `term` (one of `terms`), and how many do not.
fn totals(ctx: &Ctx<'_>, terms: &[UpdateScatterTerm], term: &UpdateScatterTerm) -> (usize, usize) {
    let position = terms.iter().position(|t| std::ptr::eq(t, term));
    let matched = ctx
        .facts
        .pods
        .iter()
        .filter(|facts| match position {
            Some(position) => facts.matches_scatter(position, term),
            None => scatter::matches(facts.pod, term),
        })
        .count();
    (matched, ctx.facts.pods.len() - matched)
}

/// One scatter term over candidates in the base order, reading only the first `k` of each side.
fn one_term<'a, K: Ord>(
    ctx: &Ctx<'a>,
    candidates: Vec<&'a PodFacts<'a>>,
    k: usize,
    mut key: impl FnMut(&&'a PodFacts<'a>) -> K,
    terms: &[UpdateScatterTerm],
    term: &UpdateScatterTerm,
) -> Vec<&'a PodFacts<'a>> {
    let (mut matched, unmatched): (Vec<&'a PodFacts<'a>>, Vec<&'a PodFacts<'a>>) = candidates
        .iter()
        .partition(|facts| facts.matches_scatter(0, term));
    if matched.len() <= 1 || unmatched.len() <= 1 {
        return select::first_k(candidates, k, key);
    }
    let Some(last) = select::last(&matched, &mut key) else {
        return select::first_k(candidates, k, key);
    };
    matched.retain(|facts| facts.index != last.index);
    let (m_len, u_len) = (matched.len(), unmatched.len());
    let (total_matched, total_unmatched) = totals(ctx, terms, term);
    let interleave = |m_positions: &[usize], u_positions: &[usize], last: usize| {
        scatter::interleave(
            Sequence {
                prefix: m_positions,
                len: m_len,
            },
            Sequence {
                prefix: u_positions,
                len: u_len,
            },
            Some(last),
            total_matched,
            total_unmatched,
            k,
        )
    };
    // The interleaving takes a number of pods from each side that depends only on the counts: find it on
    // placeholder positions first, then order only that many of each side.
    let m_ids: Vec<usize> = (0..k.min(m_len)).collect();
    let u_ids: Vec<usize> = (m_len..m_len + k.min(u_len)).collect();
    let shape = interleave(&m_ids, &u_ids, usize::MAX);
    let m_need = shape.iter().filter(|&&id| id < m_len).count();
    let u_need = shape
        .iter()
        .filter(|&&id| id >= m_len && id != usize::MAX)
        .count();
    let matched = select::first_k(matched, m_need, &mut key);
    let unmatched = select::first_k(unmatched, u_need, &mut key);
    let mut items = matched.clone();
    items.extend(unmatched.iter().copied());
    items.push(last);
    let positions: Vec<usize> = (0..items.len()).collect();
    let (m_positions, rest) = positions.split_at(matched.len());
    let (u_positions, last_position) = rest.split_at(unmatched.len());
    let order = interleave(
        m_positions,
        u_positions,
        last_position.first().copied().unwrap_or(usize::MAX),
    );
    order
        .into_iter()
        .filter_map(|position| items.get(position).copied())
        .collect()
}
