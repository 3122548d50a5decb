//! Output formats shared by the subcommands.

use std::io::Write;

use serde::Serialize;

/// How a subcommand prints objects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// YAML (a `---`-separated stream for several objects).
    #[default]
    Yaml,
    /// JSON (a `kind: List` object for several objects).
    Json,
}

/// Writes objects in the format: YAML documents separated by `---`, or one JSON `List`.
///
/// # Errors
/// Writing fails.
pub fn write_objects<T: Serialize>(
    objects: &[T],
    format: Format,
    out: &mut impl Write,
) -> std::io::Result<()> {
    match format {
        Format::Yaml => {
            for (index, object) in objects.iter().enumerate() {
                if index > 0 {
                    writeln!(out, "---")?;
                }
                let text = serde_saphyr::to_string(object).map_err(std::io::Error::other)?;
                out.write_all(text.as_bytes())?;
            }
        }
        Format::Json => {
            let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects});
            serde_json::to_writer_pretty(&mut *out, &list)?;
            writeln!(out)?;
        }
    }
    Ok(())
}
