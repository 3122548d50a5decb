//! A run of a plan's pod actions sent grouped by the pod they act on: different pods' writes side by side
//! ([`PODS_PATCHED_AT_ONCE`] pods at a time), each pod's in the planned order, the outcomes added up.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use futures::StreamExt;

/// The most pods whose writes are in flight at once.
pub const PODS_PATCHED_AT_ONCE: usize = 8;

/// What the writes of a run of pod actions did (of one pod, or added up over the run's pods).
#[derive(Debug)]
pub struct Patched<E> {
    /// Writes sent.
    pub sent: usize,
    /// The longest in-place grace period still running, if any.
    pub requeue_after: Option<Duration>,
    /// The first failure, if any (the other pods' writes were still sent).
    pub error: Option<E>,
}

impl<E> Default for Patched<E> {
    fn default() -> Self {
        Self {
            sent: 0,
            requeue_after: None,
            error: None,
        }
    }
}

impl<E> Patched<E> {
    /// Makes the requeue at least `after` away.
    pub fn requeue_at_least(&mut self, after: Option<Duration>) {
        self.requeue_after = match (self.requeue_after, after) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Adds `other`'s writes and requeue; keeps the first failure.
    pub fn add(&mut self, other: Self) {
        self.sent += other.sent;
        self.requeue_at_least(other.requeue_after);
        if self.error.is_none() {
            self.error = other.error;
        }
    }
}

/// Runs `per_pod` for each pod's actions of `run` (grouped by [`by_pod`] with `pod_of`), at most
/// [`PODS_PATCHED_AT_ONCE`] pods at a time, and adds up what they did.
pub async fn patch_by_pod<'a, A, E, Fut>(
    run: &[&'a A],
    pod_of: impl Fn(&A) -> Option<usize>,
    per_pod: impl FnMut((usize, Vec<&'a A>)) -> Fut,
) -> Patched<E>
where
    Fut: Future<Output = Patched<E>>,
{
    // The futures are made first, so the stream's type names no closure (which would keep a reconcile
    // future from being `Send` for every lifetime).
    let pending: Vec<Fut> = by_pod(run, pod_of).into_iter().map(per_pod).collect();
    let results: Vec<Patched<E>> = futures::stream::iter(pending)
        .buffer_unordered(PODS_PATCHED_AT_ONCE)
        .collect()
        .await;
    let mut total = Patched::default();
    for patched in results {
        total.add(patched);
    }
    total
}

/// `actions` grouped by the pod index `pod_of` gives each: the pods in the order of their first action,
/// each pod's actions in their order in `actions`; an action on no pod is left out.
pub fn by_pod<'a, A>(
    actions: &[&'a A],
    pod_of: impl Fn(&A) -> Option<usize>,
) -> Vec<(usize, Vec<&'a A>)> {
    let mut groups: Vec<(usize, Vec<&'a A>)> = Vec::new();
    let mut position: HashMap<usize, usize> = HashMap::new();
    for &action in actions {
        let Some(index) = pod_of(action) else {
            continue;
        };
        let at = *position.entry(index).or_insert_with(|| {
            groups.push((index, Vec::new()));
            groups.len() - 1
        });
        if let Some((_, group)) = groups.get_mut(at) {
            group.push(action);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Patched, by_pod};

    #[test]
    fn outcomes_add_up_keeping_the_first_failure_and_the_longest_wait() {
        let mut total: Patched<&str> = Patched::default();
        total.add(Patched {
            sent: 2,
            requeue_after: Some(Duration::from_secs(3)),
            error: None,
        });
        total.add(Patched {
            sent: 1,
            requeue_after: Some(Duration::from_secs(1)),
            error: Some("first"),
        });
        total.add(Patched {
            sent: 0,
            requeue_after: None,
            error: Some("second"),
        });
        assert_eq!(total.sent, 3);
        assert_eq!(total.requeue_after, Some(Duration::from_secs(3)));
        assert_eq!(total.error, Some("first"));
    }

    #[test]
    fn pods_in_first_seen_order_actions_in_plan_order() {
        // (pod, step): pod 3 first, then 1; an action on no pod.
        let actions = [(Some(3), 'a'), (Some(1), 'b'), (None, 'c'), (Some(3), 'd')];
        let run: Vec<&(Option<usize>, char)> = actions.iter().collect();
        let groups: Vec<(usize, Vec<char>)> = by_pod(&run, |(pod, _)| *pod)
            .into_iter()
            .map(|(pod, group)| (pod, group.iter().map(|(_, step)| *step).collect()))
            .collect();
        assert_eq!(groups, [(3, vec!['a', 'd']), (1, vec!['b'])]);
    }
}
