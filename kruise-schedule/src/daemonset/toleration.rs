//! Taints and tolerations as the scheduler's helpers read them, and the tolerations every daemon pod gets.
//!
//! A toleration tolerates a taint when its effect is empty or equal, its key is empty or equal, and its
//! operator is `Exists`, or `Equal` (or empty) with an equal value. Any other operator tolerates nothing.

use k8s_openapi::api::core::v1::{Taint, Toleration};

/// `NoSchedule`.
pub const NO_SCHEDULE: &str = "NoSchedule";
/// `NoExecute`.
pub const NO_EXECUTE: &str = "NoExecute";

/// The taint keys of the tolerations the DaemonSet controller adds to every daemon pod, with their effects,
/// in the order they are added (all with operator `Exists`). The last one is added only to pods on the host
/// network.
pub const DEFAULT_DAEMON_TOLERATIONS: [(&str, &str); 7] = [
    ("node.kubernetes.io/not-ready", NO_EXECUTE),
    ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
    ("node.kubernetes.io/network-unavailable", NO_SCHEDULE),
];

/// Whether `toleration` tolerates `taint`.
#[must_use]
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty())
        && effect != taint.effect
    {
        return false;
    }
    if let Some(key) = toleration.key.as_deref().filter(|k| !k.is_empty())
        && key != taint.key
    {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("") {
        "Exists" => true,
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
        _ => false,
    }
}

/// The first taint whose effect `effects` accepts and that no toleration tolerates.
#[must_use]
pub fn first_untolerated<'t>(
    taints: &'t [Taint],
    tolerations: &[Toleration],
    effects: &[&str],
) -> Option<&'t Taint> {
    taints.iter().find(|taint| {
        effects.contains(&taint.effect.as_str())
            && !tolerations
                .iter()
                .any(|toleration| tolerates(toleration, taint))
    })
}

/// `tolerations` with the default daemon tolerations added or updated, as the controller writes them into
/// every daemon pod: a default replaces a toleration with the same key, operator, value and effect in place;
/// otherwise it is appended.
#[must_use]
pub fn with_daemon_tolerations(tolerations: &[Toleration], host_network: bool) -> Vec<Toleration> {
    let mut out = tolerations.to_vec();
    let count = if host_network {
        DEFAULT_DAEMON_TOLERATIONS.len()
    } else {
        DEFAULT_DAEMON_TOLERATIONS.len() - 1
    };
    for (key, effect) in DEFAULT_DAEMON_TOLERATIONS.iter().take(count) {
        let default = Toleration {
            key: Some((*key).to_owned()),
            operator: Some("Exists".to_owned()),
            effect: Some((*effect).to_owned()),
            ..Toleration::default()
        };
        let same = |t: &Toleration| {
            t.key.as_deref().unwrap_or("") == *key
                && t.operator.as_deref().unwrap_or("") == "Exists"
                && t.value.as_deref().unwrap_or("").is_empty()
                && t.effect.as_deref().unwrap_or("") == *effect
        };
        match out.iter_mut().find(|t| same(t)) {
            Some(existing) => *existing = default,
            None => out.push(default),
        }
    }
    out
}
