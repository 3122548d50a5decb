//! `SidecarSet` defaults (upstream `SetDefaultsSidecarSet`), the same for both versions:
//!
//! * `updateStrategy`: type `RollingUpdate`, `maxUnavailable: 1`, `partition: 0`;
//! * every sidecar container: `podInjectPolicy` `BeforeAppContainer` (containers) or `AfterAppContainer`
//!   (init containers), `upgradeStrategy.upgradeType: ColdUpgrade`, `shareVolumePolicy.type: disabled`,
//!   `apiVersion: v1` in `transferEnv[].sourceContainerNameFrom.fieldRef`, the CRD default `.*` of
//!   `resourcesPolicy.targetContainersNameRegex`, and Kubernetes' container defaults as Kruise applies them
//!   to sidecars (see [`apply_sidecar_container_defaults`]);
//! * volumes: Kubernetes' volume defaults;
//! * `revisionHistoryLimit: 10`; `patchPodMetadata[].patchPolicy: Retain`;
//! * `injectionStrategy.revision.policy: Always` when a revision is set (also the CRD default).
//!
//! These defaults feed the `SidecarSet` hash, which upstream computes after its webhook defaulted the object.

use k8s_openapi::api::core::v1::{Container, Volume};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::ApplyDefaults;
use super::pod::{apply_container_defaults, apply_field_selector_defaults, apply_volume_defaults};
use crate::apps::v1beta1::{
    PodInjectPolicy, ShareVolumePolicyType, SidecarContainer, SidecarContainerUpgradeType,
    SidecarSetInjectRevisionPolicy, SidecarSetInjectionStrategy, SidecarSetPatchPodMetadata,
    SidecarSetPatchPolicy, SidecarSetUpdateStrategy, SidecarSetUpdateStrategyType,
};
use crate::apps::{v1alpha1, v1beta1};

/// The CRD default of `resourcesPolicy.targetContainersNameRegex`: every container.
pub const DEFAULT_TARGET_CONTAINERS_NAME_REGEX: &str = ".*";

/// The default `revisionHistoryLimit` of a `SidecarSet`.
pub const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;

impl ApplyDefaults for v1alpha1::SidecarSet {
    fn apply_defaults(&mut self) {
        let spec = &mut self.spec;
        apply_spec_defaults(SpecParts {
            update_strategy: &mut spec.update_strategy,
            init_containers: &mut spec.init_containers,
            containers: &mut spec.containers,
            volumes: &mut spec.volumes,
            revision_history_limit: &mut spec.revision_history_limit,
            patch_pod_metadata: &mut spec.patch_pod_metadata,
            injection_strategy: &mut spec.injection_strategy,
        });
    }
}

impl ApplyDefaults for v1beta1::SidecarSet {
    fn apply_defaults(&mut self) {
        let spec = &mut self.spec;
        apply_spec_defaults(SpecParts {
            update_strategy: &mut spec.update_strategy,
            init_containers: &mut spec.init_containers,
            containers: &mut spec.containers,
            volumes: &mut spec.volumes,
            revision_history_limit: &mut spec.revision_history_limit,
            patch_pod_metadata: &mut spec.patch_pod_metadata,
            injection_strategy: &mut spec.injection_strategy,
        });
    }
}

/// The parts of a `SidecarSet` spec that have defaults (the same in both versions).
struct SpecParts<'a> {
    update_strategy: &'a mut SidecarSetUpdateStrategy,
    init_containers: &'a mut [SidecarContainer],
    containers: &'a mut [SidecarContainer],
    volumes: &'a mut [Volume],
    revision_history_limit: &'a mut Option<i32>,
    patch_pod_metadata: &'a mut [SidecarSetPatchPodMetadata],
    injection_strategy: &'a mut SidecarSetInjectionStrategy,
}

