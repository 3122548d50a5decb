//! The NodePodProbe spec side of upstream's PodProbeMarker and NodePodProbe controllers:
//!
//! * [`is_probed`] / [`matching_pods`]: a marker probes the pods of its namespace that its selector
//!   matches and that are active (not terminating, not `Succeeded`/`Failed`), initialized (condition
//!   `Initialized` is `True`) and bound to a node (upstream's `getMatchingPods`; an IP is not required,
//!   it is filled in later, as upstream does);
//! * [`merge_marker`]: a marker's probes merged into a node's spec (upstream's `updateNodePodProbes`):
//!   a pod already listed (same name, namespace and UID) keeps its place and gets its IP if it had none;
//!   each probe replaces the one of the same `<marker>#<probe>` name in place or is appended; pods not
//!   yet listed are appended with all the marker's probes. A named `tcpSocket`/`httpGet` port becomes the
//!   container's port number; a probe whose port cannot be resolved is left out;
//! * [`remove_marker`]: the marker's probes taken out of the pods of its namespace, pods left without
//!   probes dropped (upstream's `removePodProbeFromNodePodProbe`, run when the marker is deleted);
//! * [`retain_live_pods`]: the pods that no longer exist, are inactive or have another UID dropped
//!   (upstream's `syncPodFromNodePodProbe`).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_api::apps::v1alpha1::{NodePodProbeSpec, PodProbeMarker};
//! use kruise_schedule::pod_probe::node_spec::{merge_marker, remove_marker};
//!
//! let marker: PodProbeMarker = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "healthy", "namespace": "web"},
//!     "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": [{
//!         "name": "idle", "containerName": "main", "podConditionType": "game.io/idle",
//!         "probe": {"exec": {"command": ["cat", "/tmp/idle"]}}}]}
//! })).unwrap();
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-0", "namespace": "web", "uid": "u0", "labels": {"app": "web"}},
//!     "spec": {"nodeName": "node-a", "containers": [{"name": "main"}]},
//!     "status": {"podIP": "10.0.0.5"}
//! })).unwrap();
//! let spec = merge_marker(&NodePodProbeSpec::default(), &marker, &[&pod]);
//! assert_eq!(spec.pod_probes[0].ip, "10.0.0.5");
//! assert_eq!(spec.pod_probes[0].probes[0].name, "healthy#idle");
//! assert!(remove_marker(&spec, "web", "healthy").pod_probes.is_empty());
//! ```

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1alpha1::{
    ContainerProbe, NodePodProbeSpec, PodContainerProbe, PodProbe, PodProbeMarker,
};
use kruise_api::label_selector;

use super::probe_name;

/// Whether a marker would probe `pod` (its selector aside): active, initialized and on a node.
#[must_use]
pub fn is_probed(pod: &Pod) -> bool {
    let initialized = kruise_api::pod::condition(pod, "Initialized")
        .is_some_and(|condition| condition.status == "True");
    kruise_api::pod::is_active(pod) && initialized && !node_name(pod).is_empty()
}

/// The node `pod` is bound to (`""` when none).
#[must_use]
pub fn node_name(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.node_name.as_deref())
        .unwrap_or_default()
}

/// The pods of `pods` the marker probes: in its namespace, matched by its selector, [`is_probed`]. An
/// invalid selector matches nothing.
#[must_use]
pub fn matching_pods<'a>(marker: &PodProbeMarker, pods: &[&'a Pod]) -> Vec<&'a Pod> {
    let namespace = marker.metadata.namespace.as_deref().unwrap_or_default();
    pods.iter()
        .copied()
        .filter(|pod| pod.metadata.namespace.as_deref().unwrap_or_default() == namespace)
        .filter(|pod| {
            let labels = kruise_api::pod::labels(pod);
            label_selector::matches(&marker.spec.selector, labels).unwrap_or(false)
        })
        .filter(|pod| is_probed(pod))
        .collect()
}

