//! `resourcesPolicy`: the sidecar's resources computed at injection from the target containers', the
//! expression language, and the SidecarSet webhook's rules.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value
)]

use crate::support::{container, now, pod, sidecarset};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_sidecar::resource_expression::{Expression, ExpressionError};
use kruise_sidecar::resources_policy::{self, PolicyError};
use kruise_sidecar::{Error, Options};
use serde_json::{Value, json};

/// The proposal's pod: `large.engine.v4` (200m/200Mi limits, 50m/100Mi requests) and `large.engine.v8`
/// (400m/400Mi, 100m/200Mi), plus an unrelated `logger` with large resources.
fn engines_pod() -> Pod {
    pod(json!({
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "engine"}},
        "spec": {"containers": [
            {"name": "large.engine.v4", "image": "nginx",
             "resources": {"limits": {"cpu": "200m", "memory": "200Mi"}, "requests": {"cpu": "50m", "memory": "100Mi"}}},
            {"name": "large.engine.v8", "image": "nginx",
             "resources": {"limits": {"cpu": "400m", "memory": "400Mi"}, "requests": {"cpu": "100m", "memory": "200Mi"}}},
            {"name": "logger", "image": "busybox",
             "resources": {"limits": {"cpu": "8", "memory": "8Gi"}, "requests": {"cpu": "4", "memory": "4Gi"}}},
        ]},
    }))
}

fn policy_set(policy: Value) -> SidecarSet {
    sidecarset(json!({
        "metadata": {"name": "proxy"},
        "spec": {"selector": {"matchLabels": {"app": "engine"}},
                 "containers": [{"name": "sidecar1", "image": "centos:6.7", "resourcesPolicy": policy}]},
    }))
}

fn try_inject(pod: &Pod, set: &SidecarSet) -> Result<Pod, Error> {
    kruise_sidecar::inject_sidecarsets(pod, &[set], now(), Options::default())
}

fn sidecar_resources(pod: &Pod, set: &SidecarSet) -> Value {
    let out = try_inject(pod, set).unwrap();
    serde_json::to_value(&container(&out, "sidecar1").resources).unwrap()
}

const PROPOSAL_EXPR: &str = r#"{"limits": {"cpu": "max(cpu*50%, 50m)", "memory": "200Mi"},
                                "requests": {"cpu": "max(cpu*50%, 50m)", "memory": "100Mi"}}"#;

fn proposal_policy(mode: &str, regex: &str) -> Value {
    json!({"targetContainersMode": mode, "targetContainersNameRegex": regex,
           "resourcesExpr": serde_json::from_str::<Value>(PROPOSAL_EXPR).unwrap()})
}

#[test]
fn proposal_stories_sum_max_and_regex() {
    // (mode, regex, expected limits.cpu, expected requests.cpu)
    let table = [
        // Story 1: one target.
        ("sum", "^large.engine.v4$", "100m", "50m"),
        // Story 2: sum of both engines.
        ("sum", "^large.engine.v.*$", "300m", "75m"),
        // Story 3: max of both engines.
        ("max", "^large.engine.v.*$", "200m", "50m"),
        // Unanchored like Go's MatchString: "engine" matches both engines only.
        ("sum", "engine", "300m", "75m"),
        // The CRD default: every container, the logger included.
        ("sum", ".*", "4300m", "2075m"),
        ("max", ".*", "4", "2"),
        // An empty regex means every container too.
        ("max", "", "4", "2"),
    ];
    let pod = engines_pod();
    for (mode, regex, limit, request) in table {
        let set = policy_set(proposal_policy(mode, regex));
        assert_eq!(
            sidecar_resources(&pod, &set),
            json!({"limits": {"cpu": limit, "memory": "200Mi"},
                   "requests": {"cpu": request, "memory": "100Mi"}}),
            "{mode} {regex}"
        );
    }
}

#[test]
fn memory_expressions_are_written_in_binary_si_whole_bytes() {
    let table = [
        ("sum", "memory*50%", "300Mi"),
        ("max", "memory*50%", "200Mi"),
        ("max", "memory/3", "139810134"), // 400Mi / 3 rounds up to a whole byte
        ("sum", "memory + 1Gi", "1624Mi"),
        ("max", "min(memory, 256Mi)", "256Mi"),
        ("max", "memory - 1.5", "419430399"), // 1.5 bytes off, rounded up
        ("max", "1000", "1k"),
    ];
    let pod = engines_pod();
    for (mode, expr, expected) in table {
        let set = policy_set(
            json!({"targetContainersMode": mode, "targetContainersNameRegex": "^large",
            "resourcesExpr": {"limits": {"memory": expr}}}),
        );
        assert_eq!(
            sidecar_resources(&pod, &set),
            json!({"limits": {"memory": expected}}),
            "{mode} {expr}"
        );
    }
}

