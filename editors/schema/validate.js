#!/usr/bin/env node
// Command replies against editors/schema/commands.schema.json (generated from the server's
// reply types; see ARCHITECTURE.md, "Command replies and their schema").
//
// As a module (the VS Code protocol test): `replyValidator()` returns `check(command, reply)`,
// which gives undefined for a valid reply and else a message naming the command and the field.
//
// As a script (editors/test.sh, for the Neovim test's recording):
//   node editors/schema/validate.js REPLIES.jsonl
// Each line is {"command": NAME, "response": <the JSON-RPC response as the server sent it>}.
// Every result is validated; errors (a refused command) have no reply to check. Before that,
// one recorded reply with a field renamed must be rejected, so a run proves the schema
// would catch the change it exists for. Exits 1 on any mismatch, naming command and field.
//
// ajv comes from editors/vscode's devDependencies (npm ci there first).
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const schemaFile = path.join(__dirname, 'commands.schema.json');

function loadAjv() {
  const from = { paths: [path.join(__dirname, '..', 'vscode')] };
  const mod = require(require.resolve('ajv/dist/2020', from));
  return mod.default ?? mod;
}

// schemars writes Rust's integer and float widths as formats; ajv must know each one
// (strict mode refuses an unknown format rather than ignoring it).
const ranges = {
  int8: [-(2 ** 7), 2 ** 7 - 1],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  int: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint8: [0, 2 ** 8 - 1],
  uint16: [0, 2 ** 16 - 1],
  uint32: [0, 2 ** 32 - 1],
  uint64: [0, Number.MAX_SAFE_INTEGER],
  uint: [0, Number.MAX_SAFE_INTEGER],
};

function makeAjv() {
  const Ajv2020 = loadAjv();
  // Types may be unions with null (`["string", "null"]`), and tuples (`prefixItems`) carry
  // their length in minItems/maxItems: neither is a mistake in these schemas.
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictTuples: false });
  for (const [name, [lo, hi]] of Object.entries(ranges)) {
    ajv.addFormat(name, { type: 'number', validate: (x) => Number.isInteger(x) && x >= lo && x <= hi });
  }
  for (const name of ['float', 'double']) {
    ajv.addFormat(name, { type: 'number', validate: (x) => Number.isFinite(x) });
  }
  return ajv;
}

/** One line per problem: where in the reply, and what is wrong. */
function describe(command, errors) {
  return errors
    .map((e) => {
      const at = `reply${e.instancePath.replace(/\//g, '.')}`;
      const field = e.params?.missingProperty ?? e.params?.additionalProperty;
      return `${command}: ${at}${field !== undefined ? `.${field}` : ''}: ${e.message}`;
    })
    .join('\n');
}

/** `check(command, reply)`: undefined when valid, else what is wrong (command and field). */
function replyValidator(file = schemaFile) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  const ajv = makeAjv();
  const compiled = new Map();
  const entry = (name) => doc.commands[name] ?? doc.requests[name];
  return function check(command, reply) {
    if (!compiled.has(command)) {
      const e = entry(command);
      if (!e) return `${command}: no such command in ${path.basename(file)}`;
      compiled.set(command, ajv.compile(e.reply));
    }
    const validate = compiled.get(command);
    return validate(reply) ? undefined : describe(command, validate.errors ?? []);
  };
}

/** The reply with its first field renamed (`x` -> `x_renamed`), or undefined. */
function withRenamedField(reply) {
  if (!reply || typeof reply !== 'object' || Array.isArray(reply)) return undefined;
  const keys = Object.keys(reply);
  if (keys.length === 0) return undefined;
  const out = {};
  for (const k of keys) out[k === keys[0] ? `${k}_renamed` : k] = reply[k];
  return out;
}

function main(argv) {
  const file = argv[0];
  if (!file) {
    console.error('usage: validate.js REPLIES.jsonl');
    return 2;
  }
  const check = replyValidator();
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const replies = [];
  for (const [i, line] of lines.entries()) {
    let rec;
    try {
      rec = JSON.parse(line);
    } catch (e) {
      console.error(`${file}:${i + 1}: not JSON: ${e.message}`);
      return 1;
    }
    if (rec.response && 'result' in rec.response) replies.push(rec);
  }
  if (replies.length === 0) {
    console.error(`${file}: no command replies were recorded`);
    return 1;
  }
  // The validator must reject a reply whose field was renamed.
  const sample = replies.find((r) => withRenamedField(r.response.result));
  if (sample && check(sample.command, withRenamedField(sample.response.result)) === undefined) {
    console.error(`the schema accepted ${sample.command}'s reply with a renamed field: it would not catch one`);
    return 1;
  }
  let bad = 0;
  const seen = new Set();
  for (const r of replies) {
    seen.add(r.command);
    const problem = check(r.command, r.response.result);
    if (problem) {
      bad += 1;
      console.error(`reply does not match the schema:\n${problem}`);
    }
  }
  const names = [...seen].sort().join(', ');
  console.log(`replies: ${replies.length - bad} of ${replies.length} match the schema (${names})`);
  return bad === 0 ? 0 : 1;
}

module.exports = { replyValidator, withRenamedField, schemaFile };

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}
