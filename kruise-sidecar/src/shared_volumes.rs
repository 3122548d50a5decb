//! `shareVolumePolicy` and `shareVolumeDevicePolicy` (upstream `MergeVolumeMounts`, `MergeVolumeDevices`): a
//! sidecar with the policy `enabled` also gets every volume mount (or device) of the pod's containers that are not
//! sidecars themselves (no env `IS_INJECTED=true`), in pod order; for each `$(VAR)` in a shared mount's
//! `subPathExpr` the variable is copied from the same container when it has it.

use k8s_openapi::api::core::v1::{Container, EnvVar, Pod, VolumeDevice, VolumeMount};
use kruise_api::apps::v1beta1::{ShareVolumePolicy, ShareVolumePolicyType, SidecarContainer};
use kruise_api::keys::sidecarset as keys;

/// Whether the container carries `IS_INJECTED=true` (the first variable of that name decides).
#[must_use]
pub fn is_injected_container(container: &Container) -> bool {
    container
        .env
        .iter()
        .flatten()
        .find(|env| env.name == keys::IS_INJECTED_ENV)
        .is_some_and(|env| env.value.as_deref() == Some("true"))
}

fn enabled(policy: Option<&ShareVolumePolicy>) -> bool {
    policy.and_then(|policy| policy.type_.as_ref()) == Some(&ShareVolumePolicyType::Enabled)
}

fn app_containers(pod: &Pod) -> impl Iterator<Item = &Container> {
    pod.spec
        .iter()
        .flat_map(|spec| spec.containers.iter())
        .filter(|container| !is_injected_container(container))
}

/// The `$(VAR)` names of a `subPathExpr`, in order (upstream's regex `\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)`).
#[must_use]
pub fn sub_path_variables(expression: &str) -> Vec<&str> {
    let bytes = expression.as_bytes();
    let first = |b: u8| b.is_ascii_alphabetic() || matches!(b, b'-' | b'.' | b'_');
    let rest = |b: u8| first(b) || b.is_ascii_digit();
    let mut names = Vec::new();
    let mut index = 0;
    while let Some(offset) = expression.get(index..).and_then(|tail| tail.find("$(")) {
        let start = index + offset + 2;
        let mut end = start;
        if bytes.get(start).copied().is_some_and(first) {
            end += 1;
            while bytes.get(end).copied().is_some_and(rest) {
                end += 1;
            }
            if bytes.get(end) == Some(&b')') {
                names.extend(expression.get(start..end));
                index = end + 1;
                continue;
            }
        }
        index = index + offset + 1;
    }
    names
}

/// The mounts shared into `sidecar` and the `subPathExpr` variables they need (empty unless the policy is
/// `enabled`).
#[must_use]
pub fn shared_mounts_and_envs(
    sidecar: &SidecarContainer,
    pod: &Pod,
) -> (Vec<VolumeMount>, Vec<EnvVar>) {
    let (mounts, envs) = shared_mount_refs(sidecar, pod);
    (
        mounts.into_iter().cloned().collect(),
        envs.into_iter().cloned().collect(),
    )
}

/// [`shared_mounts_and_envs`], borrowed from the pod.
pub(crate) fn shared_mount_refs<'p>(
    sidecar: &SidecarContainer,
    pod: &'p Pod,
) -> (Vec<&'p VolumeMount>, Vec<&'p EnvVar>) {
    if !enabled(Some(&sidecar.share_volume_policy)) {
        return (Vec::new(), Vec::new());
    }
    let mut mounts = Vec::new();
    let mut envs = Vec::new();
    for container in app_containers(pod) {
        for mount in container.volume_mounts.iter().flatten() {
            mounts.push(mount);
            let expression = mount.sub_path_expr.as_deref().unwrap_or("");
            for variable in sub_path_variables(expression) {
                if let Some(env) = container
                    .env
                    .iter()
                    .flatten()
                    .find(|env| env.name == variable)
                {
                    envs.push(env);
                }
            }
        }
    }
    (mounts, envs)
}

/// The volume devices shared into `sidecar` (empty unless `shareVolumeDevicePolicy` is `enabled`).
#[must_use]
pub fn shared_devices(sidecar: &SidecarContainer, pod: &Pod) -> Vec<VolumeDevice> {
    shared_device_refs(sidecar, pod)
        .into_iter()
        .cloned()
        .collect()
}

/// [`shared_devices`], borrowed from the pod.
pub(crate) fn shared_device_refs<'p>(
    sidecar: &SidecarContainer,
    pod: &'p Pod,
) -> Vec<&'p VolumeDevice> {
    if !enabled(sidecar.share_volume_device_policy.as_ref()) {
        return Vec::new();
    }
    app_containers(pod)
        .flat_map(|container| container.volume_devices.iter().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_path_expression_variables() {
        assert_eq!(
            sub_path_variables("foo/$(ODD_NAME)/$(POD_NAME)"),
            ["ODD_NAME", "POD_NAME"]
        );
        assert_eq!(sub_path_variables("$(a.b-c)$(1X)$(X1)"), ["a.b-c", "X1"]);
        assert_eq!(sub_path_variables("$(unterminated"), Vec::<&str>::new());
        assert_eq!(sub_path_variables("$$(A)"), ["A"]);
        assert_eq!(sub_path_variables("$(A B)$(C)"), ["C"]);
        assert_eq!(sub_path_variables(""), Vec::<&str>::new());
    }
}
