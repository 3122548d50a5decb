//! The name rule of the job kinds (upstream's `validateBroadcastJobName`, `validateAdvancedCronJobName`):
//! letters, digits and `-`, at most 63 characters, because the name becomes a label value of the pods or
//! jobs they create.

use super::FieldError;

/// The longest name a BroadcastJob or AdvancedCronJob may have.
const MAX_LENGTH: usize = 63;

/// `metadata.name` of a `kind` object (an empty name is `generateName` not yet expanded, and passes).
pub(crate) fn job_name_errors(name: Option<&str>, kind: &str) -> Vec<FieldError> {
    let name = name.unwrap_or_default();
    let mut errors = Vec::new();
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            format!("{kind} name must consist of alphanumeric characters or '-'"),
        ));
    }
    if name.len() > MAX_LENGTH {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            format!("must be no more than {MAX_LENGTH} characters"),
        ));
    }
    errors
}
