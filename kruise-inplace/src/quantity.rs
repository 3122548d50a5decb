//! Kubernetes resource quantities as Go's `resource.Quantity` reads, compares and writes them.
//!
//! Go writes a quantity in *canonical form*: `"1000m"` becomes `"1"`, `"0.5"` becomes `"500m"`, `"1000"` becomes
//! `"1k"`, `"1.5Gi"` becomes `"1536Mi"`, and anything finer than a nano unit is rounded up to it. Revision data,
//! the `containerResources` of an update spec and every hash over JSON therefore see the canonical form, so this
//! module reproduces it.
//!
//! Values are held exactly as `mantissa × 10^exponent` in 128 bits. Go keeps arbitrary precision; the only
//! values this module cannot represent are those whose digits do not fit 38 decimal places (about `1.7e38`),
//! which [`parse`] rejects with [`QuantityError::OutOfRange`].
//!
//! ```
//! use kruise_inplace::quantity;
//!
//! assert_eq!(quantity::canonical("1000m").unwrap(), "1");
//! assert_eq!(quantity::canonical("1.5Gi").unwrap(), "1536Mi");
//! assert!(quantity::parse("2").unwrap() > quantity::parse("1500m").unwrap());
//! ```

use std::cmp::Ordering;

/// Why a quantity does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QuantityError {
    /// The text is not `<sign><digits>[.<digits>]<suffix>`.
    #[error(
        "quantity {0:?}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format(String),
    /// The suffix is none of the SI, binary-SI or exponent suffixes.
    #[error("quantity {0:?}: unable to parse quantity's suffix")]
    Suffix(String),
    /// The value needs more than 38 significant decimal digits.
    #[error("quantity {0:?}: out of the range this implementation represents")]
    OutOfRange(String),
}

/// How a quantity was written, which decides how it is written back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Decimal SI suffixes (`n`, `u`, `m`, none, `k`, `M`, `G`, `T`, `P`, `E`).
    DecimalSi,
    /// Binary SI suffixes (`Ki` … `Ei`).
    BinarySi,
    /// A decimal exponent (`1e3`, `5E-6`).
    DecimalExponent,
}

/// A parsed quantity: `mantissa × 10^exponent`, rounded up to nano units, with the format it was written in.
#[derive(Clone, Copy, Debug)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
    format: Format,
}

const NANO: i32 = -9;
const MAX_DIGITS: usize = 38;
/// The largest power of ten a parsed quantity keeps. Stripping trailing zeros (at most [`MAX_DIGITS`] of them),
/// scaling to nano units and aligning two quantities add less than 64 to an exponent, so none of that
/// arithmetic can overflow `i32`; a larger exponent (`1e2147483647`) is [`QuantityError::OutOfRange`].
const MAX_EXPONENT: i32 = i32::MAX - 64;

impl Quantity {
    /// The zero quantity (`"0"`).
    pub const ZERO: Self = Self {
        mantissa: 0,
        exponent: 0,
        format: Format::DecimalSi,
    };

    /// The format the quantity was written in.
    #[must_use]
    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether the value is zero.
    #[must_use]
    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// Whether the value is greater than zero.
    #[must_use]
    pub fn is_positive(&self) -> bool {
        self.mantissa > 0
    }

    /// The sum of two quantities (keeping this quantity's format), or `None` when it leaves the representable
    /// range.
    #[must_use]
    pub fn checked_add(&self, other: &Self) -> Option<Self> {
        let exponent = self.exponent.min(other.exponent);
        let left = scale_up(self.mantissa, self.exponent - exponent)?;
        let right = scale_up(other.mantissa, other.exponent - exponent)?;
        Some(Self {
            mantissa: left.checked_add(right)?,
            exponent,
            format: self.format,
        })
    }

