// The extension's pure logic: no `vscode` import, so it is unit-tested with node:test and
// shared with the protocol test (which then exercises exactly what the extension sends).

import type * as P from './protocol';

/** The server's `workspace/executeCommand` names (server/src/lsp/commands/mod.rs). */
export const ServerCommand = {
  conversationOpen: 'pivot.conversation.open',
  conversationClose: 'pivot.conversation.close',
  conversationInfo: 'pivot.conversation.info',
  sessionNext: 'pivot.session.next',
  sessionPrevious: 'pivot.session.previous',
  sessionGoto: 'pivot.session.goto',
  sessionTranscript: 'pivot.session.transcript',
  sessionTimeline: 'pivot.session.timeline',
  pivotsActive: 'pivot.pivots.active',
  pivotsAdd: 'pivot.pivots.add',
  pivotsRemove: 'pivot.pivots.remove',
  pivotsReload: 'pivot.pivots.reload',
  outputsCheck: 'pivot.outputs.check',
  evaluateMemorycode: 'pivot.evaluate.memorycode',
  memorycodeGenerate: 'pivot.memorycode.generate',
  documentInspect: 'pivot.document.inspect',
  testsRun: 'pivot.tests.run',
  turnFeedback: 'pivot.turn.feedback',
  turnSubmit: 'pivot.turn.submit',
  evaluateConvcode: 'pivot.evaluate.convcode',
  reportOpen: 'pivot.report.open',
} as const;

export type ServerCommandName = (typeof ServerCommand)[keyof typeof ServerCommand];

/** The server's notification after every change of session. */
export const SESSION_CHANGED = 'pivot/sessionChanged';

/**
 * The palette commands. Their ids differ from the server's command names on purpose:
 * vscode-languageclient registers every command the server advertises under the server's
 * own name, so reusing those names would collide.
 */
export const PaletteCommand = {
  openConversation: 'pivot.openConversation',
  closeConversation: 'pivot.closeConversation',
  conversationInfo: 'pivot.showConversationInfo',
  nextSession: 'pivot.nextSession',
  previousSession: 'pivot.previousSession',
  gotoSession: 'pivot.gotoSession',
  showActivePivots: 'pivot.showActivePivots',
  showTranscript: 'pivot.showTranscript',
  showTimeline: 'pivot.showTimeline',
  addPivot: 'pivot.addPivot',
  removePivot: 'pivot.removePivot',
  reloadPivots: 'pivot.reloadPivots',
  checkOutputs: 'pivot.checkOutputs',
  evaluateMemoryCode: 'pivot.evaluateMemoryCode',
  generateOutputs: 'pivot.generateOutputs',
  inspectDocument: 'pivot.inspectDocument',
  openResults: 'pivot.openResults',
  runTests: 'pivot.runTests',
  requestFeedback: 'pivot.requestFeedback',
  submitTurn: 'pivot.submitTurn',
  evaluateConvCode: 'pivot.evaluateConvCode',
  openReport: 'pivot.openReport',
  restartServer: 'pivot.restartServer',
  refreshView: 'pivot.refreshView',
  setApiKey: 'pivot.setApiKey',
} as const;

/** Where `Pivot: Set Endpoint API Key` keeps the key (VS Code's SecretStorage). */
export const API_KEY_SECRET = 'pivot.endpoint.apiKey';

/** Palette command -> the server command it calls (none for client-only commands). */
export const PALETTE_TO_SERVER: Record<string, ServerCommandName | null> = {
  [PaletteCommand.openConversation]: ServerCommand.conversationOpen,
  [PaletteCommand.closeConversation]: ServerCommand.conversationClose,
  [PaletteCommand.conversationInfo]: ServerCommand.conversationInfo,
  [PaletteCommand.nextSession]: ServerCommand.sessionNext,
  [PaletteCommand.previousSession]: ServerCommand.sessionPrevious,
  [PaletteCommand.gotoSession]: ServerCommand.sessionGoto,
  [PaletteCommand.showActivePivots]: ServerCommand.pivotsActive,
  [PaletteCommand.showTranscript]: ServerCommand.sessionTranscript,
  [PaletteCommand.showTimeline]: ServerCommand.sessionTimeline,
  [PaletteCommand.addPivot]: ServerCommand.pivotsAdd,
  [PaletteCommand.removePivot]: ServerCommand.pivotsRemove,
  [PaletteCommand.reloadPivots]: ServerCommand.pivotsReload,
  [PaletteCommand.checkOutputs]: ServerCommand.outputsCheck,
  [PaletteCommand.evaluateMemoryCode]: ServerCommand.evaluateMemorycode,
  [PaletteCommand.generateOutputs]: ServerCommand.memorycodeGenerate,
  [PaletteCommand.inspectDocument]: ServerCommand.documentInspect,
  [PaletteCommand.openResults]: ServerCommand.conversationOpen,
  [PaletteCommand.runTests]: ServerCommand.testsRun,
  [PaletteCommand.requestFeedback]: ServerCommand.turnFeedback,
  [PaletteCommand.submitTurn]: ServerCommand.turnSubmit,
  [PaletteCommand.evaluateConvCode]: ServerCommand.evaluateConvcode,
  [PaletteCommand.openReport]: ServerCommand.reportOpen,
  [PaletteCommand.restartServer]: null,
  [PaletteCommand.refreshView]: null,
  [PaletteCommand.setApiKey]: null,
};