fn apply_spec_defaults(parts: SpecParts<'_>) {
    let strategy = parts.update_strategy;
    set_if_empty(
        &mut strategy.type_,
        SidecarSetUpdateStrategyType::RollingUpdate,
    );
    strategy.max_unavailable.get_or_insert(IntOrString::Int(1));
    strategy.partition.get_or_insert(IntOrString::Int(0));
    for sidecar in parts.init_containers.iter_mut() {
        apply_sidecar_defaults(sidecar, PodInjectPolicy::AfterAppContainer);
    }
    for sidecar in parts.containers.iter_mut() {
        apply_sidecar_defaults(sidecar, PodInjectPolicy::BeforeAppContainer);
    }
    apply_volume_defaults(parts.volumes);
    parts
        .revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    for patch in parts.patch_pod_metadata.iter_mut() {
        set_if_empty(&mut patch.patch_policy, SidecarSetPatchPolicy::Retain);
    }
    if let Some(revision) = parts.injection_strategy.revision.as_mut() {
        set_if_empty(&mut revision.policy, SidecarSetInjectRevisionPolicy::Always);
    }
}

/// The defaults of one sidecar (init) container; `inject_policy` is the default `podInjectPolicy`.
fn apply_sidecar_defaults(sidecar: &mut SidecarContainer, inject_policy: PodInjectPolicy) {
    set_if_empty(&mut sidecar.pod_inject_policy, inject_policy);
    set_if_empty(
        &mut sidecar.upgrade_strategy.upgrade_type,
        SidecarContainerUpgradeType::ColdUpgrade,
    );
    set_if_empty(
        &mut sidecar.share_volume_policy.type_,
        ShareVolumePolicyType::Disabled,
    );
    apply_sidecar_container_defaults(&mut sidecar.container);
    for transfer in &mut sidecar.transfer_env {
        if let Some(field_ref) = transfer
            .source_container_name_from
            .as_mut()
            .and_then(|source| source.field_ref.as_mut())
        {
            apply_field_selector_defaults(field_ref);
        }
    }
    if let Some(policy) = sidecar.resources_policy.as_mut()
        && policy.target_containers_name_regex.is_empty()
    {
        DEFAULT_TARGET_CONTAINERS_NAME_REGEX.clone_into(&mut policy.target_containers_name_regex);
    }
}

/// Kubernetes' container defaults as Kruise applies them to sidecar containers: those of
/// [`apply_container_defaults`] (so `imagePullPolicy` follows the image tag: `Always` only for `latest` or
/// no tag, unlike the pod-template rule that makes it `Always` for every app container), except that the
/// startup probe is left alone — upstream defaults only the liveness and readiness probes of sidecars.
pub fn apply_sidecar_container_defaults(container: &mut Container) {
    let startup_probe = container.startup_probe.take();
    apply_container_defaults(container);
    container.startup_probe = startup_probe;
}

