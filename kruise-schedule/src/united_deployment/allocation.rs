//! How many replicas each subset gets (upstream `allocator.go`: `specificAllocator` and
//! `elasticAllocator`).
//!
//! * Without any `minReplicas`/`maxReplicas` ([`allocate`] picks the *specific* rule): a subset with
//!   `replicas` gets that number, or that percentage of `spec.replicas` rounded half up; the subsets without
//!   it share what is left evenly. They are ordered by their current replicas (then name) and the ones at
//!   the end of that order, the largest, get the remainder, so a rescale moves as few pods as possible.
//!   The fixed numbers may not add up to more than `spec.replicas`, nor to less when every subset is fixed;
//!   without `spec.replicas` every subset must be fixed.
//! * With a `minReplicas` or `maxReplicas` somewhere (the *elastic* rule): `spec.replicas` (1 when unset) is
//!   poured into the subsets in their order, first up to each one's `minReplicas` (0 when unset), then up
//!   to each one's `maxReplicas` (no limit when unset). Percentages are of `spec.replicas`, rounded half
//!   up.
//!
//! ```
//! use std::collections::BTreeMap;
//! use kruise_api::apps::v1beta1::UnitedDeploymentSpec;
//! use kruise_schedule::united_deployment::allocation::allocate;
//!
//! let spec: UnitedDeploymentSpec = serde_json::from_value(serde_json::json!({
//!     "replicas": 6, "selector": {},
//!     "topology": {"subsets": [
//!         {"name": "a", "replicas": 1}, {"name": "b", "replicas": "50%"}, {"name": "c"}]}
//! })).unwrap();
//! let replicas = allocate(&spec, &BTreeMap::new()).unwrap();
//! assert_eq!(replicas, BTreeMap::from([("a".into(), 1), ("b".into(), 3), ("c".into(), 2)]));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{Subset, UnitedDeploymentSpec};

use super::UnitedDeploymentError;
use super::adaptive::SubsetSchedulability;

/// The replicas a subset field names: a number, or a percentage of `total` rounded half up
/// (`ParseSubsetReplicas`). `field` names the field in errors.
///
/// # Errors
/// A negative number, a percentage without `spec.replicas`, or a string that is not `0%`..`100%`.
pub fn subset_replicas(
    total: Option<i32>,
    value: &IntOrString,
    field: &str,
) -> Result<i32, UnitedDeploymentError> {
    let invalid = |reason: &str| UnitedDeploymentError::InvalidReplicas {
        field: field.to_owned(),
        value: match value {
            IntOrString::Int(number) => number.to_string(),
            IntOrString::String(text) => format!("{text:?}"),
        },
        reason: reason.to_owned(),
    };
    match value {
        IntOrString::Int(number) if *number < 0 => Err(invalid("must not be negative")),
        IntOrString::Int(number) => Ok(*number),
        IntOrString::String(text) => {
            let Some(total) = total else {
                return Err(invalid(
                    "a percentage needs spec.replicas, which is not set",
                ));
            };
            let percent: i64 = text
                .strip_suffix('%')
                .and_then(|digits| digits.parse().ok())
                .ok_or_else(|| invalid("must be a number or a percentage such as \"50%\""))?;
            if !(0..=100).contains(&percent) {
                return Err(invalid("a percentage must be between 0% and 100%"));
            }
            let scaled = (i64::from(total.max(0)) * percent + 50) / 100;
            Ok(i32::try_from(scaled).unwrap_or(i32::MAX))
        }
    }
}

/// Whether the elastic rule applies: some subset has `minReplicas` or `maxReplicas`.
#[must_use]
pub fn is_elastic(spec: &UnitedDeploymentSpec) -> bool {
    spec.topology
        .subsets
        .iter()
        .any(|subset| subset.min_replicas.is_some() || subset.max_replicas.is_some())
}

/// The webhook's defaulting rule: when some subset has `minReplicas` or `maxReplicas` and none has
/// `replicas`, every subset without `minReplicas` gets `minReplicas: 0`. Returns whether it changed
/// anything.
pub fn default_min_replicas(spec: &mut UnitedDeploymentSpec) -> bool {
    let subsets = &mut spec.topology.subsets;
    let any_fixed = subsets.iter().any(|subset| subset.replicas.is_some());
    if any_fixed
        || !subsets
            .iter()
            .any(|s| s.min_replicas.is_some() || s.max_replicas.is_some())
    {
        return false;
    }
    let mut changed = false;
    for subset in subsets
        .iter_mut()
        .filter(|subset| subset.min_replicas.is_none())
    {
        subset.min_replicas = Some(IntOrString::Int(0));
        changed = true;
    }
    changed
}