/// `spec` with the probes of `marker` for `pods` (all on the node of `spec`) merged in.
#[must_use]
pub fn merge_marker(
    spec: &NodePodProbeSpec,
    marker: &PodProbeMarker,
    pods: &[&Pod],
) -> NodePodProbeSpec {
    let marker_name = marker.metadata.name.as_deref().unwrap_or_default();
    let mut merged = spec.clone();
    for pod in pods {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let uid = pod.metadata.uid.as_deref().unwrap_or_default();
        let ip = pod
            .status
            .as_ref()
            .and_then(|status| status.pod_ip.as_deref())
            .unwrap_or_default();
        let probes = marker
            .spec
            .probes
            .iter()
            .filter_map(|probe| resolved_probe(marker_name, probe, pod));
        let listed = merged.pod_probes.iter_mut().find(|listed| {
            listed.name == name && listed.namespace == namespace && listed.uid == uid
        });
        match listed {
            Some(listed) => {
                if listed.ip.is_empty() {
                    ip.clone_into(&mut listed.ip);
                }
                for probe in probes {
                    match listed.probes.iter_mut().find(|old| old.name == probe.name) {
                        Some(old) => *old = probe,
                        None => listed.probes.push(probe),
                    }
                }
            }
            None => merged.pod_probes.push(PodProbe {
                name: name.to_owned(),
                namespace: namespace.to_owned(),
                uid: uid.to_owned(),
                ip: ip.to_owned(),
                probes: probes.collect(),
            }),
        }
    }
    merged
}

/// The NodePodProbe form of one marker probe for `pod`, with a named port resolved to the container's
/// number; `None` when the port cannot be resolved.
fn resolved_probe(marker: &str, probe: &PodContainerProbe, pod: &Pod) -> Option<ContainerProbe> {
    let mut handler = probe.probe.clone();
    let container = pod.spec.as_ref().and_then(|spec| {
        spec.containers
            .iter()
            .find(|container| container.name == probe.container_name)
    });
    if let Some(tcp) = handler.tcp_socket.as_mut() {
        tcp.port = IntOrString::Int(resolve_port(&tcp.port, container)?);
    }
    if let Some(http) = handler.http_get.as_mut() {
        http.port = IntOrString::Int(resolve_port(&http.port, container)?);
    }
    Some(ContainerProbe {
        name: probe_name(marker, &probe.name),
        container_name: probe.container_name.clone(),
        probe: handler,
    })
}

/// A number as is; a name looked up in the container's ports, else read as a number (Kubernetes'
/// `ExtractPort`); `None` without the container, or when the result is not in 1..=65535.
fn resolve_port(port: &IntOrString, container: Option<&Container>) -> Option<i32> {
    match port {
        IntOrString::Int(number) => Some(*number),
        IntOrString::String(name) => {
            let container = container?;
            let named = container
                .ports
                .iter()
                .flatten()
                .find(|port| port.name.as_deref() == Some(name.as_str()))
                .map(|port| port.container_port);
            let number = named.or_else(|| name.parse().ok())?;
            (1..=65535).contains(&number).then_some(number)
        }
    }
}

/// `spec` without the probes of marker `marker` of `namespace` (pods left without probes dropped).
#[must_use]
pub fn remove_marker(spec: &NodePodProbeSpec, namespace: &str, marker: &str) -> NodePodProbeSpec {
    let prefix = probe_name(marker, "");
    let pod_probes = spec
        .pod_probes
        .iter()
        .filter_map(|pod| {
            if pod.namespace != namespace {
                return Some(pod.clone());
            }
            let probes: Vec<ContainerProbe> = pod
                .probes
                .iter()
                .filter(|probe| !probe.name.starts_with(&prefix))
                .cloned()
                .collect();
            (!probes.is_empty()).then(|| PodProbe {
                probes,
                ..pod.clone()
            })
        })
        .collect();
    NodePodProbeSpec { pod_probes }
}

