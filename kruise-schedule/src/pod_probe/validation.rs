//! The rules of upstream's PodProbeMarker validating webhook (`pkg/webhook/podprobemarker/validating`,
//! `validatePodProbeMarkerSpec`), as Kubernetes field errors naming the field and the value. Unlike
//! upstream, which stops at the first broken rule of some kinds, every broken rule is reported.
//!
//! * `spec.selector` is a valid, non-empty label selector; on UPDATE it does not change;
//! * `spec.probes` is not empty; each probe has a non-empty `name` without `#` that is not a condition
//!   type Kubernetes or Kruise owns (`PodScheduled`, `Initialized`, `Ready`, `ContainersReady`,
//!   `KruisePodReady`, `InPlaceUpdateReady`) and is unique in the marker, and a `containerName`;
//! * its `probe` has exactly one handler among `exec` (a non-empty `command`), `httpGet` (a `path`, a
//!   valid port number or name, scheme `HTTP` or `HTTPS` — an empty scheme is read as `HTTP`) and
//!   `tcpSocket` (a valid port number or name); `initialDelaySeconds`, `timeoutSeconds`,
//!   `periodSeconds`, `successThreshold` and `failureThreshold` are not negative;
//! * a probe sets a `podConditionType`, a `markerPolicy`, or both; a `podConditionType` is a qualified
//!   name (as label keys) unique in the marker;
//! * each `markerPolicy` entry has state `Succeeded` or `Failed`, unique in the probe, and labels or
//!   annotations with valid keys (label values valid too).
//!
//! ```
//! use kruise_api::apps::v1alpha1::PodProbeMarker;
//! use kruise_schedule::pod_probe::validation::validate;
//!
//! let marker: PodProbeMarker = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "healthy", "namespace": "web"},
//!     "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": [{
//!         "name": "a#b", "containerName": "main", "podConditionType": "game.io/idle",
//!         "probe": {"exec": {"command": ["true"]}}}]}
//! })).unwrap();
//! let errors: Vec<String> = validate(&marker, None).iter().map(ToString::to_string).collect();
//! assert_eq!(errors, ["spec.probes[0].name: Invalid value: \"a#b\": must not contain '#'"]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1alpha1::{
    PodContainerProbe, PodProbeMarker, ProbeMarkerPolicy, ProbeState,
};
use kruise_api::label_selector;
use serde_json::Value;

use crate::validation::FieldError;

/// Condition types a probe may not be named after.
pub const RESERVED_CONDITION_TYPES: [&str; 6] = [
    "PodScheduled",
    "Initialized",
    "Ready",
    "ContainersReady",
    "KruisePodReady",
    "InPlaceUpdateReady",
];

/// Every broken rule of `marker` (and, for an UPDATE, against the stored `old`).
#[must_use]
pub fn validate(marker: &PodProbeMarker, old: Option<&PodProbeMarker>) -> Vec<FieldError> {
    let spec = &marker.spec;
    let mut errors = Vec::new();
    let selector_value = || serde_json::to_value(&spec.selector).unwrap_or_default();
    if label_selector::is_empty(&spec.selector) {
        errors.push(FieldError::invalid(
            "spec.selector",
            selector_value(),
            "empty selector is not valid for PodProbeMarker",
        ));
    } else if let Err(error) = label_selector::validate(&spec.selector) {
        errors.push(FieldError::invalid(
            "spec.selector",
            selector_value(),
            error.to_string(),
        ));
    }
    if let Some(old) = old
        && old.spec.selector != spec.selector
    {
        errors.push(FieldError::immutable("spec.selector", selector_value()));
    }
    if spec.probes.is_empty() {
        errors.push(FieldError::required(
            "spec.probes",
            "a PodProbeMarker needs at least one probe",
        ));
    }
    let mut names = BTreeSet::new();
    let mut condition_types = BTreeSet::new();
    for (index, probe) in spec.probes.iter().enumerate() {
        let path = format!("spec.probes[{index}]");
        errors.extend(probe_identity_errors(&path, probe, &mut names));
        errors.extend(handler_errors(&format!("{path}.probe"), &probe.probe));
        errors.extend(marking_errors(&path, probe, &mut condition_types));
    }
    errors
}

