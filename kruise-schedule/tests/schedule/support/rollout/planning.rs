//! Running the CloneSet planner in tests.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::{Zoned, tz::TimeZone};
use kruise_api::apps::v1beta1::CloneSet;
use kruise_schedule::cloneset::{ActionKind, Options, Plan, PlanInput, Revisions, SeededIds, plan};
use kruise_schedule::planning::PlanRule;
use serde_json::{Value, json};

/// A v1beta1 CloneSet `cs` in `default` with the given spec fields merged over a base (3 replicas, one
/// container `c` with image `nginx:1`).
pub fn cloneset(spec: &Value) -> CloneSet {
    let mut value = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "default", "uid": "uid-1", "generation": 2},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "cs"}},
            "template": {"metadata": {"labels": {"app": "cs"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}},
        },
    });
    for (key, field) in spec.as_object().unwrap() {
        value["spec"][key] = field.clone();
    }
    serde_json::from_value(value).unwrap()
}

/// 2024-05-01T10:00:00Z in UTC.
pub fn now() -> Zoned {
    "2024-05-01T10:00:00Z"
        .parse::<k8s_openapi::jiff::Timestamp>()
        .unwrap()
        .to_zoned(TimeZone::UTC)
}

/// Plans with revisions `old_rev` (current) and `new_rev` (update), no claims, the given options.
pub fn plan_with(cs: &CloneSet, pods: &[Pod], options: &Options) -> Plan {
    let now = now();
    let ids = SeededIds::new(1);
    let input = PlanInput::new(
        cs,
        pods,
        Revisions::named("old_rev", "new_rev"),
        &now,
        options,
        &ids,
    );
    plan(&input)
}

/// Plans with upstream's default options.
pub fn plan_of(cs: &CloneSet, pods: &[Pod]) -> Plan {
    plan_with(cs, pods, &Options::default())
}

/// Plans with claims.
pub fn plan_claims(cs: &CloneSet, pods: &[Pod], claims: &[PersistentVolumeClaim]) -> Plan {
    let now = now();
    let options = Options::default();
    let ids = SeededIds::new(1);
    let input = PlanInput::new(
        cs,
        pods,
        Revisions::named("old_rev", "new_rev"),
        &now,
        &options,
        &ids,
    )
    .with_claims(claims);
    plan(&input)
}

/// `kind object rule` per action.
pub fn summary(plan: &Plan, pods: &[Pod]) -> Vec<String> {
    plan.actions
        .iter()
        .map(|a| {
            format!(
                "{} {} {}",
                a.kind.name(),
                a.object_name(pods, &[]),
                a.rule.id()
            )
        })
        .collect()
}

/// The lifecycle target state of a `Lifecycle` action.
pub fn lifecycle_to(kind: &ActionKind) -> Option<String> {
    match kind {
        ActionKind::Lifecycle { transition, .. } => {
            transition.to.as_ref().map(|s| s.as_str().to_owned())
        }
        _ => None,
    }
}
