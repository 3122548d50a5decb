//! The rendered manifests: YAML documents, each with the comment that explains it, grouped in the files of
//! `examples/manifests/`.

use std::io::Write;

use serde::Serialize;

/// One object of the manifests: its YAML (field order of the API type), its JSON value (for comparing),
/// and the comment printed above it.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// Lines printed as `# ...` above the object (empty for none).
    pub comment: String,
    /// The object as YAML.
    pub yaml: String,
    /// The object as JSON.
    pub value: serde_json::Value,
}

impl Document {
    /// Renders a typed object with its comment.
    ///
    /// # Errors
    /// The object does not serialize (never for the API types used here).
    pub fn new(comment: &str, object: &impl Serialize) -> std::io::Result<Self> {
        Ok(Self {
            comment: comment.trim().to_owned(),
            yaml: serde_saphyr::to_string(object).map_err(std::io::Error::other)?,
            value: serde_json::to_value(object)?,
        })
    }

    /// Writes the comment and the object.
    ///
    /// # Errors
    /// Writing fails.
    pub fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        for line in self.comment.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                writeln!(out, "#")?;
            } else {
                writeln!(out, "# {line}")?;
            }
        }
        out.write_all(self.yaml.as_bytes())?;
        if !self.yaml.ends_with('\n') {
            writeln!(out)?;
        }
        Ok(())
    }
}

/// The documents of one file of `examples/manifests/`.
#[derive(Clone, Debug, PartialEq)]
pub struct ManifestFile {
    /// The file name (`rbac.yaml`).
    pub name: &'static str,
    /// Its objects, in order.
    pub documents: Vec<Document>,
}

/// Writes documents as one `---`-separated YAML stream.
///
/// # Errors
/// Writing fails.
pub fn write_stream<'a>(
    documents: impl IntoIterator<Item = &'a Document>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    for (index, document) in documents.into_iter().enumerate() {
        if index > 0 {
            writeln!(out, "---")?;
        }
        document.write(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_go_above_their_object_and_documents_are_separated() {
        let first = Document::new("Line one.\n\nLine two.", &serde_json::json!({"a": 1})).unwrap();
        let second = Document::new("", &serde_json::json!({"b": [""]})).unwrap();
        let mut out = Vec::new();
        write_stream([&first, &second], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("# Line one.\n#\n# Line two.\na: 1\n---\nb:"),
            "{text}"
        );
        let parsed: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
        assert_eq!(parsed, [first.value, second.value]);
    }
}