// ---------------------------------------------------------------------------------------
// Arguments: one JSON object or none, as the server expects; each checked against the
// command's generated argument type (`satisfies`), so a renamed argument does not compile.

export type CommandArgs = [] | [Record<string, unknown>];

export const args = {
  open: (path: string): CommandArgs => [{ path } satisfies P.ConversationOpenArgs],
  goto: (index: number): CommandArgs => [{ index } satisfies P.SessionGotoArgs],
  transcript: (index?: number): CommandArgs => (index === undefined ? [] : [{ index } satisfies P.SessionTranscriptArgs]),
  outputs: (path: string): CommandArgs => [{ path } satisfies P.OutputsCheckArgs],
  evaluate: (dataset: string, outputs: string): CommandArgs => [{ dataset, outputs } satisfies P.EvaluateMemorycodeArgs],
  inspect: (uri: string): CommandArgs => [{ uri } satisfies P.DocumentInspectArgs],
  remove: (id: string): CommandArgs => [{ id } satisfies P.PivotsRemoveArgs],
  add: (p: P.PivotsAddArgs): CommandArgs => [
    Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined && v !== '')),
  ],
  openResults: (o: ResultsChoice): CommandArgs => [
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')),
  ],
  testsRun: (uri: string, task?: string): CommandArgs => [(task ? { uri, task } : { uri }) satisfies P.TestsRunArgs],
  feedback: (uri: string, kind: FeedbackKind): CommandArgs => [{ uri, kind } satisfies P.TurnFeedbackArgs],
  submit: (uri: string): CommandArgs => [{ uri } satisfies P.TurnSubmitArgs],
  evaluateConvcode: (results: string, model: string, refModel?: string): CommandArgs => [
    (refModel ? { results, model, static: true, refModel } : { results, model }) satisfies P.EvaluateConvcodeArgs,
  ],
  /** `pivot.memorycode.generate`: a real endpoint (`baseUrl`) or, for tests and demos, a
   *  loopback script (then no key is needed); empty optional fields are left out. */
  generate: (g: GenerateChoice): CommandArgs => [
    Object.fromEntries(Object.entries(g).filter(([, v]) => v !== undefined && v !== '')),
  ],
  reportOpen: (inputs: string[], title?: string): CommandArgs => [(title ? { inputs, title } : { inputs }) satisfies P.ReportOpenArgs],
  none: (): CommandArgs => [],
};

/** What `pivot.memorycode.generate` is asked for (its argument object). */
export type GenerateChoice = P.MemorycodeGenerateArgs;

/** `pivot.memorycode.generate`'s reply. */
export type Generated = P.MemorycodeGenerateReply;

/** The endpoint input box takes a URL (an OpenAI-compatible endpoint) or the path of a
 *  loopback script (the bundled loopback model: no key, canned replies). */
export function endpointArgs(endpoint: string): { baseUrl: string } | { loopback: string } {
  const e = endpoint.trim();
  return /^https?:\/\//i.test(e) ? { baseUrl: e } : { loopback: e };
}

/** `pivot.report.open`'s reply: where the HTML report was written. */
export type ReportOpened = P.ReportOpenReply;

// ---------------------------------------------------------------------------------------
// Results (the JSON the server returns).

/** The conversation's info (`pivot.conversation.info`, and every session move's reply). */
export type Info = P.ConversationInfoReply &
  Partial<Pick<P.SessionNextReply, 'moved'>> &
  Partial<Pick<P.ConversationOpenReply, 'warnings'>>;

/** `info.convcode` when a ConvCodeWorld task is open (each turn a session). */
export type ConvInfo = NonNullable<Info['convcode']>;

export type ActivePivot = Active['pivots'][number];

export type Active = P.PivotsActiveReply;

export type Transcript = P.SessionTranscriptReply;

/** A commit of the project's history (sessions from history: the `pivot.history` setting). */
export type Commit = NonNullable<TimelineSession['commit']>;

