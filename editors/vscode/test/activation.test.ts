// The manifest (package.json) against the code, and activation under a fake `vscode`:
// every contributed command is registered, every setting the code reads is contributed,
// and a missing server gives the clear error message (no VS Code needed).

import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PALETTE_TO_SERVER, PaletteCommand, ServerCommand } from '../src/logic';
import { fakeVscode, installFake } from './fake_vscode';

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

test('manifest: the palette commands are exactly the ones the code knows', () => {
  const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual(contributed, Object.values(PaletteCommand).sort());
  assert.deepEqual(Object.keys(PALETTE_TO_SERVER).sort(), contributed);
  // Every server command has a palette command; none collides with a server name.
  const called = new Set<string>(Object.values(PALETTE_TO_SERVER).filter((x): x is NonNullable<typeof x> => x !== null));
  assert.deepEqual([...called].sort(), Object.values(ServerCommand).sort());
  for (const c of contributed) assert.ok(!called.has(c), `${c} collides with a server command`);
  for (const c of pkg.contributes.commands) assert.equal(c.category, 'Pivot');
});

test('manifest: entry point, activation, view and settings', () => {
  assert.equal(pkg.main, './dist/extension.js');
  assert.ok(pkg.activationEvents.includes('onLanguage:python'));
  assert.deepEqual(pkg.contributes.views.explorer.map((v: { id: string }) => v.id), ['pivotSessions']);
  const props = pkg.contributes.configuration.properties;
  assert.equal(props['pivot.serverPath'].default, '');
  assert.ok(pkg.dependencies['vscode-languageclient']);
});

test('activation with a missing server: commands registered, clear error, status shown', async () => {
  const { vscode, rec } = fakeVscode({ 'pivot.serverPath': '/nonexistent/dir/pivot-lsp' });
  installFake(vscode);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ext = require('../src/extension');
  const subscriptions: { dispose(): void }[] = [];
  await ext.activate({ subscriptions });

  const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual([...rec.commands.keys()].sort(), contributed);
  assert.deepEqual(rec.treeViews, ['pivotSessions']);
  assert.deepEqual(rec.contentSchemes, ['pivot-report']);

  assert.equal(rec.errors.length, 1);
  assert.match(rec.errors[0], /binary \/nonexistent\/dir\/pivot-lsp \(setting pivot\.serverPath\) does not exist/);
  assert.ok(!rec.errors[0].includes('`'), 'no markdown backticks in a notification');

  // The settings the code reads are the contributed ones (`pivot.trace.server` is read by
  // vscode-languageclient itself, for the client whose id is `pivot`).
  const props = Object.keys(pkg.contributes.configuration.properties).filter((k) => k !== 'pivot.trace.server').sort();
  assert.deepEqual([...rec.configKeysRead].sort(), props);

  assert.equal(rec.statusItems.length, 1);
  // Not "starting": the server could not start, and the tooltip says why.
  assert.equal(rec.statusItems[0].text, '$(error) pivot: failed');
  assert.match(rec.statusItems[0].tooltip ?? '', /does not exist/);
  assert.equal(rec.statusItems[0].command, PaletteCommand.restartServer);
  assert.ok(rec.statusItems[0].shown);

  // A command with no server running says so instead of throwing.
  await rec.commands.get(PaletteCommand.nextSession)!();
  assert.match(rec.errors[1], /the server is not running: .*does not exist/);

  for (const s of subscriptions) s.dispose();
  await ext.deactivate();
});

test('the bundled dist/extension.js (what the .vsix ships) activates too', (t) => {
  const bundle = path.join(root, 'dist', 'extension.js');
  if (!fs.existsSync(bundle)) {
    t.skip('SKIP: dist/extension.js not built (npm run bundle)');
    return;
  }
  const { vscode, rec } = fakeVscode({ 'pivot.serverPath': '/nonexistent/dir/pivot-lsp' });
  installFake(vscode);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ext = require(bundle);
  const subscriptions: { dispose(): void }[] = [];
  return ext.activate({ subscriptions }).then(() => {
    const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual([...rec.commands.keys()].sort(), contributed);
    assert.match(rec.errors[0], /does not exist/);
    for (const s of subscriptions) s.dispose();
  });
});
