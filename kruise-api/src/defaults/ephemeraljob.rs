//! EphemeralJob defaults: none are written. Upstream only validates EphemeralJobs; its controller reads an
//! unset `ttlSecondsAfterFinished` as 1800 seconds and leaves the object as it is. The ephemeral containers
//! are defaulted by the API server when the controller adds them to a pod, not in the template.

use super::ApplyDefaults;
use crate::apps::v1alpha1;

impl ApplyDefaults for v1alpha1::EphemeralJob {
    fn apply_defaults(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_changes() {
        let yaml = "
apiVersion: apps.kruise.io/v1alpha1
kind: EphemeralJob
metadata: {name: ejob, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    ephemeralContainers: [{name: debugger, image: busybox, command: [sleep, '3600']}]
";
        let ejob: v1alpha1::EphemeralJob = serde_saphyr::from_str(yaml).unwrap();
        let mut defaulted = ejob.clone();
        defaulted.apply_defaults();
        assert_eq!(defaulted, ejob);
        assert_eq!(ejob.spec.ttl_seconds_after_finished, None);
    }
}
