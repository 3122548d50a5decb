//! Ordinals of an Advanced StatefulSet (upstream `stateful_set_utils.go`): a pod's ordinal from its name, the
//! reserved ordinals (`spec.reserveOrdinals`), and the range of ordinals the StatefulSet keeps pods on.
//!
//! ```
//! use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
//! use kruise_schedule::statefulset::ordinals::{OrdinalRange, ReservedOrdinals, ordinal_of};
//!
//! assert_eq!(ordinal_of("web-12"), Some(12));
//! assert_eq!(ordinal_of("web"), None);
//! let reserved = ReservedOrdinals::parse(&[IntOrString::Int(1), IntOrString::Int(3)]).unwrap();
//! // replicas=4, reserve {1,3}, start=2: ordinals [2, 7), slots [2, (3), 4, 5, 6].
//! let range = OrdinalRange::new(2, 4, reserved);
//! assert_eq!((range.start(), range.end()), (2, 7));
//! assert_eq!(range.ordinals().collect::<Vec<_>>(), [2, 4, 5, 6]);
//! assert_eq!(range.slot(5), Some(3)); // partition compares with the slot index, reserved slot 1 included
//! ```

use std::fmt;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The ordinal in a pod name `<parent>-<ordinal>`: the digits after the last `-`, read as a 32-bit integer
/// (upstream's `(.*)-([0-9]+)$`). `None` when the name does not end that way or the number overflows.
#[must_use]
pub fn ordinal_of(name: &str) -> Option<i32> {
    let (_, digits) = name.rsplit_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The parent name in a pod name `<parent>-<ordinal>` (`None` when the name has no ordinal).
#[must_use]
pub fn parent_of(name: &str) -> Option<&str> {
    ordinal_of(name)?;
    name.rsplit_once('-').map(|(parent, _)| parent)
}

/// The name of the pod with `ordinal` of the StatefulSet `set`: `<set>-<ordinal>`.
#[must_use]
pub fn pod_name(set: &str, ordinal: i64) -> String {
    format!("{set}-{ordinal}")
}

/// The name of the claim from volume claim template `template` for the pod with `ordinal`:
/// `<template>-<set>-<ordinal>`, i.e. `<template>-<pod>`.
#[must_use]
pub fn claim_name(template: &str, set: &str, ordinal: i64) -> String {
    format!("{template}-{set}-{ordinal}")
}

/// An entry of `spec.reserveOrdinals` that does not parse. Upstream then reserves **nothing** (the whole
/// list is discarded, not only the bad entry).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("spec.reserveOrdinals[{index}]: invalid range {value:?}: {reason}")]
pub struct InvalidReserveOrdinal {
    /// Its position in the list.
    pub index: usize,
    /// The string given.
    pub value: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// The reserved ordinals: a set of integers kept as sorted, merged inclusive ranges (so `"0-1000000000"`
/// costs two numbers, not a billion).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReservedOrdinals {
    ranges: Vec<(i64, i64)>,
}

impl ReservedOrdinals {
    /// Parses `spec.reserveOrdinals`: integers, and strings `"a-b"` (inclusive, `a <= b`, both integers as
    /// Go's `strconv.Atoi` reads them, no spaces). A string must contain exactly one `-`, so `"5"` and
    /// `"-1-3"` are invalid.
    ///
    /// # Errors
    /// The first entry that does not parse.
    pub fn parse(values: &[IntOrString]) -> Result<Self, InvalidReserveOrdinal> {
        let mut ranges = Vec::with_capacity(values.len());
        for (index, value) in values.iter().enumerate() {
            match value {
                IntOrString::Int(ordinal) => {
                    ranges.push((i64::from(*ordinal), i64::from(*ordinal)));
                }
                IntOrString::String(text) => {
                    let invalid = |reason| InvalidReserveOrdinal {
                        index,
                        value: text.clone(),
                        reason,
                    };
                    let mut parts = text.split('-');
                    let (Some(first), Some(last), None) =
                        (parts.next(), parts.next(), parts.next())
                    else {
                        return Err(invalid("expected exactly one '-' as in \"1-3\""));
                    };
                    let start: i64 = first
                        .parse()
                        .map_err(|_| invalid("the start is not an integer"))?;
                    let end: i64 = last
                        .parse()
                        .map_err(|_| invalid("the end is not an integer"))?;
                    if start > end {
                        return Err(invalid("the start is greater than the end"));
                    }
                    ranges.push((start, end));
                }
            }
        }
        Ok(Self::from_ranges(ranges))
    }

    /// What upstream reserves for `values`: [`parse`](Self::parse), or nothing when any entry is invalid
    /// (the error is returned so it can be shown; upstream only logs it).
    #[must_use]
    pub fn of(values: &[IntOrString]) -> (Self, Option<InvalidReserveOrdinal>) {
        match Self::parse(values) {
            Ok(reserved) => (reserved, None),
            Err(error) => (Self::default(), Some(error)),
        }
    }

    fn from_ranges(mut ranges: Vec<(i64, i64)>) -> Self {
        ranges.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        Self { ranges: merged }
    }

    /// Whether `ordinal` is reserved.
    #[must_use]
    pub fn contains(&self, ordinal: i64) -> bool {
        self.range_of(ordinal).is_some()
    }

    /// Whether nothing is reserved.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The merged inclusive ranges, ascending.
    #[must_use]
    pub fn ranges(&self) -> &[(i64, i64)] {
        &self.ranges
    }

    fn range_of(&self, ordinal: i64) -> Option<(i64, i64)> {
        let after = self.ranges.partition_point(|&(start, _)| start <= ordinal);
        let candidate = after.checked_sub(1).and_then(|i| self.ranges.get(i))?;
        (candidate.1 >= ordinal).then_some(*candidate)
    }
}

impl fmt::Display for ReservedOrdinals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (start, end) in &self.ranges {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

/// The ordinals an Advanced StatefulSet keeps pods on: from `start` (inclusive) up to `end` (exclusive),
/// skipping reserved ordinals, so that exactly `replicas` ordinals are kept (upstream
/// `getStatefulSetReplicasRange`). A pod on any other ordinal is condemned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrdinalRange {
    start: i64,
    end: i64,
    replicas: i64,
    reserved: ReservedOrdinals,
}

impl OrdinalRange {
    /// The range for `replicas` pods from ordinal `start` (negative replicas count as 0).
    #[must_use]
    pub fn new(start: i64, replicas: i64, reserved: ReservedOrdinals) -> Self {
        let replicas = replicas.max(0);
        let mut cursor = start;
        let mut remaining = replicas;
        for &(from, to) in reserved.ranges() {
            if remaining == 0 || to < cursor {
                continue;
            }
            if from > cursor {
                let gap = from - cursor;
                if gap >= remaining {
                    break;
                }
                remaining -= gap;
            }
            cursor = to.saturating_add(1);
        }
        Self {
            start,
            end: cursor.saturating_add(remaining),
            replicas,
            reserved,
        }
    }

    /// The first ordinal (inclusive).
    #[must_use]
    pub fn start(&self) -> i64 {
        self.start
    }

    /// One past the last kept ordinal.
    #[must_use]
    pub fn end(&self) -> i64 {
        self.end
    }

    /// How many ordinals are kept (`replicas`).
    #[must_use]
    pub fn replicas(&self) -> i64 {
        self.replicas
    }

    /// The reserved ordinals.
    #[must_use]
    pub fn reserved(&self) -> &ReservedOrdinals {
        &self.reserved
    }

    /// Whether a pod on `ordinal` is kept (in `[start, end)` and not reserved).
    #[must_use]
    pub fn contains(&self, ordinal: i64) -> bool {
        ordinal >= self.start && ordinal < self.end && !self.reserved.contains(ordinal)
    }

    /// The slot index of a kept `ordinal`: `ordinal - start`, reserved slots included in the count (this is
    /// what `rollingUpdate.partition` is compared with). `None` for an ordinal that is not kept.
    #[must_use]
    pub fn slot(&self, ordinal: i64) -> Option<i64> {
        self.contains(ordinal).then(|| ordinal - self.start)
    }

    /// The kept ordinals, ascending.
    pub fn ordinals(&self) -> impl Iterator<Item = i64> + '_ {
        let mut next = self.start;
        std::iter::from_fn(move || {
            while next < self.end {
                if let Some((_, to)) = self.reserved.range_of(next) {
                    next = to.saturating_add(1);
                    continue;
                }
                let ordinal = next;
                next += 1;
                return Some(ordinal);
            }
            None
        })
    }
}
