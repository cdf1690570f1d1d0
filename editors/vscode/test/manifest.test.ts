// What the manifest (package.json) promises about settings a repository could turn against
// its user: their scopes, the workspace-trust stance, and the trace setting the language
// client reads.

import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const props: Record<string, { scope?: string; enum?: string[]; default?: unknown; markdownDescription?: string }> =
  pkg.contributes.configuration.properties;

// A workspace's .vscode/settings.json can choose the binary, the interpreter or the sandbox
// only where the scope lets it: never for the binary and the sandbox, the interpreter only
// once the workspace is trusted.
const GUARDED: Record<string, string[]> = {
  'pivot.serverPath': ['machine'],
  'pivot.sandbox': ['machine'],
  'pivot.python': ['machine', 'machine-overridable'],
  'pivot.endpoint.apiKey': ['machine'],
};

test('manifest: every setting has a scope, and the dangerous ones a machine scope', () => {
  const valid = ['application', 'machine', 'machine-overridable', 'window', 'resource', 'language-overridable'];
  for (const [name, p] of Object.entries(props)) {
    assert.ok(p.scope && valid.includes(p.scope), `${name} has no valid scope (${p.scope})`);
  }
  for (const [name, scopes] of Object.entries(GUARDED)) {
    assert.ok(scopes.includes(props[name]?.scope ?? ''), `${name}: scope ${props[name]?.scope}, want one of ${scopes}`);
  }
});

test('manifest: Restricted Mode is declared limited, with a description and the restricted settings', () => {
  const u = pkg.capabilities?.untrustedWorkspaces;
  assert.ok(u, 'no capabilities.untrustedWorkspaces');
  assert.equal(u.supported, 'limited');
  assert.ok(typeof u.description === 'string' && u.description.length > 40, 'a description says what is limited');
  for (const name of ['pivot.serverPath', 'pivot.python', 'pivot.sandbox', 'pivot.endpoint.baseUrl']) {
    assert.ok(u.restrictedConfigurations.includes(name), `${name} is not restricted`);
  }
  for (const name of u.restrictedConfigurations) assert.ok(name in props, `${name} is not a setting`);
});

test('manifest: pivot.trace.server is the language client\'s trace setting', () => {
  const t = props['pivot.trace.server'];
  assert.ok(t, 'no pivot.trace.server');
  assert.deepEqual(t.enum, ['off', 'messages', 'verbose']);
  assert.equal(t.default, 'off');
  // vscode-languageclient reads `<client id>.trace.server`: the client's id must be `pivot`.
  const src = fs.readFileSync(path.join(root, 'src', 'extension.ts'), 'utf8');
  assert.match(src, /new PivotClient\('pivot',/);
});

test('manifest: the Python extension is optional (its API package bundled, no extension dependency)', () => {
  // An extensionDependencies (or extensionPack) entry would install ms-python.python with
  // Pivot LSP and refuse to activate without it; an empty pivot.python only prefers it.
  for (const field of ['extensionDependencies', 'extensionPack']) {
    assert.ok(!(pkg[field] ?? []).includes('ms-python.python'), `ms-python.python in ${field}`);
  }
  assert.ok(pkg.dependencies['@vscode/python-extension'], 'the API package is a (bundled) dependency');
  assert.match(props['pivot.python'].markdownDescription ?? '', /Python extension.*optional/);
});