fn probe_identity_errors(
    path: &str,
    probe: &PodContainerProbe,
    names: &mut BTreeSet<String>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name_path = format!("{path}.name");
    if probe.name.is_empty() {
        errors.push(FieldError::required(name_path, "a probe needs a name"));
    } else if probe.name.contains('#') {
        errors.push(FieldError::invalid(
            name_path,
            probe.name.as_str(),
            "must not contain '#'",
        ));
    } else if RESERVED_CONDITION_TYPES.contains(&probe.name.as_str()) {
        errors.push(FieldError::invalid(
            name_path,
            probe.name.as_str(),
            "must not be a pod condition type of Kubernetes or Kruise",
        ));
    } else if !names.insert(probe.name.clone()) {
        errors.push(FieldError::duplicate(name_path, probe.name.as_str()));
    }
    if probe.container_name.is_empty() {
        errors.push(FieldError::required(
            format!("{path}.containerName"),
            "the container the probe runs in",
        ));
    }
    errors
}

fn handler_errors(path: &str, probe: &Probe) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut handlers = 0;
    if let Some(exec) = &probe.exec {
        handlers += 1;
        if exec.command.as_ref().is_none_or(Vec::is_empty) {
            errors.push(FieldError::required(format!("{path}.exec.command"), ""));
        }
    }
    if let Some(http) = &probe.http_get {
        handlers += 1;
        if handlers > 1 {
            errors.push(FieldError::forbidden(
                format!("{path}.httpGet"),
                "may not specify more than 1 handler type",
            ));
        } else {
            if http.path.as_ref().is_none_or(String::is_empty) {
                errors.push(FieldError::required(format!("{path}.httpGet.path"), ""));
            }
            errors.extend(port_errors(&format!("{path}.httpGet.port"), &http.port));
            let scheme = http.scheme.as_deref().unwrap_or_default();
            if !["", "HTTP", "HTTPS"].contains(&scheme) {
                errors.push(FieldError::not_supported(
                    format!("{path}.httpGet.scheme"),
                    scheme,
                    &["HTTP", "HTTPS"],
                ));
            }
        }
    }
    if let Some(tcp) = &probe.tcp_socket {
        handlers += 1;
        if handlers > 1 {
            errors.push(FieldError::forbidden(
                format!("{path}.tcpSocket"),
                "may not specify more than 1 handler type",
            ));
        } else {
            errors.extend(port_errors(&format!("{path}.tcpSocket.port"), &tcp.port));
        }
    }
    if handlers == 0 {
        errors.push(FieldError::required(
            path,
            "must specify a handler type (exec, httpGet or tcpSocket)",
        ));
    }
    let numbers = [
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ];
    for (field, value) in numbers {
        if let Some(value) = value.filter(|value| *value < 0) {
            errors.push(FieldError::invalid(
                format!("{path}.{field}"),
                value,
                "must be greater than or equal to 0",
            ));
        }
    }
    errors
}

/// A port number in 1..=65535, or an IANA service name (Kubernetes' `IsValidPortName`).
fn port_errors(path: &str, port: &IntOrString) -> Vec<FieldError> {
    match port {
        IntOrString::Int(number) if !(1..=65535).contains(number) => vec![FieldError::invalid(
            path,
            *number,
            "must be between 1 and 65535, inclusive",
        )],
        IntOrString::String(name) if !is_port_name(name) => vec![FieldError::invalid(
            path,
            name.as_str(),
            "must be at most 15 lowercase letters, digits and '-', with a letter, \
             no '-' at either end and no '--'",
        )],
        _ => Vec::new(),
    }
}

