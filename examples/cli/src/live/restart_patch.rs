//! The write of `kruise rollout restart` (pure): the pod template annotation
//! `kubectl.kubernetes.io/restartedAt`, which changes the template and so rolls every pod, as kubectl's
//! restart does.

use serde_json::{Value, json};

use super::strategy::{conditional, dotted, is_paused};
use super::target::WorkloadKind;

/// The annotation kubectl's restart writes into the pod template.
pub const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";

/// The conditional patch setting [`RESTARTED_AT`] to `now` (RFC 3339).
///
/// # Errors
/// The rollout is paused: a restart would change nothing until it is resumed (kubectl refuses paused
/// Deployments the same way).
pub fn restart(
    object: &Value,
    kind: WorkloadKind,
    version: &str,
    now: &str,
) -> Result<Value, String> {
    if is_paused(object, kind, version) {
        return Err(format!(
            "can't restart a paused rollout ({} is true); resume it first",
            dotted(kind, version, "paused")
        ));
    }
    Ok(conditional(
        object,
        json!({"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: now}}}}}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_stamps_the_template_unless_paused() {
        let running = json!({"metadata": {"resourceVersion": "5"},
                             "spec": {"updateStrategy": {"rollingUpdate": {"paused": false}}}});
        let patch = restart(
            &running,
            WorkloadKind::CloneSet,
            "v1beta1",
            "2026-11-27T09:00:00Z",
        )
        .unwrap();
        assert_eq!(
            patch,
            json!({"metadata": {"resourceVersion": "5"},
                   "spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: "2026-11-27T09:00:00Z"}}}}})
        );
        let paused = json!({"spec": {"updateStrategy": {"paused": true}}});
        let error = restart(&paused, WorkloadKind::CloneSet, "v1alpha1", "t").unwrap_err();
        assert!(error.contains("spec.updateStrategy.paused"), "{error}");
        assert!(
            restart(&paused, WorkloadKind::CloneSet, "v1beta1", "t").is_ok(),
            "v1beta1 keeps paused elsewhere"
        );
    }
}
