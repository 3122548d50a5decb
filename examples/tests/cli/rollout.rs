//! The `kruise rollout plan` binary: text and JSON output, v1alpha1 and v1beta1 CloneSets, revisions from
//! the status or the flags, feature gates, exit codes and one-line errors.

use std::path::Path;

use serde_json::Value;

use crate::run::kruise;

const BETA: &str = "apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: web, namespace: demo}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: 'nginx:1.25'}]}
  updateStrategy:
    rollingUpdate: {maxUnavailable: 2, partition: 1}
status: {currentRevision: web-old, updateRevision: web-new}
";

const ALPHA: &str = "apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web, namespace: demo}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: 'nginx:1.25'}]}
  updateStrategy: {type: ReCreate, maxUnavailable: 2, partition: 1}
status: {currentRevision: web-old, updateRevision: web-new}
";

fn pod(name: &str, revision: &str, ready: bool) -> String {
    format!(
        "- apiVersion: v1
  kind: Pod
  metadata:
    name: {name}
    namespace: demo
    labels: {{app: web, controller-revision-hash: {revision}, pod-template-hash: {revision}, apps.kruise.io/cloneset-instance-id: {name}}}
  spec: {{nodeName: n1, containers: [{{name: main, image: nginx}}]}}
  status:
    phase: Running
    conditions: [{{type: Ready, status: '{}'}}]
",
        if ready { "True" } else { "False" }
    )
}

fn pods(list: &[(&str, &str, bool)]) -> String {
    let mut text = "apiVersion: v1\nkind: List\nitems:\n".to_owned();
    for (name, revision, ready) in list {
        text.push_str(&pod(name, revision, *ready));
    }
    text
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

const NOW: &str = "2024-05-01T10:00:00Z";

#[test]
fn plan_json_for_both_api_versions() {
    let dir = tempfile::tempdir().unwrap();
    let pods = write(
        dir.path(),
        "pods.yaml",
        &pods(&[
            ("web-a", "web-old", true),
            ("web-b", "web-old", true),
            ("web-c", "web-old", false),
            ("web-d", "web-old", true),
            ("web-e", "web-old", true),
        ]),
    );
    let mut outputs = Vec::new();
    for cloneset in [BETA, ALPHA] {
        let cs = write(dir.path(), "cs.yaml", cloneset);
        let (code, out, err) = kruise(
            &[
                "rollout", "plan", "-f", &cs, "--pods", &pods, "--now", NOW, "-o", "json",
            ],
            "",
        );
        assert_eq!(code, 0, "{err}");
        let plan: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(plan["cloneset"], "demo/web");
        assert_eq!(plan["step"], "update");
        // All ten fields, camelCase: 4 to update (partition 1), budget 2.
        let diff = plan["diff"].as_object().unwrap();
        assert_eq!(diff.len(), 10);
        assert_eq!(diff["updateNum"], 4);
        assert_eq!(diff["updateMaxUnavailable"], 2);
        assert_eq!(diff["scaleUpNum"], 0);
        // The not-ready pod first (free), then one ready pod within the budget of 2.
        let actions = plan["actions"].as_array().unwrap();
        let chosen: Vec<(&str, &str)> = actions
            .iter()
            .map(|a| (a["kind"].as_str().unwrap(), a["pod"].as_str().unwrap()))
            .collect();
        assert_eq!(
            chosen,
            [
                ("markSpecifiedDelete", "web-c"),
                ("markSpecifiedDelete", "web-a")
            ]
        );
        assert!(
            actions[0]["reason"].as_str().unwrap().contains("recreate"),
            "{}",
            actions[0]["reason"]
        );
        assert_eq!(plan["status"]["expectedUpdatedReplicas"], 4);
        assert_eq!(plan["status"]["readyReplicas"], 4);
        outputs.push(plan);
    }
    assert_eq!(outputs[0], outputs[1], "v1alpha1 converts to the same plan");
}

#[test]
fn plan_text_explains_scale_up_from_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let pods = write(
        dir.path(),
        "pods.yaml",
        &pods(&[("web-a", "web-new", true)]),
    );
    let cs = BETA.replace("replicas: 5", "replicas: 4");
    let (code, out, err) = kruise(
        &["rollout", "plan", "-f", "-", "--pods", &pods, "--now", NOW],
        &cs,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("CloneSet demo/web: step scale\n"), "{out}");
    assert!(out.contains("diff: scaleUpNum=3"), "{out}");
    // Partition 1 with no old pod: the first creation is at the current revision, which has no data here.
    assert!(out.contains("stopped:") && out.contains("web-old"), "{out}");
    // Revision flags override the status: both web-new, so all three are created at web-new.
    let (code, out, err) = kruise(
        &[
            "rollout",
            "plan",
            "-f",
            "-",
            "--pods",
            &pods,
            "--now",
            NOW,
            "--current-revision",
            "web-new",
            "--update-revision",
            "web-new",
        ],
        &cs,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("createPod").count(), 3, "{out}");
    // Partition 1: one pod "at the current revision" (the same revision here), in the first batch.
    assert!(
        out.contains("(batch 0): scale-up at the current revision"),
        "{out}"
    );
    assert_eq!(
        out.matches("scale-up at the update revision").count(),
        2,
        "{out}"
    );
}