/// Sets a string enum that is unset or empty (Go's `== ""`).
fn set_if_empty<T: AsRef<str>>(field: &mut Option<T>, default: T) {
    if field.as_ref().is_none_or(|value| value.as_ref().is_empty()) {
        *field = Some(default);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SIDECARSET: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: demo}
spec:
  selector: {matchLabels: {app: nginx}}
  initContainers:
  - name: init-config
    image: busybox:1.36
  - name: proxy-native
    image: envoy
    restartPolicy: Always
    startupProbe: {httpGet: {port: 15021}}
  containers:
  - name: sidecar1
    image: busybox
    command: [sleep, 999d]
    ports: [{containerPort: 9090}]
    env:
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    livenessProbe: {httpGet: {port: 9090}}
    readinessProbe: {tcpSocket: {port: 9090}}
    startupProbe: {httpGet: {port: 9090}}
    lifecycle: {preStop: {httpGet: {port: 9090, path: /quit}}}
    transferEnv:
    - sourceContainerNameFrom: {fieldRef: {fieldPath: \"metadata.labels['main']\"}}
      envName: PROXY_IP
    resourcesPolicy:
      targetContainersMode: sum
      resourcesExpr: {limits: {cpu: 'cpu*50%'}}
  volumes:
  - name: log-volume
  - name: conf
    configMap: {name: nginx-conf}
  patchPodMetadata:
  - annotations: {oom-score: '{\"sidecar1\": 1}'}
  injectionStrategy:
    revision: {customVersion: v1}
";

    fn defaulted() -> serde_json::Value {
        let mut sidecarset: v1alpha1::SidecarSet = serde_saphyr::from_str(SIDECARSET).unwrap();
        sidecarset.apply_defaults();
        serde_json::to_value(&sidecarset.spec).unwrap()
    }

    #[test]
    fn update_strategy_defaults() {
        let spec = defaulted();
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate", "partition": 0, "maxUnavailable": 1})
        );
    }

    #[test]
    fn inject_policy_defaults_differ_for_init_containers() {
        let spec = defaulted();
        assert_eq!(
            spec["containers"][0]["podInjectPolicy"],
            "BeforeAppContainer"
        );
        assert_eq!(
            spec["initContainers"][0]["podInjectPolicy"],
            "AfterAppContainer"
        );
        assert_eq!(
            spec["initContainers"][1]["podInjectPolicy"],
            "AfterAppContainer"
        );
    }

    #[test]
    fn upgrade_and_share_volume_defaults() {
        let spec = defaulted();
        for sidecar in [&spec["containers"][0], &spec["initContainers"][0]] {
            assert_eq!(
                sidecar["upgradeStrategy"],
                json!({"upgradeType": "ColdUpgrade"})
            );
            assert_eq!(sidecar["shareVolumePolicy"], json!({"type": "disabled"}));
            assert!(
                sidecar.get("shareVolumeDevicePolicy").is_none(),
                "no default: keeps old hashes stable"
            );
        }
    }

    #[test]
    fn container_defaults_without_the_app_container_pull_policy() {
        let spec = defaulted();
        let sidecar = &spec["containers"][0];
        assert_eq!(sidecar["imagePullPolicy"], "Always", "busybox has no tag");
        assert_eq!(
            spec["initContainers"][0]["imagePullPolicy"], "IfNotPresent",
            "a pinned tag is not forced to Always"
        );
        assert_eq!(sidecar["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(sidecar["terminationMessagePolicy"], "File");
        assert_eq!(sidecar["ports"][0]["protocol"], "TCP");
        assert_eq!(
            sidecar["env"][0]["valueFrom"]["fieldRef"]["apiVersion"],
            "v1"
        );
        assert_eq!(
            sidecar["livenessProbe"],
            json!({"httpGet": {"path": "/", "port": 9090, "scheme": "HTTP"}, "timeoutSeconds": 1,
                "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(sidecar["readinessProbe"]["periodSeconds"], 10);
        assert_eq!(
            sidecar["startupProbe"],
            json!({"httpGet": {"port": 9090}}),
            "upstream does not default sidecar startup probes"
        );
        assert_eq!(
            spec["initContainers"][1]["startupProbe"],
            json!({"httpGet": {"port": 15021}})
        );
        assert_eq!(sidecar["lifecycle"]["preStop"]["httpGet"]["scheme"], "HTTP");
        assert_eq!(sidecar["lifecycle"]["preStop"]["httpGet"]["path"], "/quit");
    }

    #[test]
    fn transfer_env_field_ref_and_resources_policy_defaults() {
        let spec = defaulted();
        let sidecar = &spec["containers"][0];
        assert_eq!(
            sidecar["transferEnv"][0]["sourceContainerNameFrom"]["fieldRef"]["apiVersion"],
            "v1"
        );
        assert_eq!(
            sidecar["resourcesPolicy"]["targetContainersNameRegex"],
            ".*"
        );
    }

    #[test]
    fn volume_history_patch_and_revision_defaults() {
        let spec = defaulted();
        assert_eq!(
            spec["volumes"][0],
            json!({"name": "log-volume", "emptyDir": {}})
        );
        assert_eq!(spec["volumes"][1]["configMap"]["defaultMode"], 420);
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(spec["patchPodMetadata"][0]["patchPolicy"], "Retain");
        assert_eq!(
            spec["injectionStrategy"]["revision"],
            json!({"customVersion": "v1", "policy": "Always"})
        );
    }

    #[test]
    fn no_revision_means_no_revision_policy() {
        let mut sidecarset: v1beta1::SidecarSet = serde_saphyr::from_str(
            "{apiVersion: apps.kruise.io/v1beta1, kind: SidecarSet, metadata: {name: d}, spec: {}}",
        )
        .unwrap();
        sidecarset.apply_defaults();
        assert_eq!(sidecarset.spec.injection_strategy.revision, None);
        assert_eq!(sidecarset.spec.revision_history_limit, Some(10));
        assert_eq!(
            sidecarset.spec.update_strategy.type_,
            Some(SidecarSetUpdateStrategyType::RollingUpdate)
        );
    }

    #[test]
    fn set_fields_are_kept() {
        let mut sidecarset: v1beta1::SidecarSet = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata: {name: demo}
spec:
  selector: {matchLabels: {app: nginx}}
  containers:
  - name: envoy
    image: envoy:v1
    imagePullPolicy: Never
    podInjectPolicy: AfterAppContainer
    upgradeStrategy: {upgradeType: HotUpgrade, hotUpgradeEmptyImage: 'envoy:empty'}
    shareVolumePolicy: {type: enabled}
    resourcesPolicy: {targetContainersMode: max, targetContainersNameRegex: '^app$'}
  updateStrategy: {type: NotUpdate, partition: '50%', maxUnavailable: '20%'}
  revisionHistoryLimit: 3
  patchPodMetadata: [{annotations: {a: b}, patchPolicy: MergePatchJson}]
  injectionStrategy: {revision: {revisionName: demo-1, policy: Partial}}
",
        )
        .unwrap();
        let before = serde_json::to_value(&sidecarset.spec).unwrap();
        sidecarset.apply_defaults();
        let after = serde_json::to_value(&sidecarset.spec).unwrap();
        for pointer in [
            "/containers/0/imagePullPolicy",
            "/containers/0/podInjectPolicy",
            "/containers/0/upgradeStrategy",
            "/containers/0/shareVolumePolicy",
            "/containers/0/resourcesPolicy",
            "/updateStrategy",
            "/revisionHistoryLimit",
            "/patchPodMetadata",
            "/injectionStrategy",
        ] {
            assert_eq!(before.pointer(pointer), after.pointer(pointer), "{pointer}");
        }
    }

    #[test]
    fn empty_enum_values_count_as_unset() {
        let mut sidecarset: v1alpha1::SidecarSet = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: demo}
spec:
  containers: [{name: s, image: 's:1', podInjectPolicy: '', upgradeStrategy: {upgradeType: ''}}]
  updateStrategy: {type: ''}
",
        )
        .unwrap();
        sidecarset.apply_defaults();
        let sidecar = &sidecarset.spec.containers[0];
        assert_eq!(
            sidecar.pod_inject_policy,
            Some(PodInjectPolicy::BeforeAppContainer)
        );
        assert_eq!(
            sidecar.upgrade_strategy.upgrade_type,
            Some(SidecarContainerUpgradeType::ColdUpgrade)
        );
        assert_eq!(
            sidecarset.spec.update_strategy.type_,
            Some(SidecarSetUpdateStrategyType::RollingUpdate)
        );
    }

    #[test]
    fn idempotent_and_the_same_in_both_versions() {
        let alpha: v1alpha1::SidecarSet = serde_saphyr::from_str(SIDECARSET).unwrap();
        let mut once = alpha.clone();
        once.apply_defaults();
        let mut twice = once.clone();
        twice.apply_defaults();
        assert_eq!(twice, once, "idempotent");

        let mut converted_then_defaulted = v1beta1::SidecarSet::from(&alpha);
        converted_then_defaulted.apply_defaults();
        assert_eq!(converted_then_defaulted, v1beta1::SidecarSet::from(&once));
    }
}
