//! Defaults of pod templates, volumes and volume claim templates, as Kruise's webhooks apply them
//! (Kubernetes' core/v1 defaulting functions plus Kruise's `imagePullPolicy: Always` for containers).
//!
//! Not reproduced: Kubernetes rounds resource quantities up to milli precision and re-encodes them in
//! canonical form while defaulting; quantities here are kept as written.

use crate::image::Reference;
use k8s_openapi::api::core::v1::{
    Container, EphemeralContainer, HTTPGetAction, Lifecycle, ObjectFieldSelector,
    PersistentVolumeClaim, PersistentVolumeClaimStatus, PodSecurityContext, PodSpec, Probe, Volume,
};

/// Switches of pod-template defaulting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodDefaultsOptions {
    /// Upstream feature gate `DefaultHostNetworkHostPortsInPodTemplates` (default off): with host networking,
    /// default every container port's `hostPort` to its `containerPort`, as Kubernetes did before 1.28.
    pub host_network_host_ports: bool,
}

/// The default `terminationGracePeriodSeconds` of a pod.
pub const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;

/// The default file mode (0644) of secret, config map, downward API and projected volumes.
pub const DEFAULT_VOLUME_MODE: i32 = 0o644;

/// Applies the defaults of a pod template's spec.
pub fn apply_pod_spec_defaults(spec: &mut PodSpec, options: PodDefaultsOptions) {
    set_if_empty(&mut spec.dns_policy, "ClusterFirst");
    set_if_empty(&mut spec.restart_policy, "Always");
    if options.host_network_host_ports && spec.host_network == Some(true) {
        for container in spec
            .containers
            .iter_mut()
            .chain(spec.init_containers.iter_mut().flatten())
        {
            for port in container.ports.iter_mut().flatten() {
                if port.host_port.unwrap_or(0) == 0 {
                    port.host_port = Some(port.container_port);
                }
            }
        }
    }
    spec.security_context
        .get_or_insert_with(PodSecurityContext::default);
    spec.termination_grace_period_seconds
        .get_or_insert(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
    set_if_empty(&mut spec.scheduler_name, "default-scheduler");
    if let Some(volumes) = spec.volumes.as_mut() {
        apply_volume_defaults(volumes);
    }
    for container in spec.init_containers.iter_mut().flatten() {
        apply_container_defaults(container);
    }
    for container in &mut spec.containers {
        set_if_empty(&mut container.image_pull_policy, "Always");
        apply_container_defaults(container);
    }
    for container in spec.ephemeral_containers.iter_mut().flatten() {
        apply_ephemeral_container_defaults(container);
    }
}

/// Applies Kubernetes' container defaults: `imagePullPolicy` (`Always` for a `latest` or missing tag, else
/// `IfNotPresent`), termination message path and policy, port protocols, `fieldRef.apiVersion`, probe
/// timings and HTTP handler path and scheme.
pub fn apply_container_defaults(container: &mut Container) {
    if container
        .image_pull_policy
        .as_deref()
        .is_none_or(str::is_empty)
    {
        let policy = if image_tag(container.image.as_deref().unwrap_or("")) == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        };
        container.image_pull_policy = Some(policy.to_owned());
    }
    set_if_empty(
        &mut container.termination_message_path,
        "/dev/termination-log",
    );
    set_if_empty(&mut container.termination_message_policy, "File");
    for port in container.ports.iter_mut().flatten() {
        set_if_empty(&mut port.protocol, "TCP");
    }
    for env in container.env.iter_mut().flatten() {
        if let Some(field_ref) = env
            .value_from
            .as_mut()
            .and_then(|from| from.field_ref.as_mut())
        {
            apply_field_selector_defaults(field_ref);
        }
    }
    for probe in [
        &mut container.liveness_probe,
        &mut container.readiness_probe,
        &mut container.startup_probe,
    ]
    .into_iter()
    .flatten()
    {
        apply_probe_defaults(probe);
    }
    if let Some(lifecycle) = container.lifecycle.as_mut() {
        apply_lifecycle_defaults(lifecycle);
    }
}

fn apply_ephemeral_container_defaults(container: &mut EphemeralContainer) {
    for port in container.ports.iter_mut().flatten() {
        set_if_empty(&mut port.protocol, "TCP");
    }
    for env in container.env.iter_mut().flatten() {
        if let Some(field_ref) = env
            .value_from
            .as_mut()
            .and_then(|from| from.field_ref.as_mut())
        {
            apply_field_selector_defaults(field_ref);
        }
    }
    for probe in [
        &mut container.liveness_probe,
        &mut container.readiness_probe,
        &mut container.startup_probe,
    ]
    .into_iter()
    .flatten()
    {
        apply_probe_defaults(probe);
    }
    if let Some(lifecycle) = container.lifecycle.as_mut() {
        apply_lifecycle_defaults(lifecycle);
    }
}

