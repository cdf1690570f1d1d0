// The protocol the extension relies on, against the real `pivot-lsp` over stdio: initialize
// with the extension's initializationOptions, every executeCommand the extension sends
// (with the argument builders it uses), pivot/sessionChanged, diagnostics and $/progress.
// Strict: every message the server sends must be consumed by an expectation.
//
// The server binary: $PIVOT_LSP_BIN, else target/debug/pivot-lsp of this checkout.

import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import {
  Diagnostic,
  ExecuteCommandRequest,
  InitializeRequest,
  InitializeResult,
  ResponseError,
  WorkDoneProgress,
} from 'vscode-languageserver-protocol/node';
import {
  Active,
  applySessionChanged,
  args,
  CommandArgs,
  DEFAULT_SETTINGS,
  endpointArgs,
  Evaluation,
  evaluationMarkdown,
  Generated,
  Info,
  initializationOptions,
  OutputsCheck,
  ReportOpened,
  outputsMarkdown,
  ProgressTracker,
  ServerCommand,
  SESSION_CHANGED,
  StatusState,
  statusText,
  PALETTE_TO_SERVER,
  ServerCommandName,
  Transcript,
  Timeline,
  treeModel,
} from '../src/logic';

const repo = path.resolve(__dirname, '..', '..', '..', '..');
const bin = process.env.PIVOT_LSP_BIN ?? path.join(repo, 'target', 'debug', 'pivot-lsp');
const dialogue = path.join(repo, 'fixtures', 'memorycode', 'dataset', 'dialogue_1.json');
const dataset = path.join(repo, 'fixtures', 'memorycode', 'dataset');
const outputs = path.join(repo, 'fixtures', 'memorycode', 'outputs', 'demo-model');
const demo = fs.readFileSync(path.join(repo, 'tests', 'editors', 'fixtures', 'demo.py'), 'utf8');

interface Msg { kind: 'notification' | 'request'; method: string; params: any }

// Every command reply is checked against editors/schema/commands.schema.json, the schema
// generated from the server's reply types: a reply that is not what the types say (a field
// renamed on one side only) fails the test that received it, naming the command and field.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const schema = require(path.join(repo, 'editors', 'schema', 'validate.js')) as {
  replyValidator(): (command: string, reply: unknown) => string | undefined;
  withRenamedField(reply: unknown): unknown;
};
const checkReply = schema.replyValidator();
/** The replies checked so far, by command. */
const checkedReplies: { command: string; reply: unknown }[] = [];

async function checked<T>(command: string, pending: Promise<unknown>): Promise<T> {
  const reply = await pending;
  const problem = checkReply(command, reply);
  assert.equal(problem, undefined, `the server's reply does not match the schema:\n${problem}`);
  checkedReplies.push({ command, reply });
  return reply as T;
}

