//! The parts of the manager's and the daemon's containers: environment from pod fields, ports, HTTP probes,
//! resources.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    ContainerPort, EnvVar, EnvVarSource, HTTPGetAction, ObjectFieldSelector, Probe,
    ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// An environment variable read from the pod's `field`.
#[must_use]
pub fn field_env(name: &str, field: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                api_version: None,
                field_path: field.to_owned(),
            }),
            ..EnvVarSource::default()
        }),
    }
}

/// A TCP container port.
#[must_use]
pub fn container_port(name: &str, port: i32) -> ContainerPort {
    ContainerPort {
        name: Some(name.to_owned()),
        container_port: port,
        protocol: Some("TCP".to_owned()),
        ..ContainerPort::default()
    }
}

/// An HTTP GET probe of `path` on `port`.
#[must_use]
pub fn http_probe(path: &str, port: IntOrString, period: i32, delay: Option<i32>) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_owned()),
            port,
            ..HTTPGetAction::default()
        }),
        initial_delay_seconds: delay,
        period_seconds: Some(period),
        ..Probe::default()
    }
}

/// Container resources from quantities.
#[must_use]
pub fn resources(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> ResourceRequirements {
    let map = |entries: &[(&str, &str)]| -> BTreeMap<String, Quantity> {
        entries
            .iter()
            .map(|&(name, value)| (name.to_owned(), Quantity(value.to_owned())))
            .collect()
    };
    ResourceRequirements {
        requests: Some(map(requests)),
        limits: Some(map(limits)),
        ..ResourceRequirements::default()
    }
}