/// Probe defaults: timeout 1 s, period 10 s, success threshold 1, failure threshold 3 (zero counts as
/// unset), plus HTTP handler defaults.
pub fn apply_probe_defaults(probe: &mut Probe) {
    for (field, default) in [
        (&mut probe.timeout_seconds, 1),
        (&mut probe.period_seconds, 10),
        (&mut probe.success_threshold, 1),
        (&mut probe.failure_threshold, 3),
    ] {
        if field.unwrap_or(0) == 0 {
            *field = Some(default);
        }
    }
    if let Some(http_get) = probe.http_get.as_mut() {
        apply_http_get_defaults(http_get);
    }
}

fn apply_lifecycle_defaults(lifecycle: &mut Lifecycle) {
    for handler in [&mut lifecycle.post_start, &mut lifecycle.pre_stop]
        .into_iter()
        .flatten()
    {
        if let Some(http_get) = handler.http_get.as_mut() {
            apply_http_get_defaults(http_get);
        }
    }
}

fn apply_http_get_defaults(action: &mut HTTPGetAction) {
    set_if_empty(&mut action.path, "/");
    set_if_empty(&mut action.scheme, "HTTP");
}

/// `fieldRef.apiVersion` defaults to `v1`.
pub fn apply_field_selector_defaults(selector: &mut ObjectFieldSelector) {
    set_if_empty(&mut selector.api_version, "v1");
}

/// Volume defaults: a volume without any source becomes an `emptyDir`; host paths get `type: ""`;
/// secret, config map, downward API and projected volumes get `defaultMode: 420` (0644); downward API field
/// references get `apiVersion: v1`; service account token projections expire after 3600 s.
pub fn apply_volume_defaults(volumes: &mut [Volume]) {
    for volume in volumes {
        if !has_volume_source(volume) {
            volume.empty_dir = Some(Default::default());
        }
        if let Some(host_path) = volume.host_path.as_mut() {
            host_path.type_.get_or_insert_with(String::new);
        }
        if let Some(secret) = volume.secret.as_mut() {
            secret.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
        }
        if let Some(config_map) = volume.config_map.as_mut() {
            config_map.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
        }
        if let Some(downward_api) = volume.downward_api.as_mut() {
            downward_api.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
            for item in downward_api.items.iter_mut().flatten() {
                if let Some(field_ref) = item.field_ref.as_mut() {
                    apply_field_selector_defaults(field_ref);
                }
            }
        }
        if let Some(projected) = volume.projected.as_mut() {
            projected.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
            for source in projected.sources.iter_mut().flatten() {
                for item in source
                    .downward_api
                    .iter_mut()
                    .flat_map(|api| api.items.iter_mut().flatten())
                {
                    if let Some(field_ref) = item.field_ref.as_mut() {
                        apply_field_selector_defaults(field_ref);
                    }
                }
                if let Some(token) = source.service_account_token.as_mut() {
                    token.expiration_seconds.get_or_insert(3600);
                }
            }
        }
    }
}

/// Volume claim template defaults: `status.phase: Pending`.
pub fn apply_volume_claim_template_defaults(claim: &mut PersistentVolumeClaim) {
    let status = claim
        .status
        .get_or_insert_with(PersistentVolumeClaimStatus::default);
    set_if_empty(&mut status.phase, "Pending");
}

/// Whether any volume source field is set (Kubernetes' `AllPtrFieldsNil` test), judged from the JSON form so
/// that sources added by newer Kubernetes versions count too.
fn has_volume_source(volume: &Volume) -> bool {
    match serde_json::to_value(volume) {
        Ok(serde_json::Value::Object(fields)) => fields.keys().any(|key| key != "name"),
        _ => true,
    }
}

/// The tag Kubernetes reads from an image reference (see [`Reference::kubernetes_tag`]).
#[must_use]
pub fn image_tag(image: &str) -> &str {
    Reference::kubernetes_tag(image)
}

