use super::*;

fn run_to_strings(args: &InstallArgs) -> Result<(String, String), CliError> {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    run(args, &mut out, &mut err)?;
    Ok((
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    ))
}

fn objects(args: &InstallArgs) -> Vec<serde_json::Value> {
    let (out, _) = run_to_strings(args).unwrap();
    serde_saphyr::from_multiple(&out).unwrap()
}

fn find<'a>(objects: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    objects.iter().find(|o| o["kind"] == kind).unwrap()
}

#[test]
fn the_default_stream_holds_every_part_once_in_apply_order() {
    let objects = objects(&InstallArgs::default());
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"Namespace"));
    assert_eq!(kinds.iter().filter(|&&k| k == "DaemonSet").count(), 1);
    assert!(!kinds.contains(&"CustomResourceDefinition"));
    let names: Vec<String> = objects
        .iter()
        .map(|o| format!("{}/{}", o["kind"], o["metadata"]["name"]))
        .collect();
    assert!(!names.iter().any(|n| n.contains("resource-distribution")));
    let deployment = find(&objects, "Deployment");
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        format!("ghcr.io/kruise-rs/kruise-manager:{}", settings::VERSION)
    );
}

#[test]
fn flags_reach_the_objects() {
    let args = InstallArgs {
        namespace: "kruise".into(),
        replicas: 3,
        feature_gates: "WorkloadSpread=false,PodUnavailableBudgetUpdateGate=true".into(),
        manager_image: Some("registry.local/m:1".into()),
        daemon_image: Some("registry.local/d:1".into()),
        manager_cpu: "250m".into(),
        manager_memory: "256Mi".into(),
        manager_memory_limit: "1Gi".into(),
        webhook_failure_policy: WebhookFailurePolicy::Ignore,
        daemon_socket_location: "/var/run/crio/".into(),
        daemon_socket_name: "crio.sock".into(),
        crds: true,
        ..InstallArgs::default()
    };
    let objects = objects(&args);
    for object in &objects {
        if let Some(namespace) = object["metadata"]["namespace"].as_str() {
            assert!(
                namespace == "kruise" || namespace == DAEMON_CONFIG_NAMESPACE,
                "{object}"
            );
        }
    }
    assert!(
        objects
            .iter()
            .any(|o| o["kind"] == "CustomResourceDefinition")
    );
    let deployment = find(&objects, "Deployment");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert_eq!(container["image"], "registry.local/m:1");
    assert_eq!(container["resources"]["requests"]["cpu"], "250m");
    assert_eq!(container["resources"]["limits"]["memory"], "1Gi");
    let args_of = |c: &serde_json::Value| -> Vec<String> {
        c["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect()
    };
    let manager_args = args_of(container);
    assert!(manager_args.contains(&"--webhook-failure-policy=ignore".to_owned()));
    assert!(manager_args.contains(
        &"--feature-gates=WorkloadSpread=false,PodUnavailableBudgetUpdateGate=true".to_owned()
    ));
    let daemon = find(&objects, "DaemonSet");
    let pod = &daemon["spec"]["template"]["spec"];
    assert_eq!(pod["containers"][0]["image"], "registry.local/d:1");
    assert_eq!(pod["volumes"][0]["hostPath"]["path"], "/var/run/crio");
    assert_eq!(
        pod["containers"][0]["volumeMounts"][0]["mountPath"],
        "/hostvar/var/run/crio"
    );
    assert!(
        args_of(&pod["containers"][0])
            .contains(&"--cri-endpoint=unix:///hostvar/var/run/crio/crio.sock".to_owned())
    );
    let mutating = find(&objects, "MutatingWebhookConfiguration");
    let names: Vec<&str> = mutating["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"mworkloadspread.kruise.io"),
        "gate off: {names:?}"
    );
    for configuration in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        for webhook in find(&objects, configuration)["webhooks"]
            .as_array()
            .unwrap()
        {
            assert_eq!(webhook["failurePolicy"], "Ignore", "{webhook}");
            assert_eq!(webhook["clientConfig"]["service"]["namespace"], "kruise");
        }
    }
    let budget = find(&objects, "ValidatingWebhookConfiguration")["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "vpodunavailablebudget.kruise.io")
        .unwrap()
        .clone();
    assert_eq!(budget["rules"].as_array().unwrap().len(), 3);
}

#[test]
fn no_daemon_and_resource_distribution_change_the_parts() {
    let objects = objects(&InstallArgs {
        no_daemon: true,
        resource_distribution: true,
        feature_gates: "ResourceDistributionGate=true".into(),
        ..InstallArgs::default()
    });
    assert!(!objects.iter().any(|o| o["kind"] == "DaemonSet"));
    assert!(
        !objects
            .iter()
            .any(|o| o["metadata"]["name"] == "kruise-rs-daemon")
    );
    assert!(
        objects
            .iter()
            .any(|o| o["metadata"]["name"] == "kruise-manager-resource-distribution")
    );
    assert!(
        find(&objects, "ValidatingWebhookConfiguration")["webhooks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["name"] == "vresourcedistribution.kb.io")
    );
}

#[test]
fn output_dir_writes_one_file_per_part() {
    let dir = tempfile::tempdir().unwrap();
    let args = InstallArgs {
        output_dir: Some(dir.path().to_string_lossy().into_owned()),
        resource_distribution: true,
        ..InstallArgs::default()
    };
    let (out, err) = run_to_strings(&args).unwrap();
    assert!(out.is_empty());
    assert!(err.contains("the controller stays off"), "{err}");
    let files = manifest_files(&args.settings().unwrap()).unwrap();
    assert_eq!(files.len(), 8);
    for file in files {
        let text = std::fs::read_to_string(dir.path().join(file.name)).unwrap();
        assert!(text.starts_with(GENERATED_HEADER));
        let parsed: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
        let expected: Vec<serde_json::Value> =
            file.documents.into_iter().map(|d| d.value).collect();
        assert_eq!(parsed, expected, "{}", file.name);
    }
}

#[test]
fn bad_flags_are_named() {
    let cases: [(InstallArgs, &str); 8] = [
        (
            InstallArgs {
                namespace: "Kruise".into(),
                ..InstallArgs::default()
            },
            "--namespace \"Kruise\": a DNS-1123 label",
        ),
        (
            InstallArgs {
                namespace: DAEMON_CONFIG_NAMESPACE.into(),
                ..InstallArgs::default()
            },
            "--namespace \"kruise-daemon-config\"",
        ),
        (
            InstallArgs {
                feature_gates: "WorkloadSpread".into(),
                ..InstallArgs::default()
            },
            "--feature-gates: entry \"WorkloadSpread\" is not Name=true|false",
        ),
        (
            InstallArgs {
                feature_gates: "ResourceDistributionGate=true".into(),
                ..InstallArgs::default()
            },
            "--feature-gates ResourceDistributionGate=true needs --resource-distribution",
        ),
        (
            InstallArgs {
                manager_cpu: "fast".into(),
                ..InstallArgs::default()
            },
            "--manager-cpu: \"fast\" is not a quantity",
        ),
        (
            InstallArgs {
                manager_memory: "1Gi".into(),
                ..InstallArgs::default()
            },
            "--manager-memory 1Gi: more than --manager-memory-limit 512Mi",
        ),
        (
            InstallArgs {
                daemon_socket_location: "run/containerd".into(),
                ..InstallArgs::default()
            },
            "--daemon-socket-location \"run/containerd\"",
        ),
        (
            InstallArgs {
                manager_image: Some("a b".into()),
                ..InstallArgs::default()
            },
            "--manager-image \"a b\"",
        ),
    ];
    for (args, expected) in cases {
        let error = run_to_strings(&args).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(error.to_string().starts_with(expected), "{error}");
    }
}

#[derive(clap::Parser)]
struct Command {
    #[command(flatten)]
    install: InstallArgs,
}

#[test]
fn the_command_line_defaults_are_the_default_settings_and_policies_ignore_case() {
    use clap::Parser;
    let parsed = Command::try_parse_from(["install"]).unwrap().install;
    assert_eq!(parsed.settings().unwrap(), InstallSettings::default());
    for (value, expected) in [
        ("Ignore", WebhookFailurePolicy::Ignore),
        ("ignore", WebhookFailurePolicy::Ignore),
        ("Fail", WebhookFailurePolicy::Fail),
    ] {
        let parsed =
            Command::try_parse_from(["install", "--webhook-failure-policy", value]).unwrap();
        assert_eq!(parsed.install.webhook_failure_policy, expected);
    }
    assert!(Command::try_parse_from(["install", "--replicas", "0"]).is_err());
    assert!(Command::try_parse_from(["install", "--webhook-failure-policy", "Maybe"]).is_err());
}