#[test]
fn feature_gates_and_preparing_delete_flag() {
    let dir = tempfile::tempdir().unwrap();
    // Partition 4 of 5 while 4 pods are new: a rollback only with CloneSetPartitionRollback.
    let cs = write(
        dir.path(),
        "cs.yaml",
        &BETA.replace("partition: 1", "partition: 4"),
    );
    let pods = write(
        dir.path(),
        "pods.yaml",
        &pods(&[
            ("web-a", "web-new", true),
            ("web-b", "web-new", true),
            ("web-c", "web-new", true),
            ("web-d", "web-new", true),
            ("web-e", "web-old", true),
        ]),
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "rollout", "plan", "-f", &cs, "--pods", &pods, "--now", NOW, "-o", "json",
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = kruise(&args, "");
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    assert_eq!(run(&[])["diff"]["updateNum"], 0);
    let rollback = run(&["--feature-gates", "CloneSetPartitionRollback=true"]);
    assert_eq!(rollback["diff"]["updateNum"], -3);
    assert!(
        rollback["actions"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("roll back")
    );

    // --exclude-preparing-delete: a PreparingDelete pod no longer counts, so one pod is created.
    let list = pods_with_state("web-e", "PreparingDelete");
    let pods2 = write(dir.path(), "pods2.yaml", &list);
    let base = |extra: &[&str]| {
        let mut args = vec![
            "rollout", "plan", "-f", &cs, "--pods", &pods2, "--now", NOW, "-o", "json",
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = kruise(&args, "");
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    assert_eq!(base(&[])["diff"]["scaleUpNum"], 0);
    assert_eq!(
        base(&["--exclude-preparing-delete"])["diff"]["scaleUpNum"],
        1
    );
}

fn pods_with_state(name: &str, state: &str) -> String {
    let list = pods(&[
        ("web-a", "web-new", true),
        ("web-b", "web-new", true),
        ("web-c", "web-new", true),
        ("web-d", "web-new", true),
        ("web-e", "web-old", true),
    ]);
    list.replace(
        &format!("apps.kruise.io/cloneset-instance-id: {name}}}"),
        &format!(
            "apps.kruise.io/cloneset-instance-id: {name}, lifecycle.apps.kruise.io/state: {state}}}"
        ),
    )
}

#[test]
fn bad_input_is_a_one_line_error_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let pod_file = write(
        dir.path(),
        "pods.yaml",
        &pods(&[("web-a", "web-new", true)]),
    );
    let cases: Vec<(String, Vec<&str>, &str)> = vec![
        (
            BETA.replace("replicas: 5", "replicas: many"),
            vec![],
            "spec.replicas",
        ),
        (
            BETA.replace("apps.kruise.io/v1beta1", "apps/v1"),
            vec![],
            "apiVersion",
        ),
        (
            BETA.replace("kind: CloneSet", "kind: Deployment"),
            vec![],
            "kind: expected CloneSet, found \"Deployment\"",
        ),
        (
            BETA.to_owned(),
            vec!["--feature-gates", "Nope=true"],
            "--feature-gates",
        ),
        (
            BETA.to_owned(),
            vec!["--feature-gates", "CloneSetPartitionRollback=maybe"],
            "CloneSetPartitionRollback=maybe",
        ),
        (
            BETA.to_owned(),
            vec!["--now", "yesterday"],
            "--now \"yesterday\"",
        ),
    ];
    for (cloneset, extra, expected) in cases {
        let cs = write(dir.path(), "bad.yaml", &cloneset);
        let mut args = vec!["rollout", "plan", "-f", &cs, "--pods", &pod_file];
        args.extend(extra);
        let (code, out, err) = kruise(&args, "");
        assert_eq!(code, 2, "{expected}: {out}{err}");
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error: ") && err.contains(expected),
            "{expected}: {err}"
        );
        if expected.starts_with("spec.") || expected.starts_with("apiVersion") {
            assert!(err.contains("bad.yaml"), "{err}");
        }
    }
    // A bad pod names the file, the object and the field.
    let cs = write(dir.path(), "cs.yaml", BETA);
    let bad = write(
        dir.path(),
        "badpods.yaml",
        &pods(&[("web-a", "web-new", true)]).replace("phase: Running", "phase: [1]"),
    );
    let (code, _, err) = kruise(&["rollout", "plan", "-f", &cs, "--pods", &bad], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("badpods.yaml: object 0 (Pod \"web-a\")") && err.contains("status.phase"),
        "{err}"
    );
    // A missing file.
    let (code, _, err) = kruise(
        &["rollout", "plan", "-f", "/no/such/cs.yaml", "--pods", &bad],
        "",
    );
    assert_eq!(code, 2);
    assert!(err.contains("/no/such/cs.yaml"), "{err}");
    // Unknown kinds in the pods file.
    let other = write(
        dir.path(),
        "other.yaml",
        "kind: Service\nmetadata: {name: s}\n",
    );
    let (code, _, err) = kruise(&["rollout", "plan", "-f", &cs, "--pods", &other], "");
    assert_eq!(code, 2);
    assert!(err.contains("found \"Service\""), "{err}");
}

#[test]
fn update_revision_is_computed_without_status() {
    let dir = tempfile::tempdir().unwrap();
    let cs = write(dir.path(), "cs.yaml", BETA.split("status:").next().unwrap());
    let pods = write(
        dir.path(),
        "pods.yaml",
        "apiVersion: v1\nkind: List\nitems: []\n",
    );
    let (code, out, err) = kruise(
        &[
            "rollout", "plan", "-f", &cs, "--pods", &pods, "--now", NOW, "-o", "json",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let plan: Value = serde_json::from_str(&out).unwrap();
    let update = plan["status"]["updateRevision"].as_str().unwrap();
    assert!(update.starts_with("web-") && update.len() > 4, "{update}");
    assert_eq!(plan["status"]["currentRevision"], update);
    assert_eq!(plan["actions"].as_array().unwrap().len(), 5);
    assert_eq!(plan["actions"][0]["revision"], update);
}
