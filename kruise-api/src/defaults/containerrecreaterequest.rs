//! `ContainerRecreateRequest` defaults: the pure part of what the CRR mutating webhook fills in, the
//! same for both versions — `strategy` becomes `{}` when unset and `strategy.failurePolicy` defaults to
//! `Fail`.
//!
//! The rest of that webhook's work depends on the pod (the `node-name`, `pod-uid` and `active` labels,
//! `terminationGracePeriodSeconds` from the pod, each container's `preStop`, `ports` and `statusContext`)
//! and belongs to the webhook itself.

use super::ApplyDefaults;
use crate::apps::v1beta1::{
    ContainerRecreateRequestFailurePolicy, ContainerRecreateRequestStrategy,
};
use crate::apps::{v1alpha1, v1beta1};

impl ApplyDefaults for v1alpha1::ContainerRecreateRequest {
    fn apply_defaults(&mut self) {
        apply_strategy_defaults(&mut self.spec.strategy);
    }
}

impl ApplyDefaults for v1beta1::ContainerRecreateRequest {
    fn apply_defaults(&mut self) {
        apply_strategy_defaults(&mut self.spec.strategy);
    }
}

fn apply_strategy_defaults(strategy: &mut Option<ContainerRecreateRequestStrategy>) {
    let strategy = strategy.get_or_insert_with(Default::default);
    if strategy
        .failure_policy
        .as_ref()
        .is_none_or(|policy| policy.as_str().is_empty())
    {
        strategy.failure_policy = Some(ContainerRecreateRequestFailurePolicy::Fail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crr(strategy: &str) -> v1alpha1::ContainerRecreateRequest {
        serde_saphyr::from_str(&format!(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata: {{name: crr, namespace: default}}
spec:
  podName: pod-a
  containers: [{{name: app}}]
{strategy}"
        ))
        .unwrap()
    }

    #[test]
    fn strategy_defaults_to_fail() {
        let mut request = crr("");
        request.apply_defaults();
        assert_eq!(
            request.spec.strategy,
            Some(ContainerRecreateRequestStrategy {
                failure_policy: Some(ContainerRecreateRequestFailurePolicy::Fail),
                ..Default::default()
            })
        );
        assert_eq!(
            serde_json::to_value(&request.spec).unwrap()["strategy"],
            serde_json::json!({"failurePolicy": "Fail"})
        );
        let before = request.clone();
        request.apply_defaults();
        assert_eq!(request, before, "idempotent");
    }

    #[test]
    fn set_fields_are_kept() {
        let mut request = crr(
            "  strategy: {failurePolicy: Ignore, orderedRecreate: true, terminationGracePeriodSeconds: 5}\n",
        );
        let before = request.clone();
        request.apply_defaults();
        assert_eq!(request, before);

        let mut partial = crr("  strategy: {minStartedSeconds: 10}\n");
        partial.apply_defaults();
        let strategy = partial.spec.strategy.unwrap();
        assert_eq!(
            strategy.failure_policy,
            Some(ContainerRecreateRequestFailurePolicy::Fail)
        );
        assert_eq!(strategy.min_started_seconds, 10);
    }

    #[test]
    fn v1beta1_defaults_agree_with_converted_v1alpha1_defaults() {
        let alpha = crr("");
        let mut defaulted_then_converted = alpha.clone();
        defaulted_then_converted.apply_defaults();
        let mut converted_then_defaulted = v1beta1::ContainerRecreateRequest::from(&alpha);
        converted_then_defaulted.apply_defaults();
        assert_eq!(
            converted_then_defaulted,
            v1beta1::ContainerRecreateRequest::from(defaulted_then_converted)
        );
    }
}