/** A client that queues everything the server sends; expectations consume from the queue. */
class StrictClient {
  readonly queue: Msg[] = [];
  private wake: (() => void) | undefined;
  constructor(readonly conn: MessageConnection) {
    conn.onNotification((method: string, params: unknown) => this.push({ kind: 'notification', method, params }));
    // Progress on a token nobody listens to is a message the test did not expect.
    conn.onUnhandledProgress((p) => this.push({ kind: 'notification', method: '$/progress', params: p }));
    conn.onRequest((method: string, params: unknown) => {
      this.push({ kind: 'request', method, params });
      return null;
    });
  }
  private push(m: Msg): void {
    this.queue.push(m);
    this.wake?.();
  }
  /** The first queued message matching `pred`, waiting up to 20 s for it. */
  async expect(what: string, pred: (m: Msg) => boolean): Promise<Msg> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const i = this.queue.findIndex(pred);
      if (i >= 0) return this.queue.splice(i, 1)[0];
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}; queued: ${JSON.stringify(this.queue.map((m) => m.method))}`);
      }
      await new Promise<void>((res) => {
        const t = setTimeout(res, left);
        this.wake = () => {
          clearTimeout(t);
          res();
        };
      });
    }
  }
  sessionChanged(index: number, count: number): Promise<Msg> {
    return this.expect(`sessionChanged ${index}/${count}`, (m) => m.method === SESSION_CHANGED && m.params.index === index && m.params.count === count);
  }
  async diagnostics(uri: string): Promise<Diagnostic[]> {
    const m = await this.expect(`diagnostics of ${uri}`, (x) => x.method === 'textDocument/publishDiagnostics' && x.params.uri === uri);
    return m.params.diagnostics;
  }
  /** Nothing else arrived: a round trip first, so anything sent before it is queued. */
  async quiet(): Promise<void> {
    const command = ServerCommand.conversationInfo;
    await checked(command, this.conn.sendRequest(ExecuteCommandRequest.type, { command, arguments: [] }));
    assert.deepEqual(this.queue.map((m) => `${m.method} ${JSON.stringify(m.params)}`), [], 'messages the test did not expect');
  }
  run<T>(command: string, a: CommandArgs, workDoneToken?: string): Promise<T> {
    return checked<T>(command, this.conn.sendRequest(ExecuteCommandRequest.type, { command, arguments: a, ...(workDoneToken ? { workDoneToken } : {}) }));
  }
}

/** Diagnostics reduced to what is asserted: [code, line, start col, end col], sorted. */
function shape(ds: Diagnostic[]): [string, number, number, number][] {
  return ds
    .map((d): [string, number, number, number] => [String(d.code), d.range.start.line, d.range.start.character, d.range.end.character])
    .sort((a, b) => a[0].localeCompare(b[0]) || a[1] - b[1]);
}

const haveServer = fs.existsSync(bin);

describe('pivot-lsp over stdio, as the VS Code extension uses it', { skip: haveServer ? false : `SKIP: no server binary at ${bin} (run cargo build)` }, () => {
  let proc: ChildProcess;
  let c: StrictClient;
  let root: string;
  let uri: string;
  let init: InitializeResult;
  let status: StatusState | undefined;
  const stderr: string[] = [];

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pivot-vscode-test-'));
    fs.writeFileSync(path.join(root, 'demo.py'), demo);
    uri = pathToFileURL(path.join(root, 'demo.py')).toString();
    proc = spawn(bin, ['serve'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PIVOT_PYTHON: 'python3' } });
    proc.stderr!.on('data', (d) => stderr.push(String(d)));
    const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    c = new StrictClient(conn);
    conn.listen();
    const settings = { ...DEFAULT_SETTINGS, python: 'python3', baseUrl: 'http://127.0.0.1:9/v1', model: 'loopback' };
    init = await conn.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: pathToFileURL(root).toString(),
      workspaceFolders: [{ uri: pathToFileURL(root).toString(), name: 'root' }],
      // What vscode-languageclient announces for the parts the extension uses.
      capabilities: {
        window: { workDoneProgress: true, showMessage: {} },
        workspace: { executeCommand: { dynamicRegistration: true }, workspaceFolders: true, didChangeWatchedFiles: { dynamicRegistration: true } },
        textDocument: { synchronization: { didSave: true }, publishDiagnostics: { versionSupport: true, codeDescriptionSupport: true, dataSupport: true } },
      },
      initializationOptions: initializationOptions(settings, { OPENAI_API_KEY: 'test-key' }),
    });
    await conn.sendNotification('initialized', {});
  });

  after(async () => {
    if (proc.exitCode === null) proc.kill();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('initialize: the capabilities and commands the extension relies on', async () => {
    const caps = init.capabilities;
    const commands = caps.executeCommandProvider?.commands ?? [];
    for (const cmd of Object.values(ServerCommand)) assert.ok(commands.includes(cmd), `server does not advertise ${cmd}`);
    // Every command the server has is reachable from a VS Code palette command.
    const reachable = new Set(Object.values(PALETTE_TO_SERVER));
    for (const cmd of commands) assert.ok(reachable.has(cmd as ServerCommandName), `no VS Code command calls the server's ${cmd}`);
    assert.equal(caps.executeCommandProvider?.workDoneProgress, true);
    assert.deepEqual(caps.textDocumentSync, { openClose: true, change: 2, save: true });
    const n = await c.sessionChanged(0, 1);
    status = applySessionChanged(status, n.params);
    const info = await c.run<Info>(ServerCommand.conversationInfo, args.none());
    assert.equal(info.kind, 'none');
    assert.equal(info.source, null);
    status = { ...status, kind: info.kind, source: info.source };
    assert.equal(statusText(status), 'pivot: no conversation');
    await c.quiet();
  });

  test('a Python document without pivots has no diagnostics', async () => {
    await c.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: demo } });
    assert.deepEqual(await c.diagnostics(uri), []);
    await c.quiet();
  });

  test('open a conversation: sessionChanged, status text, diagnostics at session 0', async () => {
    const info = await c.run<Info>(ServerCommand.conversationOpen, args.open(dialogue));
    assert.equal(info.kind, 'memorycode');
    assert.equal(info.source, dialogue);
    assert.equal(info.count, 3);
    assert.equal(info.index, 0);
    assert.deepEqual(info.warnings, []);
    const n = await c.sessionChanged(0, 3);
    status = { ...applySessionChanged(status, n.params), kind: info.kind, source: info.source };
    assert.equal(statusText(status), 'session 0/3');
    const ds = await c.diagnostics(uri);
    assert.deepEqual(shape(ds), [['mc-100', 10, 4, 10], ['mc-101', 10, 4, 10]]);
    for (const d of ds) {
      assert.equal(d.source, 'pivot');
      assert.equal(d.severity, 2);
    }
    const names = ds.find((d) => d.code === 'mc-100')!;
    assert.match(names.message, /cube_x/);
    assert.match(names.message, /always start function names with 'f_'/);
    assert.match(names.message, /session 0/);
    await c.quiet();
  });

  test('active pivots feed the tree view', async () => {
    const a = await c.run<Active>(ServerCommand.pivotsActive, args.none());
    assert.deepEqual(a.pivots.map((p) => [p.id, p.kind, p.session, p.origin]), [
      ['mc-100', 'function', 0, 'memorycode'],
      ['mc-101', 'function docstring', 0, 'memorycode'],
    ]);
    const info = await c.run<Info>(ServerCommand.conversationInfo, args.none());
    // Every session's changes, from the timeline (dialogue_1.json: two instruction-adds,
    // a filler, then an instruction-update and an instruction-add).
    const timeline = await c.run<Timeline>(ServerCommand.sessionTimeline, args.none());
    assert.deepEqual([timeline.source, timeline.count, timeline.sessions.map((s) => s.commit)], ['memorycode', 3, [null, null, null]]);
    const [sessions, pivots] = treeModel(info, a, timeline);
    assert.deepEqual(sessions.children!.map((s) => s.description), ['current · adds mc-100, mc-101', undefined, 'adds mc-102 · updates mc-100']);
    assert.equal(pivots.children!.length, 2);
    await c.quiet();
  });

  test('next, next: diagnostics follow the pivots of each session', async () => {
    let info = await c.run<Info>(ServerCommand.sessionNext, args.none());
    assert.deepEqual([info.index, info.moved], [1, true]);
    status = applySessionChanged(status, (await c.sessionChanged(1, 3)).params);
    assert.equal(statusText(status), 'session 1/3');
    // A filler session: the same pivots, so the same findings.
    assert.deepEqual(shape(await c.diagnostics(uri)), [['mc-100', 10, 4, 10], ['mc-101', 10, 4, 10]]);

    info = await c.run<Info>(ServerCommand.sessionNext, args.none());
    assert.deepEqual([info.index, info.active], [2, 3]);
    status = applySessionChanged(status, (await c.sessionChanged(2, 3)).params);
    assert.equal(statusText(status), 'session 2/3');
    const ds = await c.diagnostics(uri);
    assert.deepEqual(shape(ds), [['mc-100', 5, 4, 12], ['mc-101', 10, 4, 10], ['mc-102', 1, 8, 13]]);
    assert.match(ds.find((d) => d.code === 'mc-100')!.message, /f_square.*'_x'.*session 2/);
    assert.match(ds.find((d) => d.code === 'mc-102')!.message, /timer.*greet/);
    await c.quiet();
  });

  test('next at the last session does not move and sends no sessionChanged', async () => {
    const info = await c.run<Info>(ServerCommand.sessionNext, args.none());
    assert.deepEqual([info.index, info.moved], [2, false]);
    // The server may republish diagnostics; they must be unchanged.
    const extra = c.queue.filter((m) => m.method === 'textDocument/publishDiagnostics');
    for (const m of extra) assert.deepEqual(shape(m.params.diagnostics), [['mc-100', 5, 4, 12], ['mc-101', 10, 4, 10], ['mc-102', 1, 8, 13]]);
    c.queue.splice(0, c.queue.length, ...c.queue.filter((m) => m.method !== 'textDocument/publishDiagnostics'));
    await c.quiet();
  });

  test('previous and goto; a bad index is an error and the server keeps serving', async () => {
    let info = await c.run<Info>(ServerCommand.sessionPrevious, args.none());
    assert.equal(info.index, 1);
    await c.sessionChanged(1, 3);
    assert.deepEqual(shape(await c.diagnostics(uri)), [['mc-100', 10, 4, 10], ['mc-101', 10, 4, 10]]);
    info = await c.run<Info>(ServerCommand.sessionGoto, args.goto(0));
    assert.equal(info.index, 0);
    await c.sessionChanged(0, 3);
    await c.diagnostics(uri);
    await assert.rejects(c.run(ServerCommand.sessionGoto, args.goto(3)), (e: ResponseError<unknown>) => {
      assert.equal(e.code, -32602);
      assert.match(e.message, /pivot\.session\.goto: session index 3 is out of range.*0 to 2/);
      return true;
    });
    info = await c.run<Info>(ServerCommand.conversationInfo, args.none());
    assert.equal(info.index, 0);
    await c.quiet();
  });

  test('transcript as markdown, current and by index', async () => {
    const t0 = await c.run<Transcript>(ServerCommand.sessionTranscript, args.transcript());
    assert.equal(t0.index, 0);
    assert.equal(t0.count, 3);
    assert.match(t0.markdown, /^# Session 0/);
    assert.match(t0.markdown, /mc-100/);
    const t2 = await c.run<Transcript>(ServerCommand.sessionTranscript, args.transcript(2));
    assert.equal(t2.index, 2);
    // The pivot changes of session 2 come first: the update of mc-100 and the new mc-102.
    const changes = t2.markdown.indexOf('mc-102');
    assert.ok(changes > 0 && changes < t2.markdown.indexOf('Transcript'), t2.markdown);
    await c.quiet();
  });

  test("check a model's outputs: the same numbers as the CLI scorer", async () => {
    const r = await c.run<OutputsCheck>(ServerCommand.outputsCheck, args.outputs(path.join(outputs, 'output_1.json')));
    const cli = JSON.parse(execFileSync(bin, ['score', 'memorycode', '--dataset', dataset, '--outputs', outputs, '--format', 'json'], { encoding: 'utf8' }));
    assert.deepEqual(r.scores, cli.dialogues['1']);
    assert.ok(r.answers.length > 0);
    assert.match(outputsMarkdown(r), /^# Model outputs: output_1\.json/);
    await c.quiet();
  });

  test('open a report: the server writes .pivot/report.html embedding the score files given', async () => {
    const json = execFileSync(bin, ['score', 'memorycode', '--dataset', dataset, '--outputs', outputs, '--format', 'json', '--model-name', 'report-model'], { encoding: 'utf8' });
    const scores = path.join(root, 'scores.json');
    fs.writeFileSync(scores, json);
    const r = await c.run<ReportOpened>(ServerCommand.reportOpen, args.reportOpen([scores], 'A title'));
    assert.equal(r.path, path.join(root, '.pivot', 'report.html'));
    assert.equal(r.inputs, 1);
    const html = fs.readFileSync(r.path, 'utf8');
    assert.ok(html.includes('A title') && html.includes('report-model'), 'the title and model name are in the page');
    const data = /<script type="application\/json" id="pivot-report-data">([\s\S]*?)<\/script>/.exec(html);
    assert.ok(data, 'the embedded data');
    assert.deepEqual(JSON.parse(data[1]), [JSON.parse(json)]);
    await assert.rejects(c.run(ServerCommand.reportOpen, args.reportOpen([path.join(root, 'demo.py')])), /demo\.py/);
    await c.quiet();
  });

  test('evaluate MemoryCode with $/progress on the extension token: the CLI JSON', async () => {
    const token = 'pivot-vscode-evaluate-1';
    const progress: any[] = [];
    const sub = c.conn.onProgress(WorkDoneProgress.type, token, (v) => progress.push(v));
    const r = await c.run<Evaluation>(ServerCommand.evaluateMemorycode, args.evaluate(dataset, outputs), token);
    const cli = JSON.parse(execFileSync(bin, ['score', 'memorycode', '--dataset', dataset, '--outputs', outputs, '--format', 'json'], { encoding: 'utf8' }));
    assert.deepEqual(r, cli);
    // The end may arrive after the response (the server's notification and response
    // travel separately); the extension does not depend on it, the test waits for it.
    const deadline = Date.now() + 20_000;
    while (progress[progress.length - 1]?.kind !== 'end' && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 20));
    }
    sub.dispose();
    const values = progress;
    assert.equal(values[0].kind, 'begin');
    assert.equal(values[0].title, 'MemoryCode evaluation');
    assert.equal(values[0].cancellable, true);
    assert.equal(values[values.length - 1].kind, 'end');
    assert.ok(values.some((v) => v.kind === 'report' && /\/3 dialogues/.test(v.message)), JSON.stringify(values));
    const t = new ProgressTracker();
    for (const v of values) t.step(v);
    assert.equal(t.percentage, 100);
    assert.match(evaluationMarkdown(r, dataset, outputs), /3 dialogues scored, 0 skipped/);
    await c.quiet();
  });

  test('generate MemoryCode outputs (loopback model) with $/progress, then check them', async () => {
    const token = 'pivot-vscode-3';
    const progress: any[] = [];
    const sub = c.conn.onProgress(WorkDoneProgress.type, token, (v) => progress.push(v));
    const out = path.join(root, 'generated');
    const loopback = path.join(repo, 'fixtures', 'memorycode', 'loopback.json');
    const g = await c.run<Generated>(ServerCommand.memorycodeGenerate, args.generate({ model: 'loop-model', out, ...endpointArgs(loopback) }), token);
    assert.equal(path.basename(g.output), 'output_1.json');
    assert.ok(fs.existsSync(g.output), `no ${g.output}`);
    assert.ok(g.requests > 0, JSON.stringify(g));
    const deadline = Date.now() + 20_000;
    while (progress[progress.length - 1]?.kind !== 'end' && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 20));
    }
    sub.dispose();
    assert.equal(progress[0]?.kind, 'begin', JSON.stringify(progress));
    assert.equal(progress[progress.length - 1].kind, 'end');
    // What the palette command shows next: the verdicts, the same as the CLI scorer's.
    const r = await c.run<OutputsCheck>(ServerCommand.outputsCheck, args.outputs(g.output));
    // The CLI scores dialogue 1 alone (a dataset of just it: the others have no output here).
    const one = path.join(root, 'dataset-1');
    fs.mkdirSync(one, { recursive: true });
    fs.copyFileSync(dialogue, path.join(one, 'dialogue_1.json'));
    const cli = JSON.parse(execFileSync(bin, ['score', 'memorycode', '--dataset', one, '--outputs', path.dirname(g.output), '--format', 'json'], { encoding: 'utf8' }));
    assert.deepEqual(r.scores, cli.dialogues['1']);
    await c.quiet();
  });

  test('a missing conversation file: a clear error, the open one stays', async () => {
    const missing = path.join(root, 'nope', 'dialogue_9.json');
    await assert.rejects(c.run(ServerCommand.conversationOpen, args.open(missing)), (e: ResponseError<unknown>) => {
      assert.equal(e.code, -32803);
      assert.ok(e.message.includes(missing), e.message);
      return true;
    });
    const info = await c.run<Info>(ServerCommand.conversationInfo, args.none());
    assert.equal(info.source, dialogue);
    await c.quiet();
  });

  test('user pivots: add, remove, reload', async () => {
    let a = await c.run<Active>(ServerCommand.pivotsAdd, args.add({ id: 'ext-class', kind: 'class', rule: '^My', text: 'classes start with My' }));
    assert.ok(a.pivots.some((p) => p.id === 'ext-class' && p.session === 0));
    let ds = await c.diagnostics(uri);
    assert.deepEqual(shape(ds).filter((d) => d[0] === 'ext-class'), [['ext-class', 0, 6, 13]]);
    a = await c.run<Active>(ServerCommand.pivotsRemove, args.remove('ext-class'));
    assert.ok(!a.pivots.some((p) => p.id === 'ext-class'));
    ds = await c.diagnostics(uri);
    assert.deepEqual(shape(ds), [['mc-100', 10, 4, 10], ['mc-101', 10, 4, 10]]);
    const info = await c.run<Info & { workspace_pivots: number }>(ServerCommand.pivotsReload, args.none());
    assert.equal(info.workspace_pivots, 0);
    // Reloading republishes (no pivot changed).
    while (c.queue.some((m) => m.method === 'textDocument/publishDiagnostics')) await c.diagnostics(uri);
    await c.quiet();
  });

  test("inspect: the server's text of the document", async () => {
    const r = await c.run<{ uri: string; version: number; text: string }>(ServerCommand.documentInspect, args.inspect(uri));
    assert.equal(r.text, demo);
    assert.equal(r.version, 1);
    await c.quiet();
  });

  test('every reply so far matched the schema, which rejects a renamed or mistyped field', () => {
    const commands = new Set(checkedReplies.map((r) => r.command));
    for (const cmd of [ServerCommand.conversationOpen, ServerCommand.sessionNext, ServerCommand.pivotsActive, ServerCommand.outputsCheck]) {
      assert.ok(commands.has(cmd), `no reply of ${cmd} was checked; checked: ${[...commands].join(', ')}`);
    }
    // The same replies, broken as a server change would break them, must fail, and say where.
    const open = checkedReplies.find((r) => r.command === ServerCommand.conversationOpen)!;
    const renamed = schema.withRenamedField(open.reply);
    const problem = checkReply(open.command, renamed);
    assert.ok(problem?.includes(`${open.command}: reply.source_renamed`), String(problem));
    assert.ok(problem?.includes("must have required property 'source'"), String(problem));
    const active = checkedReplies.find((r) => r.command === ServerCommand.pivotsActive)!.reply as Active;
    const mistyped = { ...active, pivots: active.pivots.map((p) => ({ ...p, session: String(p.session) })) };
    assert.match(String(checkReply(ServerCommand.pivotsActive, mistyped)), /reply\.pivots\.0\.session: must be integer/);
  });

  test('close the conversation, then shutdown and exit', async () => {
    const info = await c.run<Info>(ServerCommand.conversationClose, args.none());
    assert.equal(info.kind, 'none');
    await c.sessionChanged(0, 1);
    assert.deepEqual(await c.diagnostics(uri), []);
    await c.quiet();
    await c.conn.sendRequest('shutdown');
    const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
    await c.conn.sendNotification('exit');
    assert.equal(await exited, 0, stderr.join(''));
  });
});
