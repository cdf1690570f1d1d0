// Pivot LSP for VS Code: starts `pivot-lsp serve`, maps palette commands to the server's
// `workspace/executeCommand` commands, and shows the session in the status bar and in an
// explorer view. Formatting and decisions live in logic.ts (unit-tested without VS Code).

import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { PythonExtension } from '@vscode/python-extension';
import {
  CloseAction,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  LSPErrorCodes,
  ResponseError,
  ServerOptions,
  State,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
} from 'vscode-languageclient/node';
import {
  Active,
  activePivotsMarkdown,
  ConvEvaluation,
  convEvaluationMarkdown,
  Feedback,
  FEEDBACK_KINDS,
  FEEDBACK_LABELS,
  FeedbackKind,
  feedbackMarkdown,
  jsonlTasks,
  LIVE_DIR,
  resultsConfigs,
  resultsModels,
  ServerState,
  startFailureMessage,
  StderrTail,
  Submitted,
  submittedMarkdown,
  TestsResult,
  TURN0_DIR,
  applySessionChanged,
  args,
  ChosenPython,
  choosePython,
  CommandArgs,
  DEFAULT_SETTINGS,
  Evaluation,
  endpointArgs,
  Generated,
  evaluationMarkdown,
  Info,
  ReportOpened,
  initializationOptions,
  OutputsCheck,
  outputsMarkdown,
  PaletteCommand,
  parseRule,
  parseSessionIndex,
  ProgressTracker,
  ProgressValue,
  pythonChanged,
  pythonLogLine,
  PYTHON_EXTENSION_ID,
  resolveServer,
  ServerCommand,
  SESSION_CHANGED,
  SessionChanged,
  SERVER_NAME,
  ServerOrigin,
  serverEnv,
  watchedPatterns,
  API_KEY_SECRET,
  sessionPicks,
  Settings,
  StatusState,
  statusText,
  statusTooltip,
  Timeline,
  timelineMarkdown,
  Transcript,
  ResultsChoice,
} from './logic';
import { PivotTree } from './tree';

const REPORT_SCHEME = 'pivot-report';

let client: LanguageClient | undefined;
let status: StatusState | undefined;
let server: ServerState = { state: 'stopped' };
/** The running server process's stderr and exit code: the reason shown when it stops. */
let stderrTail = new StderrTail();
let exitCode: number | null | undefined;
/** One failure notification per start. */
let failureShown = false;
let statusItem: vscode.StatusBarItem;
let tree: PivotTree;
let output: vscode.OutputChannel;
const reports = new Map<string, string>();
const reportChanged = new vscode.EventEmitter<vscode.Uri>();
let progressSeq = 0;
/** Each start's number: a start that waited (for the Python extension) and was overtaken stops. */
let starts = 0;
/** The interpreter the current server was started with: another one chosen restarts it. */
let startedPython: ChosenPython | undefined;
/** The Python extension's API, once asked (undefined inside: it failed or gave none). */
let pythonApi: Promise<PythonExtension | undefined> | undefined;
/** How long a start waits for the Python extension (which activates first) before going on. */
const PYTHON_API_WAIT_MS = 10000;

function settings(): Settings {
  const c = vscode.workspace.getConfiguration('pivot');
  return {
    serverPath: c.get<string>('serverPath', DEFAULT_SETTINGS.serverPath),
    python: c.get<string>('python', DEFAULT_SETTINGS.python),
    problems: c.get<string>('problems', DEFAULT_SETTINGS.problems),
    sandbox: c.get<string>('sandbox', DEFAULT_SETTINGS.sandbox),
    history: c.get<boolean>('history', DEFAULT_SETTINGS.history),
    instructions: c.get<string>('instructions', DEFAULT_SETTINGS.instructions),
    logLevel: c.get<string>('logLevel', DEFAULT_SETTINGS.logLevel),
    baseUrl: c.get<string>('endpoint.baseUrl', DEFAULT_SETTINGS.baseUrl),
    model: c.get<string>('endpoint.model', DEFAULT_SETTINGS.model),
    apiKey: c.get<string>('endpoint.apiKey', DEFAULT_SETTINGS.apiKey),
    apiKeyEnv: c.get<string>('endpoint.apiKeyEnv', DEFAULT_SETTINGS.apiKeyEnv),
  };
}

