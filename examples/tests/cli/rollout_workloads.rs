//! The `kruise rollout plan` binary for the other workloads: Advanced StatefulSets, Advanced DaemonSets
//! (with the Nodes) and SidecarSets (with their pods), in text and JSON, and their one-line errors. The
//! inputs are the files of `tests/cli/fixtures/rollout`.

use std::path::Path;

use serde_json::Value;

use crate::run::kruise;

const NOW: &str = "2024-05-01T10:00:00Z";

/// The path of a fixture.
fn fixture(name: &str) -> String {
    format!(
        "{}/tests/cli/fixtures/rollout/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A fixture's text with `from` replaced by `to`, written into `dir` as `as_name`.
fn variant(dir: &Path, name: &str, from: &str, to: &str, as_name: &str) -> String {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    assert!(text.contains(from), "{name} has no {from:?}");
    let path = dir.join(as_name);
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path.to_string_lossy().into_owned()
}

/// `kruise rollout plan -f workload --pods pods --now NOW extra...`, which must succeed.
fn plan_text(workload: &str, pods: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "rollout", "plan", "-f", workload, "--pods", pods, "--now", NOW,
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = kruise(&args, "");
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    out
}

fn plan_json(workload: &str, pods: &str, extra: &[&str]) -> Value {
    let mut args = vec!["-o", "json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&plan_text(workload, pods, &args)).unwrap()
}

/// `(kind, pod or claim, rule)` of each action.
fn chosen(plan: &Value) -> Vec<(String, String, String)> {
    plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|action| {
            let object = action.get("pod").or_else(|| action.get("claim")).unwrap();
            (
                action["kind"].as_str().unwrap().to_owned(),
                object.as_str().unwrap().to_owned(),
                action["rule"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn triples(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    list.iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

#[test]
fn statefulset_update_stops_at_the_partition_and_max_unavailable() {
    let pods = fixture("statefulset-pods.yaml");
    let mut outputs = Vec::new();
    for set in ["statefulset.yaml", "statefulset-v1alpha1.yaml"] {
        let plan = plan_json(&fixture(set), &pods, &[]);
        assert_eq!(plan["statefulset"], "demo/web");
        assert_eq!(plan["ordinals"], serde_json::json!([0, 1, 2, 3]));
        // Highest slot first, down to the partition (1), at most maxUnavailable (2) at a time.
        assert_eq!(
            chosen(&plan),
            triples(&[
                ("deletePod", "web-3", "update"),
                ("deletePod", "web-2", "update")
            ])
        );
        let reason = plan["actions"][0]["reason"].as_str().unwrap();
        assert!(
            reason.contains("position 1") && reason.contains("maxUnavailable 2"),
            "{reason}"
        );
        assert!(
            plan["waiting"].as_str().unwrap().contains("web-1 waits"),
            "{}",
            plan["waiting"]
        );
        assert_eq!(plan["status"]["currentRevision"], "web-old");
        assert_eq!(plan["status"]["updateRevision"], "web-new");
        assert_eq!(plan["status"]["readyReplicas"], 4);
        assert_eq!(plan["error"], Value::Null);
        outputs.push(plan);
    }
    assert_eq!(outputs[0], outputs[1], "v1alpha1 converts to the same plan");

    let text = plan_text(&fixture("statefulset.yaml"), &pods, &[]);
    assert!(
        text.starts_with("StatefulSet demo/web: ordinals [0, 1, 2, 3]\nactions:\n  deletePod web-3: update: position 1"),
        "{text}"
    );
    assert!(
        text.contains("waiting: 2 pod(s) unavailable, maxUnavailable 2: web-1 waits\n"),
        "{text}"
    );
    assert!(
        text.contains("revisions: current web-old, update web-new\n"),
        "{text}"
    );
}

#[test]
fn statefulset_scale_up_creates_the_next_ordinal_at_the_computed_revision() {
    let dir = tempfile::tempdir().unwrap();
    let pods = fixture("statefulset-pods.yaml");
    let set = variant(
        dir.path(),
        "statefulset.yaml",
        "replicas: 4",
        "replicas: 6",
        "scaled-up.yaml",
    );
    let text = plan_text(&set, &pods, &[]);
    // OrderedReady: one pod per pass, then the plan waits for it.
    assert!(
        text.contains(
            "  createPod web-4: ordinal 4 (slot 4) has no pod: create it at the update revision\n"
        ),
        "{text}"
    );
    assert!(!text.contains("web-5"), "{text}");
    assert!(
        text.contains("waiting: OrderedReady: created web-4"),
        "{text}"
    );

    // Without a status, the update revision is the template's, named as the controller names it.
    let bare = variant(
        dir.path(),
        "statefulset.yaml",
        "status: {currentRevision: web-old, updateRevision: web-new}\n",
        "",
        "no-status.yaml",
    );
    let raw = std::fs::read_to_string(&bare).unwrap();
    let scaled = dir.path().join("scaled.yaml");
    std::fs::write(&scaled, raw.replace("replicas: 4", "replicas: 5")).unwrap();
    let plan = plan_json(scaled.to_str().unwrap(), &pods, &[]);
    let update = plan["status"]["updateRevision"].as_str().unwrap();
    assert!(update.starts_with("web-") && update.len() > 4, "{update}");
    assert_eq!(
        chosen(&plan),
        triples(&[("createPod", "web-4", "create-missing")])
    );
    assert_eq!(plan["actions"][0]["revision"], update);
    // The same revision as the flag gives.
    let flagged = plan_json(
        scaled.to_str().unwrap(),
        &pods,
        &["--update-revision", update],
    );
    assert_eq!(flagged["status"]["updateRevision"], update);
}

#[test]
fn daemonset_chooses_nodes_by_selector_and_taints() {
    let plan = plan_json(
        &fixture("daemonset.yaml"),
        &fixture("daemonset-new-nodes.yaml"),
        &[],
    );
    assert_eq!(plan["daemonset"], "kube-system/agent");
    assert_eq!(plan["step"], "manage");
    // n1 has its pod; n2 gets one; n3's taint is not tolerated; m1 is not a worker.
    assert_eq!(
        chosen(&plan),
        triples(&[("createPod", "agent-", "missing-pod")])
    );
    assert_eq!(plan["actions"][0]["node"], "n2");
    assert_eq!(plan["actions"][0]["revision"], "agent-new");
    let nodes = plan["nodes"].as_array().unwrap();
    let fit: Vec<(&str, bool)> = nodes
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap(),
                n["shouldRun"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fit,
        [("n1", true), ("n2", true), ("n3", false), ("m1", false)]
    );
    assert!(
        nodes[2]["reason"]
            .as_str()
            .unwrap()
            .contains("taint dedicated=db:NoSchedule"),
        "{}",
        nodes[2]
    );
    assert!(
        nodes[3]["reason"]
            .as_str()
            .unwrap()
            .contains("nodeSelector"),
        "{}",
        nodes[3]
    );
    assert_eq!(plan["status"]["desiredNumberScheduled"], 2);
    assert_eq!(plan["status"]["updateRevision"], "agent-new");

    let text = plan_text(
        &fixture("daemonset.yaml"),
        &fixture("daemonset-new-nodes.yaml"),
        &[],
    );
    assert!(
        text.starts_with("DaemonSet kube-system/agent: step manage\nnodes:\n  n1: runs the pod\n"),
        "{text}"
    );
    assert!(
        text.contains("  n3: no pod: taint dedicated=db:NoSchedule is not tolerated\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "  createPod agent- (node n2): the node should run a daemon pod and has none\n"
        ),
        "{text}"
    );
    assert!(text.contains("status: desired 2, current 1,"), "{text}");
}

#[test]
fn daemonset_update_keeps_the_partition_within_max_unavailable() {
    let plan = plan_json(
        &fixture("daemonset.yaml"),
        &fixture("daemonset-pods.yaml"),
        &[],
    );
    assert_eq!(plan["step"], "update");
    assert_eq!(plan["budgets"]["partition"], 1);
    assert_eq!(plan["budgets"]["maxUnavailable"], 2);
    assert_eq!(plan["budgets"]["desired"], 2);
    // Two worker nodes, partition 1: only the last by name (n2) is updated, though the budget allows 2.
    assert_eq!(
        plan["updateOrder"],
        serde_json::json!([{"node": "n2", "class": "rest"}])
    );
    assert_eq!(
        chosen(&plan),
        triples(&[("deletePod", "agent-n2", "replace")])
    );
    // The update hash from the flag instead of status.daemonSetHash: agent-old is then the update.
    let same = plan_json(
        &fixture("daemonset.yaml"),
        &fixture("daemonset-pods.yaml"),
        &["--update-revision", "agent-old"],
    );
    assert_eq!(same["step"], "idle");
    assert_eq!(same["actions"], serde_json::json!([]));
    assert_eq!(same["status"]["updatedNumberScheduled"], 2);
}

#[test]
fn sidecarset_upgrades_within_max_unavailable_and_partition() {
    let dir = tempfile::tempdir().unwrap();
    let pods = fixture("sidecarset-pods.yaml");
    let plan = plan_json(&fixture("sidecarset.yaml"), &pods, &[]);
    assert_eq!(plan["sidecarset"], "log-agent");
    assert_eq!(plan["step"], "upgrade");
    assert_eq!(
        plan["matched"],
        serde_json::json!(["web-a", "web-b", "web-c"])
    );
    // maxUnavailable 1: one pod at a time.
    assert_eq!(chosen(&plan), triples(&[("patchPod", "web-a", "upgrade")]));
    assert_eq!(plan["status"]["matchedPods"], 3);
    assert_eq!(plan["status"]["updatedPods"], 0);
    assert_eq!(plan["revision"]["action"], "create");
    assert!(
        plan["status"]["latestRevision"]
            .as_str()
            .unwrap()
            .starts_with("log-agent-")
    );

    let wider = variant(
        dir.path(),
        "sidecarset.yaml",
        "maxUnavailable: 1",
        "maxUnavailable: 2",
        "max-unavailable-2.yaml",
    );
    assert_eq!(
        chosen(&plan_json(&wider, &pods, &[])),
        triples(&[
            ("patchPod", "web-a", "upgrade"),
            ("patchPod", "web-b", "upgrade")
        ])
    );
    let partitioned = variant(
        dir.path(),
        "sidecarset.yaml",
        "maxUnavailable: 1",
        "maxUnavailable: 3, partition: 2",
        "partition-2.yaml",
    );
    assert_eq!(chosen(&plan_json(&partitioned, &pods, &[])).len(), 1);

    // A field other than an image changed (the hash without image differs): no pod is upgraded in place,
    // each is marked SidecarSetUpgradable=False.
    let changed = variant(
        dir.path(),
        "sidecarset-pods.yaml",
        "\"hash\":\"4424",
        "\"hash\":\"other-4424",
        "other-fields.yaml",
    );
    let marked = plan_json(&fixture("sidecarset.yaml"), &changed, &[]);
    assert_eq!(
        chosen(&marked),
        triples(&[
            ("patchPod", "web-a", "not-upgradable"),
            ("patchPod", "web-b", "not-upgradable"),
            ("patchPod", "web-c", "not-upgradable")
        ])
    );
    assert!(
        marked["actions"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("SidecarSetUpgradable=False"),
        "{}",
        marked["actions"][0]
    );

    let text = plan_text(&fixture("sidecarset.yaml"), &pods, &[]);
    assert!(
        text.starts_with(
            "SidecarSet log-agent: step upgrade\nmatched: 3 pod(s) [web-a, web-b, web-c]; partition 0, maxUnavailable 1\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("  patchPod web-a: upgrade in place: position 1 in the upgrade order"),
        "{text}"
    );
    assert!(
        text.contains("status: matched 3, updated 0, ready 3, updatedReady 0\n"),
        "{text}"
    );
}

#[test]
fn bad_workloads_are_one_line_errors_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let sts_pods = fixture("statefulset-pods.yaml");
    let no_nodes = dir.path().join("no-nodes.yaml");
    std::fs::write(
        &no_nodes,
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: agent-n1}}\n",
    )
    .unwrap();
    let no_nodes = no_nodes.to_string_lossy().into_owned();
    let united = variant(
        dir.path(),
        "statefulset.yaml",
        "kind: StatefulSet",
        "kind: UnitedDeployment",
        "united.yaml",
    );
    let apps_v1 = variant(
        dir.path(),
        "statefulset-v1alpha1.yaml",
        "apps.kruise.io/v1alpha1",
        "apps/v1",
        "apps-v1.yaml",
    );
    let bad_replicas = variant(
        dir.path(),
        "statefulset.yaml",
        "replicas: 4",
        "replicas: many",
        "bad-replicas.yaml",
    );
    let no_hash = variant(
        dir.path(),
        "daemonset.yaml",
        "daemonSetHash: agent-new, ",
        "",
        "no-hash.yaml",
    );
    let cases: Vec<(String, String, Vec<&str>, Vec<&str>)> = vec![
        (
            united,
            sts_pods.clone(),
            vec![],
            vec!["found \"UnitedDeployment\"", "apps.kruise.io/v1beta1"],
        ),
        (
            apps_v1,
            sts_pods.clone(),
            vec![],
            vec!["apiVersion", "StatefulSet", "\"apps/v1\""],
        ),
        (
            bad_replicas,
            sts_pods.clone(),
            vec![],
            vec!["bad-replicas.yaml", "spec.replicas"],
        ),
        (
            fixture("statefulset.yaml"),
            sts_pods.clone(),
            vec!["--feature-gates", "CloneSetShortHash=true"],
            vec!["--feature-gates", "CloneSetShortHash"],
        ),
        (
            fixture("statefulset.yaml"),
            sts_pods.clone(),
            vec!["--exclude-preparing-delete"],
            vec!["--exclude-preparing-delete", "StatefulSet"],
        ),
        (
            fixture("daemonset.yaml"),
            no_nodes.clone(),
            vec![],
            vec!["no-nodes.yaml", "kube-system/agent", "Nodes"],
        ),
        (
            no_hash,
            fixture("daemonset-pods.yaml"),
            vec![],
            vec!["daemonSetHash", "--update-revision"],
        ),
        (
            fixture("daemonset.yaml"),
            fixture("daemonset-pods.yaml"),
            vec!["--current-revision", "agent-old"],
            vec!["--current-revision", "kube-system/agent"],
        ),
        (
            fixture("sidecarset.yaml"),
            fixture("sidecarset-pods.yaml"),
            vec!["--update-revision", "x"],
            vec!["--update-revision", "SidecarSet log-agent"],
        ),
    ];
    for (workload, pods, extra, expected) in cases {
        let mut args = vec!["rollout", "plan", "-f", &workload, "--pods", &pods];
        args.extend(extra);
        let (code, out, err) = kruise(&args, "");
        assert_eq!(code, 2, "{expected:?}: {out}{err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: "), "{err}");
        for part in expected {
            assert!(err.contains(part), "{part:?} not in {err}");
        }
    }
}

#[test]
fn help_names_every_workload() {
    let (code, out, err) = kruise(&["rollout", "plan", "--help"], "");
    assert_eq!(code, 0, "{err}");
    for kind in [
        "CloneSet",
        "StatefulSet",
        "DaemonSet",
        "SidecarSet",
        "--revision-namespace",
    ] {
        assert!(out.contains(kind), "{kind} not in {out}");
    }
}
