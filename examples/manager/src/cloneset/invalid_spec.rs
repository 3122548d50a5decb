//! Reporting a CloneSet's invalid spec values (negative `replicas`, a partition that does not parse, ...):
//! the planner reads them safely and puts them in the `InvalidSpec` condition of the status it plans; the
//! controller records one Warning Event per value when that condition appears or its message changes, so an
//! unchanged spec does not repeat the Events at every reconcile.

use kruise_api::apps::v1beta1::{CloneSetConditionType, CloneSetStatus};
use kruise_schedule::cloneset::{InvalidValue, Plan};

fn message(status: Option<&CloneSetStatus>) -> Option<&str> {
    status?
        .conditions
        .iter()
        .find(|c| c.type_ == CloneSetConditionType::InvalidSpec)
        .map(|c| c.message.as_str())
}

/// The invalid values of `plan` to record Events for: all of them when the planned `InvalidSpec` condition
/// says something else than the one in `current` (the status as read), none otherwise.
#[must_use]
pub fn to_report<'p>(current: Option<&CloneSetStatus>, plan: &'p Plan) -> &'p [InvalidValue] {
    let planned = message(Some(&plan.status));
    if planned.is_some() && planned != message(current) {
        &plan.invalid
    } else {
        &[]
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
    use kruise_api::apps::v1beta1::CloneSet;
    use kruise_schedule::cloneset::{Options, PlanInput, Reading, Revisions, SeededIds, plan};
    use serde_json::json;

    use super::*;

    fn cloneset(spec: &serde_json::Value) -> CloneSet {
        let mut object = json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}}},
        });
        for (key, value) in spec.as_object().into_iter().flatten() {
            object["spec"][key] = value.clone();
        }
        serde_json::from_value(object).unwrap()
    }

    fn plan_of(cloneset: &CloneSet) -> Plan {
        let now = "2024-05-01T10:00:00Z"
            .parse::<Timestamp>()
            .unwrap()
            .to_zoned(TimeZone::UTC);
        let options = Options::default();
        let ids = SeededIds::new(1);
        let pods = Vec::new();
        let input = PlanInput::new(
            cloneset,
            &pods,
            Revisions::named("web-a", "web-a"),
            &now,
            &options,
            &ids,
        );
        plan(&input)
    }

    #[test]
    fn reported_once_per_message() {
        let bad =
            cloneset(&json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": "abc%"}}}));
        let first = plan_of(&bad);
        let reported = to_report(bad.status.as_ref(), &first);
        assert_eq!(reported.len(), 1);
        assert_eq!(
            reported[0].field,
            "spec.updateStrategy.rollingUpdate.maxUnavailable"
        );
        assert_eq!(reported[0].reading, Reading::Zero);
        // The status written, read back: nothing new to report.
        let mut written = bad.clone();
        written.status = Some(first.status.clone());
        let again = plan_of(&written);
        assert!(to_report(written.status.as_ref(), &again).is_empty());
        // Another bad value: the message changes, every value is reported again.
        let mut worse = written.clone();
        worse.spec.replicas = Some(-1);
        let changed = plan_of(&worse);
        let fields: Vec<_> = to_report(worse.status.as_ref(), &changed)
            .iter()
            .map(|v| v.field)
            .collect();
        assert_eq!(
            fields,
            [
                "spec.replicas",
                "spec.updateStrategy.rollingUpdate.maxUnavailable"
            ]
        );
        // Fixed: the condition goes, nothing to report.
        let mut fixed = worse.clone();
        fixed.status = Some(changed.status.clone());
        fixed.spec = cloneset(&json!({})).spec;
        let clean = plan_of(&fixed);
        assert!(to_report(fixed.status.as_ref(), &clean).is_empty());
        assert!(
            clean
                .status
                .conditions
                .iter()
                .all(|c| c.type_ != CloneSetConditionType::InvalidSpec)
        );
    }
}
