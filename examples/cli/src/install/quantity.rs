//! Kubernetes resource quantities as `kruise install` accepts them (`100m`, `0.5`, `128Mi`, `1G`): checked
//! before they are rendered, and compared so a memory request never exceeds its limit.

/// The value of a quantity in base units (cores or bytes).
///
/// # Errors
/// Not a plain decimal number with an optional suffix (`m`, `k`, `M`, `G`, `T`, `P`, `E`, `Ki` ... `Ei`).
pub fn quantity_value(text: &str) -> Result<f64, String> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let multiplier = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024.0_f64.powi(2),
        "Gi" => 1024.0_f64.powi(3),
        "Ti" => 1024.0_f64.powi(4),
        "Pi" => 1024.0_f64.powi(5),
        "Ei" => 1024.0_f64.powi(6),
        _ => {
            return Err(format!(
                "{text:?} is not a quantity (unknown suffix {suffix:?})"
            ));
        }
    };
    let valid_number = !number.is_empty()
        && number.matches('.').count() <= 1
        && !number.starts_with('.')
        && !number.ends_with('.');
    if !valid_number {
        return Err(format!(
            "{text:?} is not a quantity (e.g. 100m, 0.5, 128Mi)"
        ));
    }
    number
        .parse::<f64>()
        .map(|value| value * multiplier)
        .map_err(|_| format!("{text:?} is not a quantity (e.g. 100m, 0.5, 128Mi)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_scale_and_garbage_is_refused() {
        assert_eq!(quantity_value("100m").unwrap(), 0.1);
        assert_eq!(quantity_value("2").unwrap(), 2.0);
        assert_eq!(quantity_value("128Mi").unwrap(), 134_217_728.0);
        assert_eq!(quantity_value("1G").unwrap(), 1e9);
        assert!(quantity_value("1.5Gi").unwrap() > quantity_value("1G").unwrap());
        for bad in ["", "Mi", "1.", ".5", "1..2", "12MB", "-1", "1 Mi"] {
            assert!(quantity_value(bad).is_err(), "{bad}");
        }
    }
}
