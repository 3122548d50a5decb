//! The QoS class of a pod template (Kubernetes' `qos.ComputePodQOS`, container-level resources only).
//!
//! Only `cpu` and `memory` count, and only quantities above zero. `BestEffort` when no container requests or
//! limits either; `Guaranteed` when every container limits both cpu and memory and the summed requests equal
//! the summed limits for every resource; `Burstable` otherwise.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::quantity::{self, Quantity, QuantityError};

/// A pod QoS class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QosClass {
    /// Requests equal limits for cpu and memory in every container.
    Guaranteed,
    /// Some requests or limits, not guaranteed.
    Burstable,
    /// No requests or limits.
    BestEffort,
}

impl fmt::Display for QosClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Guaranteed => "Guaranteed",
            Self::Burstable => "Burstable",
            Self::BestEffort => "BestEffort",
        })
    }
}

const SUPPORTED: [&str; 2] = ["cpu", "memory"];

/// The QoS class of a pod spec given as JSON (`containers` and `initContainers`).
///
/// # Errors
/// A request or limit that is not a quantity (Go would not have decoded the template at all).
pub fn of_pod_spec(spec: &Value) -> Result<QosClass, QuantityError> {
    let mut requests: BTreeMap<&str, Quantity> = BTreeMap::new();
    let mut limits: BTreeMap<&str, Quantity> = BTreeMap::new();
    let mut guaranteed = true;
    let containers = ["containers", "initContainers"]
        .into_iter()
        .filter_map(|key| spec.get(key).and_then(Value::as_array))
        .flatten();
    for container in containers {
        let resources = container.get("resources");
        for (name, value) in quantities(resources.and_then(|r| r.get("requests")))? {
            add(&mut requests, name, value)?;
        }
        let mut found = Vec::new();
        for (name, value) in quantities(resources.and_then(|r| r.get("limits")))? {
            found.push(name);
            add(&mut limits, name, value)?;
        }
        if !SUPPORTED.iter().all(|name| found.contains(name)) {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return Ok(QosClass::BestEffort);
    }
    if guaranteed
        && requests
            .iter()
            .all(|(name, request)| limits.get(name).is_some_and(|limit| limit == request))
        && requests.len() == limits.len()
    {
        return Ok(QosClass::Guaranteed);
    }
    Ok(QosClass::Burstable)
}

/// The supported, positive quantities of a resource list.
fn quantities(list: Option<&Value>) -> Result<Vec<(&'static str, Quantity)>, QuantityError> {
    let mut out = Vec::new();
    let Some(Value::Object(list)) = list else {
        return Ok(out);
    };
    for name in SUPPORTED {
        let Some(value) = list.get(name) else {
            continue;
        };
        let text = value.as_str().unwrap_or_default();
        let parsed = quantity::parse(text)?;
        if parsed.is_positive() {
            out.push((name, parsed));
        }
    }
    Ok(out)
}

fn add<'a>(
    totals: &mut BTreeMap<&'a str, Quantity>,
    name: &'a str,
    value: Quantity,
) -> Result<(), QuantityError> {
    let sum = match totals.get(name) {
        Some(total) => total
            .checked_add(&value)
            .ok_or_else(|| QuantityError::OutOfRange(name.to_owned()))?,
        None => value,
    };
    totals.insert(name, sum);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(containers: &[Value]) -> Value {
        json!({"containers": containers})
    }

    #[test]
    fn classes() {
        let guaranteed = json!({"resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m", "memory": "1024Mi"}}});
        let burstable = json!({"resources": {"requests": {"cpu": "1"}}});
        let limits_only = json!({"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}});
        let best_effort =
            json!({"resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "0"}}});
        assert_eq!(
            of_pod_spec(&spec(std::slice::from_ref(&guaranteed))).unwrap(),
            QosClass::Guaranteed
        );
        assert_eq!(
            of_pod_spec(&spec(std::slice::from_ref(&burstable))).unwrap(),
            QosClass::Burstable
        );
        assert_eq!(
            of_pod_spec(&spec(&[limits_only])).unwrap(),
            QosClass::Burstable,
            "requests are not defaulted from limits in templates"
        );
        assert_eq!(
            of_pod_spec(&spec(std::slice::from_ref(&best_effort))).unwrap(),
            QosClass::BestEffort
        );
        assert_eq!(
            of_pod_spec(&spec(&[guaranteed.clone(), burstable])).unwrap(),
            QosClass::Burstable
        );
        assert_eq!(
            of_pod_spec(&spec(&[guaranteed.clone(), guaranteed])).unwrap(),
            QosClass::Guaranteed
        );
        assert_eq!(of_pod_spec(&json!({})).unwrap(), QosClass::BestEffort);
        let bad = json!({"resources": {"limits": {"cpu": "lots"}}});
        assert!(of_pod_spec(&spec(&[bad])).is_err());
    }
}