#[test]
fn limits_and_requests_are_computed_from_their_own_section() {
    let pod = engines_pod();
    let limits_only = policy_set(
        json!({"targetContainersMode": "sum", "targetContainersNameRegex": "^large",
        "resourcesExpr": {"limits": {"cpu": "cpu"}}}),
    );
    assert_eq!(
        sidecar_resources(&pod, &limits_only),
        json!({"limits": {"cpu": "600m"}})
    );
    let requests_only = policy_set(
        json!({"targetContainersMode": "sum", "targetContainersNameRegex": "^large",
        "resourcesExpr": {"requests": {"cpu": "cpu", "memory": "memory"}}}),
    );
    assert_eq!(
        sidecar_resources(&pod, &requests_only),
        json!({"requests": {"cpu": "150m", "memory": "300Mi"}})
    );
}

#[test]
fn unlimited_limits_leave_the_sidecar_unlimited_and_missing_requests_count_as_zero() {
    // Story 4: large.engine.v8 has no cpu limit and no cpu request.
    let pod = pod(json!({
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [
            {"name": "large.engine.v4", "image": "nginx",
             "resources": {"limits": {"cpu": "200m", "memory": "200Mi"}, "requests": {"cpu": "50m", "memory": "100Mi"}}},
            {"name": "large.engine.v8", "image": "nginx",
             "resources": {"limits": {"memory": "400Mi"}, "requests": {"memory": "200Mi"}}},
            {"name": "large.engine.v9", "image": "nginx"},
        ]},
    }));
    for mode in ["sum", "max"] {
        let set = policy_set(
            json!({"targetContainersMode": mode, "targetContainersNameRegex": "^large.engine.v[48]$",
            "resourcesExpr": {"limits": {"cpu": "max(cpu*50%, 50m)", "memory": "memory"},
                              "requests": {"cpu": "cpu*2", "memory": "100Mi"}}}),
        );
        let memory = if mode == "sum" { "600Mi" } else { "400Mi" };
        assert_eq!(
            sidecar_resources(&pod, &set),
            json!({"limits": {"memory": memory}, "requests": {"cpu": "100m", "memory": "100Mi"}}),
            "{mode}"
        );
    }
    // A container without any resources: every limit unlimited, every request zero.
    let set = policy_set(
        json!({"targetContainersMode": "sum", "targetContainersNameRegex": "v9$",
        "resourcesExpr": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "cpu + 10m", "memory": "memory"}}}),
    );
    assert_eq!(
        sidecar_resources(&pod, &set),
        json!({"requests": {"cpu": "10m", "memory": "0"}})
    );
}

#[test]
fn each_operator_evaluates_exactly() {
    // (expression over cpu, cpu in nano units, result in nano units)
    let core = 1_000_000_000_i128;
    let table = [
        ("cpu + 1", core, 2 * core),
        ("cpu - 250m", core, 750_000_000),
        ("cpu * 3", core, 3 * core),
        ("cpu / 4", core, 250_000_000),
        ("cpu / 3", core, 333_333_334), // rounded up to the next nano unit
        ("-cpu + 2", core, core),
        ("2 * (cpu + 1)", core, 4 * core),
        ("2 * cpu + 1", core, 3 * core),
        ("cpu - 1 - 1", 3 * core, core), // left to right
        ("cpu / 2 / 2", 4 * core, core),
        ("max(0.5, 0.5*cpu)", core, 500_000_000),
        ("max(1m, 2m, 3m, cpu)", 0, 3_000_000),
        (
            "min(max(max(0.5,0.5*cpu),cpu-1.0),3.0)",
            10 * core,
            3 * core,
        ),
        ("min(max(max(0.5,0.5*cpu),cpu-1.0),3.0)", 3 * core, 2 * core),
        ("min(cpu)", 7, 7),
        ("25%", 0, 250_000_000),
        ("cpu*12.5%", 8 * core, core),
        ("1e3", 0, 1000 * core),
        ("1Ki", 0, 1024 * core),
        ("  cpu\t*2 ", 1, 2),
    ];
    for (text, cpu, expected) in table {
        let expression = Expression::parse(text, "cpu").unwrap();
        assert_eq!(expression.evaluate(cpu).unwrap(), expected, "{text}");
    }
}

