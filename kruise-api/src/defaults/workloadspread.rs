//! WorkloadSpread defaults: none are written. Upstream has no mutating webhook for WorkloadSpread; its
//! controller and pod webhook read an empty `scheduleStrategy.type` as `Fixed` and a missing `maxReplicas` as
//! "no limit", and leave the object as it is. Subset patches are applied to pods as written.

use super::ApplyDefaults;
use crate::apps::{v1alpha1, v1beta1};

impl ApplyDefaults for v1alpha1::WorkloadSpread {
    fn apply_defaults(&mut self) {}
}

impl ApplyDefaults for v1beta1::WorkloadSpread {
    fn apply_defaults(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_changes() {
        let yaml = "
apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: ws, namespace: default}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  subsets: [{name: a}, {name: b, maxReplicas: 30%}]
";
        let alpha: v1alpha1::WorkloadSpread = serde_saphyr::from_str(yaml).unwrap();
        let mut defaulted = alpha.clone();
        defaulted.apply_defaults();
        assert_eq!(defaulted, alpha);
        assert_eq!(
            alpha.spec.schedule_strategy.type_, None,
            "empty means Fixed"
        );
        let beta = v1beta1::WorkloadSpread::from(&alpha);
        let mut defaulted = beta.clone();
        defaulted.apply_defaults();
        assert_eq!(defaulted, beta);
    }
}
