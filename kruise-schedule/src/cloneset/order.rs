//! The update order of candidates (upstream `SortUpdateIndexes`): `ActivePods`, then the priority strategy,
//! then the scatter strategy, then `PreparingUpdate` pods first; only the first `k` are needed, so they are
//! selected rather than sorted whenever the strategy allows it.

use std::cmp::Ordering;

use kruise_api::scatter::UpdateScatterTerm;

use super::facts::{self, PodFacts};
use super::plan::Ctx;
use super::pod_source::WholePod;
use crate::pod_view::State;
use crate::sort::LatestFirst;
use crate::sort::active::ActiveKey;
use crate::sort::priority::PriorityKey;
use crate::sort::scatter::{self, Scatter, Sequence};
use crate::sort::select;

/// The base key: priority first, then `ActivePods` (with the pod name last), packed into four 128-bit words
/// that order as the rules do, so that comparing two keys is at most four integer comparisons before the
/// names. The first 16 bytes of the name ([`facts::name_head`]) come before the name itself, so that ties of
/// the other rules rarely read the names.
#[derive(Clone, Copy, Debug)]
struct Key<'a> {
    rank: Rank,
    name: &'a str,
}

/// The packed rules, most significant first:
/// 0. the priority key's two numbers (its variant is the same for every pod of a plan);
/// 1. rules 1 to 3 (scheduled, phase, ready: 4 bits), rule 4 (when it became ready, latest first: 41 + 31
///    bits) and rule 5 (more restarts first: 33 bits);
/// 2. rule 6 (creation time, latest first: 41 + 31 bits);
/// 3. the name's head.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Rank(u128, u128, u128, u128);

/// An `i64` as a `u64` of the same order.
#[allow(clippy::cast_sign_loss)]
fn ordered(value: i64) -> u64 {
    (value as u64) ^ (1 << 63)
}

/// `LatestFirst` as (41-bit seconds, 31-bit nanoseconds) of the same order: no time first (both 0), then
/// later times first. A timestamp's seconds lie within ±2^39 and its nanoseconds (of the same sign) within
/// ±10^9, so negated and offset they are positive and fit.
fn latest_first(time: LatestFirst) -> (u128, u128) {
    time.0.map_or((0, 0), |time| {
        let seconds = (1i64 << 40) - time.as_second();
        let nanos = 1_000_000_000 - i64::from(time.subsec_nanosecond());
        #[allow(clippy::cast_sign_loss)]
        (u128::from(seconds as u64), u128::from(nanos as u64))
    })
}

impl Rank {
    fn new(priority: PriorityKey, active: &ActiveKey<'_>, name_head: u128) -> Self {
        let (first, second) = match priority {
            PriorityKey::Equal => (0, 0),
            PriorityKey::Weight(weight) => (weight, 0),
            PriorityKey::Order(level, order) => (level, order),
        };
        let priority = (u128::from(ordered(first)) << 64) | u128::from(ordered(second));
        let head =
            (u8::from(active.scheduled) << 3) | (active.phase.min(3) << 1) | u8::from(active.ready);
        let (ready_seconds, ready_nanos) = latest_first(active.ready_since);
        // More restarts first: 2^31 - restarts lies in [1, 2^32].
        let restarts = (1i64 << 31) - i64::from(active.restarts.0);
        #[allow(clippy::cast_sign_loss)]
        let restarts = u128::from(restarts as u64);
        let rules = (u128::from(head) << 124)
            | (ready_seconds << 83)
            | (ready_nanos << 52)
            | (restarts << 19);
        let (created_seconds, created_nanos) = latest_first(active.created);
        Self(
            priority,
            rules,
            (created_seconds << 31) | created_nanos,
            name_head,
        )
    }
}

impl<'a> Key<'a> {
    fn new(priority: PriorityKey, active: ActiveKey<'a>, name_head: Option<u128>) -> Self {
        let head = name_head.unwrap_or_else(|| facts::name_head(active.name));
        Self {
            rank: Rank::new(priority, &active, head),
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
    let pods: Vec<WholePod<'a>> = sorted.iter().map(|facts| ctx.pod(facts)).collect();
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
        .filter(|facts| {
            position
                .and_then(|position| facts.matches_scatter(position, term))
                .unwrap_or_else(|| scatter::matches(&*ctx.pod(facts), term))
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
        .partition(|facts| facts.matches_scatter(0, term).unwrap_or(false));
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

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;

    use k8s_openapi::jiff::Timestamp;
    use proptest::prelude::*;

    use super::*;

    /// The rules as plain tuples, in their order of precedence (no packing).
    type Plain = (
        (i64, i64),
        (bool, u8, bool),
        LatestFirst,
        Reverse<i32>,
        LatestFirst,
        u128,
    );

    fn time() -> impl Strategy<Value = LatestFirst> {
        let seconds = Timestamp::MIN.as_second()..=Timestamp::MAX.as_second();
        prop_oneof![
            Just(None),
            (seconds, -999_999_999i32..=999_999_999).prop_map(|(s, n)| Timestamp::new(s, n).ok()),
            // Near zero, where seconds and nanoseconds change sign.
            (-2i64..=2, -999_999_999i32..=999_999_999).prop_map(|(s, n)| Timestamp::new(s, n).ok()),
        ]
        .prop_map(LatestFirst)
    }

    fn plain() -> impl Strategy<Value = Plain> {
        (
            (any::<i64>(), prop_oneof![any::<i64>(), -2i64..=2]),
            (any::<bool>(), 0u8..=3, any::<bool>()),
            time(),
            any::<i32>().prop_map(Reverse),
            time(),
            prop_oneof![any::<u128>(), 0u128..=2],
        )
    }

    fn packed(plain: &Plain, variant: u8) -> Rank {
        let ((first, second), (scheduled, phase, ready), ready_since, restarts, created, head) =
            *plain;
        let priority = match variant {
            0 => PriorityKey::Equal,
            1 => PriorityKey::Weight(first),
            _ => PriorityKey::Order(first, second),
        };
        let active = ActiveKey {
            scheduled,
            phase,
            ready,
            ready_since,
            restarts,
            created,
            name: "",
        };
        Rank::new(priority, &active, head)
    }

    /// What the plain tuple compares for a variant (`Equal` has no numbers, `Weight` one).
    fn reference(plain: &Plain, variant: u8) -> Plain {
        let mut plain = *plain;
        plain.0 = match variant {
            0 => (0, 0),
            1 => (plain.0.0, 0),
            _ => plain.0,
        };
        plain
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Packed ranks order exactly as the rules do, for every priority variant.
        #[test]
        fn packed_rank_orders_as_the_rules(a in plain(), b in plain(), variant in 0u8..=2, share in 0u8..6) {
            // Share a prefix of the rules now and then, so later rules get compared too.
            let mut b = b;
            if share > 0 { b.0 = a.0; b.1 = a.1; }
            if share > 1 { b.2 = a.2; }
            if share > 2 { b.3 = a.3; }
            if share > 3 { b.4 = a.4; }
            let expected = reference(&a, variant).cmp(&reference(&b, variant));
            prop_assert_eq!(packed(&a, variant).cmp(&packed(&b, variant)), expected);
        }
    }
}