#[test]
fn bad_expressions_are_typed_errors() {
    let syntax = |text: &str| {
        matches!(
            Expression::parse(text, "cpu"),
            Err(ExpressionError::Syntax { .. })
        )
    };
    for text in [
        "",
        "cpu +",
        "(cpu",
        "cpu)",
        "max(cpu",
        "max()",
        "max(cpu,)",
        "cpu cpu",
        "cpu $ 2",
        "2 ** 3",
    ] {
        assert!(syntax(text), "{text:?} should be a syntax error");
    }
    assert_eq!(
        Expression::parse("memory*2", "cpu"),
        Err(ExpressionError::UnknownName {
            name: "memory".into(),
            variable: "cpu".into()
        })
    );
    assert!(matches!(
        Expression::parse("sqrt(cpu)", "cpu"),
        Err(ExpressionError::UnknownName { .. })
    ));
    assert!(matches!(
        Expression::parse("10Qi", "cpu"),
        Err(ExpressionError::Number { .. })
    ));
    assert!(matches!(
        Expression::parse("1.2.3", "cpu"),
        Err(ExpressionError::Number { .. })
    ));
    let evaluate = |text: &str, cpu: i128| Expression::parse(text, "cpu").unwrap().evaluate(cpu);
    assert_eq!(evaluate("cpu / 0", 1), Err(ExpressionError::DivisionByZero));
    assert_eq!(
        evaluate("cpu / (cpu - cpu)", 1),
        Err(ExpressionError::DivisionByZero)
    );
    assert_eq!(
        evaluate("cpu - 1", 500_000_000),
        Err(ExpressionError::Negative("-0.5".into()))
    );
    assert_eq!(
        evaluate("cpu * cpu * cpu * cpu * cpu", 1_000_000_000_000_000_000_000),
        Err(ExpressionError::Overflow)
    );
}

#[test]
fn injection_errors_name_the_sidecarset_container_field_and_expression() {
    let pod = engines_pod();
    let set = policy_set(json!({"targetContainersMode": "sum",
        "resourcesExpr": {"requests": {"cpu": "max(cpu*50%, "}}}));
    let error = try_inject(&pod, &set).unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with(
            "SidecarSet proxy: container sidecar1: resourcesPolicy: resourcesExpr.requests.cpu: expression \"max(cpu*50%, \": syntax error"
        ),
        "{message}"
    );

    let negative = policy_set(
        json!({"targetContainersMode": "max", "targetContainersNameRegex": "^large",
        "resourcesExpr": {"limits": {"cpu": "cpu - 1"}}}),
    );
    let (sidecarset, container, source) = policy_error(try_inject(&pod, &negative).unwrap_err());
    assert_eq!(
        (sidecarset.as_str(), container.as_str()),
        ("proxy", "sidecar1")
    );
    assert!(
        matches!(
            &source,
            PolicyError::Expression { field, source: ExpressionError::Negative(value), .. }
                if field == "resourcesExpr.limits.cpu" && value == "-0.6"
        ),
        "{source}"
    );

    let no_target = policy_set(
        json!({"targetContainersMode": "sum", "targetContainersNameRegex": "^db$",
        "resourcesExpr": {"limits": {"cpu": "cpu"}}}),
    );
    assert_eq!(
        policy_error(try_inject(&pod, &no_target).unwrap_err()).2,
        PolicyError::NoTarget("^db$".into())
    );

    let bad_mode = policy_set(json!({"targetContainersMode": "avg",
        "resourcesExpr": {"limits": {"cpu": "cpu"}}}));
    assert_eq!(
        policy_error(try_inject(&pod, &bad_mode).unwrap_err()).2,
        PolicyError::Mode("avg".into())
    );

    let bad_target = pod_with_cpu_limit("lots");
    let set = policy_set(json!({"targetContainersMode": "sum",
        "resourcesExpr": {"limits": {"cpu": "cpu"}}}));
    assert!(matches!(
        policy_error(try_inject(&bad_target, &set).unwrap_err()).2,
        PolicyError::TargetQuantity { container, field, .. }
            if container == "app" && field == "limits.cpu"
    ));
}

/// SidecarSet, container and cause of a `resourcesPolicy` error.
fn policy_error(error: Error) -> (String, String, PolicyError) {
    match error {
        Error::ResourcesPolicy {
            sidecarset,
            container,
            source,
        } => (sidecarset, container, *source),
        other => panic!("not a resourcesPolicy error: {other}"),
    }
}

fn pod_with_cpu_limit(cpu: &str) -> Pod {
    pod(json!({
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "nginx", "resources": {"limits": {"cpu": cpu}}}]},
    }))
}