/** `pivot.session.timeline` (crates/workspace/src/timeline.rs). */
export type Timeline = P.SessionTimelineReply;

export type TimelineSession = Timeline['sessions'][number];

export interface SessionChanged {
  index: number;
  count: number;
}

// ---------------------------------------------------------------------------------------
// Settings -> how the server is started.

export interface Settings {
  serverPath: string;
  python: string;
  /** `humaneval` or a BigCodeBench / HumanEval JSONL file of problems. */
  problems: string;
  /** `bwrap` (the default) or `none`: how the server isolates test runs. */
  sandbox: string;
  /** pivots.toml's sessions are the commits that changed it. */
  history: boolean;
  /** An instruction file (relative to the root) the pivots are read from, in place of pivots.toml; empty: pivots.toml. */
  instructions: string;
  /** The server's log level (its stderr, in the output channel); `default`: PIVOT_LOG's, else warn. */
  logLevel: string;
  baseUrl: string;
  model: string;
  apiKey: string;
  apiKeyEnv: string;
}

export const DEFAULT_SETTINGS: Settings = {
  /** Empty: the server bundled in the extension, else `pivot-lsp` on PATH. */
  serverPath: '',
  python: '',
  problems: 'humaneval',
  sandbox: 'bwrap',
  history: false,
  instructions: '',
  logLevel: 'default',
  baseUrl: '',
  model: '',
  apiKey: '',
  apiKeyEnv: 'OPENAI_API_KEY',
};

/** What the extension sends as `initializationOptions`: the server's settings object
 *  (generated from crates/workspace/src/settings.rs's `SettingsObject`). */
export interface InitOptions {
  pivot: P.ServerSettings;
}

/**
 * `initializationOptions.pivot` (crates/workspace/src/settings.rs): empty settings are
 * null (the server's default); the key comes from the setting, else from the named env variable.
 */
export function initializationOptions(s: Settings, env: Record<string, string | undefined>, secret?: string): InitOptions {
  const orNull = (v: string | undefined) => (v && v.trim() !== '' ? v.trim() : null);
  // The key kept in SecretStorage first, then the (plain-text) setting, then the variable.
  const key = orNull(secret) ?? orNull(s.apiKey) ?? (s.apiKeyEnv ? orNull(env[s.apiKeyEnv]) : null);
  return {
    pivot: {
      python: orNull(s.python),
      problems: orNull(s.problems),
      // The setting's enum keeps it to the two values; anything else is sent as written,
      // for the server to refuse with the setting's name.
      sandbox: orNull(s.sandbox) as P.ServerSettings['sandbox'],
      history: s.history === true,
      instructions: (s.instructions ?? '').trim(),
      logLevel: s.logLevel && s.logLevel !== 'default' ? s.logLevel : null,
      endpoint: { baseUrl: orNull(s.baseUrl), model: orNull(s.model), apiKey: key },
    },
  };
}

/**
 * The files the server is told about when they change (made, edited, removed): pivots files
 * at any depth (nested ones apply to their folders), and the `pivot.instructions` file.
 */
