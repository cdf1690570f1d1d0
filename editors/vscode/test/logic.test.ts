// Unit tests of the extension's pure logic (no VS Code needed).

import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  ConvEvaluation,
  Evaluation,
  choosePython,
  pythonChanged,
  pythonLogLine,
  endpointArgs,
  Active,
  activePivotsMarkdown,
  applySessionChanged,
  args,
  evaluationMarkdown,
  Info,
  initializationOptions,
  DEFAULT_SETTINGS,
  outputsMarkdown,
  PaletteCommand,
  parseRule,
  parseSessionIndex,
  ProgressTracker,
  resolveServer,
  serverEnv,
  sessionPicks,
  statusText,
  statusTooltip,
  treeModel,
  StderrTail,
  startFailureMessage,
  resultsModels,
  resultsConfigs,
  jsonlTasks,
  CONFIGS,
  feedbackMarkdown,
  submittedMarkdown,
  convEvaluationMarkdown,
  PivotChange,
  Timeline,
  timelineMarkdown,
  watchedPatterns,
} from '../src/logic';

const info = (over: Partial<Info> = {}): Info => ({
  source: '/data/dialogue_7.json', kind: 'memorycode', count: 4, index: 1, active: 2, pivots: 3, history: false, ...over,
});

const active: Active = {
  index: 1,
  count: 4,
  pivots: [
    { id: 'mc-1', origin: 'memorycode', version: 0, text: "start function names with 'f_'", kind: 'function', rule: '^f_.*', description: 'names must match `^f_.*`', session: 0 },
    { id: 'mine', origin: 'toml', version: 2, text: '', kind: 'method decorator', rule: ['timer', true], description: '`timer` must be present', session: 1 },
  ],
};

test('status text: 0-based index over the count, and no conversation', () => {
  assert.equal(statusText(undefined), 'session -');
  assert.equal(statusText({ index: 0, count: 3 }), 'session 0/3');
  assert.equal(statusText({ index: 2, count: 3, kind: 'memorycode' }), 'session 2/3');
  assert.equal(statusText({ index: 0, count: 1, kind: 'none' }), 'pivot: no conversation');
  assert.match(statusTooltip({ index: 2, count: 3, source: '/x/dialogue_1.json' }), /session 2 of 3.*\n\/x\/dialogue_1\.json/);
  assert.equal(statusText({ index: 2, count: 11, kind: 'convcode', task: 'HumanEval/2' }), 'HumanEval/2 turn 2/10');
});

test('status without a server: not running / failed with the reason, never "starting" forever', () => {
  const s = { index: 2, count: 3, kind: 'memorycode' };
  assert.equal(statusText(s, { state: 'stopped' }), 'pivot: not running');
  assert.equal(statusText(undefined, { state: 'failed', reason: 'error: unexpected argument' }), 'pivot: failed');
  assert.match(statusTooltip(undefined, { state: 'failed', reason: 'error: unexpected argument' }), /failed to start: error: unexpected argument/);
  assert.equal(statusText(s, { state: 'starting' }), 'pivot: starting');
});

test("start failure: one message with the server's last stderr lines", () => {
  const t = new StderrTail(200);
  assert.equal(t.reason(), undefined);
  t.push("error: unexpected argument '--bogus' found\n\n");
  t.push('Usage: pivot-lsp serve\n\nFor more information, try \'--help\'.\n');
  const why = t.reason()!;
  assert.match(why, /unexpected argument '--bogus'/);
  assert.match(startFailureMessage('/bin/pivot-lsp', why, 2), /^Pivot LSP: the server \/bin\/pivot-lsp stopped \(exit code 2\): error: unexpected/);
  assert.match(startFailureMessage('x', undefined), /printed nothing/);
  t.push('y'.repeat(500));
  assert.ok(t.reason()!.length <= 200, 'the tail is bounded');
});

test('sessionChanged keeps what info said about the source', () => {
  const s = applySessionChanged({ index: 0, count: 3, kind: 'memorycode', source: '/a' }, { index: 2, count: 3 });
  assert.deepEqual(s, { index: 2, count: 3, kind: 'memorycode', source: '/a' });
  assert.equal(statusText(s), 'session 2/3');
  // A new conversation with a different count.
  assert.equal(statusText(applySessionChanged(s, { index: 0, count: 5 })), 'session 0/5');
});