#[test]
fn native_sidecar_init_containers_get_their_policy_too() {
    let set = sidecarset(json!({
        "metadata": {"name": "proxy"},
        "spec": {"selector": {"matchLabels": {"app": "engine"}},
                 "initContainers": [{"name": "init-proxy", "image": "proxy", "restartPolicy": "Always",
                    "resourcesPolicy": {"targetContainersMode": "max",
                        "resourcesExpr": {"requests": {"cpu": "cpu/2"}}}}]},
    }));
    let out = try_inject(&engines_pod(), &set).unwrap();
    let init = &out.spec.as_ref().unwrap().init_containers.as_ref().unwrap()[0];
    assert_eq!(
        serde_json::to_value(&init.resources).unwrap(),
        json!({"requests": {"cpu": "2"}})
    );
}

#[test]
fn sidecars_without_a_policy_keep_their_resources() {
    let set = sidecarset(json!({
        "metadata": {"name": "plain"},
        "spec": {"selector": {"matchLabels": {"app": "engine"}},
                 "containers": [{"name": "sidecar1", "image": "busybox",
                                 "resources": {"limits": {"cpu": "100m"}}}]},
    }));
    assert_eq!(
        sidecar_resources(&engines_pod(), &set),
        json!({"limits": {"cpu": "100m"}})
    );
}

#[test]
fn validation_rules_of_the_sidecarset_webhook() {
    let policy =
        json!({"targetContainersMode": "sum", "resourcesExpr": {"limits": {"cpu": "cpu*50%"}}});
    let build = |containers: Value, init: Value| {
        sidecarset(json!({
            "metadata": {"name": "s"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "containers": containers, "initContainers": init},
        }))
    };
    let errors = |set: &SidecarSet| -> Vec<(String, PolicyError)> {
        resources_policy::validate(set)
            .into_iter()
            .map(|v| (v.container_path, v.error))
            .collect()
    };
    // Valid: a container and a native-sidecar init container with policies.
    let valid = build(
        json!([{"name": "c", "image": "i", "resourcesPolicy": policy}]),
        json!([{"name": "n", "image": "i", "restartPolicy": "Always", "resourcesPolicy": policy}]),
    );
    assert_eq!(errors(&valid), []);
    // resources beside a policy.
    let conflict = build(
        json!([{"name": "c", "image": "i", "resources": {"limits": {"cpu": "100m"}}, "resourcesPolicy": policy}]),
        json!([]),
    );
    assert_eq!(
        errors(&conflict),
        [(
            "spec.containers[0]".to_owned(),
            PolicyError::ResourcesConflict
        )]
    );
    // A plain init container.
    let plain_init = build(
        json!([]),
        json!([{"name": "n", "image": "i", "resourcesPolicy": policy}]),
    );
    assert_eq!(
        errors(&plain_init),
        [(
            "spec.initContainers[0]".to_owned(),
            PolicyError::PlainInitContainer
        )]
    );
    // Unknown mode, bad regex, bad expressions (the other resource's variable, a syntax error).
    let bad = build(
        json!([{"name": "c", "image": "i", "resourcesPolicy": {
            "targetContainersMode": "invalid", "targetContainersNameRegex": "(",
            "resourcesExpr": {"limits": {"cpu": "memory"}, "requests": {"memory": "max(memory"}}}}]),
        json!([]),
    );
    let found = errors(&bad);
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(found[0].1, PolicyError::Mode("invalid".into()));
    assert!(matches!(found[1].1, PolicyError::Regex { .. }));
    assert!(matches!(
        &found[2].1,
        PolicyError::Expression { field, source: ExpressionError::UnknownName { .. }, .. } if field == "resourcesExpr.limits.cpu"
    ));
    assert!(matches!(
        &found[3].1,
        PolicyError::Expression { field, source: ExpressionError::Syntax { .. }, .. } if field == "resourcesExpr.requests.memory"
    ));
}

/// Nesting far deeper than any real expression (parentheses, signs, function calls, or a long chain of
/// operators) is refused with a syntax error instead of overflowing the stack while parsing, evaluating or
/// dropping the expression: a SidecarSet with such a `resourcesExpr` would otherwise abort kruise-manager.
#[test]
fn deeply_nested_expressions_are_refused() {
    let depth = 200_000;
    for text in [
        format!("{}cpu{}", "(".repeat(depth), ")".repeat(depth)),
        format!("{}cpu", "-".repeat(depth)),
        format!("{}cpu{}", "max(".repeat(depth), ")".repeat(depth)),
        vec!["cpu"; depth].join("+"),
        vec!["1"; depth].join("*"),
    ] {
        let error = Expression::parse(&text, "cpu").unwrap_err();
        assert!(
            matches!(error, ExpressionError::TooLong { limit: 256 }),
            "{}: {error}",
            text.get(..20).unwrap_or_default()
        );
    }
    // Realistic expressions stay well within the limit.
    let nested = format!("{}cpu*50%{}", "max(50m, ".repeat(20), ")".repeat(20));
    assert!(Expression::parse(&nested, "cpu").is_ok());
}