export function watchedPatterns(s: Settings): string[] {
  const globs = ['**/{pivots.toml,pyproject.toml}'];
  const file = (s.instructions ?? '').trim().replace(/^\.\//, '');
  if (file) globs.push(file);
  return globs;
}

/** Extra environment of the server process: the interpreter as PIVOT_PYTHON, read by test runs. */
export function serverEnv(s: Settings): Record<string, string> {
  return s.python.trim() !== '' ? { PIVOT_PYTHON: s.python.trim() } : {};
}

/** Where the interpreter for test runs came from (said in the output channel). */
export type PythonOrigin = 'setting' | 'pythonExtension' | 'default';

export interface ChosenPython {
  /** The interpreter given to the server; '' leaves it to the server's default. */
  python: string;
  origin: PythonOrigin;
  /** The Python extension's interpreter was not asked: the workspace is in Restricted Mode. */
  restricted?: boolean;
}

/** The Python extension's id (ms-python.python), whose API `@vscode/python-extension` wraps. */
export const PYTHON_EXTENSION_ID = 'ms-python.python';

/**
 * The interpreter for test runs, as ruff-vscode chooses it: a non-empty `pivot.python`
 * wins; else the interpreter the Python extension has chosen for the workspace folder (its
 * executable; undefined when that extension is not installed or did not answer); else the
 * server's default (`PIVOT_PYTHON` of its environment, else `python3`). In Restricted Mode
 * the Python extension's choice is not taken: it may be a venv the repository brought,
 * which is the repository's code (as a relative `pivot.serverPath` is refused there).
 */
export function choosePython(setting: string, fromExtension: string | undefined, trusted = true): ChosenPython {
  if (setting.trim() !== '') return { python: setting.trim(), origin: 'setting' };
  if (!trusted) return { python: '', origin: 'default', restricted: true };
  if (fromExtension && fromExtension.trim() !== '') return { python: fromExtension.trim(), origin: 'pythonExtension' };
  return { python: '', origin: 'default' };
}

const PYTHON_ORIGIN_TEXT: Record<PythonOrigin, string> = {
  setting: 'setting pivot.python',
  pythonExtension: "the Python extension's interpreter",
  default: 'default python3',
};

/** The output channel's line naming the interpreter and where it came from. */
export function pythonLogLine(c: ChosenPython, env: Record<string, string | undefined>): string {
  if (c.origin !== 'default') return `Pivot LSP: Python interpreter ${c.python} (${PYTHON_ORIGIN_TEXT[c.origin]})`;
  const why = c.restricted ? "; the Python extension's interpreter is not used in Restricted Mode" : '';
  // The server inherits the editor's environment: a PIVOT_PYTHON there is its default.
  const inherited = env.PIVOT_PYTHON?.trim();
  return inherited
    ? `Pivot LSP: Python interpreter ${inherited} (PIVOT_PYTHON of the editor's environment, in place of the ${PYTHON_ORIGIN_TEXT.default}${why})`
    : `Pivot LSP: Python interpreter python3 (${PYTHON_ORIGIN_TEXT.default}${why})`;
}

/** Whether a server started with `running` must restart for `next` (another interpreter). */
export function pythonChanged(running: ChosenPython | undefined, next: ChosenPython): boolean {
  return running !== undefined && running.python !== next.python;
}

/** Where the server binary came from (said in the output channel). */
export type ServerOrigin = 'setting' | 'bundled' | 'PATH';

export type Resolved = { ok: true; command: string; origin: ServerOrigin } | { ok: false; message: string };

/** The server binary's name on PATH and in the extension's `server/` folder. */
export const SERVER_NAME = 'pivot-lsp';

/**
 * Find the server binary. A pivot.serverPath setting wins: a path containing a separator
 * must exist, a bare name is looked up on PATH. Without the setting: the binary bundled in
 * a platform-specific .vsix (`bundled`, inside the extension), else `pivot-lsp` on PATH
 * (e.g. from `pip install pivot-lsp`). `exists` and `pathDirs` are injected so this stays
 * testable.
 */
export function resolveServer(
  setting: string,
  bundled: string | undefined,
  pathDirs: string[],
  exists: (p: string) => boolean,
  sep = '/',
): Resolved {
  const given = setting.trim();
  // Notifications show text as is: no markdown backticks.
  const hint =
    'Install it with "pip install pivot-lsp" (the wheel puts pivot-lsp on PATH), ' +
    'or set pivot.serverPath to the binary (for example target/release/pivot-lsp).';
  if (given.includes('/') || given.includes('\\')) {
    return exists(given)
      ? { ok: true, command: given, origin: 'setting' }
      : { ok: false, message: `Pivot LSP: the server binary ${given} (setting pivot.serverPath) does not exist. ${hint}` };
  }
  if (given === '' && bundled && exists(bundled)) return { ok: true, command: bundled, origin: 'bundled' };
  const name = given === '' ? SERVER_NAME : given;
  for (const dir of pathDirs) {
    if (dir === '') continue;
    const candidate = dir.endsWith(sep) ? dir + name : dir + sep + name;
    if (exists(candidate)) return { ok: true, command: candidate, origin: given === '' ? 'PATH' : 'setting' };
  }
  const where = given === ''
    ? `This extension has no server bundled (it is not a platform-specific .vsix for this machine) and "${name}" was not found on PATH.`
    : `The language server "${name}" (setting pivot.serverPath) was not found on PATH.`;
  return { ok: false, message: `Pivot LSP: ${where} ${hint}` };
}

// ---------------------------------------------------------------------------------------
// Status bar.

export interface StatusState {
  index: number;
  count: number;
  /** From the last `pivot.conversation.info`; unknown until the first answer. */
  kind?: string;
  source?: string | null;
  /** The open ConvCodeWorld task. */
  task?: string;
}

/** Whether a server process runs; `failed` carries the reason (from its stderr). */
export type ServerState =
  | { state: 'starting' }
  | { state: 'running' }
  | { state: 'stopped' }
  | { state: 'failed'; reason: string };

/**
 * "session k/N" with k the 0-based index the server and the data files use (the server's
 * transcript says "Session 0 of 3" for the first one). Without a conversation or pivots
 * there are no sessions to count; without a server it says so rather than "starting".
 */
export function statusText(s: StatusState | undefined, server: ServerState = { state: 'running' }): string {
  if (server.state === 'failed') return 'pivot: failed';
  if (server.state === 'stopped') return 'pivot: not running';
  if (server.state === 'starting') return 'pivot: starting';
  if (!s) return 'session -';
  if (s.kind === 'none') return 'pivot: no conversation';
  if (s.kind === 'convcode' && s.task) return `${s.task} turn ${s.index}/${s.count - 1}`;
  return `session ${s.index}/${s.count}`;
}

export function statusTooltip(s: StatusState | undefined, server: ServerState = { state: 'running' }): string {
  if (server.state === 'failed') return `Pivot LSP failed to start: ${server.reason}\nClick to restart`;
  if (server.state === 'stopped') return 'Pivot LSP: the server is not running\nClick to restart';
  if (server.state === 'starting') return 'Pivot LSP: starting the server';
  if (!s) return 'Pivot LSP: running';
  if (s.kind === 'none') return 'Pivot LSP: no conversation open (Pivot: Open Conversation...)';
  const src = s.source ? `\n${s.source}` : '';
  if (s.kind === 'convcode') {
    return `Pivot LSP: ${s.task ?? 'ConvCodeWorld'}, turn ${s.index} of turns 0 to ${s.count - 1}${src}\nClick to go to a turn`;
  }
  return `Pivot LSP: session ${s.index} of ${s.count} (numbered from 0, as in the data files)${src}\nClick to go to a session`;
}

/** A notification updates index and count and keeps what info said about the source. */
export function applySessionChanged(prev: StatusState | undefined, n: SessionChanged): StatusState {
  return { ...prev, index: n.index, count: n.count };
}

// ---------------------------------------------------------------------------------------
// Tree view: two groups, sessions and active pivots.

export interface Node {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  icon?: string;
  /** Palette command and its arguments run when the item is clicked. */
  command?: { command: string; args: unknown[] };
  children?: Node[];
  contextValue?: string;
}

export function basename(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] || p;
}

