//! Reading objects from files or standard input: YAML or JSON, one object, a `---` stream, or a `List`.

use std::io::Read;

use serde_json::Value;
use serde_saphyr::granit_parser::{Event, Parser};
use serde_saphyr::{DuplicateKeyPolicy, Location, SnippetMode, Spanned, UserMessageFormatter};

/// Why input could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file (or standard input) could not be read.
    #[error("{source_name}: {error}")]
    Read {
        /// The file name, or `-` for standard input.
        source_name: String,
        /// What the operating system said.
        #[source]
        error: std::io::Error,
    },
    /// The text is neither YAML nor JSON.
    #[error("{source_name}: document {index}: {message}")]
    Parse {
        /// The file name, or `-` for standard input.
        source_name: String,
        /// The 0-based index of the document in the stream.
        index: usize,
        /// What the parser said (with line and column).
        message: String,
    },
    /// A document is not an object (for example a bare string or a list).
    #[error("{source_name}: document {index} is not an object")]
    NotAnObject {
        /// The file name, or `-` for standard input.
        source_name: String,
        /// The 0-based index of the document in the stream.
        index: usize,
    },
}

/// Reads every object from the given files (`-` is standard input), in order.
///
/// # Errors
/// A file cannot be read or does not parse.
pub fn read_objects(paths: &[String]) -> Result<Vec<Value>, InputError> {
    let mut objects = Vec::new();
    for path in paths {
        let mut text = String::new();
        let result = if path == "-" {
            std::io::stdin().read_to_string(&mut text).map(drop)
        } else {
            std::fs::read_to_string(path).map(|read| text = read)
        };
        result.map_err(|error| InputError::Read {
            source_name: path.clone(),
            error,
        })?;
        objects.extend(parse_objects(&text, path)?);
    }
    Ok(objects)
}

/// Parses YAML or JSON text holding one object, a `---` stream of objects, or `List`s of objects. Empty
/// and `null` documents are skipped.
///
/// The text may come from anyone: its size and shape are bounded (see `yaml_options` for the limits and
/// how scalars read).
///
/// # Errors
/// A document does not parse or is not an object.
pub fn parse_objects(text: &str, source_name: &str) -> Result<Vec<Value>, InputError> {
    let documents: Vec<Spanned<Value>> =
        serde_saphyr::from_multiple_with_options(text, yaml_options()).map_err(|error| {
            InputError::Parse {
                source_name: source_name.to_owned(),
                index: document_index(text, error.location()),
                message: error.render_with_options(serde_saphyr::render_options! {
                    formatter: &UserMessageFormatter,
                    snippets: SnippetMode::Off,
                }),
            }
        })?;
    let mut objects = Vec::new();
    for document in documents {
        let not_an_object = || InputError::NotAnObject {
            source_name: source_name.to_owned(),
            index: document_index(text, Some(document.referenced)),
        };
        match document.value {
            Value::Null => {}
            Value::Object(ref fields) if is_list(fields) => {
                if let Some(Value::Array(items)) = fields.get("items") {
                    for item in items {
                        if !item.is_object() {
                            return Err(not_an_object());
                        }
                        objects.push(item.clone());
                    }
                }
            }
            value @ Value::Object(_) => objects.push(value),
            _ => return Err(not_an_object()),
        }
    }
    Ok(objects)
}

/// The most documents one input may hold (a stream of 200,000 pods).
pub const MAX_DOCUMENTS: usize = 200_000;

/// The most YAML nodes one input may hold (about 200 per pod: 100,000 pods with room to spare).
pub const MAX_NODES: usize = 50_000_000;

/// How the CLI reads YAML (and JSON, which is YAML) it is given.
///
/// - Bounded, for inputs as large as a big cluster's `kubectl get pods -o yaml` (the planners take 100,000
///   pods): at most [`MAX_DOCUMENTS`] documents, [`MAX_NODES`] nodes, 10 events per node, 1 GiB of
///   scalars, nesting 64 deep, and serde-saphyr's alias-replay limits (a billion-laughs input is refused
///   however small the file); duplicate keys are errors.
/// - Scalars as Kubernetes objects expect them: only `true`/`false` are booleans (`yes`, `no`, `on` and
///   `off` stay strings, as in YAML 1.2), and `0644` is the octal 420, as kubectl reads file modes.
/// - Tags the parser does not know (`!foo`) are errors instead of being dropped silently.
/// - Errors are one line (no source snippet); the caller names the file and the document.
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_documents = MAX_DOCUMENTS;
    budget.max_nodes = MAX_NODES;
    budget.max_events = MAX_NODES.saturating_mul(10);
    budget.max_total_scalar_bytes = 1 << 30;
    budget.max_reader_input_bytes = Some(1 << 30);
    serde_saphyr::options! {
        budget: Some(budget),
        duplicate_keys: DuplicateKeyPolicy::Error,
        strict_booleans: true,
        legacy_octal_numbers: true,
        reject_unsupported_tags: true,
        with_snippet: false,
    }
}