fn is_port_name(name: &str) -> bool {
    (1..=15).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
        && name.bytes().any(|byte| byte.is_ascii_lowercase())
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

fn marking_errors(
    path: &str,
    probe: &PodContainerProbe,
    condition_types: &mut BTreeSet<String>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let condition_type = &probe.pod_condition_type;
    if condition_type.is_empty() && probe.marker_policy.is_empty() {
        errors.push(FieldError::required(
            format!("{path}.podConditionType"),
            "podConditionType and markerPolicy cannot both be empty",
        ));
    }
    if !condition_type.is_empty() {
        let field = format!("{path}.podConditionType");
        if let Err(error) = label_selector::validate_key(condition_type) {
            errors.push(FieldError::invalid(
                field,
                condition_type.as_str(),
                error.to_string(),
            ));
        } else if !condition_types.insert(condition_type.clone()) {
            errors.push(FieldError::duplicate(field, condition_type.as_str()));
        }
    }
    let mut states = BTreeSet::new();
    for (index, policy) in probe.marker_policy.iter().enumerate() {
        errors.extend(policy_errors(
            &format!("{path}.markerPolicy[{index}]"),
            policy,
            &mut states,
        ));
    }
    errors
}

fn policy_errors(
    path: &str,
    policy: &ProbeMarkerPolicy,
    states: &mut BTreeSet<String>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let state = policy.state.as_str();
    if policy.state != ProbeState::Succeeded && policy.state != ProbeState::Failed {
        errors.push(FieldError::not_supported(
            format!("{path}.state"),
            state,
            &["Succeeded", "Failed"],
        ));
    } else if !states.insert(state.to_owned()) {
        errors.push(FieldError::duplicate(format!("{path}.state"), state));
    }
    if policy.labels.is_empty() && policy.annotations.is_empty() {
        errors.push(FieldError::required(
            path,
            "labels or annotations to mark the pod with",
        ));
    }
    errors.extend(key_errors(&format!("{path}.labels"), &policy.labels, true));
    errors.extend(key_errors(
        &format!("{path}.annotations"),
        &policy.annotations,
        false,
    ));
    errors
}

fn key_errors(path: &str, entries: &BTreeMap<String, String>, labels: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (key, value) in entries {
        if let Err(error) = label_selector::validate_key(key) {
            errors.push(FieldError::invalid(path, key.as_str(), error.to_string()));
        } else if labels && !is_label_value(value) {
            errors.push(FieldError::invalid(
                format!("{path}[{key}]"),
                Value::String(value.clone()),
                "a label value is at most 63 letters, digits, '-', '_' or '.', \
                 beginning and ending with a letter or digit",
            ));
        }
    }
    errors
}

fn is_label_value(value: &str) -> bool {
    let allowed = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.');
    value.is_empty()
        || (value.len() <= 63
            && value.bytes().all(allowed)
            && value
                .bytes()
                .next()
                .is_some_and(|byte| byte.is_ascii_alphanumeric())
            && value
                .bytes()
                .last()
                .is_some_and(|byte| byte.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn valid_probe() -> serde_json::Value {
        json!({"name": "idle", "containerName": "main", "podConditionType": "game.io/idle",
            "probe": {"exec": {"command": ["cat", "/tmp/idle"]}},
            "markerPolicy": [{"state": "Succeeded", "labels": {"idle": "true"}},
                {"state": "Failed", "annotations": {"busy": "true"}}]})
    }

    fn marker(selector: serde_json::Value, probes: serde_json::Value) -> PodProbeMarker {
        let mut value = json!({"metadata": {"name": "m", "namespace": "web"}, "spec": {}});
        value["spec"]["selector"] = selector;
        value["spec"]["probes"] = probes;
        serde_json::from_value(value).unwrap()
    }

    fn with(path: &str, value: serde_json::Value) -> serde_json::Value {
        let mut probe = valid_probe();
        let mut target = &mut probe;
        let parts: Vec<&str> = path.split('.').collect();
        for part in &parts[..parts.len() - 1] {
            target = &mut target[*part];
        }
        target[parts[parts.len() - 1]] = value;
        probe
    }

    fn errors_of(marker: &PodProbeMarker) -> Vec<String> {
        validate(marker, None)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Each rule: a passing row (no error) and a failing row (the error, starting with its field).
    #[test]
    fn rules_table() {
        let selector = json!({"matchLabels": {"app": "web"}});
        let rows: Vec<(&str, serde_json::Value, serde_json::Value, Option<&str>)> = vec![
            ("valid", selector.clone(), json!([valid_probe()]), None),
            (
                "empty selector",
                json!({}),
                json!([valid_probe()]),
                Some("spec.selector: Invalid value: {}: empty selector"),
            ),
            (
                "bad selector",
                json!({"matchLabels": {"-bad": "x"}}),
                json!([valid_probe()]),
                Some("spec.selector: Invalid value"),
            ),
            (
                "no probes",
                selector.clone(),
                json!([]),
                Some("spec.probes: Required value"),
            ),
            (
                "empty name",
                selector.clone(),
                json!([with("name", json!(""))]),
                Some("spec.probes[0].name: Required value"),
            ),
            (
                "name with #",
                selector.clone(),
                json!([with("name", json!("a#b"))]),
                Some("spec.probes[0].name: Invalid value: \"a#b\""),
            ),
            (
                "reserved name",
                selector.clone(),
                json!([with("name", json!("Ready"))]),
                Some("spec.probes[0].name: Invalid value: \"Ready\""),
            ),
            (
                "duplicate name",
                selector.clone(),
                json!([
                    valid_probe(),
                    with("podConditionType", json!("game.io/other"))
                ]),
                Some("spec.probes[1].name: Duplicate value: \"idle\""),
            ),
            (
                "no container",
                selector.clone(),
                json!([with("containerName", json!(""))]),
                Some("spec.probes[0].containerName: Required value"),
            ),
            (
                "no handler",
                selector.clone(),
                json!([with("probe", json!({}))]),
                Some("spec.probes[0].probe: Required value"),
            ),
            (
                "two handlers",
                selector.clone(),
                json!([with(
                    "probe",
                    json!({"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}})
                )]),
                Some("spec.probes[0].probe.tcpSocket: Forbidden"),
            ),
            (
                "empty command",
                selector.clone(),
                json!([with("probe.exec.command", json!([]))]),
                Some("spec.probes[0].probe.exec.command: Required value"),
            ),
            (
                "tcp by name",
                selector.clone(),
                json!([with("probe", json!({"tcpSocket": {"port": "http"}}))]),
                None,
            ),
            (
                "tcp port 0",
                selector.clone(),
                json!([with("probe", json!({"tcpSocket": {"port": 0}}))]),
                Some("spec.probes[0].probe.tcpSocket.port: Invalid value: 0"),
            ),
            (
                "bad port name",
                selector.clone(),
                json!([with("probe", json!({"tcpSocket": {"port": "Http--"}}))]),
                Some("spec.probes[0].probe.tcpSocket.port: Invalid value: \"Http--\""),
            ),
            (
                "http without scheme",
                selector.clone(),
                json!([with("probe", json!({"httpGet": {"path": "/", "port": 80}}))]),
                None,
            ),
            (
                "http without path",
                selector.clone(),
                json!([with(
                    "probe",
                    json!({"httpGet": {"port": 80, "scheme": "HTTP"}})
                )]),
                Some("spec.probes[0].probe.httpGet.path: Required value"),
            ),
            (
                "http bad scheme",
                selector.clone(),
                json!([with(
                    "probe",
                    json!({"httpGet": {"path": "/", "port": 80, "scheme": "FTP"}})
                )]),
                Some("spec.probes[0].probe.httpGet.scheme: Unsupported value: \"FTP\""),
            ),
            (
                "negative period",
                selector.clone(),
                json!([with("probe.periodSeconds", json!(-1))]),
                Some("spec.probes[0].probe.periodSeconds: Invalid value: -1"),
            ),
            (
                "zero period",
                selector.clone(),
                json!([with("probe.periodSeconds", json!(0))]),
                None,
            ),
            (
                "no condition and no policy",
                selector.clone(),
                json!([with("markerPolicy", json!([])).as_object().map(|probe| {
                    let mut probe = probe.clone();
                    probe.remove("podConditionType");
                    probe
                })]),
                Some("spec.probes[0].podConditionType: Required value"),
            ),
            (
                "policy only",
                selector.clone(),
                json!([with("podConditionType", json!(""))]),
                None,
            ),
            (
                "bad condition type",
                selector.clone(),
                json!([with("podConditionType", json!("a/b/c"))]),
                Some("spec.probes[0].podConditionType: Invalid value: \"a/b/c\""),
            ),
            (
                "duplicate condition type",
                selector.clone(),
                json!([valid_probe(), with("name", json!("other"))]),
                Some("spec.probes[1].podConditionType: Duplicate value: \"game.io/idle\""),
            ),
            (
                "unknown policy state",
                selector.clone(),
                json!([with(
                    "markerPolicy",
                    json!([{"state": "Unknown", "labels": {"a": "b"}}])
                )]),
                Some("spec.probes[0].markerPolicy[0].state: Unsupported value: \"Unknown\""),
            ),
            (
                "duplicate policy state",
                selector.clone(),
                json!([with(
                    "markerPolicy",
                    json!([{"state": "Failed", "labels": {"a": "b"}}, {"state": "Failed", "labels": {"c": "d"}}])
                )]),
                Some("spec.probes[0].markerPolicy[1].state: Duplicate value: \"Failed\""),
            ),
            (
                "empty policy",
                selector.clone(),
                json!([with("markerPolicy", json!([{"state": "Failed"}]))]),
                Some("spec.probes[0].markerPolicy[0]: Required value"),
            ),
            (
                "bad label key",
                selector.clone(),
                json!([with(
                    "markerPolicy",
                    json!([{"state": "Failed", "labels": {"bad key": "b"}}])
                )]),
                Some("spec.probes[0].markerPolicy[0].labels: Invalid value: \"bad key\""),
            ),
            (
                "bad label value",
                selector.clone(),
                json!([with(
                    "markerPolicy",
                    json!([{"state": "Failed", "labels": {"k": "-x"}}])
                )]),
                Some("spec.probes[0].markerPolicy[0].labels[k]: Invalid value: \"-x\""),
            ),
            (
                "free annotation value",
                selector,
                json!([with(
                    "markerPolicy",
                    json!([{"state": "Failed", "annotations": {"k": "any thing"}}])
                )]),
                None,
            ),
        ];
        for (case, selector, probes, expected) in rows {
            let errors = errors_of(&marker(selector, probes));
            match expected {
                None => assert!(errors.is_empty(), "{case}: {errors:?}"),
                Some(prefix) => assert!(
                    errors.len() == 1 && errors[0].starts_with(prefix),
                    "{case}: {errors:?}"
                ),
            }
        }
    }

    /// The markers of upstream's user guide and release notes (kruise-api's fixtures) are valid.
    #[test]
    fn the_documented_markers_pass() {
        let documents = [
            include_str!("../../../kruise-api/tests/fixtures/podprobemarker-guide.yaml"),
            include_str!("../../../kruise-api/tests/fixtures/podprobemarker-seeds.yaml"),
        ];
        for document in documents {
            let marker: PodProbeMarker = serde_saphyr::from_str(document).unwrap();
            assert!(!marker.spec.probes.is_empty());
            assert_eq!(validate(&marker, None), Vec::new());
        }
    }

    #[test]
    fn the_selector_is_immutable() {
        let old = marker(
            json!({"matchLabels": {"app": "web"}}),
            json!([valid_probe()]),
        );
        let same = old.clone();
        assert!(validate(&same, Some(&old)).is_empty());
        let changed = marker(
            json!({"matchLabels": {"app": "db"}}),
            json!([valid_probe()]),
        );
        let errors: Vec<String> = validate(&changed, Some(&old))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errors,
            [
                "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"db\"}}: field is immutable"
            ]
        );
    }
}