test('tree: one item per session, the current one marked, pivots with their origin', () => {
  const [sessions, pivots] = treeModel(info(), active);
  assert.equal(sessions.label, 'Sessions (1/4)');
  assert.equal(sessions.description, 'dialogue_7.json');
  assert.deepEqual(sessions.children!.map((n) => n.label), ['Session 0', 'Session 1', 'Session 2', 'Session 3']);
  assert.deepEqual(sessions.children!.map((n) => n.description), [undefined, 'current', undefined, undefined]);
  assert.equal(sessions.children![1].contextValue, 'session.current');
  assert.deepEqual(sessions.children![3].command, { command: PaletteCommand.gotoSession, args: [3] });
  assert.equal(pivots.label, 'Active pivots (2)');
  assert.deepEqual(pivots.children!.map((n) => [n.label, n.description, n.contextValue]), [
    ['mc-1', "start function names with 'f_'", 'pivot.memorycode'],
    ['mine', '`timer` must be present', 'pivot.toml'],
  ]);
  assert.match(pivots.children![1].tooltip!, /version 2, given at session 1 \(toml\)/);
});

test("tree: every session lists the pivots it adds, updates or removes (the server's timeline)", () => {
  const change = (change: PivotChange['change'], id: string, version: number, text: string): PivotChange => ({ change, id, version, text, origin: 'pivots.toml', kind: 'function', description: '' });
  const timeline: Timeline = {
    index: 1, count: 4, source: 'memorycode', file: null,
    sessions: [
      { index: 0, commit: null, uncommitted: false, changes: [change('added', 'mc-1', 0, "start function names with 'f_'")] },
      { index: 1, commit: null, uncommitted: false, changes: [] },
      { index: 2, commit: null, uncommitted: false, changes: [change('updated', 'mc-1', 1, 'use g_ now'), change('added', 'mc-3', 0, '')] },
      { index: 3, commit: null, uncommitted: false, changes: [change('removed', 'mc-3', 1, '')] },
    ],
  };
  const [sessions] = treeModel(info(), active, timeline);
  assert.deepEqual(sessions.children!.map((n) => n.description), ['adds mc-1', 'current', 'adds mc-3 · updates mc-1', 'removes mc-3']);
  assert.deepEqual(sessions.children![2].children!.map((n) => n.label), ['mc-1', 'mc-3']);
  assert.deepEqual(sessions.children![3].children!.map((n) => n.icon), ['remove']);
});

