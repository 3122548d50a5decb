//! The changes `set env` is asked for, read as kubectl reads them: `NAME=VALUE` sets a variable (the value
//! may be empty or contain `=`), `NAME-` removes one, and `--from=configmap/NAME|secret/NAME` adds one
//! variable per key of that object, referring to the key (`valueFrom`) rather than copying its value.

use serde_json::{Value, json};

/// One positional argument of `set env`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvArgument {
    /// `NAME=VALUE`.
    Set {
        /// The variable.
        name: String,
        /// Its value.
        value: String,
    },
    /// `NAME-`.
    Remove(String),
}

/// Whether `name` is a valid environment variable name for the API server (`[-._a-zA-Z][-._a-zA-Z0-9]*`).
#[must_use]
pub fn is_env_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
    chars
        .next()
        .is_some_and(|first| allowed(first) && !first.is_ascii_digit())
        && chars.all(allowed)
}

fn checked_name(name: &str, text: &str) -> Result<String, String> {
    if is_env_var_name(name) {
        return Ok(name.to_owned());
    }
    Err(format!(
        "{text:?}: {name:?} is not a valid environment variable name (letters, digits, '-', '.' and '_', \
         not starting with a digit)"
    ))
}

impl std::str::FromStr for EnvArgument {
    type Err = String;

    /// Parses `NAME=VALUE` or `NAME-`.
    fn from_str(text: &str) -> Result<Self, String> {
        if let Some((name, value)) = text.split_once('=') {
            return Ok(Self::Set {
                name: checked_name(name, text)?,
                value: value.to_owned(),
            });
        }
        if let Some(name) = text.strip_suffix('-') {
            return Ok(Self::Remove(checked_name(name, text)?));
        }
        Err(format!(
            "{text:?}: expected NAME=VALUE to set a variable or NAME- to remove it"
        ))
    }
}

/// What `set env` does to each selected container: the variables to set (in order, as `env` entries) and
/// the names to remove.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EnvChanges {
    /// `env` entries to add, or to put in place of the entry of the same name.
    pub set: Vec<Value>,
    /// Names whose entries are removed.
    pub remove: Vec<String>,
}

impl EnvChanges {
    /// The changes of the positional arguments, then the entries `from` adds, with `prefix` in front of every
    /// name set (kubectl's `--prefix`, which applies to all of them).
    ///
    /// # Errors
    /// A name both set and removed, or a prefixed name that is not a valid variable name.
    pub fn new(arguments: &[EnvArgument], from: Vec<Value>, prefix: &str) -> Result<Self, String> {
        let mut changes = Self::default();
        for argument in arguments {
            match argument {
                EnvArgument::Set { name, value } => {
                    changes.set.push(json!({"name": name, "value": value}));
                }
                EnvArgument::Remove(name) => changes.remove.push(name.clone()),
            }
        }
        changes.set.extend(from);
        for entry in &mut changes.set {
            let name = format!("{prefix}{}", entry_name(entry));
            if !is_env_var_name(&name) {
                return Err(format!("{name:?} is not a valid environment variable name"));
            }
            if let Some(fields) = entry.as_object_mut() {
                fields.insert("name".to_owned(), Value::String(name));
            }
        }
        if let Some(both) = changes
            .set
            .iter()
            .map(entry_name)
            .find(|name| changes.remove.iter().any(|removed| removed == name))
        {
            return Err(format!(
                "{both} is both set and removed: give NAME=VALUE or NAME-, not both"
            ));
        }
        Ok(changes)
    }

    /// Whether there is nothing to change.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.remove.is_empty()
    }
}

/// The `name` of an `env` entry (empty when it has none).
#[must_use]
pub fn entry_name(entry: &Value) -> &str {
    entry
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The object `--from` names: a ConfigMap or a Secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvSource {
    /// `configmap/NAME` (also `cm/NAME`).
    ConfigMap(String),
    /// `secret/NAME`.
    Secret(String),
}

impl EnvSource {
    /// The object's name.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Self::ConfigMap(name) | Self::Secret(name) => name,
        }
    }
}

impl std::str::FromStr for EnvSource {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let unsupported = || format!("--from {text:?}: expected configmap/NAME or secret/NAME");
        let (kind, name) = text.split_once('/').ok_or_else(unsupported)?;
        if name.is_empty() || name.contains('/') {
            return Err(unsupported());
        }
        match kind.to_ascii_lowercase().as_str() {
            "configmap" | "configmaps" | "cm" => Ok(Self::ConfigMap(name.to_owned())),
            "secret" | "secrets" => Ok(Self::Secret(name.to_owned())),
            _ => Err(unsupported()),
        }
    }
}

