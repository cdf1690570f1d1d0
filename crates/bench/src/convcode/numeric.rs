//! NumPy-compatible arithmetic for the metrics: `np.mean` (numpy's pairwise summation, from
//! `bench::numpy`), `np.round(x, 1)`
//! (half-to-even on the binary value of `x * 10`), and Python's `str(float)`.

/// `np.mean` of a non-empty slice.
pub fn numpy_mean(a: &[f64]) -> Option<f64> {
    if a.is_empty() {
        return None;
    }
    Some(crate::numpy::pairwise_sum(a) / a.len() as f64)
}

/// `round(x, 1)` on a NumPy float64: `rint(x * 10) / 10`.
pub fn numpy_round1(x: f64) -> f64 {
    (x * 10.0).round_ties_even() / 10.0
}

/// The metric as the original computes it: `round(mean * 100, 1)`.
pub fn percent(values: &[f64]) -> Option<f64> {
    numpy_mean(values).map(|m| numpy_round1(m * 100.0))
}

/// Python's `str(float)` for the values the tables hold (shortest round-trip digits, `.0` kept).
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let abs = x.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        // Python switches to exponent form outside [1e-4, 1e16).
        let s = format!("{x:e}");
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    let s = format!("{x}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_half_even_on_the_binary_value() {
        // 0.25 is exact: ties to even.
        assert_eq!(numpy_round1(0.25), 0.2);
        assert_eq!(numpy_round1(0.35), 0.4); // 0.35 * 10 rounds to exactly 3.5, then to even
        assert_eq!(numpy_round1(2.675 * 10.0), 26.8);
        // 1/8 = 12.5% -> 125.0 exactly, to even.
        assert_eq!(
            percent(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            Some(12.5)
        );
        // 5/16 = 31.25 -> 312.5 -> 312 -> 31.2 (half-up would give 31.3).
        let mut v = vec![1.0; 5];
        v.extend(vec![0.0; 11]);
        assert_eq!(py_float(percent(&v).unwrap()), "31.2");
    }

    #[test]
    fn python_float_text() {
        assert_eq!(py_float(100.0), "100.0");
        assert_eq!(py_float(56.2), "56.2");
        assert_eq!(py_float(0.0), "0.0");
        assert_eq!(py_float(1e-5), "1e-05");
    }

    #[test]
    fn pairwise_sum_differs_from_naive_where_numpy_does() {
        // Ten values 0.1: NumPy gives 1.0 (pairwise), a naive loop 0.9999999999999999.
        let v = vec![0.1; 10];
        let naive: f64 = v.iter().sum();
        assert_eq!(naive, 0.9999999999999999);
        assert_eq!(crate::numpy::pairwise_sum(&v), 1.0);
        // Beyond one 128-block the split points matter too (value from NumPy 2.4).
        let w: Vec<f64> = (0..300).map(|i| 1.0 / ((i % 11) + 1) as f64).collect();
        assert_eq!(numpy_mean(&w), Some(0.2779000721500721));
    }
}