    /// Go's canonical text of the quantity, or `None` in the two cases Go writes something this module does not
    /// reproduce (a decimal-SI value of 1000E or more, whose suffix Go drops; a value whose canonical mantissa
    /// needs more than 128 bits).
    #[must_use]
    pub fn to_canonical(&self) -> Option<String> {
        if self.mantissa == 0 {
            return Some("0".to_owned());
        }
        let mut format = self.format;
        if format == Format::BinarySi {
            let small = self.cmp(&Self::from_int(1024)) == Ordering::Less
                && self.cmp(&Self::from_int(-1024)) == Ordering::Greater;
            if small || !self.is_integer() {
                format = Format::DecimalSi;
            }
        }
        if format == Format::BinarySi {
            let (mantissa, exponent) = strip_tens(self.mantissa, self.exponent);
            let mut value = scale_up(mantissa, exponent)?;
            let mut times = 0_usize;
            while value.unsigned_abs() >= 1024 && value % 1024 == 0 {
                value /= 1024;
                times += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"].get(times)?;
            return Some(format!("{value}{suffix}"));
        }
        let (mut mantissa, mut exponent) = strip_tens(self.mantissa, self.exponent);
        match exponent.rem_euclid(3) {
            1 => {
                mantissa = mantissa.checked_mul(10)?;
                exponent -= 1;
            }
            2 => {
                mantissa = mantissa.checked_mul(100)?;
                exponent -= 2;
            }
            _ => {}
        }
        let suffix = match format {
            Format::DecimalExponent if exponent == 0 => String::new(),
            Format::DecimalExponent => format!("e{exponent}"),
            _ => match exponent {
                -9 => "n".to_owned(),
                -6 => "u".to_owned(),
                -3 => "m".to_owned(),
                0 => String::new(),
                3 => "k".to_owned(),
                6 => "M".to_owned(),
                9 => "G".to_owned(),
                12 => "T".to_owned(),
                15 => "P".to_owned(),
                18 => "E".to_owned(),
                _ => return None,
            },
        };
        Some(format!("{mantissa}{suffix}"))
    }

    /// The value in nano units (`"1"` is `1_000_000_000`); exact, since parsing rounds up to nano units. `None`
    /// when it does not fit 128 bits.
    #[must_use]
    pub fn to_nanos(&self) -> Option<i128> {
        let shift = self.exponent - NANO;
        if shift >= 0 {
            scale_up(self.mantissa, shift)
        } else {
            let divisor = scale_up(1, -shift)?;
            Some(self.mantissa / divisor)
        }
    }

    /// A quantity of `nanos` nano units written in `format`.
    #[must_use]
    pub fn from_nanos(nanos: i128, format: Format) -> Self {
        Self {
            mantissa: nanos,
            exponent: NANO,
            format,
        }
    }

    fn from_int(value: i128) -> Self {
        Self {
            mantissa: value,
            exponent: 0,
            format: Format::DecimalSi,
        }
    }

    fn is_integer(&self) -> bool {
        let (_, exponent) = strip_tens(self.mantissa, self.exponent);
        exponent >= 0
    }

    /// Decimal digits of the magnitude without trailing zeros, and the power of ten of its last digit.
    fn digits(&self) -> (String, i32) {
        let (mantissa, exponent) = strip_tens(self.mantissa, self.exponent);
        (mantissa.unsigned_abs().to_string(), exponent)
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    /// Compares values (not formats): `"1"`, `"1000m"` and `"1e0"` are equal.
    fn cmp(&self, other: &Self) -> Ordering {
        let sign = |m: i128| m.signum();
        match sign(self.mantissa).cmp(&sign(other.mantissa)) {
            Ordering::Equal if self.mantissa == 0 => return Ordering::Equal,
            Ordering::Equal => {}
            unequal => return unequal,
        }
        let (left, left_exp) = self.digits();
        let (right, right_exp) = other.digits();
        // Power of ten of the leading digit decides first, then the digits themselves.
        let left_top = i64::from(left_exp) + left.len() as i64;
        let right_top = i64::from(right_exp) + right.len() as i64;
        let magnitude = left_top
            .cmp(&right_top)
            .then_with(|| left.as_bytes().cmp(right.as_bytes()));
        if self.mantissa < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

/// Parses a quantity the way Go's `resource.ParseQuantity` does, including its rounding up to nano units and
/// its cap of binary-SI values at `2^63 - 1`.
///
/// # Errors
/// [`QuantityError`] when the text is not a quantity or its value is too large to represent.
pub fn parse(text: &str) -> Result<Quantity, QuantityError> {
    if text.is_empty() {
        return Err(QuantityError::Format(text.to_owned()));
    }
    let parts = split(text).ok_or_else(|| QuantityError::Format(text.to_owned()))?;
    let (base_two, exponent, format) =
        interpret_suffix(parts.suffix).ok_or_else(|| QuantityError::Suffix(text.to_owned()))?;
    let out_of_range = || QuantityError::OutOfRange(text.to_owned());

    let mut digits = String::with_capacity(parts.integer.len() + parts.fraction.len());
    digits.push_str(parts.integer);
    digits.push_str(parts.fraction);
    let fraction_len = i32::try_from(parts.fraction.len()).map_err(|_| out_of_range())?;

    let (mut mantissa, mut exponent10) = if base_two {
        let (value, shift) = parse_digits(&digits).ok_or_else(out_of_range)?;
        let factor = 1_i128 << exponent.clamp(0, 60);
        (
            value.checked_mul(factor).ok_or_else(out_of_range)?,
            shift - fraction_len,
        )
    } else {
        let exponent10 = exponent
            .checked_sub(fraction_len)
            .ok_or_else(out_of_range)?;
        if exponent10 < NANO {
            // Keep only the digits down to nano units; anything left below rounds the magnitude up.
            let cut =
                usize::try_from(i64::from(NANO) - i64::from(exponent10)).unwrap_or(usize::MAX);
            let keep_len = digits.len().saturating_sub(cut);
            let (kept, rest) = digits.split_at(keep_len);
            let (mut value, mut shift) = parse_digits(kept).ok_or_else(out_of_range)?;
            if rest.bytes().any(|b| b != b'0') {
                value = scale_up(value, shift).ok_or_else(out_of_range)?;
                shift = 0;
                value = value.checked_add(1).ok_or_else(out_of_range)?;
            }
            (value, NANO + shift)
        } else {
            let (value, shift) = parse_digits(&digits).ok_or_else(out_of_range)?;
            (
                value,
                exponent10.checked_add(shift).ok_or_else(out_of_range)?,
            )
        }
    };
    if mantissa == 0 {
        // Zero is zero at any power of ten ("0e2147483647").
        exponent10 = 0;
    }
    if exponent10 > MAX_EXPONENT {
        return Err(out_of_range());
    }
    if base_two && exponent10 < NANO {
        let divisor = scale_up(1, NANO - exponent10).ok_or_else(out_of_range)?;
        let rounded_up = mantissa % divisor != 0;
        mantissa = mantissa / divisor + i128::from(rounded_up);
        exponent10 = NANO;
    }
    let mut quantity = Quantity {
        mantissa,
        exponent: exponent10,
        format,
    };
    if format == Format::BinarySi {
        let max = Quantity::from_int(i128::from(i64::MAX));
        if quantity > max {
            quantity.mantissa = i128::from(i64::MAX);
            quantity.exponent = 0;
        }
    }
    if !parts.positive {
        quantity.mantissa = -quantity.mantissa;
    }
    Ok(quantity)
}

/// The canonical text Go writes for a quantity; the input unchanged in the rare cases [`Quantity::to_canonical`]
/// does not reproduce.
///
/// # Errors
/// [`QuantityError`] when the text is not a quantity.
pub fn canonical(text: &str) -> Result<String, QuantityError> {
    let quantity = parse(text)?;
    Ok(quantity.to_canonical().unwrap_or_else(|| text.to_owned()))
}

/// Whether two quantity texts have the same value (Go's `Quantity.Cmp == 0`); texts that do not parse are
/// compared as text.
#[must_use]
pub fn same_value(left: &str, right: &str) -> bool {
    match (parse(left), parse(right)) {
        (Ok(left), Ok(right)) => left == right,
        _ => left == right,
    }
}

struct Parts<'a> {
    positive: bool,
    integer: &'a str,
    fraction: &'a str,
    suffix: &'a str,
}

/// Go's `parseQuantityString`: sign, leading zeros, integer digits, optional fraction, then a suffix made of
/// `eEinumkKMGTP` letters, an optional sign and digits.
fn split(text: &str) -> Option<Parts<'_>> {
    let bytes = text.as_bytes();
    let mut pos = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos = 1;
        }
        Some(b'+') => pos = 1,
        _ => {}
    }
    while bytes.get(pos) == Some(&b'0') {
        pos += 1;
    }
    if pos >= bytes.len() {
        return Some(Parts {
            positive,
            integer: "0",
            fraction: "",
            suffix: "",
        });
    }
    let integer_start = pos;
    while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    let integer = text.get(integer_start..pos)?;
    let mut fraction = "";
    if bytes.get(pos) == Some(&b'.') {
        pos += 1;
        let fraction_start = pos;
        while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        fraction = text.get(fraction_start..pos)?;
    }
    let suffix_start = pos;
    while bytes.get(pos).is_some_and(|b| b"eEinumkKMGTP".contains(b)) {
        pos += 1;
    }
    if matches!(bytes.get(pos), Some(b'-' | b'+')) {
        pos += 1;
    }
    while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    if pos < bytes.len() {
        return None;
    }
    Some(Parts {
        positive,
        integer,
        fraction,
        suffix: text.get(suffix_start..)?,
    })
}

