//! The JSON schema of every command's arguments and reply, generated from the types the
//! dispatch uses (`handlers!` in mod.rs) and checked into `editors/schema/commands.schema.json`,
//! which the VS Code and Neovim tests validate the server's replies against.
//!
//! Arguments are described as the server reads them (serde's deserialize contract: what may
//! be left out), replies as it writes them (the serialize contract: a `null` that is always
//! written is required). Every object of a reply is closed (`additionalProperties: false`),
//! so a renamed field fails validation even where the old name was optional.

use super::headless::{AnswersArgs, SetupArgs, ANSWERS, SETUP};
use super::{shapes, TABLE};
use pivot_workspace::replies::{AnswerVerdicts, HeadlessSetup};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde::{Serialize, Serializer};
use serde_json::Value;

/// Where the schema is checked in, from the repository root.
pub const SCHEMA_FILE: &str = "editors/schema/commands.schema.json";

/// One command's arguments and reply.
#[derive(Serialize)]
pub struct Shapes {
    arguments: Value,
    reply: Value,
}

/// The file: per command (in the table's order) and per headless request, by name.
#[derive(Serialize)]
struct SchemaFile {
    #[serde(rename = "$comment")]
    comment: String,
    /// The JSON Schema dialect of every schema in the file.
    dialect: &'static str,
    #[serde(serialize_with = "in_order")]
    commands: Vec<(&'static str, Shapes)>,
    #[serde(serialize_with = "in_order")]
    requests: Vec<(&'static str, Shapes)>,
    /// The settings object the server reads (`initializationOptions.pivot`,
    /// `workspace/didChangeConfiguration`), as it reads it.
    settings: Value,
}

/// Named entries as a JSON object, in the order given.
fn in_order<S: Serializer>(
    list: &[(&'static str, Shapes)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_map(list.iter().map(|(k, v)| (k, v)))
}

/// A generator for arguments and one for replies (the two contracts).
pub struct Generators {
    arguments: SchemaGenerator,
    replies: SchemaGenerator,
}

impl Generators {
    fn new() -> Generators {
        // Inlined: each command's schema stands alone, for a validator to compile as is.
        let settings = || {
            let mut s = SchemaSettings::draft2020_12();
            s.inline_subschemas = true;
            s
        };
        Generators {
            arguments: settings().for_deserialize().into_generator(),
            replies: settings().for_serialize().into_generator(),
        }
    }

    /// A type as the server reads it.
    fn read<T: JsonSchema>(&mut self) -> Value {
        self.arguments.subschema_for::<T>().to_value()
    }

    pub fn shapes<A: JsonSchema, R: JsonSchema>(&mut self) -> Shapes {
        let mut reply = self.replies.subschema_for::<R>().to_value();
        close_objects(&mut reply);
        Shapes {
            arguments: self.arguments.subschema_for::<A>().to_value(),
            reply,
        }
    }
}

/// `additionalProperties: false` on every object schema with named properties that does
/// not say otherwise (a free-form map such as a rule keeps its `additionalProperties`).
fn close_objects(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.contains_key("properties") && !o.contains_key("additionalProperties") {
                o.insert("additionalProperties".into(), Value::Bool(false));
            }
            o.values_mut().for_each(close_objects);
        }
        Value::Array(a) => a.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// The whole schema file.
fn document() -> SchemaFile {
    let mut g = Generators::new();
    let commands = TABLE
        .iter()
        .map(|spec| (spec.name, shapes(spec.cmd, &mut g)))
        .collect();
    let requests = vec![
        (SETUP, g.shapes::<SetupArgs, HeadlessSetup>()),
        (ANSWERS, g.shapes::<AnswersArgs, AnswerVerdicts>()),
    ];
    let settings = g.read::<pivot_workspace::settings::SettingsObject>();
    SchemaFile {
        comment: format!(
            "{SCHEMA_FILE}: generated from the server's types (crates/workspace/src/replies.rs, \
             commands/schema.rs); do not edit. Regenerate: PIVOT_UPDATE_SCHEMA=1 cargo test \
             -p pivot-lsp --lib schema_file"
        ),
        dialect: "https://json-schema.org/draft/2020-12/schema",
        commands,
        requests,
        settings,
    }
}

/// The file's text: pretty JSON and a final newline.
pub fn text() -> String {
    let mut s = serde_json::to_string_pretty(&document()).expect("a schema is JSON");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The checked-in schema is what the types say; `PIVOT_UPDATE_SCHEMA=1` rewrites it.
    #[test]
    fn schema_file_is_up_to_date() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(SCHEMA_FILE);
        let want = text();
        if std::env::var_os("PIVOT_UPDATE_SCHEMA").is_some_and(|v| v == "1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            let line = have
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| have.lines().count().min(want.lines().count()));
            panic!(
                "{SCHEMA_FILE} is stale: the command reply or argument types changed (first \
                 difference at line {}). Regenerate it with\n  PIVOT_UPDATE_SCHEMA=1 cargo test \
                 -p pivot-lsp --lib schema_file\nand commit it: the editors' tests validate \
                 the server's replies against it.",
                line + 1
            );
        }
    }

    /// Every command of the table is in the schema, with both halves.
    #[test]
    fn every_command_has_arguments_and_a_reply() {
        let doc = serde_json::to_value(document()).unwrap();
        for spec in TABLE {
            let c = &doc["commands"][spec.name];
            assert!(c["arguments"].is_object(), "{}", spec.name);
            assert!(c["reply"].is_object(), "{}", spec.name);
        }
        // The session commands' info is flattened into the reply, which stays closed.
        let moved = &doc["commands"]["pivot.session.next"]["reply"];
        assert_eq!(moved["additionalProperties"], false, "{moved:#}");
        assert!(moved["properties"]["moved"].is_object(), "{moved:#}");
        assert!(moved["properties"]["source"].is_object(), "{moved:#}");
    }
}