/** "adds a, b · updates c" for one session's pivot changes. */
export function changesDescription(changes: PivotChange[] | undefined): string {
  const ids = (what: PivotChange['change']) => (changes ?? []).filter((c) => c.change === what).map((c) => c.id);
  const [added, updated, removed] = [ids('added'), ids('updated'), ids('removed')];
  return [
    added.length ? `adds ${added.join(', ')}` : '',
    updated.length ? `updates ${updated.join(', ')}` : '',
    removed.length ? `removes ${removed.join(', ')}` : '',
  ]
    .filter((x) => x)
    .join(' · ');
}

/** "1a2b3c4 Rename the helpers", or "uncommitted", for a session from history. */
export function commitDescription(s: TimelineSession | undefined): string {
  if (!s) return '';
  if (s.commit) return `${s.commit.short.slice(0, 7)} ${s.commit.summary}`;
  return s.uncommitted ? 'uncommitted pivots.toml' : '';
}

/** A commit's time as "2026-11-28 21:04 UTC". */
export function commitDate(c: Commit): string {
  return `${new Date(c.time * 1000).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

/** A commit's tooltip lines: id, summary, date. */
export function commitTooltip(c: Commit): string {
  return `commit ${c.id}\n${c.summary}\n${commitDate(c)}`;
}

const CHANGE_ICON: Record<PivotChange['change'], string> = { added: 'add', updated: 'edit', removed: 'remove' };

/**
 * Two groups: the sessions (each with its commit, when the sessions come from history, and
 * the pivots it adds, updates or removes: the server's `timeline`) and the pivots active now.
 */
export function treeModel(info: Info | undefined, active: Active | undefined, timeline?: Timeline): Node[] {
  if (!info) {
    return [{ id: 'empty', label: 'Pivot LSP is not running', icon: 'warning', command: { command: PaletteCommand.restartServer, args: [] } }];
  }
  // No conversation: no items, so the view shows its welcome text (open one).
  if (info.kind === 'none') return [];
  const convcode = info.kind === 'convcode';
  const sessions: Node[] = [];
  {
    for (let k = 0; k < info.count; k++) {
      const current = k === info.index;
      const entry = timeline?.sessions[k];
      const ch = entry?.changes ?? [];
      const parts = [current ? 'current' : '', commitDescription(entry), changesDescription(ch)].filter((x) => x);
      const tips = [
        entry?.commit ? commitTooltip(entry.commit) : '',
        ...ch.map((c) => `${c.change} ${c.id} (version ${c.version})${c.text ? `: "${c.text}"` : ''}`),
      ].filter((x) => x);
      sessions.push({
        id: `session:${k}`,
        label: convcode ? `Turn ${k}` : `Session ${k}`,
        description: parts.join(' · ') || undefined,
        tooltip: tips.length ? tips.join('\n') : undefined,
        icon: current ? 'debug-stackframe' : 'circle-outline',
        command: { command: PaletteCommand.gotoSession, args: [k] },
        contextValue: current ? 'session.current' : 'session',
        children: ch.length
          ? ch.map((c) => ({ id: `session:${k}:${c.id}`, label: c.id, description: `${c.change}${c.text ? `: ${c.text}` : ''}`, icon: CHANGE_ICON[c.change] ?? 'edit' }))
          : undefined,
      });
    }
  }
  const pivots: Node[] = (active?.pivots ?? []).map((p) => ({
    id: `pivot:${p.id}`,
    label: p.id,
    description: p.text || p.description,
    tooltip: pivotTooltip(p),
    icon: p.origin === 'memorycode' ? 'comment-discussion' : 'law',
    contextValue: `pivot.${p.origin}`,
  }));
  const what = convcode ? `Turns of ${info.convcode?.task ?? 'the task'}` : info.history ? `History of ${timeline?.file ?? 'pivots.toml'}` : 'Sessions';
  // Turns are numbered 0..N as the status bar shows them ("turn 1/1" after one submission).
  const sessionsLabel = convcode ? `${what} (turn ${info.index}/${info.count - 1})` : `${what} (${info.index}/${info.count})`;
  const groups: Node[] = [
    {
      id: 'sessions',
      label: sessionsLabel,
      description: convcode && info.convcode ? `${info.convcode.model}, ${info.convcode.label}` : info.source ? basename(info.source) : undefined,
      tooltip: info.source ?? undefined,
      icon: 'history',
      children: sessions,
    },
  ];
  if (!convcode || pivots.length) {
    groups.push({ id: 'pivots', label: `Active pivots (${pivots.length})`, icon: 'checklist', children: pivots });
  }
  return groups;
}

export function pivotTooltip(p: ActivePivot): string {
  const text = p.text ? `"${p.text}"\n` : '';
  return `${text}${p.kind}: ${p.description}\nversion ${p.version}, given at session ${p.session} (${p.origin})`;
}

// ---------------------------------------------------------------------------------------
// Inputs.

/** A session index typed by the user: an integer in 0..count-1, else the problem. */
export function parseSessionIndex(input: string, count: number): number | string {
  const t = input.trim();
  if (!/^\d+$/.test(t)) return 'a session index is a whole number (0-based)';
  const k = Number(t);
  if (k >= count) return `the conversation has ${count} session${count === 1 ? '' : 's'}: 0 to ${count - 1}`;
  return k;
}

export function sessionPicks(info: Info): { label: string; description?: string; index: number }[] {
  const out = [];
  for (let k = 0; k < info.count; k++) {
    out.push({ label: `${info.kind === 'convcode' ? 'Turn' : 'Session'} ${k}`, description: k === info.index ? 'current' : undefined, index: k });
  }
  return out;
}

/** A rule typed as JSON (`"^f_.*"`, `true`, `["timer", true]`), or a bare regex string. */
export function parseRule(input: string): unknown {
  const t = input.trim();
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
}

// ---------------------------------------------------------------------------------------
// Reports shown as markdown.

/** Every session, one line each: its commit (sessions from history) and its pivot changes. */
export function timelineMarkdown(t: Timeline): string {
  const what = t.source === 'history' ? `History of ${t.file ?? 'pivots.toml'}` : t.source === 'convcode' ? 'Turns' : 'Sessions';
  const lines = [`# ${what}: ${t.count} session${t.count === 1 ? '' : 's'}, at session ${t.index}`, ''];
  for (const s of t.sessions) {
    const from = s.commit ? ` — commit \`${s.commit.short}\` ${s.commit.summary} (${commitDate(s.commit)})` : s.uncommitted ? ' — uncommitted pivots.toml' : '';
    lines.push(`- **Session ${s.index}**${s.index === t.index ? ' (current)' : ''}${from}`);
    for (const c of s.changes) lines.push(`  - ${c.change} \`${c.id}\` (version ${c.version})${c.text ? `: "${c.text}"` : ''}`);
  }
  return lines.join('\n') + '\n';
}