/// `spec` with only the pods for which `live` holds (the caller checks that the pod exists with the
/// listed UID and is active).
#[must_use]
pub fn retain_live_pods(
    spec: &NodePodProbeSpec,
    mut live: impl FnMut(&PodProbe) -> bool,
) -> NodePodProbeSpec {
    NodePodProbeSpec {
        pod_probes: spec
            .pod_probes
            .iter()
            .filter(|pod| live(pod))
            .cloned()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn marker(name: &str, probes: serde_json::Value) -> PodProbeMarker {
        let mut value = json!({
            "metadata": {"name": name, "namespace": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}}
        });
        value["spec"]["probes"] = probes;
        serde_json::from_value(value).unwrap()
    }

    fn exec_probe(name: &str) -> serde_json::Value {
        json!({"name": name, "containerName": "main", "podConditionType": format!("x.io/{name}"),
            "probe": {"exec": {"command": ["true"]}}})
    }

    fn pod(name: &str, extra: serde_json::Value) -> Pod {
        let mut value = json!({
            "metadata": {"name": name, "namespace": "web", "uid": format!("uid-{name}"),
                "labels": {"app": "web"}},
            "spec": {"nodeName": "node-a", "containers": [{"name": "main",
                "ports": [{"name": "http", "containerPort": 8080}]}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1",
                "conditions": [{"type": "Initialized", "status": "True"}]}
        });
        merge(&mut value, extra);
        serde_json::from_value(value).unwrap()
    }

    fn merge(target: &mut serde_json::Value, extra: serde_json::Value) {
        match (target, extra) {
            (serde_json::Value::Object(target), serde_json::Value::Object(extra)) => {
                for (key, value) in extra {
                    merge(target.entry(key).or_insert(serde_json::Value::Null), value);
                }
            }
            (target, extra) => *target = extra,
        }
    }

    #[test]
    fn matching_pods_table() {
        let probes = json!([exec_probe("idle")]);
        let marker = marker("m", probes);
        let rows: [(&str, serde_json::Value, bool); 7] = [
            ("running, initialized, on a node", json!({}), true),
            (
                "other labels",
                json!({"metadata": {"labels": {"app": "db"}}}),
                false,
            ),
            (
                "other namespace",
                json!({"metadata": {"namespace": "db"}}),
                false,
            ),
            ("no node", json!({"spec": {"nodeName": null}}), false),
            (
                "not initialized",
                json!({"status": {"conditions": [{"type": "Initialized", "status": "False"}]}}),
                false,
            ),
            (
                "succeeded",
                json!({"status": {"phase": "Succeeded"}}),
                false,
            ),
            (
                "terminating",
                json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}),
                false,
            ),
        ];
        for (case, extra, expected) in rows {
            let pod = pod("p", extra);
            assert_eq!(
                matching_pods(&marker, &[&pod]).len() == 1,
                expected,
                "{case}"
            );
        }
    }

    #[test]
    fn merge_appends_new_pods_and_replaces_probes_in_place() {
        let first = marker("m", json!([exec_probe("a"), exec_probe("b")]));
        let pod_one = pod("one", json!({"status": {"podIP": null}}));
        let spec = merge_marker(&NodePodProbeSpec::default(), &first, &[&pod_one]);
        let names: Vec<&str> = spec.pod_probes[0]
            .probes
            .iter()
            .map(|probe| probe.name.as_str())
            .collect();
        assert_eq!(names, ["m#a", "m#b"]);
        assert_eq!(spec.pod_probes[0].ip, "");
        // The same pod again, now with an IP, a changed probe `b` and a second marker.
        let mut changed = exec_probe("b");
        changed["probe"]["exec"]["command"] = json!(["false"]);
        let second = marker("m", json!([changed]));
        let pod_one = pod("one", json!({}));
        let spec = merge_marker(&spec, &second, &[&pod_one]);
        assert_eq!(spec.pod_probes.len(), 1);
        assert_eq!(spec.pod_probes[0].ip, "10.0.0.1");
        let commands: Vec<_> = spec.pod_probes[0]
            .probes
            .iter()
            .map(|probe| {
                probe
                    .probe
                    .exec
                    .as_ref()
                    .and_then(|exec| exec.command.clone())
            })
            .collect();
        assert_eq!(
            commands,
            [
                Some(vec!["true".to_owned()]),
                Some(vec!["false".to_owned()])
            ]
        );
        let other = marker("n", json!([exec_probe("c")]));
        let pod_two = pod("two", json!({}));
        let spec = merge_marker(&spec, &other, &[&pod_one, &pod_two]);
        let layout: Vec<(&str, Vec<&str>)> = spec
            .pod_probes
            .iter()
            .map(|pod| {
                (
                    pod.name.as_str(),
                    pod.probes.iter().map(|probe| probe.name.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            layout,
            [("one", vec!["m#a", "m#b", "n#c"]), ("two", vec!["n#c"])]
        );
    }

    #[test]
    fn a_pod_with_a_new_uid_is_a_new_entry() {
        let marker = marker("m", json!([exec_probe("a")]));
        let old = pod("one", json!({}));
        let spec = merge_marker(&NodePodProbeSpec::default(), &marker, &[&old]);
        let new = pod("one", json!({"metadata": {"uid": "uid-new"}}));
        let spec = merge_marker(&spec, &marker, &[&new]);
        assert_eq!(spec.pod_probes.len(), 2);
    }

    #[test]
    fn named_ports_resolve_or_leave_the_probe_out() {
        let rows = [
            (
                "a named port",
                json!({"tcpSocket": {"port": "http"}}),
                Some(8080),
            ),
            ("a number", json!({"tcpSocket": {"port": 9090}}), Some(9090)),
            (
                "a number as text",
                json!({"httpGet": {"port": "81", "path": "/"}}),
                Some(81),
            ),
            (
                "an unknown name",
                json!({"httpGet": {"port": "grpc", "path": "/"}}),
                None,
            ),
        ];
        for (case, handler, expected) in rows {
            let marker = marker(
                "m",
                json!([{"name": "p", "containerName": "main", "podConditionType": "x.io/p",
                    "probe": handler}]),
            );
            let pod = pod("one", json!({}));
            let spec = merge_marker(&NodePodProbeSpec::default(), &marker, &[&pod]);
            let port = spec.pod_probes[0].probes.first().map(|probe| {
                let handler = &probe.probe;
                let port = handler
                    .tcp_socket
                    .as_ref()
                    .map(|tcp| tcp.port.clone())
                    .or_else(|| handler.http_get.as_ref().map(|http| http.port.clone()));
                match port {
                    Some(IntOrString::Int(number)) => number,
                    other => panic!("{case}: port {other:?}"),
                }
            });
            assert_eq!(port, expected, "{case}");
        }
    }

    #[test]
    fn remove_marker_keeps_other_markers_and_namespaces() {
        let spec: NodePodProbeSpec = serde_json::from_value(json!({"podProbes": [
            {"name": "one", "namespace": "web", "uid": "1", "IP": "",
                "probes": [{"name": "m#a", "containerName": "main", "probe": {}},
                    {"name": "mm#a", "containerName": "main", "probe": {}}]},
            {"name": "two", "namespace": "web", "uid": "2", "IP": "",
                "probes": [{"name": "m#b", "containerName": "main", "probe": {}}]},
            {"name": "three", "namespace": "db", "uid": "3", "IP": "",
                "probes": [{"name": "m#a", "containerName": "main", "probe": {}}]}
        ]}))
        .unwrap();
        let removed = remove_marker(&spec, "web", "m");
        let layout: Vec<(&str, Vec<&str>)> = removed
            .pod_probes
            .iter()
            .map(|pod| {
                (
                    pod.name.as_str(),
                    pod.probes.iter().map(|probe| probe.name.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(layout, [("one", vec!["mm#a"]), ("three", vec!["m#a"])]);
        let pruned = retain_live_pods(&spec, |pod| pod.uid != "2");
        assert_eq!(pruned.pod_probes.len(), 2);
    }
}
