// Pivot LSP for VS Code: starts `pivot-lsp serve`, maps palette commands to the server's
// `workspace/executeCommand` commands, and shows the session in the status bar and in an
// explorer view. Formatting and decisions live in logic.ts (unit-tested without VS Code).

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
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
  applySessionChanged,
  args,
  CommandArgs,
  DEFAULT_SETTINGS,
  Evaluation,
  evaluationMarkdown,
  Info,
  initializationOptions,
  OutputsCheck,
  outputsMarkdown,
  PaletteCommand,
  parseRule,
  parseSessionIndex,
  ProgressTracker,
  ProgressValue,
  resolveServer,
  ServerCommand,
  SESSION_CHANGED,
  SessionChanged,
  serverEnv,
  sessionPicks,
  Settings,
  StatusState,
  statusText,
  statusTooltip,
  Transcript,
} from './logic';
import { PivotTree } from './tree';

const REPORT_SCHEME = 'pivot-report';

let client: LanguageClient | undefined;
let status: StatusState | undefined;
let statusItem: vscode.StatusBarItem;
let tree: PivotTree;
let output: vscode.OutputChannel;
const reports = new Map<string, string>();
const reportChanged = new vscode.EventEmitter<vscode.Uri>();
let progressSeq = 0;

function settings(): Settings {
  const c = vscode.workspace.getConfiguration('pivot');
  return {
    serverPath: c.get<string>('serverPath', DEFAULT_SETTINGS.serverPath),
    python: c.get<string>('python', DEFAULT_SETTINGS.python),
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

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const s = settings();
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  // A relative serverPath is taken from the workspace root (e.g. target/debug/pivot-lsp).
  const setting = folder && s.serverPath.includes('/') && !path.isAbsolute(s.serverPath)
    ? path.join(folder, s.serverPath)
    : s.serverPath;
  const resolved = resolveServer(setting, (process.env.PATH ?? '').split(path.delimiter), exists, path.sep);
  if (!resolved.ok) {
    output.appendLine(resolved.message);
    updateStatus();
    const pick = await vscode.window.showErrorMessage(resolved.message, 'Open Settings');
    if (pick) await vscode.commands.executeCommand('workbench.action.openSettings', 'pivot.serverPath');
    return;
  }
  const serverOptions: ServerOptions = {
    command: resolved.command,
    // No `transport`: stdio is the default, and naming it makes the library append `--stdio`.
    args: ['serve'],
    options: { env: { ...process.env, ...serverEnv(s) } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'python' }],
    initializationOptions: initializationOptions(s, process.env),
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/pivots.toml') },
    outputChannel: output,
  };
  const c = new LanguageClient('pivot', 'Pivot LSP', serverOptions, clientOptions);
  context.subscriptions.push(
    c.onNotification(SESSION_CHANGED, (n: SessionChanged) => {
      status = applySessionChanged(status, n);
      updateStatus();
      void refreshView();
    }),
    c.onDidChangeState((e) => {
      if (e.newState === State.Stopped) {
        status = undefined;
        updateStatus();
        tree.update(undefined, undefined);
      }
    }),
  );
  client = c;
  try {
    await c.start();
  } catch (e) {
    client = undefined;
    void vscode.window.showErrorMessage(`Pivot LSP: the server ${resolved.command} failed to start: ${message(e)}`);
    return;
  }
  await refreshView();
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) await c.stop().catch(() => undefined);
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Run a server command; errors (a missing file, a bad argument) are shown, result undefined. */
async function run<T>(command: string, a: CommandArgs, workDoneToken?: string): Promise<T | undefined> {
  if (!client || !client.isRunning()) {
    void vscode.window.showErrorMessage('Pivot LSP: the server is not running (see the "Pivot LSP" output).');
    return undefined;
  }
  try {
    const params = { command, arguments: a, ...(workDoneToken ? { workDoneToken } : {}) };
    return (await client.sendRequest(ExecuteCommandRequest.type, params)) as T;
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
  statusItem.text = `$(history) ${statusText(status)}`;
  statusItem.tooltip = statusTooltip(status);
  statusItem.show();
}

async function refreshView(): Promise<void> {
  if (!client || !client.isRunning()) return;
  const info = await run<Info>(ServerCommand.conversationInfo, args.none());
  const active = await run<Active>(ServerCommand.pivotsActive, args.none());
  if (info) {
    status = { ...status, index: info.index, count: info.count, kind: info.kind, source: info.source };
    updateStatus();
  }
  tree.update(info, active);
}

/** Show markdown in the preview, from an in-memory document (no save prompt on close). */
async function showMarkdown(name: string, text: string): Promise<void> {
  const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${name}.md` });
  reports.set(uri.toString(), text);
  reportChanged.fire(uri);
  await vscode.commands.executeCommand('markdown.showPreview', uri);
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
  [PaletteCommand.inspectDocument]: async () => {
    const doc = vscode.window.activeTextEditor?.document;
    if (!doc) return;
    const r = await run<unknown>(ServerCommand.documentInspect, args.inspect(doc.uri.toString()));
    if (r) await showMarkdown('document-inspect', '```json\n' + JSON.stringify(r, null, 2) + '\n```\n');
    return r;
  },
};

async function step(command: string, end: string): Promise<Info | undefined> {
  const info = await run<Info>(command, args.none());
  if (info && info.moved === false) {
    void vscode.window.setStatusBarMessage(`Pivot LSP: already at ${end} session`, 3000);
  }
  return info;
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
      provideTextDocumentContent: (uri) => reports.get(uri.toString()) ?? '',
    }),
    vscode.commands.registerCommand(PaletteCommand.restartServer, async () => {
      await stopClient();
      await startClient(context);
    }),
    vscode.commands.registerCommand(PaletteCommand.refreshView, () => refreshView()),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('pivot')) {
        await stopClient();
        await startClient(context);
      }
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
