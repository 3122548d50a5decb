//! `kruise completion`: scripts that the shells accept and that complete the subcommands, and the
//! `kubectl-kruise` plugin binary.

use std::process::Command;

use crate::run::{kruise, kubectl_kruise};

#[test]
fn bash_completion_completes_subcommands_and_verbs() {
    let (code, script, err) = kruise(&["completion", "bash"], "");
    assert_eq!(code, 0, "{err}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kruise.bash");
    std::fs::write(&path, &script).unwrap();
    // Load the script into bash and call its function as bash's `complete -F` does (the command, the word
    // being completed, the word before it) for `kruise ro<TAB>` and the like.
    let complete = |words: &[&str]| {
        let current = words.len() - 1;
        let quoted: Vec<String> = words.iter().map(|word| format!("'{word}'")).collect();
        let probe = format!(
            "source '{path}'; COMP_WORDS=({words}); COMP_CWORD={current}; COMP_LINE='{line}'; \
             COMP_POINT=${{#COMP_LINE}}; _kruise kruise {cur} {prev}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path = path.display(),
            words = quoted.join(" "),
            line = words.join(" "),
            cur = quoted[current],
            prev = quoted[current - 1],
        );
        let output = Command::new("bash").args(["-c", &probe]).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let first = complete(&["kruise", "ro"]);
    assert_eq!(first.trim(), "rollout", "{first}");
    let verbs = complete(&["kruise", "rollout", ""]);
    assert!(verbs.lines().any(|verb| verb == "plan"), "{verbs}");
    let shells = complete(&["kruise", "completion", ""]);
    let mut offered: Vec<&str> = shells.lines().filter(|s| !s.starts_with('-')).collect();
    offered.sort_unstable();
    assert_eq!(offered, ["bash", "fish", "zsh"], "{shells}");
}

#[test]
fn zsh_and_fish_scripts_name_the_program_and_its_subcommands() {
    let (code, zsh, err) = kruise(&["completion", "zsh"], "");
    assert_eq!(code, 0, "{err}");
    assert!(zsh.starts_with("#compdef kruise"), "{zsh}");
    assert!(zsh.contains("'rollout:"), "{zsh}");
    let (code, fish, err) = kruise(&["completion", "fish"], "");
    assert_eq!(code, 0, "{err}");
    assert!(fish.contains("complete -c kruise"), "{fish}");
    assert!(fish.contains("-a \"rollout\""), "{fish}");
}

#[test]
fn an_unknown_shell_is_refused_naming_the_choices() {
    let (code, out, err) = kruise(&["completion", "powershell"], "");
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("powershell") && err.contains("bash"), "{err}");
}

#[test]
fn the_plugin_binary_is_the_same_tool_named_as_kubectl_runs_it() {
    let (code, help, err) = kubectl_kruise(&["--help"]);
    assert_eq!(code, 0, "{err}");
    assert!(help.contains("Usage: kubectl kruise <COMMAND>"), "{help}");
    assert!(help.contains("rollout"), "{help}");
    let (code, script, err) = kubectl_kruise(&["completion", "bash"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        script.contains("kubectl-kruise"),
        "completes the plugin's own name"
    );
    let (code, out, _) = kubectl_kruise(&["cron", "next", "--help"]);
    let (kruise_code, kruise_out, _) = kruise(&["cron", "next", "--help"], "");
    assert_eq!(code, kruise_code);
    assert_eq!(out.replace("kubectl kruise", "kruise"), kruise_out);
}
