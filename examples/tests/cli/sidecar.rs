//! The `kruise sidecar` binary: injection of the seed SidecarSet, UPDATE requests, hashes, bad input.

use crate::run::kruise;

fn fixture(name: &str) -> String {
    format!(
        "{}/../kruise-sidecar/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

const UPSTREAM_VECTOR: &str = "apiVersion: apps.kruise.io/v1beta1\nkind: SidecarSet\nmetadata: {name: v}\nspec:\n  containers: [{name: container1, image: test-image}]\n";

#[test]
fn inject_the_seed_sidecarset() {
    let set = fixture("sidecarset-log.yaml");
    let pod = fixture("pod-nginx.yaml");
    let (code, out, err) = kruise(
        &[
            "sidecar",
            "inject",
            "-f",
            &set,
            "--pod",
            &pod,
            "--now",
            "2024-05-01T10:00:00Z",
            "-o",
            "json",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let result: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        result["sidecarSets"],
        serde_json::json!(["test-sidecarset"])
    );
    let containers = &result["pod"]["spec"]["containers"];
    assert_eq!(containers[0]["name"], "sidecar1");
    assert_eq!(
        containers[0]["env"][0],
        serde_json::json!({"name": "IS_INJECTED", "value": "true"})
    );
    assert_eq!(containers[1]["name"], "app");
    assert_eq!(result["pod"]["spec"]["volumes"][0]["name"], "log-volume");
    let annotations = &result["pod"]["metadata"]["annotations"];
    assert_eq!(
        annotations["kruise.io/sidecarset-injected-list"],
        "test-sidecarset"
    );
    assert!(
        annotations["kruise.io/sidecarset-hash"]
            .as_str()
            .unwrap()
            .contains(r#""updateTimestamp":"2024-05-01T10:00:00Z""#)
    );
    let ops: Vec<&str> = result["patch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["op"].as_str().unwrap())
        .collect();
    assert!(!ops.is_empty());

    // YAML by default; the SidecarSet may come from standard input.
    let (code, out, err) = kruise(
        &[
            "sidecar",
            "inject",
            "-f",
            "-",
            "--pod",
            &pod,
            "--now",
            "2024-05-01T10:00:00Z",
        ],
        &std::fs::read_to_string(&set).unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    let pod: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
    assert_eq!(pod["spec"]["containers"][0]["name"], "sidecar1");
}

#[test]
fn update_requests_inject_nothing_and_namespace_labels_select() {
    let pod = fixture("pod-nginx.yaml");
    let dir = tempfile::tempdir().unwrap();
    let scoped = dir.path().join("scoped.yaml");
    std::fs::write(
        &scoped,
        "apiVersion: apps.kruise.io/v1beta1\nkind: SidecarSet\nmetadata: {name: scoped}\nspec:\n  selector: {matchLabels: {app: nginx}}\n  namespaceSelector: {matchLabels: {team: a}}\n  containers: [{name: s, image: s}]\n",
    )
    .unwrap();
    let scoped = scoped.to_string_lossy();
    let (code, out, _) = kruise(
        &[
            "sidecar",
            "inject",
            "-f",
            &scoped,
            "--pod",
            &pod,
            "--namespace-labels",
            "team=a",
            "-o",
            "json",
        ],
        "",
    );
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["sidecarSets"],
        serde_json::json!(["scoped"])
    );
    let (code, out, _) = kruise(
        &[
            "sidecar",
            "inject",
            "-f",
            &scoped,
            "--pod",
            &pod,
            "--namespace-labels",
            "team=b",
            "-o",
            "json",
        ],
        "",
    );
    assert_eq!(code, 0);
    let result: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result["patch"], serde_json::json!([]));

    let set = fixture("sidecarset-log.yaml");
    let (code, out, err) = kruise(
        &[
            "sidecar",
            "inject",
            "-f",
            &set,
            "--pod",
            &pod,
            "--old-pod",
            &pod,
            "-o",
            "json",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let result: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result["patch"], serde_json::json!([]));
    assert_eq!(
        result["sidecarSets"],
        serde_json::json!(["test-sidecarset"])
    );
}

#[test]
fn hash_matches_the_upstream_vector() {
    let (code, out, err) = kruise(
        &["sidecar", "hash", "-f", "-", "-o", "json"],
        UPSTREAM_VECTOR,
    );
    assert_eq!(code, 0, "{err}");
    let result: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        result["hash"],
        "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78"
    );
    assert_eq!(
        result["hashWithoutImage"],
        "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759"
    );
    let (code, out, _) = kruise(&["sidecar", "hash", "-f", "-"], UPSTREAM_VECTOR);
    assert_eq!(code, 0);
    assert!(out.starts_with("v w26c4x8fz245642f"), "{out}");
    let (code, defaulted, _) = kruise(
        &["sidecar", "hash", "-f", "-", "--apply-defaults"],
        UPSTREAM_VECTOR,
    );
    assert_eq!(code, 0);
    assert_ne!(defaulted, out, "defaults change the hash");
}

#[test]
fn bad_input_is_exit_code_2_with_one_line() {
    let pod = fixture("pod-nginx.yaml");
    let set = fixture("sidecarset-log.yaml");
    let cases: [(Vec<&str>, &str, &str); 6] = [
        (
            vec!["sidecar", "hash", "-f", "-"],
            "kind: Pod\napiVersion: v1\nmetadata: {name: x}\n",
            "is not SidecarSet",
        ),
        (
            vec!["sidecar", "hash", "-f", "-"],
            "apiVersion: apps.kruise.io/v2\nkind: SidecarSet\nmetadata: {name: x}\n",
            "apiVersion",
        ),
        (
            vec!["sidecar", "hash", "-f", "-"],
            "{not yaml",
            "-: document 0",
        ),
        (
            vec![
                "sidecar",
                "inject",
                "-f",
                &set,
                "--pod",
                &pod,
                "--now",
                "yesterday",
            ],
            "",
            "--now",
        ),
        (
            vec![
                "sidecar",
                "inject",
                "-f",
                &set,
                "--pod",
                &pod,
                "--feature-gates",
                "Nope=true",
            ],
            "",
            "unknown feature gate",
        ),
        (
            vec!["sidecar", "inject", "-f", &set, "--pod", &set],
            "",
            "is not Pod",
        ),
    ];
    for (args, stdin, expected) in cases {
        let (code, out, err) = kruise(&args, stdin);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(
            err.starts_with("error: ") && err.contains(expected),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let bad_selector = dir.path().join("bad.yaml");
    std::fs::write(
        &bad_selector,
        "apiVersion: apps.kruise.io/v1beta1\nkind: SidecarSet\nmetadata: {name: bad}\nspec:\n  selector: {matchExpressions: [{key: app, operator: Near}]}\n  containers: [{name: s, image: s}]\n",
    )
    .unwrap();
    let (code, _, err) = kruise(
        &[
            "sidecar",
            "inject",
            "-f",
            &bad_selector.to_string_lossy(),
            "--pod",
            &pod,
        ],
        "",
    );
    assert_eq!(code, 2);
    assert!(err.contains("SidecarSet bad: spec.selector"), "{err}");
}
