// The manifest (package.json) against the code, and activation under a fake `vscode`:
// every contributed command is registered, every setting the code reads is contributed,
// and a missing server gives the clear error message (no VS Code needed).

import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PALETTE_TO_SERVER, PaletteCommand, PYTHON_EXTENSION_ID, ServerCommand } from '../src/logic';
import { FakeOptions, fakePythonExtension, fakeVscode, installFake } from './fake_vscode';

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

// ---- the interpreter: pivot.python, else the Python extension's (ms-python.python), else
// the server's default. The server is a stand-in that records what it was started with.

/** A fresh copy of the extension (and of the modules that hold the `vscode` they loaded). */
function freshExtension(vscode: unknown): { activate(c: unknown): Promise<void>; deactivate(): Promise<void> } {
  installFake(vscode);
  for (const k of Object.keys(require.cache)) {
    if (k.startsWith(root + path.sep)) delete require.cache[k];
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../src/extension');
}

interface Started { python: string | null; init: { pivot: { python: string | null } } }

/**
 * A language server that answers every request with null and appends, per start, its
 * PIVOT_PYTHON and the initializationOptions it got to `log` (a JSON line).
 */
function recordingServer(dir: string, log: string): string {
  const file = path.join(dir, 'recording-server');
  fs.writeFileSync(file, `#!${process.execPath}
const fs = require('fs');
let buf = Buffer.alloc(0);
const send = (m) => { const b = Buffer.from(JSON.stringify(m)); process.stdout.write('Content-Length: ' + b.length + '\\r\\n\\r\\n'); process.stdout.write(b); };
process.stdin.on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  for (;;) {
    const end = buf.indexOf('\\r\\n\\r\\n');
    if (end < 0) return;
    const len = Number(/Content-Length: (\\d+)/i.exec(buf.subarray(0, end).toString())[1]);
    if (buf.length < end + 4 + len) return;
    const m = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString());
    buf = buf.subarray(end + 4 + len);
    if (m.method === 'initialize') {
      fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ python: process.env.PIVOT_PYTHON ?? null, init: m.params.initializationOptions }) + '\\n');
      send({ jsonrpc: '2.0', id: m.id, result: { capabilities: {} } });
    } else if (m.method === 'exit') {
      process.exit(0);
    } else if (m.id !== undefined) {
      send({ jsonrpc: '2.0', id: m.id, result: null });
    }
  }
});
`, { mode: 0o755 });
  return file;
}

function started(log: string): Started[] {
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : [];
}

async function eventually<T>(what: string, get: () => T | undefined, ms = 10000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Activate with the recording server and `settings`; the run's records, output and cleanup. */
async function activateRecording(settings: Record<string, unknown>, opts: FakeOptions = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pivot-activation-'));
  const log = path.join(dir, 'started.jsonl');
  // The server inherits the test's environment: no PIVOT_PYTHON of its own.
  delete process.env.PIVOT_PYTHON;
  const { vscode, rec } = fakeVscode({ 'pivot.serverPath': recordingServer(dir, log), ...settings }, { folder: dir, ...opts });
  const ext = freshExtension(vscode);
  const subscriptions: { dispose(): void }[] = [];
  await ext.activate({ subscriptions });
  return {
    dir,
    rec,
    started: () => started(log),
    async close() {
      await ext.deactivate();
      for (const s of subscriptions) s.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('interpreter: the Python extension\'s active interpreter, as PIVOT_PYTHON and initializationOptions', async () => {
  const py = fakePythonExtension('/envs/project-venv/bin/python');
  const run = await activateRecording({}, { extensions: { [PYTHON_EXTENSION_ID]: py.ext } });
  try {
    assert.deepEqual(run.rec.errors, []);
    const [first] = await eventually('the server start', () => (run.started().length ? run.started() : undefined));
    assert.equal(first.python, '/envs/project-venv/bin/python');
    assert.equal(first.init.pivot.python, '/envs/project-venv/bin/python');
    assert.ok(py.ext.isActive, 'the Python extension was activated to ask it');
    // Asked for the workspace folder's interpreter (multi-root: each folder has its own).
    assert.deepEqual(py.asked, [run.dir]);
    assert.ok(run.rec.output.includes("Pivot LSP: Python interpreter /envs/project-venv/bin/python (the Python extension's interpreter)"), run.rec.output.join('\n'));

    // "Python: Select Interpreter" picks another: the server restarts with it.
    py.choose('/envs/other/bin/python3');
    const both = await eventually('the restart', () => (run.started().length === 2 ? run.started() : undefined));
    assert.equal(both[1].python, '/envs/other/bin/python3');
    assert.equal(both[1].init.pivot.python, '/envs/other/bin/python3');
    assert.ok(run.rec.output.some((l) => l.includes('interpreter changed to /envs/other/bin/python3; restarting')));
    // The same one again is no change: no restart.
    py.choose('/envs/other/bin/python3');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(run.started().length, 2);
  } finally {
    await run.close();
  }
});

test('interpreter: without the Python extension activation succeeds with the server\'s default python3', async () => {
  const run = await activateRecording({});
  try {
    assert.deepEqual(run.rec.errors, []);
    const [first] = await eventually('the server start', () => (run.started().length ? run.started() : undefined));
    assert.equal(first.python, null, 'no PIVOT_PYTHON: the server\'s default');
    assert.equal(first.init.pivot.python, null);
    assert.ok(run.rec.output.includes('Pivot LSP: Python interpreter python3 (default python3)'), run.rec.output.join('\n'));
    assert.equal(run.rec.statusItems[0].text.includes('failed'), false);
  } finally {
    await run.close();
  }
});

test('interpreter: a set pivot.python wins over the Python extension (which is not even asked)', async () => {
  const py = fakePythonExtension('/envs/project-venv/bin/python');
  const run = await activateRecording({ 'pivot.python': ' /opt/py/bin/python3 ' }, { extensions: { [PYTHON_EXTENSION_ID]: py.ext } });
  try {
    const [first] = await eventually('the server start', () => (run.started().length ? run.started() : undefined));
    assert.equal(first.python, '/opt/py/bin/python3');
    assert.equal(first.init.pivot.python, '/opt/py/bin/python3');
    assert.equal(py.ext.isActive, false);
    assert.ok(run.rec.output.includes('Pivot LSP: Python interpreter /opt/py/bin/python3 (setting pivot.python)'), run.rec.output.join('\n'));
  } finally {
    await run.close();
  }
});

test('interpreter: in Restricted Mode the Python extension\'s choice (maybe the repository\'s venv) is not run', async () => {
  const py = fakePythonExtension('/repo/.venv/bin/python');
  const run = await activateRecording({}, { extensions: { [PYTHON_EXTENSION_ID]: py.ext }, trusted: false });
  try {
    const [first] = await eventually('the server start', () => (run.started().length ? run.started() : undefined));
    assert.equal(first.python, null);
    assert.equal(py.ext.isActive, false);
    assert.ok(run.rec.output.some((l) => l.startsWith('Pivot LSP: Python interpreter python3 (default python3; ') && l.includes('Restricted Mode')));
  } finally {
    await run.close();
  }
});

test('interpreter: a Python extension whose activation fails leaves the default, said in the output', async () => {
  const broken = { isActive: false, activate: async () => { throw new Error('Python extension crashed'); }, exports: undefined };
  const run = await activateRecording({}, { extensions: { [PYTHON_EXTENSION_ID]: broken } });
  try {
    assert.deepEqual(run.rec.errors, []);
    const [first] = await eventually('the server start', () => (run.started().length ? run.started() : undefined));
    assert.equal(first.python, null);
    assert.ok(run.rec.output.some((l) => l.includes('the Python extension gave no interpreter (Python extension crashed)')));
    assert.ok(run.rec.output.includes('Pivot LSP: Python interpreter python3 (default python3)'));
  } finally {
    await run.close();
  }
});