/// The replicas of every subset of `spec`, given the `current` replicas of the subset workloads that exist
/// (by subset name). See the module documentation.
///
/// # Errors
/// An invalid subset value, fixed replicas that do not add up, or a `minReplicas` above `maxReplicas`.
pub fn allocate(
    spec: &UnitedDeploymentSpec,
    current: &BTreeMap<String, i32>,
) -> Result<BTreeMap<String, i32>, UnitedDeploymentError> {
    allocate_with(spec, current, None)
}

/// [`allocate`] under the `Adaptive` schedule strategy's decision (upstream
/// `validateAndCalculateMinMaxMap`): with the elastic rule, an unschedulable subset's `minReplicas` and
/// `maxReplicas` are capped at its running replicas, and a schedulable subset's `minReplicas` is raised to
/// its running replicas (within its `maxReplicas`) so its running pods stay. The specific rule ignores it.
///
/// # Errors
/// As [`allocate`].
pub fn allocate_with(
    spec: &UnitedDeploymentSpec,
    current: &BTreeMap<String, i32>,
    adaptive: Option<&BTreeMap<String, SubsetSchedulability>>,
) -> Result<BTreeMap<String, i32>, UnitedDeploymentError> {
    if is_elastic(spec) {
        elastic(spec, adaptive)
    } else {
        specific(spec, current)
    }
}

/// One subset while pouring: what it has, and how many more of them count against the total.
struct Pour<'a> {
    name: &'a str,
    min: i32,
    max: i32,
    replicas: i32,
    counted_room: i64,
}
impl Pour<'_> {
    /// Raises the replicas towards `to` within `left`; returns how many count against the total.
    fn raise(&mut self, to: i32, left: i32) -> i32 {
        let add = to.saturating_sub(self.replicas).min(left).max(0);
        self.replicas += add;
        let counted = i64::from(add).min(self.counted_room).max(0);
        self.counted_room -= i64::from(add);
        i32::try_from(counted).unwrap_or(0)
    }
}

/// The allocation under `reserveUnschedulablePods` (upstream `reservationAllocator`,
/// `allocateByMinMaxMapAndReservation`), given [`super::reservation`]'s decision by subset name.
/// `spec.replicas` (1 when unset) is poured into the subsets in their order, first up to each one's
/// `minReplicas` (0 when unset), then each schedulable subset (or one without a workload) up to its
/// `maxReplicas` (no limit when unset) and each unschedulable one up to its workload's current replicas.
/// An unschedulable subset's replicas count against `spec.replicas` only up to its workload's replicas
/// less its reserved pods: the reserved ones are made up for by the following subsets. Like upstream, a
/// subset's `replicas` is not looked at.
///
/// # Errors
/// An invalid `minReplicas`/`maxReplicas`, or a `minReplicas` above `maxReplicas`.
pub fn allocate_reserving(
    spec: &UnitedDeploymentSpec,
    decided: &BTreeMap<String, SubsetSchedulability>,
) -> Result<BTreeMap<String, i32>, UnitedDeploymentError> {
    let total = spec.replicas.unwrap_or(1).max(0);
    let mut subsets = Vec::with_capacity(spec.topology.subsets.len());
    for (index, subset) in spec.topology.subsets.iter().enumerate() {
        let (min, max) = subset_bounds(subset, index, total)?;
        ordered_bounds(index, min, max)?;
        let counted_room = match decided.get(&subset.name) {
            Some(subset) if subset.unschedulable => {
                i64::from(subset.workload_replicas) - i64::from(subset.reserved)
            }
            _ => i64::MAX,
        };
        subsets.push(Pour {
            name: subset.name.as_str(),
            min,
            max,
            replicas: 0,
            counted_room,
        });
    }
    let mut left = total;
    for subset in &mut subsets {
        if left <= 0 {
            break;
        }
        let min = subset.min;
        left -= subset.raise(min, left);
    }
    for subset in &mut subsets {
        if left <= 0 {
            break;
        }
        let to = match decided.get(subset.name) {
            Some(decided) if decided.unschedulable => decided.workload_replicas,
            _ => subset.max,
        };
        left -= subset.raise(to, left);
    }
    Ok(subsets
        .into_iter()
        .map(|subset| (subset.name.to_owned(), subset.replicas))
        .collect())
}

