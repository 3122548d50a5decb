//! String enums that keep values they do not know.
//!
//! Upstream models most enumerations as open Go strings: a newer OpenKruise may write a value this crate has
//! never heard of. [`open_enum!`](crate::open_enum) declares a Rust enum with one variant per known value and an
//! `Unknown(String)` variant that carries anything else, so reading and writing an object never loses data.

/// Declares a string enum with known variants plus `Unknown(String)`.
///
/// The generated type serialises as a plain JSON string, implements `Display`, `FromStr` (infallible),
/// `From<&str>`, `From<String>`, `AsRef<str>` and `JsonSchema`. Its schema is `{"type": "string"}`; put
/// `#[schema_enum]` before the doc comments to also list the known values as a closed `enum` in the CRD
/// schema (only where upstream's CRD does the same).
///
/// ```
/// kruise_api::open_enum! {
///     /// How a pod is replaced.
///     pub enum Policy {
///         /// Delete and create again.
///         ReCreate = "ReCreate",
///         /// Patch the running pod.
///         InPlace = "InPlace",
///     }
/// }
///
/// let known: Policy = serde_json::from_str("\"ReCreate\"").unwrap();
/// assert_eq!(known, Policy::ReCreate);
/// let future: Policy = serde_json::from_str("\"Teleport\"").unwrap();
/// assert_eq!(future, Policy::Unknown("Teleport".into()));
/// assert_eq!(serde_json::to_string(&future).unwrap(), "\"Teleport\"");
/// ```
#[macro_export]
macro_rules! open_enum {
    (
        #[schema_enum]
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal, )+
        }
    ) => {
        $crate::open_enum!(@define [true] $(#[$meta])* $vis enum $name { $( $(#[$vmeta])* $variant = $value, )+ });
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal, )+
        }
    ) => {
        $crate::open_enum!(@define [false] $(#[$meta])* $vis enum $name { $( $(#[$vmeta])* $variant = $value, )+ });
    };
    (
        @define [$closed:literal]
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version of kruise-api does not know; kept verbatim so that nothing is lost.
            Unknown(::std::string::String),
        }

        impl $name {
            /// Every value this version of kruise-api knows, in declaration order.
            pub const KNOWN_VALUES: &'static [&'static str] = &[$($value),+];

            /// The wire value.
            #[must_use]
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $value, )+
                    Self::Unknown(value) => value.as_str(),
                }
            }

            /// Whether this is one of the known values.
            #[must_use]
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Unknown(_))
            }
        }

        impl ::std::convert::From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $( $value => Self::$variant, )+
                    other => Self::Unknown(other.to_owned()),
                }
            }
        }

        impl ::std::convert::From<::std::string::String> for $name {
            fn from(value: ::std::string::String) -> Self {
                match value.as_str() {
                    $( $value => Self::$variant, )+
                    _ => Self::Unknown(value),
                }
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = ::std::convert::Infallible;

            fn from_str(value: &str) -> ::std::result::Result<Self, Self::Err> {
                Ok(Self::from(value))
            }
        }

        impl ::std::convert::AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                let value = <::std::string::String as ::serde::Deserialize>::deserialize(deserializer)?;
                Ok(Self::from(value))
            }
        }

        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(stringify!($name))
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                if $closed {
                    ::schemars::json_schema!({ "type": "string", "enum": [$($value),+] })
                } else {
                    ::schemars::json_schema!({ "type": "string" })
                }
            }
        }
    };
}

#[cfg(test)]
#[allow(unreachable_pub, dead_code)]
mod tests {
    crate::open_enum! {
        /// A test enum.
        pub enum Colour {
            /// Red.
            Red = "red",
            /// Blue.
            Blue = "Blue",
        }
    }

    crate::open_enum! {
        #[schema_enum]
        /// A closed-schema test enum.
        pub enum Switch {
            /// On.
            On = "On",
            /// Off.
            Off = "Off",
        }
    }

    #[test]
    fn known_and_unknown_values_round_trip() {
        for raw in ["\"red\"", "\"Blue\"", "\"Red\"", "\"\""] {
            let value: Colour = serde_json::from_str(raw).unwrap();
            assert_eq!(serde_json::to_string(&value).unwrap(), raw);
        }
        assert_eq!(
            Colour::from("Red"),
            Colour::Unknown("Red".into()),
            "matching is case-sensitive like Go"
        );
        assert!(Colour::Red.is_known());
        assert!(!Colour::from("green").is_known());
        assert_eq!(Colour::KNOWN_VALUES, &["red", "Blue"]);
        assert_eq!(Colour::Blue.to_string(), "Blue");
    }

    #[test]
    fn schema_lists_values_only_when_closed() {
        let open = schemars::schema_for!(Colour);
        assert_eq!(open.get("enum"), None);
        let closed = schemars::schema_for!(Switch);
        assert_eq!(closed.get("enum"), Some(&serde_json::json!(["On", "Off"])));
    }
}