/// The 0-based index, counting empty documents too, of the document of `text` at `location`; the last
/// document the parser starts when the location is unknown.
fn document_index(text: &str, location: Option<Location>) -> usize {
    let at = location
        .filter(|location| location.line() > 0)
        .map(|location| (location.line(), location.column()));
    let mut starts = 0usize;
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { break };
        if matches!(event, Event::DocumentStart(..)) {
            let start = (span.start.line() as u64, span.start.col() as u64 + 1);
            if at.is_some_and(|at| start > at) {
                break;
            }
            starts += 1;
        }
    }
    starts.saturating_sub(1)
}

fn is_list(fields: &serde_json::Map<String, Value>) -> bool {
    fields
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|kind| kind == "List" || kind.ends_with("List"))
        && fields.get("items").is_some_and(Value::is_array)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_object_streams_and_lists() {
        assert_eq!(parse_objects("{\"kind\": \"Pod\"}", "x").unwrap().len(), 1);
        let stream = "kind: Pod\n---\n---\nkind: CloneSet\n";
        let objects = parse_objects(stream, "x").unwrap();
        assert_eq!(
            objects
                .iter()
                .map(|o| o["kind"].as_str().unwrap())
                .collect::<Vec<_>>(),
            ["Pod", "CloneSet"]
        );
        let list = "apiVersion: v1\nkind: PodList\nitems: [{kind: Pod, metadata: {name: a}}, {kind: Pod}]\n";
        assert_eq!(parse_objects(list, "x").unwrap().len(), 2);
        assert!(parse_objects("", "x").unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_source_and_document() {
        let error = parse_objects("kind: Pod\n---\n[1, 2]\n", "pods.yaml").unwrap_err();
        assert_eq!(error.to_string(), "pods.yaml: document 1 is not an object");
        let error = parse_objects("kind: Pod\n---\nkey: [unclosed\n", "pods.yaml").unwrap_err();
        assert!(
            error.to_string().starts_with("pods.yaml: document 1: "),
            "{error}"
        );
        // Empty documents count: the index is the one an editor's `---` count gives.
        let error =
            parse_objects("kind: Pod\n---\n---\nkey: [unclosed\n", "pods.yaml").unwrap_err();
        assert_eq!(
            error.to_string(),
            "pods.yaml: document 2: unclosed bracket '[' at line 4, column 6"
        );
        let error = parse_objects("kind: Pod\n---\n\n---\n- 1\n", "pods.yaml").unwrap_err();
        assert_eq!(error.to_string(), "pods.yaml: document 2 is not an object");
        let error = read_objects(&["/definitely/not/here.yaml".to_owned()]).unwrap_err();
        assert!(
            error.to_string().starts_with("/definitely/not/here.yaml: "),
            "{error}"
        );
    }

    #[test]
    fn scalars_read_as_kubernetes_objects_expect_them() {
        let objects = parse_objects(
            "kind: Pod\nlabels: {a: yes, b: on, c: off, d: no}\nmode: 0644\nflag: true\nnothing: ~\n",
            "x",
        )
        .unwrap();
        assert_eq!(
            objects,
            [serde_json::json!({
                "kind": "Pod",
                "labels": {"a": "yes", "b": "on", "c": "off", "d": "no"},
                "mode": 420,
                "flag": true,
                "nothing": null,
            })]
        );
    }

    #[test]
    fn hostile_input_is_a_one_line_error() {
        let cases = [
            (
                "kind: Pod\nkind: Pod\n",
                "document 0: duplicate mapping key",
            ),
            (
                "kind: !custom Pod\n",
                "document 0: unsupported tag `!custom`",
            ),
            (
                "kind: Pod\nx: .inf\n",
                "document 0: value `.inf` is not a finite number",
            ),
            (
                &format!(
                    "kind: Pod\n---\nx: {}{}\n",
                    "[".repeat(100),
                    "]".repeat(100)
                ),
                "document 1: YAML document too large or too complex",
            ),
            (
                &"kind: Pod\n---\n".repeat(MAX_DOCUMENTS + 10),
                "document 200000: YAML document too large or too complex",
            ),
        ];
        for (text, expected) in cases {
            let error = parse_objects(text, "x.yaml").unwrap_err().to_string();
            assert!(error.starts_with(&format!("x.yaml: {expected}")), "{error}");
            assert_eq!(error.lines().count(), 1, "{error}");
        }
        // A billion laughs: each level repeats the previous one ten times.
        let mut bomb = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n".to_owned();
        for level in 1..8 {
            let previous = format!("*l{}", level - 1);
            let items = vec![previous; 10].join(", ");
            bomb.push_str(&format!("l{level}: &l{level} [{items}]\n"));
        }
        let error = parse_objects(&bomb, "x.yaml").unwrap_err().to_string();
        assert!(error.contains("too large or too complex"), "{error}");
    }

    #[test]
    fn a_big_clusters_pods_are_read() {
        // 5,000 pods with a realistic shape: far past serde-saphyr's default of 1,024 documents.
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web-N, labels: {app: web}}\n\
                   spec: {containers: [{name: main, image: 'nginx:1.25', ports: [{containerPort: 80}]}]}\n\
                   status: {phase: Running, conditions: [{type: Ready, status: 'True'}]}\n---\n";
        let objects = parse_objects(&pod.repeat(5_000), "pods.yaml").unwrap();
        assert_eq!(objects.len(), 5_000);
    }
}