fn set_if_empty(field: &mut Option<String>, default: &str) {
    if field.as_deref().is_none_or(str::is_empty) {
        *field = Some(default.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodTemplateSpec;

    fn spec(yaml: &str) -> PodSpec {
        serde_saphyr::from_str::<PodTemplateSpec>(yaml)
            .unwrap()
            .spec
            .unwrap()
    }

    #[test]
    fn pod_spec_defaults_match_kruise_webhook() {
        let mut pod_spec = spec(
            r"
spec:
  initContainers:
  - name: init
    image: busybox
  - name: pinned
    image: registry:5000/busybox:1.36
  containers:
  - name: main
    image: nginx:1.25
    ports: [{containerPort: 80}]
    env:
    - name: POD
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    readinessProbe:
      httpGet: {port: 80}
    lifecycle:
      preStop: {httpGet: {port: 80}}
  volumes:
  - name: scratch
  - name: conf
    configMap: {name: conf}
  - name: host
    hostPath: {path: /var/log}
",
        );
        apply_pod_spec_defaults(&mut pod_spec, PodDefaultsOptions::default());
        let value = serde_json::to_value(&pod_spec).unwrap();
        assert_eq!(value["dnsPolicy"], "ClusterFirst");
        assert_eq!(value["restartPolicy"], "Always");
        assert_eq!(value["schedulerName"], "default-scheduler");
        assert_eq!(value["securityContext"], serde_json::json!({}));
        assert_eq!(value["terminationGracePeriodSeconds"], 30);
        assert_eq!(
            value["initContainers"][0]["imagePullPolicy"], "Always",
            "no tag means latest"
        );
        assert_eq!(
            value["initContainers"][1]["imagePullPolicy"],
            "IfNotPresent"
        );
        let main = &value["containers"][0];
        assert_eq!(
            main["imagePullPolicy"], "Always",
            "kruise forces Always for app containers"
        );
        assert_eq!(main["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(main["terminationMessagePolicy"], "File");
        assert_eq!(main["ports"][0]["protocol"], "TCP");
        assert!(main["ports"][0].get("hostPort").is_none());
        assert_eq!(main["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
        assert_eq!(
            main["readinessProbe"],
            serde_json::json!({"httpGet": {"path": "/", "port": 80, "scheme": "HTTP"}, "timeoutSeconds": 1,
                "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(main["lifecycle"]["preStop"]["httpGet"]["scheme"], "HTTP");
        assert_eq!(
            value["volumes"][0],
            serde_json::json!({"name": "scratch", "emptyDir": {}})
        );
        assert_eq!(value["volumes"][1]["configMap"]["defaultMode"], 420);
        assert_eq!(value["volumes"][2]["hostPath"]["type"], "");

        let again = {
            let mut twice = pod_spec.clone();
            apply_pod_spec_defaults(&mut twice, PodDefaultsOptions::default());
            twice
        };
        assert_eq!(again, pod_spec, "defaulting is idempotent");
    }

    #[test]
    fn host_network_ports_only_with_the_gate() {
        let yaml = "spec: {hostNetwork: true, containers: [{name: a, image: x, ports: [{containerPort: 8080}]}]}";
        let mut without = spec(yaml);
        apply_pod_spec_defaults(&mut without, PodDefaultsOptions::default());
        assert_eq!(
            without.containers[0].ports.as_ref().unwrap()[0].host_port,
            None
        );
        let mut with = spec(yaml);
        apply_pod_spec_defaults(
            &mut with,
            PodDefaultsOptions {
                host_network_host_ports: true,
            },
        );
        assert_eq!(
            with.containers[0].ports.as_ref().unwrap()[0].host_port,
            Some(8080)
        );
    }

    #[test]
    fn set_values_are_kept() {
        let mut pod_spec = spec(
            "spec: {restartPolicy: Never, containers: [{name: a, image: x, imagePullPolicy: Never, terminationMessagePolicy: FallbackToLogsOnError}]}",
        );
        apply_pod_spec_defaults(&mut pod_spec, PodDefaultsOptions::default());
        assert_eq!(pod_spec.restart_policy.as_deref(), Some("Never"));
        assert_eq!(
            pod_spec.containers[0].image_pull_policy.as_deref(),
            Some("Never")
        );
        assert_eq!(
            pod_spec.containers[0].termination_message_policy.as_deref(),
            Some("FallbackToLogsOnError")
        );
    }

    #[test]
    fn image_tags() {
        for (image, tag) in [
            ("nginx", "latest"),
            ("nginx:1.25", "1.25"),
            ("nginx:latest", "latest"),
            ("registry:5000/nginx", "latest"),
            ("registry:5000/nginx:v1", "v1"),
            (
                "nginx@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                "",
            ),
            (
                "nginx:1.25@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                "1.25",
            ),
            ("", ""),
        ] {
            assert_eq!(image_tag(image), tag, "{image}");
        }
    }

    #[test]
    fn claim_template_phase() {
        let mut claim = PersistentVolumeClaim::default();
        apply_volume_claim_template_defaults(&mut claim);
        assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Pending"));
    }
}
