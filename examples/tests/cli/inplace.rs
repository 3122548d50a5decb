//! The `kruise inplace diff` binary: exit codes, standard input, one-line errors.

use crate::run::kruise;

fn template(image: &str) -> String {
    format!("spec: {{containers: [{{name: main, image: '{image}'}}]}}\n")
}

#[test]
fn diff_reads_standard_input_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.yaml");
    std::fs::write(&new, template("nginx:1.25")).unwrap();
    let new = new.to_string_lossy();
    let (code, out, err) = kruise(
        &["inplace", "diff", "--old", "-", "--new", &new, "-o", "json"],
        &template("nginx:1.24"),
    );
    assert_eq!(code, 0, "{err}");
    let spec: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(spec["containerImages"]["main"], "nginx:1.25");

    // A recreate is an answer, not an error.
    std::fs::write(
        dir.path().join("cmd.yaml"),
        "spec: {containers: [{name: main, image: 'nginx:1.24', command: [sh]}]}\n",
    )
    .unwrap();
    let cmd = dir.path().join("cmd.yaml");
    let (code, out, err) = kruise(
        &[
            "inplace",
            "diff",
            "--old",
            "-",
            "--new",
            &cmd.to_string_lossy(),
            "-o",
            "json",
        ],
        &template("nginx:1.24"),
    );
    assert_eq!((code, out.as_str()), (0, "null\n"));
    assert_eq!(
        err,
        "recreate: add /spec/containers/0/command: only replacing a container's image can be done in place\n"
    );
}

#[test]
fn invalid_input_exits_two_with_one_line() {
    let (code, out, err) = kruise(
        &["inplace", "diff", "--old", "-", "--new", "/no/such.yaml"],
        &template("a"),
    );
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: /no/such.yaml: "), "{err}");
    let (code, _, err) = kruise(&["inplace", "diff", "--old", "-", "--new", "-"], "");
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: --old and --new cannot both read standard input\n"
    );
    let (code, _, err) = kruise(
        &[
            "inplace",
            "diff",
            "--old",
            "-",
            "--new",
            "-",
            "--feature-gates",
            "X",
        ],
        "",
    );
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: --feature-gates: invalid feature gate setting \"X\""),
        "{err}"
    );
}