/// `(base is 2, exponent, format)` of a suffix.
fn interpret_suffix(suffix: &str) -> Option<(bool, i32, Format)> {
    let decimal = |exponent| Some((false, exponent, Format::DecimalSi));
    let binary = |exponent| Some((true, exponent, Format::BinarySi));
    match suffix {
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "" => decimal(0),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let rest = suffix
                .strip_prefix('e')
                .or_else(|| suffix.strip_prefix('E'))?;
            let exponent: i64 = rest.parse().ok()?;
            // Go parses 64 bits and keeps the low 32.
            #[allow(clippy::cast_possible_truncation)]
            let exponent = exponent as i32;
            Some((false, exponent, Format::DecimalExponent))
        }
    }
}

/// The value of a decimal digit string as `mantissa × 10^shift`; trailing zeros move into the shift when the
/// digits do not fit 128 bits otherwise.
fn parse_digits(digits: &str) -> Option<(i128, i32)> {
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Some((0, 0));
    }
    if digits.len() <= MAX_DIGITS {
        return Some((digits.parse().ok()?, 0));
    }
    let trimmed = digits.trim_end_matches('0');
    if trimmed.len() > MAX_DIGITS {
        return None;
    }
    let shift = i32::try_from(digits.len() - trimmed.len()).ok()?;
    Some((trimmed.parse().ok()?, shift))
}

