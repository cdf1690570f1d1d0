//! The editors' types of every command's arguments and reply, generated from the schema
//! file (`schema.rs`) so that no client holds a hand copy of a wire type: TypeScript for
//! VS Code (`editors/vscode/src/protocol.ts`) and LuaCATS annotations for Neovim
//! (`editors/nvim/lua/pivot/protocol.lua`, read by lua-language-server). The test below
//! fails when either file differs from what the server's types say.
//!
//! Only the schema shapes the schema file uses are translated; anything else becomes the
//! client's "any JSON" (`unknown`, `any`) rather than a guess.

use serde_json::Value;

/// Where the generated files are checked in, from the repository root.
pub const TYPESCRIPT_FILE: &str = "editors/vscode/src/protocol.ts";
pub const LUA_FILE: &str = "editors/nvim/lua/pivot/protocol.lua";

/// `pivot.evaluate.convcode` -> `EvaluateConvcode`, `pivot/headless/setup` -> `HeadlessSetup`.
fn type_name(command: &str) -> String {
    let rest = command.strip_prefix("pivot").unwrap_or(command);
    rest.split(['.', '/', '_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The schema file's entries, commands then requests, with their type names.
fn entries(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut out = Vec::new();
    for section in ["commands", "requests"] {
        for (name, shapes) in doc[section].as_object().into_iter().flatten() {
            out.push((name.clone(), type_name(name), shapes));
        }
    }
    out
}

/// Which client language a type is written in.
#[derive(Clone, Copy, PartialEq)]
enum Lang {
    Ts,
    Lua,
}

/// The simple JSON type `t` in `lang`.
fn simple(t: &str, lang: Lang) -> &'static str {
    match (t, lang) {
        ("string", _) => "string",
        ("integer", Lang::Ts) | ("number", _) => "number",
        ("integer", Lang::Lua) => "integer",
        ("boolean", _) => "boolean",
        ("null", Lang::Ts) => "null",
        ("null", Lang::Lua) => "nil",
        (_, Lang::Ts) => "unknown",
        (_, Lang::Lua) => "any",
    }
}

/// A JSON value as a literal type (an `enum` member or a `const`).
fn literal(v: &Value, lang: Lang) -> String {
    match v {
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::Null => simple("null", lang).into(),
        other => other.to_string(),
    }
}

/// The type of schema `s` in `lang`, nested objects written inline at `indent`.
fn type_of(s: &Value, lang: Lang, indent: usize) -> String {
    let any = simple("", lang).to_string();
    let Some(o) = s.as_object() else {
        return any;
    };
    let union = |parts: Vec<String>| {
        let mut seen: Vec<String> = Vec::new();
        for p in parts {
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        seen.join(" | ")
    };
    for key in ["oneOf", "anyOf"] {
        if let Some(alts) = o.get(key).and_then(Value::as_array) {
            return union(alts.iter().map(|a| type_of(a, lang, indent)).collect());
        }
    }
    if let Some(c) = o.get("const") {
        return literal(c, lang);
    }
    if let Some(e) = o.get("enum").and_then(Value::as_array) {
        return union(e.iter().map(|v| literal(v, lang)).collect());
    }
    let types: Vec<&str> = match o.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return any,
    };
    union(
        types
            .iter()
            .map(|t| match *t {
                "object" => object(o, lang, indent),
                "array" => array(o, lang, indent),
                t => simple(t, lang).to_string(),
            })
            .collect(),
    )
}

fn array(o: &serde_json::Map<String, Value>, lang: Lang, indent: usize) -> String {
    if let Some(items) = o.get("prefixItems").and_then(Value::as_array) {
        let parts: Vec<String> = items.iter().map(|i| type_of(i, lang, indent)).collect();
        return match lang {
            Lang::Ts => format!("[{}]", parts.join(", ")),
            // LuaCATS has no tuples: a list of any of the members.
            Lang::Lua => format!("({})[]", parts.join("|")),
        };
    }
    let item = o.get("items").map_or_else(
        || simple("", lang).to_string(),
        |i| type_of(i, lang, indent),
    );
    if item.contains(' ') || item.contains('|') {
        format!("({item})[]")
    } else {
        format!("{item}[]")
    }
}

/// Whether the object may hold keys beyond its named ones.
fn open(o: &serde_json::Map<String, Value>) -> bool {
    !matches!(o.get("additionalProperties"), Some(Value::Bool(false)))
}

fn object(o: &serde_json::Map<String, Value>, lang: Lang, indent: usize) -> String {
    let props = o.get("properties").and_then(Value::as_object);
    let Some(props) = props.filter(|p| !p.is_empty()) else {
        // A map: its values' schema, when it says one (a map with integer keys says it
        // under the keys' pattern).
        let pattern =
            (o.get("patternProperties").and_then(Value::as_object)).and_then(|p| p.values().next());
        let value = match (o.get("additionalProperties"), pattern) {
            (Some(v @ Value::Object(_)), _) | (_, Some(v)) => type_of(v, lang, indent),
            _ => simple("", lang).to_string(),
        };
        return match lang {
            Lang::Ts => format!("Record<string, {value}>"),
            Lang::Lua => format!("table<string, {value}>"),
        };
    };
    let required: Vec<&str> = (o.get("required").and_then(Value::as_array).into_iter())
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match lang {
        Lang::Ts => {
            let pad = "  ".repeat(indent + 1);
            let mut s = String::from("{\n");
            for (k, v) in props {
                s.push_str(&ts_doc(v, &pad));
                let opt = if required.contains(&k.as_str()) {
                    ""
                } else {
                    "?"
                };
                s.push_str(&format!(
                    "{pad}{}{opt}: {};\n",
                    ts_key(k),
                    type_of(v, lang, indent + 1)
                ));
            }
            if open(o) {
                s.push_str(&format!("{pad}[key: string]: unknown;\n"));
            }
            s.push_str(&"  ".repeat(indent));
            s.push('}');
            s
        }
        // LuaCATS' table literal type; an optional key is marked with `?`.
        Lang::Lua => {
            let fields: Vec<String> = props
                .iter()
                .map(|(k, v)| {
                    let opt = if required.contains(&k.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    format!("{}{opt}: {}", lua_key(k), type_of(v, lang, indent))
                })
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
    }
}

/// A field name LuaCATS reads: a name as it is, anything else as `["..."]`.
fn lua_key(k: &str) -> String {
    let name = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if name {
        k.to_string()
    } else {
        format!("[{:?}]", k)
    }
}

fn ts_key(k: &str) -> String {
    if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        k.to_string()
    } else {
        literal(&Value::String(k.into()), Lang::Ts)
    }
}

/// A property's description as a doc comment.
fn ts_doc(v: &Value, pad: &str) -> String {
    match v.get("description").and_then(Value::as_str) {
        Some(d) => {
            let mut s = format!("{pad}/**\n");
            for line in d.replace("*/", "* /").lines() {
                s.push_str(format!("{pad} * {line}").trim_end());
                s.push('\n');
            }
            s.push_str(&format!("{pad} */\n"));
            s
        }
        None => String::new(),
    }
}

const HEADER: &str = "generated from editors/schema/commands.schema.json (the server's types); \
do not edit. Regenerate: PIVOT_UPDATE_SCHEMA=1 cargo test -p pivot-lsp --lib client_types";

/// `protocol.ts`: `<Name>Args` and `<Name>Reply` per command, and maps from a command's
/// name to each, for a typed `executeCommand`.
pub fn typescript(doc: &Value) -> String {
    let mut s = format!("// {TYPESCRIPT_FILE}: {HEADER}\n");
    let list = entries(doc);
    for (name, ty, shapes) in &list {
        for (part, suffix) in [("arguments", "Args"), ("reply", "Reply")] {
            s.push_str(&format!(
                "\n/** `{name}`: {part}. */\nexport type {ty}{suffix} = {};\n",
                type_of(&shapes[part], Lang::Ts, 0)
            ));
        }
    }
    s.push_str(&format!(
        "\n/** The settings object the server reads (`initializationOptions.pivot`). */\nexport type ServerSettings = {};\n",
        type_of(&doc["settings"], Lang::Ts, 0)
    ));
    for (map, suffix) in [("CommandArgs", "Args"), ("CommandReply", "Reply")] {
        s.push_str(&format!("\nexport interface {map} {{\n"));
        for (name, ty, _) in &list {
            s.push_str(&format!("  '{name}': {ty}{suffix};\n"));
        }
        s.push_str("}\n");
    }
    s
}

/// `protocol.lua`: one `---@alias` per command's arguments and reply.
pub fn lua(doc: &Value) -> String {
    let mut s = format!("-- {LUA_FILE}: {HEADER}\n---@meta\n");
    for (name, ty, shapes) in entries(doc) {
        for (part, suffix) in [("arguments", "Args"), ("reply", "Reply")] {
            s.push_str(&format!(
                "\n--- `{name}`: {part}.\n---@alias pivot.{ty}{suffix} {}\n",
                type_of(&shapes[part], Lang::Lua, 0)
            ));
        }
    }
    s.push_str(&format!(
        "\n--- The settings object the server reads (`initializationOptions.pivot`).\n---@alias pivot.ServerSettings {}\n",
        type_of(&doc["settings"], Lang::Lua, 0)
    ));
    s.push_str("\nreturn {}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn names_and_shapes() {
        assert_eq!(type_name("pivot.evaluate.convcode"), "EvaluateConvcode");
        assert_eq!(type_name("pivot/headless/setup"), "HeadlessSetup");
        let s = serde_json::json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"type": "array", "items": {"enum": ["x", "y"]}},
                "c": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
                "d": {"type": "object", "additionalProperties": {"type": "boolean"}},
                "e f": {"type": "object", "patternProperties": {"^\\d+$": {"type": "string"}}},
                "g": {"enum": ["a", null]}
            },
            "required": ["a"],
            "additionalProperties": false
        });
        assert_eq!(
            type_of(&s, Lang::Ts, 0),
            "{\n  a: string | null;\n  b?: ('x' | 'y')[];\n  c?: [number, string];\n  d?: Record<string, boolean>;\n  'e f'?: Record<string, string>;\n  g?: 'a' | null;\n}"
        );
        assert_eq!(
            type_of(&s, Lang::Lua, 0),
            "{ a: string | nil, b?: ('x' | 'y')[], c?: (integer|string)[], d?: table<string, boolean>, [\"e f\"]?: table<string, string>, g?: 'a' | nil }"
        );
    }

    /// The checked-in client types are what the schema says; `PIVOT_UPDATE_SCHEMA=1`
    /// rewrites them.
    #[test]
    fn client_types_are_up_to_date() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let doc: Value = serde_json::from_str(&super::super::schema::text()).unwrap();
        for (file, want) in [(TYPESCRIPT_FILE, typescript(&doc)), (LUA_FILE, lua(&doc))] {
            let path = root.join(file);
            if std::env::var_os("PIVOT_UPDATE_SCHEMA").is_some_and(|v| v == "1") {
                std::fs::write(&path, &want).unwrap();
                continue;
            }
            let have = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                have == want,
                "{file} is stale: the command reply or argument types changed. Regenerate \
                 it with\n  PIVOT_UPDATE_SCHEMA=1 cargo test -p pivot-lsp --lib client_types\n\
                 and commit it."
            );
        }
    }
}
