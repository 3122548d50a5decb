//! `networkpolicy.yaml`: who may reach kruise-manager.

use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyIngressRule, NetworkPolicyPeer, NetworkPolicyPort,
    NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::deployment::{MANAGER_APP, METRICS_PORT_NAME, WEBHOOK_PORT_NAME};
use super::document::Document;
use super::manager_rbac::MANAGER;
use super::object_meta::{app_labels, namespaced_meta};
use super::settings::InstallSettings;

/// The pod CIDR excluded from the webhook port (flannel's default; set your cluster's).
pub const POD_CIDR: &str = "10.244.0.0/16";

const COMMENT: &str = "\
Who may reach kruise-manager. The webhook port answers admission reviews with what it read from the cluster
(a ContainerRecreateRequest review returns the pod's UID, container IDs and node), so only the API server
should reach it. kube-apiserver usually runs on the control-plane nodes' network, not in a pod: its requests
come from node addresses. The webhook port is therefore open to addresses outside the pod network and closed
to every pod. SET `except` TO YOUR CLUSTER'S POD CIDR(S) (kubeadm: `--pod-network-cidr`; the value below is
flannel's default). Health probes and metrics (8080) stay open: kubelet probes from the node, and Prometheus
runs in a pod.";

fn port(name: &str) -> NetworkPolicyPort {
    NetworkPolicyPort {
        port: Some(IntOrString::String(name.to_owned())),
        protocol: Some("TCP".to_owned()),
        end_port: None,
    }
}

/// The NetworkPolicy.
///
/// # Errors
/// Rendering fails.
pub fn documents(settings: &InstallSettings) -> std::io::Result<Vec<Document>> {
    let policy = NetworkPolicy {
        metadata: namespaced_meta(MANAGER, &settings.namespace),
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(LabelSelector {
                match_labels: Some(app_labels(MANAGER_APP)),
                match_expressions: None,
            }),
            policy_types: Some(vec!["Ingress".to_owned()]),
            ingress: Some(vec![
                NetworkPolicyIngressRule {
                    ports: Some(vec![port(WEBHOOK_PORT_NAME)]),
                    from: Some(vec![NetworkPolicyPeer {
                        ip_block: Some(IPBlock {
                            cidr: "0.0.0.0/0".to_owned(),
                            except: Some(vec![POD_CIDR.to_owned()]),
                        }),
                        ..NetworkPolicyPeer::default()
                    }]),
                },
                NetworkPolicyIngressRule {
                    ports: Some(vec![port(METRICS_PORT_NAME)]),
                    from: None,
                },
            ]),
            egress: None,
        }),
    };
    Ok(vec![Document::new(COMMENT, &policy)?])
}
