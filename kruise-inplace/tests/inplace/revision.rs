//! Revision data and names pinned against real upstream names (from the seed tutorials) and against Go's
//! encoding rules.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)] // test code

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kruise_api::apps::v1alpha1;
use kruise_api::defaults::ApplyDefaults;
use kruise_api::defaults::pod::{PodDefaultsOptions, apply_pod_spec_defaults};
use kruise_inplace::revision;
use serde_json::Value;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn cloneset_revision(file: &str) -> revision::Revision {
    let mut cloneset: v1alpha1::CloneSet = serde_saphyr::from_str(&fixture(file)).unwrap();
    cloneset.apply_defaults();
    revision::for_template("cs-demo", &cloneset.spec.template, 0).unwrap()
}

#[test]
fn cloneset_names_match_upstream() {
    let v1 = cloneset_revision("cloneset-demo-v1.yaml");
    assert_eq!(v1.name, "cs-demo-5c5f449787");
    assert_eq!(
        v1.data,
        r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"cs"}},"spec":{"containers":[{"image":"nginx:alpine","imagePullPolicy":"IfNotPresent","name":"nginx","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}"#
    );
    assert_eq!(
        cloneset_revision("cloneset-demo-v4.yaml").name,
        "cs-demo-7cb9c88699"
    );
}

#[test]
fn advanced_statefulset_name_matches_upstream() {
    let value: Value = serde_saphyr::from_str(&fixture("asts-web-v1.yaml")).unwrap();
    let mut template: PodTemplateSpec =
        serde_json::from_value(value["spec"]["template"].clone()).unwrap();
    apply_pod_spec_defaults(
        template.spec.as_mut().unwrap(),
        PodDefaultsOptions::default(),
    );
    assert_eq!(
        revision::for_template("web", &template, 0).unwrap().name,
        "web-b486b4959"
    );
}

#[test]
fn go_field_rules() {
    let template: PodTemplateSpec = serde_saphyr::from_str(&fixture("rich-template.yaml")).unwrap();
    let data = revision::template_data(&template).unwrap();
    assert_eq!(
        data,
        concat!(
            r#"{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"note":"a\u003cb\u003e\u0026c"},"creationTimestamp":null,"labels":{"app":"rich"}},"#,
            r#""spec":{"containers":[{"env":[{"name":"CPU","valueFrom":{"resourceFieldRef":{"divisor":"0","resource":"limits.cpu"}}},"#,
            r#"{"name":"POD","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],"image":"app:1","name":"app","ports":[{"containerPort":8080}],"#,
            r#""readinessProbe":{"grpc":{"port":9000,"service":null}},"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m","memory":"512Mi"}}}],"#,
            r#""securityContext":{"runAsNonRoot":false,"runAsUser":0},"terminationGracePeriodSeconds":0,"#,
            r#""volumes":[{"emptyDir":{"sizeLimit":"1536Mi"},"name":"cache"},{"configMap":{"defaultMode":420,"name":"conf"},"name":"conf"}]}}}}"#
        )
    );
}

#[test]
fn collision_count_and_parent_truncation() {
    let template = PodTemplateSpec::default();
    let zero = revision::for_template("p", &template, 0).unwrap();
    let one = revision::for_template("p", &template, 1).unwrap();
    assert_ne!(zero.hash, one.hash);
    assert_eq!(
        zero.data,
        r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},"spec":{"containers":null}}}}"#
    );
    let long = "x".repeat(260);
    assert_eq!(
        revision::for_template(&long, &template, 0)
            .unwrap()
            .name
            .len(),
        223 + 1 + zero.hash.len()
    );
}

#[test]
fn controller_revision_object() {
    let v1 = cloneset_revision("cloneset-demo-v1.yaml");
    let labels = [("app".to_owned(), "cs".to_owned())].into();
    let object = serde_json::to_value(v1.to_controller_revision(Some(&labels), 1)).unwrap();
    assert_eq!(object["metadata"]["name"], "cs-demo-5c5f449787");
    assert_eq!(
        object["metadata"]["labels"]["controller.kubernetes.io/hash"],
        "5c5f449787"
    );
    assert_eq!(object["metadata"]["labels"]["app"], "cs");
    assert_eq!(object["revision"], 1);
    assert_eq!(
        kruise_inplace::go_json::to_string_sorted(&object["data"]),
        v1.data
    );
}