fn field(index: usize, name: &str) -> String {
    format!("spec.topology.subsets[{index}].{name}")
}

/// A subset's `minReplicas` (0 when unset) and `maxReplicas` (no limit when unset) out of `total`.
fn subset_bounds(
    subset: &Subset,
    index: usize,
    total: i32,
) -> Result<(i32, i32), UnitedDeploymentError> {
    let min = match &subset.min_replicas {
        Some(value) => subset_replicas(Some(total), value, &field(index, "minReplicas"))?,
        None => 0,
    };
    let max = match &subset.max_replicas {
        Some(value) => subset_replicas(Some(total), value, &field(index, "maxReplicas"))?,
        None => i32::MAX,
    };
    Ok((min, max))
}

/// Refuses a minimum above the maximum of the subset at `index`.
fn ordered_bounds(index: usize, min: i32, max: i32) -> Result<(), UnitedDeploymentError> {
    if min > max {
        return Err(UnitedDeploymentError::MinAboveMax {
            field: format!("spec.topology.subsets[{index}]"),
            min,
            max,
        });
    }
    Ok(())
}

/// The specific rule: fixed subsets first, the rest shared evenly, remainders to the largest.
fn specific(
    spec: &UnitedDeploymentSpec,
    current: &BTreeMap<String, i32>,
) -> Result<BTreeMap<String, i32>, UnitedDeploymentError> {
    let subsets = &spec.topology.subsets;
    let mut fixed: BTreeMap<&str, i32> = BTreeMap::new();
    for (index, subset) in subsets.iter().enumerate() {
        if let Some(value) = &subset.replicas {
            let replicas = subset_replicas(spec.replicas, value, &field(index, "replicas"))?;
            fixed.insert(subset.name.as_str(), replicas);
        }
    }
    let fixed_sum: i64 = fixed.values().map(|replicas| i64::from(*replicas)).sum();
    let all_fixed = fixed.len() == subsets.len();
    match spec.replicas {
        Some(total) if fixed_sum > i64::from(total) => {
            return Err(UnitedDeploymentError::FixedAboveTotal {
                fixed: fixed_sum,
                total,
            });
        }
        Some(total) if fixed_sum < i64::from(total) && all_fixed => {
            return Err(UnitedDeploymentError::FixedBelowTotal {
                fixed: fixed_sum,
                total,
            });
        }
        None if !all_fixed => return Err(UnitedDeploymentError::UnfixedWithoutTotal),
        _ => {}
    }
    let mut order: Vec<&Subset> = subsets.iter().collect();
    order.sort_by(|a, b| {
        let replicas = |subset: &Subset| current.get(&subset.name).copied().unwrap_or(0);
        replicas(a)
            .cmp(&replicas(b))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut allocated: BTreeMap<String, i32> = fixed
        .iter()
        .map(|(name, replicas)| ((*name).to_owned(), *replicas))
        .collect();
    let shared: Vec<&Subset> = order
        .iter()
        .rev()
        .filter(|subset| !fixed.contains_key(subset.name.as_str()))
        .copied()
        .collect();
    if let (Some(total), Ok(count)) = (spec.replicas, i64::try_from(shared.len()))
        && count > 0
    {
        let rest = i64::from(total) - fixed_sum;
        let (average, mut remainder) = (rest / count, rest % count);
        for subset in shared {
            let extra = i64::from(remainder > 0);
            remainder -= extra;
            let replicas = i32::try_from(average + extra).unwrap_or(0);
            allocated.insert(subset.name.clone(), replicas);
        }
    }
    Ok(allocated)
}

/// The elastic rule: minimums in subset order, then up to the maximums in subset order.
fn elastic(
    spec: &UnitedDeploymentSpec,
    adaptive: Option<&BTreeMap<String, SubsetSchedulability>>,
) -> Result<BTreeMap<String, i32>, UnitedDeploymentError> {
    let total = spec.replicas.unwrap_or(1).max(0);
    let mut bounds = Vec::with_capacity(spec.topology.subsets.len());
    for (index, subset) in spec.topology.subsets.iter().enumerate() {
        let (min, max) = subset_bounds(subset, index, total)?;
        let (min, max) = match adaptive.and_then(|subsets| subsets.get(&subset.name)) {
            Some(decided) if decided.unschedulable => {
                (min.min(decided.running), max.min(decided.running))
            }
            Some(decided) if decided.running > min => (decided.running.min(max), max),
            _ => (min, max),
        };
        ordered_bounds(index, min, max)?;
        bounds.push((subset.name.as_str(), min, max));
    }
    let mut left = total;
    let mut allocated = BTreeMap::new();
    for (name, min, _) in &bounds {
        let take = (*min).min(left).max(0);
        left -= take;
        allocated.insert((*name).to_owned(), take);
    }
    for (name, min, max) in &bounds {
        let take = max.saturating_sub(*min).min(left).max(0);
        left -= take;
        if let Some(replicas) = allocated.get_mut(*name) {
            *replicas += take;
        }
    }
    Ok(allocated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(value: serde_json::Value) -> UnitedDeploymentSpec {
        let mut value = value;
        value["selector"] = serde_json::json!({});
        serde_json::from_value(value).unwrap()
    }

    fn map(pairs: &[(&str, i32)]) -> BTreeMap<String, i32> {
        pairs
            .iter()
            .map(|(name, n)| ((*name).to_owned(), *n))
            .collect()
    }

    #[test]
    fn subset_values_are_numbers_or_percentages_rounded_half_up() {
        let table: [(Option<i32>, IntOrString, Result<i32, &str>); 8] = [
            (Some(10), IntOrString::Int(3), Ok(3)),
            (Some(5), IntOrString::String("50%".into()), Ok(3)),
            (Some(6), IntOrString::String("50%".into()), Ok(3)),
            (Some(7), IntOrString::String("10%".into()), Ok(1)),
            (Some(10), IntOrString::Int(-1), Err("must not be negative")),
            (
                None,
                IntOrString::String("50%".into()),
                Err("needs spec.replicas"),
            ),
            (
                Some(10),
                IntOrString::String("101%".into()),
                Err("between 0% and 100%"),
            ),
            (
                Some(10),
                IntOrString::String("half".into()),
                Err("a number or a percentage"),
            ),
        ];
        for (total, value, expected) in table {
            let got = subset_replicas(total, &value, "spec.topology.subsets[0].replicas");
            match expected {
                Ok(replicas) => assert_eq!(got, Ok(replicas), "{total:?} {value:?}"),
                Err(reason) => {
                    let message = got.unwrap_err().to_string();
                    assert!(message.contains(reason), "{message}");
                    assert!(message.contains("subsets[0].replicas"), "{message}");
                }
            }
        }
    }

    #[test]
    fn fixed_and_percentage_subsets_leave_the_rest_to_the_others() {
        let spec = spec(serde_json::json!({"replicas": 10, "topology": {"subsets": [
            {"name": "a", "replicas": 1}, {"name": "b", "replicas": "50%"}, {"name": "c"}]}}));
        assert_eq!(
            allocate(&spec, &BTreeMap::new()).unwrap(),
            map(&[("a", 1), ("b", 5), ("c", 4)])
        );
    }

    #[test]
    fn the_rest_is_shared_evenly_with_the_remainder_to_the_largest_subsets() {
        let spec = spec(serde_json::json!({"replicas": 5, "topology": {"subsets": [
            {"name": "a"}, {"name": "b"}, {"name": "c"}]}}));
        // No current replicas: names break the tie, the last names get the remainder.
        assert_eq!(
            allocate(&spec, &BTreeMap::new()).unwrap(),
            map(&[("a", 1), ("b", 2), ("c", 2)])
        );
        // `a` is the largest now: it keeps one of the remainders.
        let current = map(&[("a", 4), ("b", 0), ("c", 1)]);
        assert_eq!(
            allocate(&spec, &current).unwrap(),
            map(&[("a", 2), ("b", 1), ("c", 2)])
        );
    }

    #[test]
    fn fixed_replicas_must_add_up() {
        let above = spec(serde_json::json!({"replicas": 3, "topology": {"subsets": [
            {"name": "a", "replicas": 2}, {"name": "b", "replicas": 2}]}}));
        assert!(matches!(
            allocate(&above, &BTreeMap::new()),
            Err(UnitedDeploymentError::FixedAboveTotal { fixed: 4, total: 3 })
        ));
        let below = spec(serde_json::json!({"replicas": 5, "topology": {"subsets": [
            {"name": "a", "replicas": 2}, {"name": "b", "replicas": 2}]}}));
        assert!(matches!(
            allocate(&below, &BTreeMap::new()),
            Err(UnitedDeploymentError::FixedBelowTotal { fixed: 4, total: 5 })
        ));
        let exact = spec(serde_json::json!({"replicas": 4, "topology": {"subsets": [
            {"name": "a", "replicas": 2}, {"name": "b", "replicas": 2}]}}));
        assert_eq!(
            allocate(&exact, &BTreeMap::new()).unwrap(),
            map(&[("a", 2), ("b", 2)])
        );
        let no_total = spec(serde_json::json!({"topology": {"subsets": [
            {"name": "a", "replicas": 2}, {"name": "b"}]}}));
        assert!(matches!(
            allocate(&no_total, &BTreeMap::new()),
            Err(UnitedDeploymentError::UnfixedWithoutTotal)
        ));
        let all_fixed_no_total = spec(serde_json::json!({"topology": {"subsets": [
            {"name": "a", "replicas": 2}, {"name": "b", "replicas": 1}]}}));
        assert_eq!(
            allocate(&all_fixed_no_total, &BTreeMap::new()).unwrap(),
            map(&[("a", 2), ("b", 1)])
        );
    }

    #[test]
    fn elastic_subsets_fill_minimums_then_maximums_in_order() {
        // Upstream's example: replicas 5, a in [2, 4], b in [2, unbounded] → a 3, b 2.
        let spec_a = spec(serde_json::json!({"replicas": 5, "topology": {"subsets": [
            {"name": "a", "minReplicas": 2, "maxReplicas": 4}, {"name": "b", "minReplicas": 2}]}}));
        assert_eq!(
            allocate(&spec_a, &BTreeMap::new()).unwrap(),
            map(&[("a", 3), ("b", 2)])
        );
        // Too few for the minimums: the first subsets get theirs.
        let short = spec(serde_json::json!({"replicas": 3, "topology": {"subsets": [
            {"name": "a", "minReplicas": 2}, {"name": "b", "minReplicas": 2}]}}));
        assert_eq!(
            allocate(&short, &BTreeMap::new()).unwrap(),
            map(&[("a", 2), ("b", 1)])
        );
        // Percentages of spec.replicas; a capped subset passes the rest on.
        let capped = spec(serde_json::json!({"replicas": 10, "topology": {"subsets": [
            {"name": "a", "maxReplicas": "30%"}, {"name": "b"}]}}));
        assert_eq!(
            allocate(&capped, &BTreeMap::new()).unwrap(),
            map(&[("a", 3), ("b", 7)])
        );
        let unset_total = spec(serde_json::json!({"topology": {"subsets": [
            {"name": "a", "maxReplicas": 4}, {"name": "b"}]}}));
        assert_eq!(
            allocate(&unset_total, &BTreeMap::new()).unwrap(),
            map(&[("a", 1), ("b", 0)])
        );
    }

    #[test]
    fn a_minimum_above_the_maximum_is_refused() {
        let spec = spec(serde_json::json!({"replicas": 5, "topology": {"subsets": [
            {"name": "a", "minReplicas": 4, "maxReplicas": 2}]}}));
        let error = allocate(&spec, &BTreeMap::new()).unwrap_err();
        assert!(matches!(
            error,
            UnitedDeploymentError::MinAboveMax { min: 4, max: 2, .. }
        ));
        assert!(
            error.to_string().contains("spec.topology.subsets[0]"),
            "{error}"
        );
    }

    #[test]
    fn bounds_without_replicas_default_every_missing_minimum_to_zero() {
        let mut bounded = spec(serde_json::json!({"topology": {"subsets": [
            {"name": "a", "maxReplicas": 2}, {"name": "b", "minReplicas": 1}, {"name": "c"}]}}));
        assert!(default_min_replicas(&mut bounded));
        let mins: Vec<_> = bounded
            .topology
            .subsets
            .iter()
            .map(|s| s.min_replicas.clone())
            .collect();
        assert_eq!(
            mins,
            [
                Some(IntOrString::Int(0)),
                Some(IntOrString::Int(1)),
                Some(IntOrString::Int(0))
            ]
        );
        // A subset with `replicas` turns the rule off; so does having no bounds at all.
        let mut mixed = spec(serde_json::json!({"topology": {"subsets": [
            {"name": "a", "maxReplicas": 2}, {"name": "b", "replicas": 1}]}}));
        assert!(!default_min_replicas(&mut mixed));
        assert_eq!(mixed.topology.subsets[0].min_replicas, None);
        let mut plain = spec(serde_json::json!({"topology": {"subsets": [{"name": "a"}]}}));
        assert!(!default_min_replicas(&mut plain));
        assert_eq!(plain.topology.subsets[0].min_replicas, None);
    }
}