/// A key as a variable name, as kubectl turns it into one: upper case, anything but letters, digits and
/// `_` replaced by `_`.
#[must_use]
pub fn key_to_env_name(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The `env` entries `--from` adds: one per key of the object's data (only the `keys` asked for, when any
/// are), each referring to its key. Keys come in the order given (the object's data is sorted by key).
///
/// # Errors
/// A key asked for with `--keys` that the object does not have.
pub fn entries_from<'a>(
    source: &EnvSource,
    data_keys: impl IntoIterator<Item = &'a String>,
    keys: &[String],
) -> Result<Vec<Value>, String> {
    let data_keys: Vec<&String> = data_keys.into_iter().collect();
    if let Some(missing) = keys.iter().find(|key| !data_keys.contains(key)) {
        let what = match source {
            EnvSource::ConfigMap(_) => "configmap",
            EnvSource::Secret(_) => "secret",
        };
        return Err(format!(
            "--keys {missing:?}: {what} {} has no such key",
            source.name()
        ));
    }
    let selector = match source {
        EnvSource::ConfigMap(_) => "configMapKeyRef",
        EnvSource::Secret(_) => "secretKeyRef",
    };
    Ok(data_keys
        .into_iter()
        .filter(|key| keys.is_empty() || keys.contains(key))
        .map(|key| {
            json!({
                "name": key_to_env_name(key),
                "valueFrom": {selector: {"name": source.name(), "key": key}},
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<EnvArgument, String> {
        text.parse()
    }

    #[test]
    fn arguments_set_or_remove_and_bad_names_are_refused() {
        assert_eq!(
            parse("A=b=c"),
            Ok(EnvArgument::Set {
                name: "A".into(),
                value: "b=c".into()
            })
        );
        assert_eq!(
            parse("EMPTY="),
            Ok(EnvArgument::Set {
                name: "EMPTY".into(),
                value: String::new()
            })
        );
        assert_eq!(parse("OLD-"), Ok(EnvArgument::Remove("OLD".into())));
        assert_eq!(
            parse("my.var-x-"),
            Ok(EnvArgument::Remove("my.var-x".into()))
        );
        for bad in ["NAME", "=x", "1A=x", "A B=x", "-", "A$-"] {
            let error = parse(bad).unwrap_err();
            assert!(error.contains(&format!("{bad:?}")), "{bad}: {error}");
        }
    }

    #[test]
    fn changes_apply_the_prefix_and_refuse_a_name_set_and_removed() {
        let arguments = [parse("A=1").unwrap(), parse("B-").unwrap()];
        let from =
            vec![json!({"name": "K", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}})];
        let changes = EnvChanges::new(&arguments, from, "P_").unwrap();
        assert_eq!(changes.set[0], json!({"name": "P_A", "value": "1"}));
        assert_eq!(changes.set[1]["name"], "P_K");
        assert_eq!(changes.set[1]["valueFrom"]["configMapKeyRef"]["key"], "k");
        assert_eq!(changes.remove, ["B"]);
        assert!(!changes.is_empty());
        let error = EnvChanges::new(&[parse("A=1").unwrap(), parse("A-").unwrap()], vec![], "")
            .unwrap_err();
        assert!(error.contains("A is both set and removed"), "{error}");
        let error = EnvChanges::new(&arguments, vec![], "9").unwrap_err();
        assert!(error.contains("\"9A\""), "{error}");
        assert!(EnvChanges::new(&[], vec![], "").unwrap().is_empty());
    }

    #[test]
    fn from_adds_one_reference_per_key() {
        let source: EnvSource = "configmap/settings".parse().unwrap();
        assert_eq!(source, EnvSource::ConfigMap("settings".into()));
        assert_eq!("cm/x".parse(), Ok(EnvSource::ConfigMap("x".into())));
        assert_eq!("secret/s".parse(), Ok(EnvSource::Secret("s".into())));
        for bad in ["deployment/x", "configmap/", "secret", "secret/a/b"] {
            assert!(bad.parse::<EnvSource>().unwrap_err().contains(bad), "{bad}");
        }
        let keys = ["log-level".to_owned(), "mode".to_owned()];
        let entries = entries_from(&source, &keys, &[]).unwrap();
        assert_eq!(
            entries,
            [
                json!({"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "log-level"}}}),
                json!({"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}}),
            ]
        );
        let secret = EnvSource::Secret("s".into());
        let only = entries_from(&secret, &keys, &["mode".into()]).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(only[0]["valueFrom"]["secretKeyRef"]["name"], "s");
        let error = entries_from(&secret, &keys, &["nope".into()]).unwrap_err();
        assert!(
            error.contains("\"nope\"") && error.contains("secret s"),
            "{error}"
        );
        assert_eq!(key_to_env_name("a.b-c_d"), "A_B_C_D");
    }
}
