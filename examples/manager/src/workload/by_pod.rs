//! A run of a plan's pod actions grouped by the pod they act on, so that different pods' writes can be
//! sent side by side while each pod's go in the planned order.

use std::collections::HashMap;

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
    use super::by_pod;

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