export function activePivotsMarkdown(a: Active): string {
  const lines = [`# Active pivots at session ${a.index} of ${a.count}`, ''];
  if (a.pivots.length === 0) lines.push('No pivot is active.');
  for (const p of a.pivots) {
    lines.push(`- **${p.id}** (version ${p.version}, given at session ${p.session}, ${p.origin}): ` +
      `${p.text ? `"${p.text}" ` : ''}(${p.kind}: ${p.description})`);
  }
  return lines.join('\n') + '\n';
}

const fmt = (v: unknown) => (typeof v === 'number' ? v.toFixed(4) : 'n/a');

export type OutputsCheck = P.OutputsCheckReply;

export function outputsMarkdown(r: OutputsCheck): string {
  const lines = [`# Model outputs: ${basename(r.output)}`, '', `Dialogue: \`${r.dialogue}\``, `Outputs: \`${r.output}\``, ''];
  const metrics = Object.keys(r.scores) as (keyof OutputsCheck['scores'])[];
  const n = Math.max(0, ...metrics.map((m) => r.scores[m].length));
  // "session" is also one of the metrics: the columns say "score" so no two headers are equal.
  lines.push(`| session | ${metrics.map((m) => `${m} score`).join(' | ')} |`, `|---|${metrics.map(() => '---').join('|')}|`);
  for (let k = 0; k < n; k++) {
    lines.push(`| ${k} | ${metrics.map((m) => fmt(r.scores[m][k])).join(' | ')} |`);
  }
  lines.push('', '## Answers', '');
  for (const a of r.answers) {
    const err = a.syntax_error ? ` — syntax error: ${a.syntax_error}` : '';
    lines.push(`- session ${a.session}, ${a.kind} answer ${a.answer}: score ${fmt(a.score)}${err}`);
    for (const v of a.verdicts) lines.push(`  - \`${v.pivot}\` (${v.kind} ${JSON.stringify(v.rule)}): ${v.verdict}`);
  }
  return lines.join('\n') + '\n';
}