fn scale_up(mantissa: i128, by: i32) -> Option<i128> {
    let by = u32::try_from(by).ok()?;
    mantissa.checked_mul(10_i128.checked_pow(by)?)
}

fn strip_tens(mut mantissa: i128, mut exponent: i32) -> (i128, i32) {
    if mantissa == 0 {
        return (0, 0);
    }
    while mantissa % 10 == 0 {
        mantissa /= 10;
        exponent += 1;
    }
    (mantissa, exponent)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Canonical forms from Kubernetes' TestQuantityString (the alternate spellings it lists parse to the
    /// canonical one) and a few more.
    #[test]
    fn canonical_forms() {
        let cases = [
            ("1Gi", "1Gi"),
            ("300Mi", "300Mi"),
            ("307200Ki", "300Mi"),
            ("6Ki", "6Ki"),
            ("1025024Mi", "1001Gi"),
            ("1024Gi", "1Ti"),
            ("1000M", "1G"),
            ("0.001T", "1G"),
            ("1000u", "1m"),
            ("80m", "80m"),
            ("1.08", "1080m"),
            ("1080000000n", "1080m"),
            ("300M", "300M"),
            ("1234567M", "1234567M"),
            ("3k", "3k"),
            ("0", "0"),
            ("00", "0"),
            ("0Ki", "0"),
            ("0e10", "0"),
            (".001e12", "1e9"),
            ("0.001e0", "1e-3"),
            ("1000e-12", "1e-9"),
            ("80e-3", "80e-3"),
            ("300e6", "300e6"),
            ("1e3", "1e3"),
            ("1.5e3", "1500"),
            ("80n", "80n"),
            ("1u", "1u"),
            ("1000m", "1"),
            ("0.5", "500m"),
            ("1000", "1k"),
            ("1.5Gi", "1536Mi"),
            ("0.5Gi", "512Mi"),
            ("1023Ki", "1023Ki"),
            ("0.5Ki", "512"),
            ("1.5Ki", "1536"),
            ("1.0000000001", "1000000001n"),
            ("0.0000000001", "1n"),
            ("-0.0000000001", "-1n"),
            ("-1Ki", "-1Ki"),
            ("-1000m", "-1"),
            ("+5", "5"),
            ("1.G", "1G"),
            ("12E", "12E"),
        ];
        for (input, expected) in cases {
            assert_eq!(canonical(input).unwrap(), expected, "{input}");
        }
        // Binary SI is capped at 2^63-1.
        assert_eq!(canonical("9Ei").unwrap(), "9223372036854775807");
        // Decimal SI of 1000E and more: Go drops the suffix; kept as written here.
        assert_eq!(canonical("1000E").unwrap(), "1000E");
    }

    #[test]
    fn errors() {
        for input in ["", "1.5.5", "1x", "Ki1", "1 Gi", "1e", "1Kib", "--1"] {
            assert!(parse(input).is_err(), "{input}");
        }
        assert!(matches!(parse("1q"), Err(QuantityError::Format(_))));
        assert!(matches!(parse("1k3"), Err(QuantityError::Suffix(_))));
        assert!(matches!(
            parse(&"9".repeat(60)),
            Err(QuantityError::OutOfRange(_))
        ));
    }

    #[test]
    fn comparisons() {
        let q = |text| parse(text).unwrap();
        assert_eq!(q("1"), q("1000m"));
        assert_eq!(q("1Ki"), q("1024"));
        assert!(q("1Gi") > q("1G"));
        assert!(q("-1") < q("1m"));
        assert!(q("-2") < q("-1"));
        assert!(q("0") == Quantity::ZERO);
        assert!(q("100m").is_positive() && !q("-1").is_positive());
        assert_eq!(q("1").checked_add(&q("500m")).unwrap(), q("1.5"));
        assert!(same_value("2", "2000m") && !same_value("2", "2Ki") && same_value("x", "x"));
    }

    /// Exponents near `i32::MAX` used to overflow the exponent arithmetic (a panic in debug builds, a wrapped
    /// wrong value in release builds) when a quantity was compared, written or scaled to nano units: found by
    /// the `untrusted_input` property tests.
    #[test]
    fn huge_exponents_are_out_of_range() {
        let trailing_zeros = format!("1{}e2147483600", "0".repeat(45));
        for input in [
            "10e2147483647",
            "1e2147483647",
            "1e2147483584",
            trailing_zeros.as_str(),
        ] {
            assert_eq!(
                parse(input),
                Err(QuantityError::OutOfRange(input.to_owned())),
                "{input}"
            );
        }
        let largest = parse("1e2147483583").unwrap();
        assert_eq!(largest.to_canonical().unwrap(), "1e2147483583");
        assert_eq!(largest.to_nanos(), None);
        assert!(largest > parse("9e2147483582").unwrap());
        assert_eq!(largest.checked_add(&parse("1m").unwrap()), None);
        assert_eq!(parse("0e2147483647").unwrap(), Quantity::ZERO);
        assert_eq!(canonical("0e2147483647").unwrap(), "0");
    }
}
