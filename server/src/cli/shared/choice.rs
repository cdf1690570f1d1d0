//! Command-line values for the core's enums. The core names its values (`CHOICES`: name and
//! what it means) and parses them (`FromStr`) without knowing clap; this turns that into a
//! clap parser, so `--help` lists each value with its meaning and a wrong one is refused with
//! the list.

use std::str::FromStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

pub fn parser<T>(
    choices: &'static [(&'static str, &'static str)],
) -> impl TypedValueParser<Value = T>
where
    T: FromStr<Err = String> + Clone + Send + Sync + 'static,
{
    PossibleValuesParser::new(
        choices
            .iter()
            .map(|(name, help)| PossibleValue::new(*name).help(*help)),
    )
    .try_map(|s| s.parse::<T>())
}