/** `pivot.evaluate.memorycode`'s reply: the MemoryCode score file. */
export type Evaluation = P.EvaluateMemorycodeReply;

export function evaluationMarkdown(r: Evaluation, dataset: string, outputs: string): string {
  const lines = ['# MemoryCode evaluation', '', `Dataset: \`${dataset}\``, `Outputs: \`${outputs}\``, '',
    '| metric | score |', '|---|---|'];
  for (const [m, v] of Object.entries(r.macro)) lines.push(`| ${m} | ${fmt(v)} |`);
  lines.push('', `${Object.keys(r.dialogues).length} dialogues scored, ${r.skipped.length} skipped.`);
  for (const s of r.skipped) lines.push(`- skipped: dialogue ${s.id}: ${s.reason}`);
  for (const w of r.warnings ?? []) lines.push(`- warning: ${w}`);
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------
// $/progress -> VS Code's progress, which takes increments rather than percentages.

export interface ProgressValue { kind: 'begin' | 'report' | 'end'; message?: string; percentage?: number; title?: string }

export class ProgressTracker {
  private shown = 0;
  /** The increment to report for one `$/progress` value, and its message. */
  step(v: ProgressValue): { increment: number; message?: string } {
    const pct = v.kind === 'end' ? 100 : v.percentage;
    let increment = 0;
    if (typeof pct === 'number' && pct > this.shown) {
      increment = Math.min(pct, 100) - this.shown;
      this.shown = Math.min(pct, 100);
    }
    return { increment, message: v.message };
  }
  get percentage(): number {
    return this.shown;
  }
}

// ---------------------------------------------------------------------------------------
// Start-up failures: one message, with the reason the server printed on stderr.

/** Keeps the last lines a process wrote, to explain why it stopped. */
export class StderrTail {
  private text = '';
  constructor(private readonly max = 4000) {}
  push(chunk: string): void {
    this.text = (this.text + chunk).slice(-this.max);
  }
  clear(): void {
    this.text = '';
  }
  /** The last non-empty lines (clap's "error: ..." and its hint), or undefined. */
  reason(lines = 3): string | undefined {
    const ls = this.text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !/^\[(Info|Trace|Debug)/.test(l));
    return ls.length ? ls.slice(-lines).join(' ') : undefined;
  }
}

export function startFailureMessage(command: string, reason: string | undefined, exitCode?: number | null): string {
  const code = typeof exitCode === 'number' ? ` (exit code ${exitCode})` : '';
  const why = reason ? `: ${reason}` : '; it printed nothing (see the Pivot LSP output)';
  return `Pivot LSP: the server ${command} stopped${code}${why}`;
}

// ---------------------------------------------------------------------------------------
// A session's pivot changes (the server's timeline).

export type PivotChange = TimelineSession['changes'][number];

// ---------------------------------------------------------------------------------------
// ConvCodeWorld results folders: what the palette offers before calling the server's open
// (the server opens; the editor only lists the choices found on disk).

export const TURN0_DIR = ['bigcodebench', 'sanitized_calibrated_samples', 'instruct'];
export const LIVE_DIR = ['results', 'v0.3.6'];
export const TURN0_SUFFIX = '-0-1-sanitized-calibrated.jsonl';

/** The nine configurations in the order and with the labels of the paper's Table 1. */
export const CONFIGS: { code: string; label: string }[] = [
  ['CF', 'w/ CF'],
  ['CF_EF_UNIT', 'w/ CF EF (partial TC)'],
  ['CF_EF_FULL', 'w/ CF EF (full TC)'],
  ['CF_SNF', 'w/ CF SNF'],
  ['CF_EF_UNIT_SNF', 'w/ CF EF (partial TC) SNF'],
  ['CF_EF_FULL_SNF', 'w/ CF EF (full TC) SNF'],
  ['CF_SEF', 'w/ CF SEF'],
  ['CF_EF_UNIT_SEF', 'w/ CF EF (partial TC) SEF'],
  ['CF_EF_FULL_SEF', 'w/ CF EF (full TC) SEF'],
].map(([code, label]) => ({ code, label }));

/** Models with turn-0 samples, from the file names in the turn-0 folder (`/` written `--`). */
export function resultsModels(turn0Files: string[]): string[] {
  const out = new Set<string>();
  for (const f of turn0Files) {
    if (!f.endsWith(TURN0_SUFFIX)) continue;
    const stem = f.slice(0, -TURN0_SUFFIX.length);
    const m = /^(.*)--bigcodebench-instruct--(openai|vllm)$/.exec(stem);
    if (m) out.add(m[1].split('--').join('/'));
  }
  return [...out].sort();
}

/** The configurations `model` has per-turn logs of, in Table 1's order. */
export function resultsConfigs(liveFiles: string[], model: string): { code: string; label: string }[] {
  const prefix = `bigcodebench_${model.split('/').join('_')}_`;
  const codes = new Set<string>();
  for (const f of liveFiles) {
    if (!f.startsWith(prefix) || !f.endsWith('.jsonl')) continue;
    const rest = f.slice(prefix.length, -'.jsonl'.length).replace(/_ITER=\d+$/, '').replace(/_by_.*$/, '');
    codes.add(rest);
  }
  return CONFIGS.filter((c) => codes.has(c.code));
}

/** Task ids of a JSONL samples file, in file order, each once; bad lines are skipped. */
export function jsonlTasks(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const id = JSON.parse(line).task_id;
      if (typeof id === 'string' && !out.includes(id)) out.push(id);
    } catch {
      // a torn last line: the server reports it when it opens the file
    }
  }
  return out;
}

