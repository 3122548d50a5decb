//! Reading objects from files or standard input: YAML or JSON, one object, a `---` stream, or a `List`.

use std::io::Read;

use serde_json::Value;

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
/// documents are skipped.
///
/// # Errors
/// A document does not parse or is not an object.
pub fn parse_objects(text: &str, source_name: &str) -> Result<Vec<Value>, InputError> {
    let mut objects = Vec::new();
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let value: Value =
            serde::Deserialize::deserialize(document).map_err(|error| InputError::Parse {
                source_name: source_name.to_owned(),
                index,
                message: error.to_string(),
            })?;
        match value {
            Value::Null => {}
            Value::Object(ref fields) if is_list(fields) => {
                if let Some(Value::Array(items)) = fields.get("items") {
                    for item in items {
                        if !item.is_object() {
                            return Err(InputError::NotAnObject {
                                source_name: source_name.to_owned(),
                                index,
                            });
                        }
                        objects.push(item.clone());
                    }
                }
            }
            Value::Object(_) => objects.push(value),
            _ => {
                return Err(InputError::NotAnObject {
                    source_name: source_name.to_owned(),
                    index,
                });
            }
        }
    }
    Ok(objects)
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
        let error = read_objects(&["/definitely/not/here.yaml".to_owned()]).unwrap_err();
        assert!(
            error.to_string().starts_with("/definitely/not/here.yaml: "),
            "{error}"
        );
    }
}
