//! BroadcastJob defaults (upstream's BroadcastJob defaulting webhook): the pod template,
//! `completionPolicy.type: Always`, `parallelism` 2^31-1 and `failurePolicy.type: FailFast`.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::ApplyDefaults;
use super::cloneset::apply_template_defaults;
use crate::apps::v1beta1::{
    CompletionPolicy, CompletionPolicyType, FailurePolicy, FailurePolicyType,
};
use crate::apps::{v1alpha1, v1beta1};

/// The `parallelism` a BroadcastJob gets when it has none: 2^31-1, that is no limit.
const DEFAULT_PARALLELISM: i32 = i32::MAX;

/// The defaults of a BroadcastJob spec, given its fields (the two versions' specs are separate types with
/// the same fields).
fn apply_spec_defaults(
    template: &mut PodTemplateSpec,
    parallelism: &mut Option<IntOrString>,
    completion_policy: &mut CompletionPolicy,
    failure_policy: &mut FailurePolicy,
) {
    apply_template_defaults(template, &mut []);
    completion_policy
        .type_
        .get_or_insert(CompletionPolicyType::Always);
    parallelism.get_or_insert(IntOrString::Int(DEFAULT_PARALLELISM));
    failure_policy
        .type_
        .get_or_insert(FailurePolicyType::FailFast);
}

impl ApplyDefaults for v1alpha1::BroadcastJob {
    fn apply_defaults(&mut self) {
        let spec = &mut self.spec;
        apply_spec_defaults(
            &mut spec.template,
            &mut spec.parallelism,
            &mut spec.completion_policy,
            &mut spec.failure_policy,
        );
    }
}

impl ApplyDefaults for v1beta1::BroadcastJob {
    fn apply_defaults(&mut self) {
        let spec = &mut self.spec;
        apply_spec_defaults(
            &mut spec.template,
            &mut spec.parallelism,
            &mut spec.completion_policy,
            &mut spec.failure_policy,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BCJ: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: BroadcastJob
metadata: {name: bcj-demo, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: counter, image: busybox}]
";

    #[test]
    fn defaults_are_applied() {
        let mut job: v1alpha1::BroadcastJob = serde_saphyr::from_str(BCJ).unwrap();
        job.apply_defaults();
        let spec = &job.spec;
        assert_eq!(
            spec.completion_policy.type_,
            Some(v1alpha1::CompletionPolicyType::Always)
        );
        assert_eq!(spec.parallelism, Some(IntOrString::Int(2_147_483_647)));
        assert_eq!(
            spec.failure_policy.type_,
            Some(v1alpha1::FailurePolicyType::FailFast)
        );
        let pod = spec.template.spec.as_ref().unwrap();
        assert_eq!(
            pod.restart_policy.as_deref(),
            Some("Never"),
            "set values stay"
        );
        assert_eq!(pod.dns_policy.as_deref(), Some("ClusterFirst"));
        assert_eq!(
            pod.containers[0].image_pull_policy.as_deref(),
            Some("Always")
        );
        let before = job.clone();
        job.apply_defaults();
        assert_eq!(job, before, "idempotent");
    }

    #[test]
    fn set_fields_are_kept() {
        let mut job: v1beta1::BroadcastJob = serde_saphyr::from_str(&format!(
            "{}  parallelism: '50%'\n  completionPolicy: {{type: Never}}\n  failurePolicy: {{type: Pause, restartLimit: 2}}\n",
            BCJ.replace("v1alpha1", "v1beta1")
        ))
        .unwrap();
        job.apply_defaults();
        assert_eq!(
            job.spec.parallelism,
            Some(IntOrString::String("50%".into()))
        );
        assert_eq!(
            job.spec.completion_policy.type_,
            Some(v1beta1::CompletionPolicyType::Never)
        );
        assert_eq!(
            job.spec.failure_policy.type_,
            Some(v1beta1::FailurePolicyType::Pause)
        );
        assert_eq!(job.spec.failure_policy.restart_limit, 2);
    }

    #[test]
    fn v1beta1_defaults_agree_with_converted_v1alpha1_defaults() {
        let alpha: v1alpha1::BroadcastJob = serde_saphyr::from_str(BCJ).unwrap();
        let mut defaulted_then_converted = alpha.clone();
        defaulted_then_converted.apply_defaults();
        let defaulted_then_converted = v1beta1::BroadcastJob::from(defaulted_then_converted);
        let mut converted_then_defaulted = v1beta1::BroadcastJob::from(&alpha);
        converted_then_defaulted.apply_defaults();
        assert_eq!(converted_then_defaulted, defaulted_then_converted);
    }
}