/** A ConvCodeWorld task to open: `pivot.conversation.open`'s arguments, with the task. */
export type ResultsChoice = P.ConversationOpenArgs & { task: string };

export const FEEDBACK_KINDS = ['compilation', 'execution', 'execution-partial', 'novice', 'expert'] as const;
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];

export const FEEDBACK_LABELS: Record<FeedbackKind, string> = {
  compilation: 'Compilation feedback (syntax check)',
  execution: 'Execution feedback (all test cases)',
  'execution-partial': 'Execution feedback (partial test cases)',
  novice: 'Novice verbal feedback (simulator)',
  expert: 'Expert verbal feedback (simulator)',
};

export type Feedback = P.TurnFeedbackReply;

export function feedbackMarkdown(f: Feedback): string {
  const lines = [`# Feedback: ${f.kind}`, '', `Task: ${f.task}`, '', '```text', (f.text ?? '').replace(/```/g, '`\u200b``'), '```', ''];
  const pending = Object.keys(f.pending ?? {});
  if (pending.length) lines.push(`Given with the next submission: ${pending.join(', ')}.`, '');
  return lines.join('\n');
}

export type TestsResult = P.TestsRunReply;

export type Submitted = P.TurnSubmitReply;

/** The submission; the tables as markdown when given (else the server's text tables). */
export function submittedMarkdown(s: Submitted, tablesMarkdown?: string): string {
  const t = s.tests;
  const tables = tablesMarkdown ? [tablesMarkdown.trimEnd()] : ['```text', s.table.trimEnd(), '```'];
  return [`# Turn ${s.turn} submitted`, '', `Tests: ${t.summary ?? `${t.passed}/${t.total} passed`}`, '',
    '## Recomputed tables', '', ...tables, ''].join('\n');
}

export type ConvEvaluation = P.EvaluateConvcodeReply;

export function convEvaluationMarkdown(r: ConvEvaluation, results: string, model: string): string {
  const lines = [`# ConvCodeWorld evaluation: ${model}`, '', `Results: ${results}`, '', r.markdown.trimEnd(), ''];
  for (const n of r.notes ?? []) lines.push(`- note: ${n}`);
  return lines.join('\n') + '\n';
}
