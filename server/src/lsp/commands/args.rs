//! A command's arguments: none, or one JSON object, read into the handler's own
//! `#[derive(Deserialize)]` type. A missing, mistyped or unknown argument is a JSON-RPC
//! InvalidParams error that names the command, the argument and the command's usage line.

use super::super::convert::invalid_params;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use tower_lsp_server::jsonrpc::Result;

/// The raw arguments of one request, kept for error messages after they were read.
pub struct Args<'a> {
    command: &'a str,
    obj: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    pub fn new(command: &'a str, arguments: &'a [Value]) -> Result<Args<'a>> {
        let a = Args { command, obj: None };
        match arguments {
            [] | [Value::Null] => Ok(a),
            [Value::Object(o)] => Ok(Args { obj: Some(o), ..a }),
            [other] => Err(a.error(&format!("the argument must be a JSON object, got {other}"))),
            _ => Err(a.error(&format!(
                "expected one argument object, got {} arguments",
                arguments.len()
            ))),
        }
    }

    /// The arguments as `T`. Absent arguments read as an empty object, so a type whose
    /// fields are all optional accepts none.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T> {
        let obj = Value::Object(self.obj.cloned().unwrap_or_default());
        serde_path_to_error::deserialize::<_, T>(obj).map_err(|e| {
            // serde says "field"; a command's caller knows them as arguments.
            let problem = e
                .inner()
                .to_string()
                .replace("missing field", "missing argument")
                .replace("unknown field", "unknown argument");
            match e.path().to_string().as_str() {
                "." | "" => self.error(&problem),
                path => self.error(&format!("`{path}`: {problem}")),
            }
        })
    }

    fn usage(&self) -> &'static str {
        super::find(self.command).map_or("", |s| s.usage)
    }

    pub fn error(&self, problem: &str) -> tower_lsp_server::jsonrpc::Error {
        match self.usage() {
            // Requests outside the table (the headless ones) have no usage line to show.
            "" => invalid_params(format!("{}: {problem}", self.command)),
            usage => invalid_params(format!("{}: {problem} (arguments: {usage})", self.command)),
        }
    }
}

/// The arguments of a command that takes none: an unexpected one is an error, not ignored.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// A non-empty string argument (a path, a URI, a name: empty is always a mistake).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(try_from = "String")]
pub struct Text(pub String);

/// Written by hand: the derive would describe the `String` it is read from, without the
/// rule that it is not empty.
impl JsonSchema for Text {
    fn schema_name() -> Cow<'static, str> {
        "Text".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "minLength": 1})
    }
}

impl TryFrom<String> for Text {
    type Error = &'static str;
    fn try_from(s: String) -> std::result::Result<Text, Self::Error> {
        if s.is_empty() {
            Err("must be a non-empty string")
        } else {
            Ok(Text(s))
        }
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Goto {
        index: usize,
        #[serde(default)]
        name: Option<Text>,
    }

    fn message(command: &str, args: Value) -> String {
        let list = [args];
        let a = Args::new(command, &list).unwrap();
        a.parse::<Goto>().unwrap_err().message.to_string()
    }

    /// Errors name the command, the argument and what is wrong with it.
    #[test]
    fn errors_name_the_argument() {
        let m = message("pivot.session.goto", json!({"index": -1}));
        assert!(m.starts_with("pivot.session.goto: `index`: "), "{m}");
        assert!(m.contains("(arguments: {\"index\": k}"), "{m}");
        let m = message("pivot.session.goto", json!({}));
        assert!(m.contains("missing argument `index`"), "{m}");
        let m = message("pivot.session.goto", json!({"index": 1, "idx": 2}));
        assert!(m.contains("unknown argument `idx`"), "{m}");
        let m = message("pivot.session.goto", json!({"index": 1, "name": ""}));
        assert!(m.contains("`name`: must be a non-empty string"), "{m}");
        let list = [json!({"index": 2, "name": null})];
        let ok: Goto = Args::new("x", &list).unwrap().parse().unwrap();
        assert_eq!(ok.index, 2);
        assert!(ok.name.is_none());
    }
}
