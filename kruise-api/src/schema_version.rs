//! Which version of these types wrote an installed CustomResourceDefinition, so that an older installer never
//! replaces the schema of a newer one. During a rolling upgrade of a controller that installs its CRDs at
//! start, a replica of the old version starting after a replica of the new one would otherwise prune every
//! field the new schema added from objects written meanwhile.
//!
//! An installer writes [`ANNOTATION`] = [`CURRENT`] on each CRD it applies, and asks [`decide`] first.
//!
//! ```
//! use kruise_api::schema_version::{Install, decide};
//!
//! assert_eq!(decide(None, "0.2.0"), Install::Apply);
//! assert_eq!(decide(Some("0.1.9"), "0.2.0"), Install::Apply);
//! assert_eq!(decide(Some("0.2.0"), "0.2.0"), Install::Apply);
//! assert_eq!(
//!     decide(Some("0.10.0"), "0.2.0"),
//!     Install::KeepNewer { installed: "0.10.0".into() }
//! );
//! ```

use std::cmp::Ordering;

/// The annotation on a CustomResourceDefinition naming the version of the types its schema came from.
pub const ANNOTATION: &str = "crd.kruise-rs.io/schema-version";

/// The version of these types (the crate's version).
pub const CURRENT: &str = env!("CARGO_PKG_VERSION");

/// What an installer of version `ours` does with a CRD that is already installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Install {
    /// Write our schema: the CRD is not installed, carries no version or an unreadable one (written by
    /// another tool), or was written by this version or an older one.
    Apply,
    /// Leave it: a newer version wrote it.
    KeepNewer {
        /// The version that wrote it.
        installed: String,
    },
}

/// Whether to write the schema of version `ours` over a CRD whose [`ANNOTATION`] is `installed`.
#[must_use]
pub fn decide(installed: Option<&str>, ours: &str) -> Install {
    let newer = installed
        .and_then(|installed| Some((installed, parse(installed)?)))
        .zip(parse(ours))
        .filter(|((_, theirs), ours)| compare(theirs, ours) == Ordering::Greater);
    match newer {
        Some(((installed, _), _)) => Install::KeepNewer {
            installed: installed.to_owned(),
        },
        None => Install::Apply,
    }
}

/// A semantic version: the release numbers and the pre-release identifiers (build metadata is ignored).
#[derive(Debug, PartialEq, Eq)]
struct Version<'a> {
    release: [u64; 3],
    pre_release: Option<&'a str>,
}

fn parse(text: &str) -> Option<Version<'_>> {
    let text = text.trim();
    let without_build = text.split_once('+').map_or(text, |(version, _)| version);
    let (core, pre_release) = match without_build.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (without_build, None),
    };
    let mut numbers = core.split('.');
    let mut release = [0_u64; 3];
    for slot in &mut release {
        *slot = numbers.next()?.parse().ok()?;
    }
    if numbers.next().is_some() {
        return None;
    }
    Some(Version {
        release,
        pre_release,
    })
}

/// Semantic-version precedence: release numbers first; a pre-release sorts before its release; pre-release
/// identifiers compare numerically when both are numbers, else as text, and more identifiers win a tie.
fn compare(left: &Version<'_>, right: &Version<'_>) -> Ordering {
    left.release
        .cmp(&right.release)
        .then_with(|| match (left.pre_release, right.pre_release) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(left), Some(right)) => {
                let mut lefts = left.split('.');
                let mut rights = right.split('.');
                loop {
                    match (lefts.next(), rights.next()) {
                        (None, None) => return Ordering::Equal,
                        (None, Some(_)) => return Ordering::Less,
                        (Some(_), None) => return Ordering::Greater,
                        (Some(l), Some(r)) => {
                            let order = match (l.parse::<u64>(), r.parse::<u64>()) {
                                (Ok(l), Ok(r)) => l.cmp(&r),
                                (Ok(_), Err(_)) => Ordering::Less,
                                (Err(_), Ok(_)) => Ordering::Greater,
                                (Err(_), Err(_)) => l.cmp(r),
                            };
                            if order != Ordering::Equal {
                                return order;
                            }
                        }
                    }
                }
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_newer_installer_is_left_alone() {
        let keep = |installed: &str| Install::KeepNewer {
            installed: installed.to_owned(),
        };
        let cases = [
            (None, "0.1.0", Install::Apply),
            (Some("0.1.0"), "0.1.0", Install::Apply),
            (Some("0.0.9"), "0.1.0", Install::Apply),
            (Some("0.1.1"), "0.1.0", keep("0.1.1")),
            (Some("1.0.0"), "0.9.9", keep("1.0.0")),
            (Some("0.10.0"), "0.9.0", keep("0.10.0")),
            (Some("0.2.0-rc.1"), "0.2.0", Install::Apply),
            (Some("0.2.0"), "0.2.0-rc.1", keep("0.2.0")),
            (Some("0.2.0-rc.10"), "0.2.0-rc.9", keep("0.2.0-rc.10")),
            (Some("0.2.0-rc.1"), "0.2.0-beta", keep("0.2.0-rc.1")),
            (Some("0.2.0+build.7"), "0.2.0", Install::Apply),
            (Some("garbage"), "0.1.0", Install::Apply),
            (Some("1.2"), "0.1.0", Install::Apply),
            (Some("1.2.3.4"), "0.1.0", Install::Apply),
            (Some(" 0.3.0 "), "0.1.0", keep(" 0.3.0 ")),
        ];
        for (installed, ours, expected) in cases {
            assert_eq!(decide(installed, ours), expected, "{installed:?} vs {ours}");
        }
    }

    #[test]
    fn the_current_version_parses() {
        assert!(parse(CURRENT).is_some(), "{CURRENT}");
    }
}