test('tree: sessions from history name their commit, and the uncommitted file', () => {
  const commit = { id: '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b', short: '1a2b3c4d5e6f', summary: 'pivots: g_ now', time: 1764363840 };
  const timeline: Timeline = {
    index: 0, count: 2, source: 'history', file: 'pivots.toml',
    sessions: [
      { index: 0, commit, uncommitted: false, changes: [{ change: 'updated', id: 'fn', version: 1, text: 'g_', origin: 'pivots.toml', kind: 'function', description: '' }] },
      { index: 1, commit: null, uncommitted: true, changes: [] },
    ],
  };
  const [sessions] = treeModel(info({ kind: 'workspace pivots', source: null, count: 2, index: 0, history: true }), active, timeline);
  assert.equal(sessions.label, 'History of pivots.toml (0/2)');
  assert.deepEqual(sessions.children!.map((n) => n.description), ['current · 1a2b3c4 pivots: g_ now · updates fn', 'uncommitted pivots.toml']);
  assert.match(sessions.children![0].tooltip!, /^commit 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b\npivots: g_ now\n2025-11-28 21:04 UTC\nupdated fn/);
  // The `pivot.instructions` setting: the sessions are the instruction file's commits.
  const [agents] = treeModel(info({ kind: 'workspace pivots', source: null, count: 2, index: 0, history: true }), active, { ...timeline, file: 'AGENTS.md' });
  assert.equal(agents.label, 'History of AGENTS.md (0/2)');
  assert.match(timelineMarkdown({ ...timeline, file: 'AGENTS.md' }), /^# History of AGENTS\.md: 2 sessions/);
});

test('ConvCodeWorld folder choices: models, configurations in Table 1 order, tasks', () => {
  assert.deepEqual(resultsModels(['fixture--coder--bigcodebench-instruct--vllm-0-1-sanitized-calibrated.jsonl',
    'fixture--coder--bigcodebench-instruct--vllm-0-1-sanitized-calibrated_eval_results.json',
    'gpt-4o--bigcodebench-instruct--openai-0-1-sanitized-calibrated.jsonl', 'notes.txt']), ['fixture/coder', 'gpt-4o']);
  const live = ['bigcodebench_fixture_coder_CF_EF_FULL_SEF_by_gpt-4o.jsonl', 'bigcodebench_fixture_coder_CF_EF_FULL_SEF_by_gpt-4o_ITER=2.jsonl',
    'bigcodebench_fixture_coder_CF.jsonl', 'bigcodebench_fixture_coder_CF_eval_results.json', 'bigcodebench_other_CF_SNF.jsonl'];
  assert.deepEqual(resultsConfigs(live, 'fixture/coder').map((c) => c.label), ['w/ CF', 'w/ CF EF (full TC) SEF']);
  assert.deepEqual(jsonlTasks('{"task_id": "HumanEval/0"}\n{"task_id": "HumanEval/2"}\n{"task_id": "HumanEval/0"}\n{"task_id": "Hu'), ['HumanEval/0', 'HumanEval/2']);
  assert.equal(CONFIGS.length, 9);
  assert.deepEqual(args.openResults({ path: '/r', task: 'HumanEval/2', config: 'CF', model: 'm', player: '' }), [{ path: '/r', task: 'HumanEval/2', config: 'CF', model: 'm' }]);
  assert.deepEqual(args.evaluateConvcode('/r', 'm', 'ref'), [{ results: '/r', model: 'm', static: true, refModel: 'ref' }]);
});

test('Generate MemoryCode Outputs: a URL is an endpoint, anything else a loopback script', () => {
  assert.deepEqual(endpointArgs(' http://127.0.0.1:8000/v1 '), { baseUrl: 'http://127.0.0.1:8000/v1' });
  assert.deepEqual(endpointArgs('HTTPS://api.example.org/v1'), { baseUrl: 'HTTPS://api.example.org/v1' });
  assert.deepEqual(endpointArgs('fixtures/memorycode/loopback.json'), { loopback: 'fixtures/memorycode/loopback.json' });
  assert.deepEqual(args.generate({ model: 'm', out: '/o', loopback: 'l.json', apiKeyEnv: undefined }), [{ model: 'm', out: '/o', loopback: 'l.json' }]);
  assert.deepEqual(args.generate({ model: 'm', out: '/o', baseUrl: 'http://h/v1', apiKeyEnv: 'K' }), [{ model: 'm', out: '/o', baseUrl: 'http://h/v1', apiKeyEnv: 'K' }]);
});

test('feedback, submission and evaluation reports are readable markdown, not JSON', () => {
  const scores: ConvEvaluation['json'] = {
    benchmark: 'convcodeworld', mode: 'live', model: 'm', reference: null, turns: [0], columns: [], excluded_tasks: [], notes: [],
  };
  const f = feedbackMarkdown({ kind: 'execution', task: 'HumanEval/2', text: 'TEST_CASE_2\nTraceback ```x```', simulator_call: null, pending: { compilation: null, execution: 'e', user: null } });
  assert.match(f, /^# Feedback: execution/);
  assert.equal((f.match(/```/g) ?? []).length, 2, 'fences inside the feedback cannot close the block');
  const sub = submittedMarkdown({ turn: 1, tests: { uri: 'file:///t.py', task: 't', status: 'pass', passed: 3, total: 3, summary: '3/3 passed', entry_line: null, failures: [] }, table: 'Table 1\n|a|\n', record: {}, log: '/l', eval_file: '/e', scores });
  assert.match(sub, /Turn 1 submitted[\s\S]*3\/3 passed[\s\S]*Table 1/);
  const ev = convEvaluationMarkdown({ text: '', markdown: '| model | w/ CF |\n|---|---|\n| m | 1.0 |\n', json: scores, notes: ['n1'] }, '/r', 'm');
  assert.match(ev, /\| model \| w\/ CF \|\n\|---\|---\|/);
  assert.match(ev, /- note: n1/);
});

test('tree: no conversation, no server', () => {
  // No conversation: no items (the view's welcome text offers to open one).
  assert.deepEqual(treeModel(info({ kind: 'none', source: null, count: 1, index: 0 }), { index: 0, count: 1, pivots: [] }), []);
  assert.equal(treeModel(undefined, undefined)[0].label, 'Pivot LSP is not running');
});

test('initializationOptions: key from the setting, else from the named env variable', () => {
  const s = { ...DEFAULT_SETTINGS, python: ' /venv/bin/python ', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm' };
  assert.deepEqual(initializationOptions(s, { OPENAI_API_KEY: 'env-key' }), {
    pivot: {
      python: '/venv/bin/python', problems: 'humaneval', sandbox: 'bwrap', history: false, instructions: '', logLevel: null,
      endpoint: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'm', apiKey: 'env-key' },
    },
  });
  assert.equal(initializationOptions({ ...s, apiKey: 'set' }, { OPENAI_API_KEY: 'env-key' }).pivot.endpoint?.apiKey, 'set');
  // The key in SecretStorage comes first; an empty one is none.
  assert.equal(initializationOptions({ ...s, apiKey: 'set' }, { OPENAI_API_KEY: 'env-key' }, 'secret').pivot.endpoint?.apiKey, 'secret');
  assert.equal(initializationOptions(s, { OPENAI_API_KEY: 'env-key' }, ' ').pivot.endpoint?.apiKey, 'env-key');
  assert.equal(initializationOptions({ ...s, apiKeyEnv: 'OTHER' }, { OPENAI_API_KEY: 'env-key' }).pivot.endpoint?.apiKey, null);
  assert.equal(initializationOptions({ ...s, sandbox: 'none' }, {}).pivot.sandbox, 'none');
  assert.equal(initializationOptions({ ...s, history: true }, {}).pivot.history, true);
  assert.equal(initializationOptions({ ...s, logLevel: 'debug' }, {}).pivot.logLevel, 'debug');
  assert.equal(initializationOptions({ ...s, instructions: ' AGENTS.md ' }, {}).pivot.instructions, 'AGENTS.md');
  assert.deepEqual(watchedPatterns({ ...s, instructions: './docs/AGENTS.md' }), ['**/{pivots.toml,pyproject.toml}', 'docs/AGENTS.md']);
  assert.deepEqual(watchedPatterns(DEFAULT_SETTINGS), ['**/{pivots.toml,pyproject.toml}']);
  assert.deepEqual(initializationOptions({ ...DEFAULT_SETTINGS, problems: '', sandbox: '' }, {}), {
    pivot: { python: null, problems: null, sandbox: null, history: false, instructions: '', logLevel: null, endpoint: { baseUrl: null, model: null, apiKey: null } },
  });
  assert.deepEqual(serverEnv(s), { PIVOT_PYTHON: '/venv/bin/python' });
  assert.deepEqual(serverEnv(DEFAULT_SETTINGS), {});
});

test('interpreter: pivot.python, else the Python extension\'s, else the server\'s default', () => {
  const venv = '/w/.venv/bin/python';
  // A non-empty setting always wins, trimmed; the Python extension's choice is not used.
  assert.deepEqual(choosePython(' /opt/py/bin/python3 ', venv), { python: '/opt/py/bin/python3', origin: 'setting' });
  assert.deepEqual(choosePython('python3.12', undefined, false), { python: 'python3.12', origin: 'setting' });
  // Empty: the Python extension's interpreter for the folder.
  assert.deepEqual(choosePython('', venv), { python: venv, origin: 'pythonExtension' });
  assert.deepEqual(choosePython('  ', ` ${venv} `), { python: venv, origin: 'pythonExtension' });
  // Not installed, no answer, an environment without an interpreter: the server's default ('' is none sent).
  assert.deepEqual(choosePython('', undefined), { python: '', origin: 'default' });
  assert.deepEqual(choosePython('', ' '), { python: '', origin: 'default' });
  // Restricted Mode: the Python extension's choice may be the repository's own venv.
  assert.deepEqual(choosePython('', venv, false), { python: '', origin: 'default', restricted: true });
  // What goes to the server: nothing for the default, as before.
  const s = (c: { python: string }) => ({ ...DEFAULT_SETTINGS, python: c.python });
  assert.deepEqual(serverEnv(s(choosePython('', venv))), { PIVOT_PYTHON: venv });
  assert.equal(initializationOptions(s(choosePython('', venv)), {}).pivot.python, venv);
  assert.deepEqual(serverEnv(s(choosePython('', undefined))), {});
  assert.equal(initializationOptions(s(choosePython('', undefined)), {}).pivot.python, null);
});

test('interpreter: the output line says which and from where; a change of interpreter restarts', () => {
  assert.equal(pythonLogLine(choosePython('/opt/py/bin/python3', undefined), {}), 'Pivot LSP: Python interpreter /opt/py/bin/python3 (setting pivot.python)');
  assert.equal(pythonLogLine(choosePython('', '/w/.venv/bin/python'), {}), "Pivot LSP: Python interpreter /w/.venv/bin/python (the Python extension's interpreter)");
  assert.equal(pythonLogLine(choosePython('', undefined), {}), 'Pivot LSP: Python interpreter python3 (default python3)');
  assert.equal(pythonLogLine(choosePython('', undefined, false), {}),
    "Pivot LSP: Python interpreter python3 (default python3; the Python extension's interpreter is not used in Restricted Mode)");
  // The server inherits the editor's environment, whose PIVOT_PYTHON is then its default.
  assert.equal(pythonLogLine(choosePython('', undefined), { PIVOT_PYTHON: '/env/python' }),
    "Pivot LSP: Python interpreter /env/python (PIVOT_PYTHON of the editor's environment, in place of the default python3)");
  const ext = (p?: string) => choosePython('', p);
  assert.equal(pythonChanged(ext('/a/python'), ext('/b/python')), true);
  assert.equal(pythonChanged(ext('/a/python'), ext(undefined)), true);
  assert.equal(pythonChanged(ext('/a/python'), ext('/a/python')), false);
  // A set pivot.python: the Python extension's changes do not matter.
  assert.equal(pythonChanged(choosePython('/opt/py', '/a'), choosePython('/opt/py', '/b')), false);
  // No server started yet: nothing to restart.
  assert.equal(pythonChanged(undefined, ext('/a/python')), false);
});

test('server path: PATH lookup, explicit path, and a clear message when missing', () => {
  const files = new Set(['/usr/local/bin/pivot-lsp', '/w/target/debug/pivot-lsp', '/ext/server/pivot-lsp']);
  const has = (p: string) => files.has(p);
  const bundled = '/ext/server/pivot-lsp';
  // No setting: the bundled binary first, then PATH (a universal .vsix has none bundled).
  assert.deepEqual(resolveServer('', bundled, ['/usr/local/bin'], has), { ok: true, command: bundled, origin: 'bundled' });
  assert.deepEqual(resolveServer('  ', '/ext2/server/pivot-lsp', ['/usr/bin', '/usr/local/bin/'], has),
    { ok: true, command: '/usr/local/bin/pivot-lsp', origin: 'PATH' });
  assert.deepEqual(resolveServer('', undefined, ['/usr/local/bin'], has), { ok: true, command: '/usr/local/bin/pivot-lsp', origin: 'PATH' });
  // The setting overrides the bundled binary: a name on PATH, or a path.
  assert.deepEqual(resolveServer('pivot-lsp', bundled, ['/usr/bin', '/usr/local/bin/'], has),
    { ok: true, command: '/usr/local/bin/pivot-lsp', origin: 'setting' });
  assert.deepEqual(resolveServer('/w/target/debug/pivot-lsp', bundled, [], has),
    { ok: true, command: '/w/target/debug/pivot-lsp', origin: 'setting' });
  const missing = resolveServer('pivot-lsp', bundled, ['/usr/bin', ''], has);
  assert.equal(missing.ok, false);
  assert.match((missing as { message: string }).message, /"pivot-lsp" \(setting pivot\.serverPath\) was not found on PATH.*pip install pivot-lsp.*pivot\.serverPath/);
  const none = resolveServer('', '/ext2/server/pivot-lsp', ['/usr/bin'], has);
  assert.match((none as { message: string }).message, /no server bundled .* "pivot-lsp" was not found on PATH\..*pip install pivot-lsp/);
  const bad = resolveServer('/nope/pivot-lsp', bundled, ['/usr/local/bin'], has);
  assert.match((bad as { message: string }).message, /binary \/nope\/pivot-lsp \(setting pivot\.serverPath\) does not exist/);
});

test('command arguments have the shapes the server parses', () => {
  assert.deepEqual(args.open('/d/dialogue_1.json'), [{ path: '/d/dialogue_1.json' }]);
  assert.deepEqual(args.goto(2), [{ index: 2 }]);
  assert.deepEqual(args.transcript(), []);
  assert.deepEqual(args.transcript(0), [{ index: 0 }]);
  assert.deepEqual(args.evaluate('/ds', '/out'), [{ dataset: '/ds', outputs: '/out' }]);
  assert.deepEqual(args.add({ id: 'p', kind: 'function', rule: '^x', text: '', session: undefined }), [{ id: 'p', kind: 'function', rule: '^x' }]);
  assert.deepEqual(args.none(), []);
});

test('session index input and picks', () => {
  assert.equal(parseSessionIndex(' 2 ', 3), 2);
  assert.equal(parseSessionIndex('0', 1), 0);
  assert.match(parseSessionIndex('3', 3) as string, /3 sessions: 0 to 2/);
  assert.match(parseSessionIndex('-1', 3) as string, /whole number/);
  assert.match(parseSessionIndex('1.5', 3) as string, /whole number/);
  assert.deepEqual(sessionPicks(info({ count: 2, index: 1 })), [
    { label: 'Session 0', description: undefined, index: 0 },
    { label: 'Session 1', description: 'current', index: 1 },
  ]);
});

test('rules typed by the user', () => {
  assert.equal(parseRule('"^f_.*"'), '^f_.*');
  assert.equal(parseRule('true'), true);
  assert.deepEqual(parseRule('["timer", true]'), ['timer', true]);
  assert.equal(parseRule('^f_.*'), '^f_.*');
});

test('progress: absolute percentages become increments, end fills up', () => {
  const t = new ProgressTracker();
  assert.deepEqual(t.step({ kind: 'begin', percentage: 0, message: '0/3 dialogues' }), { increment: 0, message: '0/3 dialogues' });
  assert.deepEqual(t.step({ kind: 'report', percentage: 33, message: '1/3' }), { increment: 33, message: '1/3' });
  assert.deepEqual(t.step({ kind: 'report', percentage: 20 }), { increment: 0, message: undefined });
  assert.deepEqual(t.step({ kind: 'report', percentage: 66 }), { increment: 33, message: undefined });
  assert.deepEqual(t.step({ kind: 'end', message: 'done' }), { increment: 34, message: 'done' });
  assert.equal(t.percentage, 100);
});

test('markdown reports', () => {
  const md = activePivotsMarkdown(active);
  assert.match(md, /^# Active pivots at session 1 of 4/);
  assert.match(md, /\*\*mc-1\*\* \(version 0, given at session 0, memorycode\): "start function names with 'f_'" \(function: names must match `\^f_\.\*`\)/);
  assert.match(activePivotsMarkdown({ index: 0, count: 1, pivots: [] }), /No pivot is active/);

  const out = outputsMarkdown({
    dialogue: '/d/dialogue_1.json', output: '/o/output_1.json',
    scores: { session: [0.5, null], instruction: [null, null], history: [null, 1] },
    answers: [{ session: 1, kind: 'history', answer: 0, syntax_error: 'invalid syntax (line 1)', score: 0, verdicts: [{ pair: 0, pivot: 'mc-1', kind: 'function', rule: '^f_', verdict: 'syntax_error', score: 0 }] }],
    warnings: [],
  });
  assert.match(out, /\| session \| session score \| instruction score \| history score \|/);
  assert.match(out, /\| 0 \| 0\.5000 \| n\/a \| n\/a \|\n\| 1 \| n\/a \| n\/a \| 1\.0000 \|/);
  assert.match(out, /session 1, history answer 0: score 0\.0000 — syntax error: invalid syntax \(line 1\)\n  - `mc-1` \(function "\^f_"\): syntax_error/);

  const row = { sessions: 1, instructions: 1, session_scores: [], history_scores: [] } as unknown as Evaluation['dialogues'][string];
  const ev = evaluationMarkdown({
    benchmark: 'memorycode', model: 'm',
    macro: { 'short history': null, 'long history': null, session: 0.25, instruction: null },
    per_session: { 'short history': [], 'long history': [], session: [0.25], instruction: [null] },
    max_length: 1, dialogues: { 1: row, 2: row }, listdir_order: [], skipped: [{ id: 3, reason: 'bad' }], by_kind: {},
  }, '/ds', '/out');
  assert.match(ev, /\| session \| 0\.2500 \|\n\| instruction \| n\/a \|/);
  assert.match(ev, /2 dialogues scored, 1 skipped\.\n- skipped: dialogue 3: bad/);
});