function exists(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

const ORIGIN_TEXT: Record<ServerOrigin, string> = {
  setting: 'setting pivot.serverPath',
  bundled: 'bundled with the extension',
  PATH: 'found on PATH',
};

/**
 * The server inside a platform-specific .vsix (`vsce package --target linux-x64` with the
 * binary in server/), or undefined. An unzip that dropped the executable bit gets it back.
 */
function bundledServer(context: vscode.ExtensionContext): string | undefined {
  const p = path.join(context.extensionPath ?? '', 'server', SERVER_NAME + (process.platform === 'win32' ? '.exe' : ''));
  if (!context.extensionPath || !exists(p)) return undefined;
  try {
    fs.accessSync(p, fs.constants.X_OK);
  } catch {
    try {
      fs.chmodSync(p, 0o755);
    } catch {
      // left as is: starting it then fails with the reason shown
    }
  }
  return p;
}

/**
 * The Python extension's API (`@vscode/python-extension`: activates ms-python.python), asked
 * once; undefined when that extension is not installed (nothing is said: it is optional) or
 * fails (said in the output). Its interpreter changes restart the server.
 */
function pythonExtensionApi(context: vscode.ExtensionContext): Promise<PythonExtension | undefined> {
  if (!vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) return Promise.resolve(undefined);
  pythonApi ??= PythonExtension.api().then(
    (api) => {
      if (!api?.environments) throw new Error('it has no environments API');
      // "Python: Select Interpreter" picked another one: the server restarts with it.
      context.subscriptions.push(api.environments.onDidChangeActiveEnvironmentPath(() => void refreshPython(context)));
      return api;
    },
  ).catch((e) => {
    output.appendLine(`Pivot LSP: the Python extension gave no interpreter (${message(e)})`);
    return undefined;
  });
  return pythonApi;
}

/** The executable of the Python extension's active environment for `folder`, or undefined. */
async function extensionPython(context: vscode.ExtensionContext, folder: vscode.Uri | undefined): Promise<string | undefined> {
  const api = await pythonExtensionApi(context);
  if (!api) return undefined;
  try {
    const active = api.environments.getActiveEnvironmentPath(folder);
    const env = await api.environments.resolveEnvironment(active);
    // An environment without an interpreter (a bare conda env) has nothing to run tests with.
    if (!env?.executable.uri) output.appendLine(`Pivot LSP: the Python extension's environment ${active.path} has no interpreter`);
    return env?.executable.uri?.fsPath;
  } catch (e) {
    output.appendLine(`Pivot LSP: the Python extension could not resolve its interpreter: ${message(e)}`);
    return undefined;
  }
}

/** `p`'s value, or undefined when it takes longer than `ms` (the timer does not keep Node alive). */
async function within<T>(p: Promise<T>, ms: number): Promise<{ value: T } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((r) => { timer = setTimeout(() => r(undefined), ms); });
  try {
    return await Promise.race([p.then((value) => ({ value })), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The interpreter for the server (logic.ts's choosePython): the Python extension is asked
 * only when pivot.python is empty and the workspace is trusted. A Python extension slower
 * than PYTHON_API_WAIT_MS does not hold the server back: it starts with its default and
 * restarts once the answer comes.
 */
async function chosenPython(context: vscode.ExtensionContext, s: Settings): Promise<ChosenPython> {
  const trusted = vscode.workspace.isTrusted;
  if (s.python.trim() !== '' || !trusted) return choosePython(s.python, undefined, trusted);
  const asked = extensionPython(context, vscode.workspace.workspaceFolders?.[0]?.uri);
  const got = await within(asked, PYTHON_API_WAIT_MS);
  if (!got) {
    output.appendLine(`Pivot LSP: the Python extension did not answer in ${PYTHON_API_WAIT_MS / 1000} s; the server starts without its interpreter`);
    void asked.then(() => refreshPython(context));
  }
  return choosePython(s.python, got?.value);
}

/** The Python extension's interpreter changed (or came late): restart a server that had another. */
async function refreshPython(context: vscode.ExtensionContext): Promise<void> {
  if (!client) return;
  const next = await chosenPython(context, settings());
  if (!pythonChanged(startedPython, next)) return;
  output.appendLine(`Pivot LSP: the interpreter changed to ${next.python || 'the default'}; restarting the server`);
  await stopClient();
  await startClient(context);
}

/**
 * vscode-languageclient shows a notification for each failed (re)start ("couldn't create
 * connection", "write EPIPE", "crashed 5 times"); this client logs them to the output only,
 * and the extension shows one message with the server's own reason (`reportFailure`).
 */
class PivotClient extends LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }
}

function setServer(s: ServerState): void {
  server = s;
  updateStatus();
}

/** One notification for a server that failed to start or stopped, with its reason. */
async function reportFailure(command: string): Promise<void> {
  // stderr may still be arriving when the process-exit event fires.
  await new Promise((r) => setTimeout(r, 150));
  const reason = stderrTail.reason();
  setServer({ state: 'failed', reason: reason ?? `exit code ${exitCode ?? 'unknown'}` });
  tree.update(undefined, undefined);
  if (failureShown) return;
  failureShown = true;
  const pick = await vscode.window.showErrorMessage(startFailureMessage(command, reason, exitCode),
    'Show Output', 'Open Settings', 'Restart');
  if (pick === 'Show Output') output.show();
  else if (pick === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'pivot.');
  else if (pick === 'Restart') await vscode.commands.executeCommand(PaletteCommand.restartServer);
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const start = ++starts;
  const given = settings();
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  // A relative serverPath is taken from the workspace root (e.g. target/debug/pivot-lsp),
  // in a trusted workspace only: in Restricted Mode it would run a binary the repository
  // brought, so it is refused (named as missing) rather than looked up anywhere.
  const relative = given.serverPath.includes('/') && !path.isAbsolute(given.serverPath);
  if (relative && !vscode.workspace.isTrusted) {
    const message = `Pivot LSP: pivot.serverPath ${given.serverPath} is relative to the workspace, and this workspace is not trusted (Restricted Mode): a binary inside it is not run. Trust the workspace, or set an absolute path.`;
    output.appendLine(message);
    setServer({ state: 'failed', reason: message });
    void vscode.window.showErrorMessage(message);
    return;
  }
  const setting = folder && relative ? path.join(folder, given.serverPath) : given.serverPath;
  const resolved = resolveServer(setting, bundledServer(context), (process.env.PATH ?? '').split(path.delimiter), exists, path.sep);
  if (resolved.ok) output.appendLine(`Pivot LSP: starting ${resolved.command} (${ORIGIN_TEXT[resolved.origin]})`);
  if (!resolved.ok) {
    output.appendLine(resolved.message);
    setServer({ state: 'failed', reason: resolved.message });
    const pick = await vscode.window.showErrorMessage(resolved.message, 'Open Settings');
    if (pick) await vscode.commands.executeCommand('workbench.action.openSettings', 'pivot.serverPath');
    return;
  }
  // The interpreter goes where pivot.python goes (initializationOptions and PIVOT_PYTHON).
  setServer({ state: 'starting' });
  const python = await chosenPython(context, given);
  if (start !== starts) return;
  startedPython = python;
  output.appendLine(pythonLogLine(python, process.env));
  const s: Settings = { ...given, python: python.python };
  // The process is ours (stdio, no `--stdio` appended): its stderr and exit code are kept
  // to say why it stopped; the library still copies stderr to the output channel.
  const tail = new StderrTail();
  stderrTail = tail;
  exitCode = undefined;
  const serverOptions: ServerOptions = async () => {
    const p = spawn(resolved.command, ['serve'], { env: { ...process.env, ...serverEnv(s) }, cwd: folder });
    p.stderr.on('data', (d: Buffer) => tail.push(d.toString()));
    // A binary that cannot be executed (permissions, wrong architecture): the reason shown.
    p.on('error', (e) => tail.push(`${e.message}\n`));
    p.on('exit', (code) => {
      if (stderrTail === tail) exitCode = code;
    });
    return p;
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'python' }],
    initializationOptions: initializationOptions(s, process.env, await context.secrets?.get(API_KEY_SECRET)),
    synchronize: { fileEvents: watchedPatterns(s).map((g) => vscode.workspace.createFileSystemWatcher(g)) },
    outputChannel: output,
    // No restart loop: a server that exits says why once (reportFailure).
    errorHandler: {
      error: () => ({ action: ErrorAction.Shutdown, handled: true }),
      closed: () => {
        if (client === c) void reportFailure(resolved.command);
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
    initializationFailedHandler: () => false,
    middleware: {
      // The server's "Run tests" lens runs through the palette command: progress and a summary.
      provideCodeLenses: async (doc, token, next) => {
        const lenses = await next(doc, token);
        for (const l of lenses ?? []) {
          if (l.command?.command === ServerCommand.testsRun) {
            l.command = { ...l.command, command: PaletteCommand.runTests };
          }
        }
        return lenses;
      },
    },
  };
  failureShown = false;
  setServer({ state: 'starting' });
  const c = new PivotClient('pivot', 'Pivot LSP', serverOptions, clientOptions);
  context.subscriptions.push(
    c.onNotification(SESSION_CHANGED, (n: SessionChanged) => {
      status = applySessionChanged(status, n);
      updateStatus();
      void refreshView();
    }),
    c.onDidChangeState((e) => {
      if (e.newState === State.Stopped) {
        status = undefined;
        if (server.state !== 'failed') setServer({ state: 'stopped' });
        tree.update(undefined, undefined);
      } else if (e.newState === State.Running) {
        setServer({ state: 'running' });
      }
    }),
  );
  client = c;
  try {
    await c.start();
  } catch (e) {
    if (client === c) client = undefined;
    output.appendLine(`Pivot LSP: the server did not start: ${message(e)}`);
    await reportFailure(resolved.command);
    return;
  }
  setServer({ state: 'running' });
  await refreshView();
  refreshOpenReports();
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) await c.stop().catch(() => undefined);
  setServer({ state: 'stopped' });
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Run a server command; errors (a missing file, a bad argument) are shown, result undefined. */
async function run<T>(command: string, a: CommandArgs, workDoneToken?: string, cancel?: vscode.CancellationToken): Promise<T | undefined> {
  if (!client || !client.isRunning()) {
    const why = server.state === 'failed' ? `: ${server.reason}` : ' (see the "Pivot LSP" output)';
    void vscode.window.showErrorMessage(`Pivot LSP: the server is not running${why}`, 'Restart').then((p) => {
      if (p) void vscode.commands.executeCommand(PaletteCommand.restartServer);
    });
    return undefined;
  }
  try {
    const params = { command, arguments: a, ...(workDoneToken ? { workDoneToken } : {}) };
    return (await client.sendRequest(ExecuteCommandRequest.type, params, cancel)) as T;
  } catch (e) {
    if (e instanceof ResponseError && e.code === LSPErrorCodes.RequestCancelled) {
      void vscode.window.showInformationMessage(`Pivot LSP: ${e.message}`);
    } else {
      void vscode.window.showErrorMessage(`Pivot LSP: ${message(e)}`);
    }
    return undefined;
  }
}

function updateStatus(): void {
  statusItem.text = `$(${server.state === 'failed' ? 'error' : 'history'}) ${statusText(status, server)}`;
  statusItem.tooltip = statusTooltip(status, server);
  statusItem.command = server.state === 'running' ? PaletteCommand.gotoSession : PaletteCommand.restartServer;
  statusItem.show();
}

async function refreshView(): Promise<void> {
  if (!client || !client.isRunning()) return;
  const info = await run<Info>(ServerCommand.conversationInfo, args.none());
  const active = await run<Active>(ServerCommand.pivotsActive, args.none());
  if (info) {
    status = { ...status, index: info.index, count: info.count, kind: info.kind, source: info.source, task: info.convcode?.task };
    updateStatus();
    // The view's welcome texts (package.json): "starting" until the server's first answer
    // (e.g. after a window reload), "open a conversation" only when the server says none is
    // open; an empty view while a conversation is being shown says nothing.
    void vscode.commands.executeCommand('setContext', 'pivot.noConversation', info.kind === 'none');
    void vscode.commands.executeCommand('setContext', 'pivot.serverAnswered', true);
  }
  // The sessions at once, as the status bar shows them; then each one's commit and changes.
  tree.update(info, active);
  if (info && info.kind !== 'none') tree.update(info, active, await sessionTimeline(info));
}

/** Every session's commit (sessions from history) and pivot changes, in one request. */
async function sessionTimeline(info: Info): Promise<Timeline | undefined> {
  // ConvCodeWorld turns have no pivots; very long conversations are not fetched whole.
  if (info.kind === 'none' || info.kind === 'convcode' || info.count > MAX_TIMELINE || !client) return undefined;
  try {
    return (await client.sendRequest(ExecuteCommandRequest.type, { command: ServerCommand.sessionTimeline, arguments: args.none() })) as Timeline;
  } catch {
    // the conversation changed meanwhile: the next refresh has it
    return undefined;
  }
}

/** Sessions beyond this many are listed without their changes (a 100k-session dialogue). */
const MAX_TIMELINE = 2000;

/** Show markdown in the preview, from an in-memory document (no save prompt on close). */
async function showMarkdown(name: string, text: string, beside = false): Promise<void> {
  const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${name}.md` });
  reports.set(uri.toString(), text);
  reportChanged.fire(uri);
  await vscode.commands.executeCommand(beside ? 'markdown.showPreviewToSide' : 'markdown.showPreview', uri);
}

/**
 * A report's text. After a window reload VS Code restores its previews but the texts were
 * in memory: transcripts, the timeline and active pivots are asked again from the server; other reports
 * (evaluations, feedback) say how to produce them again rather than showing a blank page.
 */
async function reportText(uri: vscode.Uri): Promise<string> {
  const known = reports.get(uri.toString());
  if (known !== undefined) return known;
  const name = uri.path.replace(/^\//, '').replace(/\.md$/, '');
  const session = /^transcript-session-(\d+)$/.exec(name);
  if (client?.isRunning()) {
    if (session) {
      const t = await run<Transcript>(ServerCommand.sessionTranscript, args.transcript(Number(session[1])));
      if (t) return t.markdown;
    } else if (name === 'timeline') {
      const t = await run<Timeline>(ServerCommand.sessionTimeline, args.none());
      if (t) return timelineMarkdown(t);
    } else if (name.startsWith('active-pivots')) {
      const a = await run<Active>(ServerCommand.pivotsActive, args.none());
      if (a) return activePivotsMarkdown(a);
    }
  }
  return `# ${name}\n\nThis report was made before the window reloaded and is not kept. Run its Pivot command again (Ctrl+Shift+P, "Pivot:").\n`;
}

/** Previews restored before the server was up are filled in once it is. */
function refreshOpenReports(): void {
  for (const doc of vscode.workspace.textDocuments) {
    if (doc.uri.scheme === REPORT_SCHEME && !reports.has(doc.uri.toString())) reportChanged.fire(doc.uri);
  }
}

async function pickFile(title: string, folders: boolean): Promise<string | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title,
    canSelectFiles: !folders,
    canSelectFolders: folders,
    canSelectMany: false,
    filters: folders ? undefined : { 'JSON': ['json'] },
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  return picked?.[0]?.fsPath;
}

async function currentInfo(): Promise<Info | undefined> {
  return run<Info>(ServerCommand.conversationInfo, args.none());
}

const handlers: Record<string, (...a: unknown[]) => Promise<unknown>> = {
  [PaletteCommand.openConversation]: async (p?: unknown) => {
    const file = typeof p === 'string' ? p : p instanceof vscode.Uri ? p.fsPath : await pickFile('Open a MemoryCode dialogue (dialogue_N.json)', false);
    if (!file) return;
    const info = await run<Info>(ServerCommand.conversationOpen, args.open(file));
    if (info) {
      for (const w of info.warnings ?? []) void vscode.window.showWarningMessage(`Pivot LSP: ${w}`);
      void vscode.window.showInformationMessage(`Pivot LSP: opened ${path.basename(file)}, ${info.count} sessions.`);
    }
    return info;
  },
  [PaletteCommand.openResults]: async (p?: unknown) => {
    const choice = typeof p === 'object' && p !== null && !(p instanceof vscode.Uri) ? (p as ResultsChoice) : await pickResults(p);
    if (!choice) return;
    const info = await run<Info>(ServerCommand.conversationOpen, args.openResults(choice));
    if (info) {
      for (const w of info.warnings ?? []) void vscode.window.showWarningMessage(`Pivot LSP: ${w}`);
      const cc = info.convcode;
      void vscode.window.showInformationMessage(
        `Pivot LSP: opened ${choice.task} of ${cc?.model ?? choice.model ?? 'the model'} (${cc?.label ?? choice.config ?? ''}), ${info.count} turns.`);
      await refreshView();
    }
    return info;
  },
  [PaletteCommand.runTests]: async (a?: unknown) => {
    const given = typeof a === 'object' && a !== null ? (a as { uri?: string; task?: string }) : {};
    const uri = given.uri ?? vscode.window.activeTextEditor?.document.uri.toString();
    if (!uri) {
      void vscode.window.showErrorMessage('Pivot LSP: open the Python file to test first.');
      return;
    }
    // No save needed: the server tests the text as edited (it has every change).
    const r = await withServerProgress<TestsResult>('Running tests', false, ServerCommand.testsRun, args.testsRun(uri, given.task));
    if (r) {
      const text = `Pivot LSP: ${r.task}: ${r.summary ?? `${r.passed}/${r.total} passed`}`;
      if (r.passed === r.total) void vscode.window.showInformationMessage(text);
      else void vscode.window.showWarningMessage(`${text} (failing tests are in the Problems panel)`);
    }
    return r;
  },
  [PaletteCommand.requestFeedback]: async (k?: unknown) => {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    if (!uri) {
      void vscode.window.showErrorMessage('Pivot LSP: open the Python file to get feedback on first.');
      return;
    }
    let kind = typeof k === 'string' && (FEEDBACK_KINDS as readonly string[]).includes(k) ? (k as FeedbackKind) : undefined;
    if (!kind) {
      const pick = await vscode.window.showQuickPick(
        FEEDBACK_KINDS.map((x) => ({ label: x, description: FEEDBACK_LABELS[x] })), { title: 'Feedback of which kind?' });
      if (!pick) return;
      kind = pick.label as FeedbackKind;
    }
    const f = await withServerProgress<Feedback>(`Feedback (${kind})`, false, ServerCommand.turnFeedback, args.feedback(uri, kind));
    if (f) await showMarkdown(`feedback-${kind}`, feedbackMarkdown(f), true);
    return f;
  },
  [PaletteCommand.submitTurn]: async () => {
    const doc = vscode.window.activeTextEditor?.document;
    if (!doc) {
      void vscode.window.showErrorMessage('Pivot LSP: open the Python file to submit first.');
      return;
    }
    const r = await withServerProgress<Submitted>('Submitting the turn', false, ServerCommand.turnSubmit, args.submit(doc.uri.toString()));
    if (r) {
      // The recomputed tables as tables: the server's markdown rendering of the same scores.
      const info = await currentInfo();
      const cc = info?.convcode;
      const tables = info?.source && cc
        ? await run<ConvEvaluation>(ServerCommand.evaluateConvcode, args.evaluateConvcode(info.source, cc.model))
        : undefined;
      await showMarkdown(`turn-${r.turn}-submitted`, submittedMarkdown(r, tables?.markdown), true);
      await refreshView();
    }
    return r;
  },
  [PaletteCommand.evaluateConvCode]: async (p?: unknown) => {
    const given = typeof p === 'object' && p !== null && !(p instanceof vscode.Uri) ? (p as { results: string; model: string; refModel?: string }) : undefined;
    let results = given?.results;
    let model = given?.model;
    const refModel = given?.refModel;
    if (!results) results = p instanceof vscode.Uri ? p.fsPath : await pickFile('A ConvCodeWorld results folder', true);
    if (!results) return;
    if (!model) {
      const models = resultsModels(listDir(path.join(results, ...TURN0_DIR)));
      model = models.length === 1 ? models[0] : (await vscode.window.showQuickPick(models, { title: 'Model to score' }));
    }
    if (!model) return;
    const r = await withServerProgress<ConvEvaluation>('ConvCodeWorld evaluation', true, ServerCommand.evaluateConvcode, args.evaluateConvcode(results, model, refModel));
    if (r) await showMarkdown('convcodeworld-evaluation', convEvaluationMarkdown(r, results, model));
    return r;
  },
  [PaletteCommand.openReport]: async (p?: unknown) => {
    // From code: a list of paths (or one); from the palette: score JSON files picked.
    let inputs = Array.isArray(p) ? p.filter((x): x is string => typeof x === 'string') : typeof p === 'string' ? [p] : [];
    if (inputs.length === 0) {
      const picked = await vscode.window.showOpenDialog({
        title: 'Score JSON files (pivot-lsp score ... --format json)',
        canSelectFiles: true,
        canSelectFolders: false,
        canSelectMany: true,
        filters: { 'Score JSON': ['json'] },
        defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
      });
      inputs = (picked ?? []).map((u) => u.fsPath);
    }
    if (inputs.length === 0) return;
    const r = await withServerProgress<ReportOpened>('Building the report', false, ServerCommand.reportOpen, args.reportOpen(inputs));
    if (r) showReport(r.path);
    return r;
  },
  [PaletteCommand.closeConversation]: () => run<Info>(ServerCommand.conversationClose, args.none()),
  [PaletteCommand.conversationInfo]: async () => {
    const info = await currentInfo();
    if (info) {
      const src = info.source ?? 'no conversation';
      void vscode.window.showInformationMessage(
        `Pivot LSP: ${src} (${info.kind}), session ${info.index} of ${info.count}, ${info.active} active pivot(s) of ${info.pivots}.`);
    }
    return info;
  },
  [PaletteCommand.nextSession]: () => step(ServerCommand.sessionNext, 'the last'),
  [PaletteCommand.previousSession]: () => step(ServerCommand.sessionPrevious, 'the first'),
  [PaletteCommand.gotoSession]: async (k?: unknown) => {
    let index = typeof k === 'number' ? k : undefined;
    if (index === undefined) {
      const info = await currentInfo();
      if (!info) return;
      const pick = await vscode.window.showQuickPick(sessionPicks(info), { title: 'Go to session (0-based)' });
      if (!pick) return;
      index = pick.index;
    }
    return run<Info>(ServerCommand.sessionGoto, args.goto(index));
  },
  [PaletteCommand.showActivePivots]: async () => {
    const a = await run<Active>(ServerCommand.pivotsActive, args.none());
    if (a) await showMarkdown(`active-pivots-session-${a.index}`, activePivotsMarkdown(a));
    return a;
  },
  [PaletteCommand.showTimeline]: async () => {
    const t = await run<Timeline>(ServerCommand.sessionTimeline, args.none());
    if (t) await showMarkdown('timeline', timelineMarkdown(t));
    return t;
  },
  [PaletteCommand.showTranscript]: async (k?: unknown) => {
    const t = await run<Transcript>(ServerCommand.sessionTranscript, args.transcript(typeof k === 'number' ? k : undefined));
    if (t) await showMarkdown(`transcript-session-${t.index}`, t.markdown);
    return t;
  },
  [PaletteCommand.addPivot]: async () => {
    const id = await vscode.window.showInputBox({ title: 'Pivot id', placeHolder: 'e.g. team-prefix' });
    if (!id) return;
    const kind = await vscode.window.showInputBox({ title: 'Object kind', placeHolder: 'function, method, class, function docstring, method decorator, import, ...' });
    if (!kind) return;
    const rule = await vscode.window.showInputBox({ title: 'Rule (JSON or a regex)', placeHolder: '"^f_.*"  or  true  or  ["timer", true]' });
    if (rule === undefined || rule === '') return;
    const text = await vscode.window.showInputBox({ title: 'Instruction text (optional)' });
    return run<Active>(ServerCommand.pivotsAdd, args.add({ id, kind, rule: parseRule(rule), text }));
  },
  [PaletteCommand.removePivot]: async () => {
    const a = await run<Active>(ServerCommand.pivotsActive, args.none());
    if (!a) return;
    const own = a.pivots.filter((p) => p.origin !== 'memorycode');
    const pick = await vscode.window.showQuickPick(own.map((p) => ({ label: p.id, description: p.text, detail: p.origin })), { title: 'Remove a user pivot' });
    if (!pick) return;
    return run<Active>(ServerCommand.pivotsRemove, args.remove(pick.label));
  },
  [PaletteCommand.reloadPivots]: () => run<Info>(ServerCommand.pivotsReload, args.none()),
  [PaletteCommand.checkOutputs]: async (p?: unknown) => {
    const file = typeof p === 'string' ? p : p instanceof vscode.Uri ? p.fsPath : await pickFile("Check a model's outputs (output_N.json) against the open conversation", false);
    if (!file) return;
    const r = await run<OutputsCheck>(ServerCommand.outputsCheck, args.outputs(file));
    if (r) await showMarkdown(`outputs-${path.basename(file, '.json')}`, outputsMarkdown(r));
    return r;
  },
  [PaletteCommand.evaluateMemoryCode]: async () => {
    const dataset = await pickFile('MemoryCode dataset folder (dialogue_N.json files)', true);
    if (!dataset) return;
    const outputs = await pickFile("A model's outputs folder (output_N.json files)", true);
    if (!outputs) return;
    return evaluate(dataset, outputs);
  },
  [PaletteCommand.generateOutputs]: async () => {
    // Model and endpoint default from the pivot.endpoint.* settings; the endpoint box also
    // takes a loopback script (canned replies, no key), which the editor tests use.
    const s = settings();
    const model = await vscode.window.showInputBox({ title: 'Model name (as the endpoint knows it)', value: s.model });
    if (!model) return;
    const endpoint = await vscode.window.showInputBox({
      title: 'Endpoint: an OpenAI-compatible base URL, or a loopback script (.json)',
      value: s.baseUrl,
      placeHolder: 'http://localhost:8000/v1  or  fixtures/memorycode/loopback.json',
    });
    if (!endpoint) return;
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '.';
    const out = await vscode.window.showInputBox({ title: 'Write the outputs under (a folder per model)', value: path.join(root, 'outputs') });
    if (!out) return;
    const where = endpointArgs(endpoint);
    const g = await withServerProgress<Generated>(`Generating MemoryCode outputs (${model})`, false, ServerCommand.memorycodeGenerate,
      args.generate({ model, out, ...where, apiKeyEnv: 'baseUrl' in where ? s.apiKeyEnv : undefined }));
    if (!g) return;
    // The verdicts for what was just generated, as Check Model Outputs shows them.
    const r = await run<OutputsCheck>(ServerCommand.outputsCheck, args.outputs(g.output));
    if (r) await showMarkdown(`outputs-${model}-${path.basename(g.output, '.json')}`, outputsMarkdown(r));
    return g;
  },
  [PaletteCommand.inspectDocument]: async () => {
    const doc = vscode.window.activeTextEditor?.document;
    if (!doc) return;
    const r = await run<unknown>(ServerCommand.documentInspect, args.inspect(doc.uri.toString()));
    if (r) await showMarkdown('document-inspect', '```json\n' + JSON.stringify(r, null, 2) + '\n```\n');
    return r;
  },
};

let reportPanel: vscode.WebviewPanel | undefined;

/** The server's HTML report in a webview (one panel, reused). It is self-contained and its
 *  charts are inline SVG, so no scripts and no local resources are allowed. */
function showReport(file: string): void {
  let html: string;
  try {
    html = fs.readFileSync(file, 'utf8');
  } catch (e) {
    void vscode.window.showErrorMessage(`Pivot LSP: cannot read the report ${file}: ${message(e)}`);
    return;
  }
  if (!reportPanel) {
    reportPanel = vscode.window.createWebviewPanel('pivotReport', 'Pivot Report', vscode.ViewColumn.Active,
      { enableScripts: false, localResourceRoots: [] });
    reportPanel.onDidDispose(() => { reportPanel = undefined; });
  } else {
    reportPanel.reveal(vscode.ViewColumn.Active);
  }
  reportPanel.webview.html = html;
}

async function step(command: string, end: string): Promise<Info | undefined> {
  const info = await run<Info>(command, args.none());
  if (info && info.moved === false) {
    void vscode.window.setStatusBarMessage(`Pivot LSP: already at ${end} session`, 3000);
  }
  return info;
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Folder, model, task, configuration and player mode, each offered from what is on disk. */
async function pickResults(p?: unknown): Promise<ResultsChoice | undefined> {
  const root = typeof p === 'string' ? p : p instanceof vscode.Uri ? p.fsPath : await pickFile('A ConvCodeWorld results folder', true);
  if (!root) return;
  const turn0 = path.join(root, ...TURN0_DIR);
  const models = resultsModels(listDir(turn0));
  if (models.length === 0) {
    void vscode.window.showErrorMessage(`Pivot LSP: ${root} has no turn-0 samples under ${TURN0_DIR.join('/')}/ (is it a ConvCodeWorld results folder?)`);
    return;
  }
  const model = models.length === 1 ? models[0] : await vscode.window.showQuickPick(models, { title: 'Model' });
  if (!model) return;
  const samples = listDir(turn0).find((f) => resultsModels([f])[0] === model);
  let tasks: string[] = [];
  try {
    tasks = samples ? jsonlTasks(fs.readFileSync(path.join(turn0, samples), 'utf8')) : [];
  } catch (e) {
    void vscode.window.showErrorMessage(`Pivot LSP: cannot read ${samples}: ${message(e)}`);
    return;
  }
  const task = await vscode.window.showQuickPick(tasks, { title: `Task (${tasks.length} in ${model}'s turn 0)` });
  if (!task) return;
  const configs = resultsConfigs(listDir(path.join(root, ...LIVE_DIR)), model);
  let config: string | undefined;
  if (configs.length > 1) {
    const pick = await vscode.window.showQuickPick(configs.map((c) => ({ label: c.label, description: c.code })), { title: 'Configuration' });
    if (!pick) return;
    config = pick.description;
  } else {
    config = configs[0]?.code;
  }
  const mode = await vscode.window.showQuickPick(
    [{ label: 'Replay', description: `the turns ${model} played` }, { label: 'Play the model', description: 'write the next turns yourself' }],
    { title: 'Player mode' });
  if (!mode) return;
  let player: string | undefined;
  if (mode.label === 'Play the model') {
    player = await vscode.window.showInputBox({ title: 'Player name (your turns are saved under it)', value: 'me' });
    if (!player) return;
  }
  return { path: root, task, config, model, player };
}

/** A server command with `$/progress` on a token we give, in a notification; cancellable if asked. */
async function withServerProgress<T>(title: string, cancellable: boolean, command: string, a: CommandArgs): Promise<T | undefined> {
  const c = client;
  if (!c) return run<T>(command, a);
  const token = `pivot-vscode-${++progressSeq}`;
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Pivot: ${title}`, cancellable },
    async (progress, cancel) => {
      const tracker = new ProgressTracker();
      const sub = c.onProgress(WorkDoneProgress.type, token, (v) => progress.report(tracker.step(v as ProgressValue)));
      const onCancel = cancel.onCancellationRequested(() => {
        void c.sendNotification(WorkDoneProgressCancelNotification.type, { token });
      });
      try {
        // Cancel sends both window/workDoneProgress/cancel (the server stops its work where it
        // can) and $/cancelRequest (the request ends now either way).
        return await run<T>(command, a, token, cancellable ? cancel : undefined);
      } finally {
        sub.dispose();
        onCancel.dispose();
      }
    },
  );
}

/** The full evaluation, with the server's `$/progress` on a token we give, and cancel. */
async function evaluate(dataset: string, outputs: string): Promise<Evaluation | undefined> {
  const c = client;
  if (!c) return run(ServerCommand.evaluateMemorycode, args.evaluate(dataset, outputs));
  const token = `pivot-vscode-evaluate-${++progressSeq}`;
  const r = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'MemoryCode evaluation', cancellable: true },
    async (progress, cancel) => {
      const tracker = new ProgressTracker();
      const sub = c.onProgress(WorkDoneProgress.type, token, (v) => {
        progress.report(tracker.step(v as ProgressValue));
      });
      const onCancel = cancel.onCancellationRequested(() => {
        void c.sendNotification(WorkDoneProgressCancelNotification.type, { token });
      });
      try {
        return await run<Evaluation>(ServerCommand.evaluateMemorycode, args.evaluate(dataset, outputs), token);
      } finally {
        sub.dispose();
        onCancel.dispose();
      }
    },
  );
  if (r) await showMarkdown('memorycode-evaluation', evaluationMarkdown(r, dataset, outputs));
  return r;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('Pivot LSP');
  statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  statusItem.command = PaletteCommand.gotoSession;
  tree = new PivotTree();
  context.subscriptions.push(
    output,
    statusItem,
    reportChanged,
    vscode.window.registerTreeDataProvider('pivotSessions', tree),
    vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, {
      onDidChange: reportChanged.event,
      provideTextDocumentContent: (uri) => reportText(uri),
    }),
    vscode.commands.registerCommand(PaletteCommand.restartServer, async () => {
      await stopClient();
      await startClient(context);
    }),
    vscode.commands.registerCommand(PaletteCommand.refreshView, () => refreshView()),
    // The endpoint's key in VS Code's SecretStorage (the OS keychain where there is one),
    // not in a plain-text, synced setting; empty removes it.
    vscode.commands.registerCommand(PaletteCommand.setApiKey, async () => {
      const key = await vscode.window.showInputBox({
        title: 'Pivot: API key of the feedback simulator endpoint',
        prompt: 'Kept in VS Code\'s secret storage, never in settings; leave empty to remove it',
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return;
      if (key.trim() === '') await context.secrets.delete(API_KEY_SECRET);
      else await context.secrets.store(API_KEY_SECRET, key.trim());
      void vscode.window.showInformationMessage(key.trim() === '' ? 'Pivot: the API key was removed.' : 'Pivot: the API key is stored; the server restarts with it.');
      await stopClient();
      await startClient(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('pivot')) {
        await stopClient();
        await startClient(context);
      }
    }),
    // The Python extension installed or enabled while the window is open: ask it now.
    vscode.extensions.onDidChange(() => {
      if (!pythonApi && vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) void refreshPython(context);
    }),
    // Trusting the workspace lifts what Restricted Mode withheld: a relative
    // pivot.serverPath, workspace settings, the Python extension's interpreter.
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      await stopClient();
      await startClient(context);
    }),
  );
  for (const [id, fn] of Object.entries(handlers)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  }
  updateStatus();
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
