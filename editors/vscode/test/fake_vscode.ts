// A stand-in for the `vscode` module, enough to load and activate the extension under plain
// Node and record what it registers and shows. Anything not modelled here is an inert
// stub (vscode-languageclient subclasses a few VS Code classes when it loads).

import Module = require('module');

export interface Recorded {
  commands: Map<string, (...a: unknown[]) => unknown>;
  treeViews: string[];
  contentSchemes: string[];
  errors: string[];
  infos: string[];
  configKeysRead: Set<string>;
  statusItems: { text: string; tooltip?: string; command?: string; shown: boolean }[];
  /** Lines written to the extension's output channel. */
  output: string[];
}

/** Other installed extensions (by id) as `vscode.extensions.getExtension` returns them. */
export interface FakeExtension {
  isActive: boolean;
  activate(): Promise<unknown>;
  exports: unknown;
}

export interface FakeOptions {
  extensions?: Record<string, FakeExtension>;
  /** The folder opened (workspaceFolders[0]). */
  folder?: string;
  trusted?: boolean;
}

export function inert(name: string): any {
  return new Proxy(function () {}, {
    get(_t, p) {
      if (p === Symbol.toPrimitive) return () => name;
      if (p === 'then') return undefined; // not a thenable
      return inert(`${name}.${String(p)}`);
    },
    construct: () => inert(`${name}()`),
    apply: () => inert(`${name}()`),
  });
}

class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  event = (l: (e: T) => void) => {
    this.listeners.push(l);
    return new Disposable(() => (this.listeners = this.listeners.filter((x) => x !== l)));
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

/** Build a fake `vscode` with `settings` as the `pivot.*` configuration. */
export function fakeVscode(settings: Record<string, unknown>, opts: FakeOptions = {}): { vscode: any; rec: Recorded } {
  const rec: Recorded = {
    commands: new Map(),
    treeViews: [],
    contentSchemes: [],
    errors: [],
    infos: [],
    configKeysRead: new Set(),
    statusItems: [],
    output: [],
  };
  const uri = (p: string) => ({ scheme: 'file', fsPath: p, path: p, toString: () => `file://${p}` });
  const base: Record<string, unknown> = {
    // vscode-languageclient 9 checks it (>= 1.82).
    version: '1.100.0',
    Disposable,
    EventEmitter,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    ThemeIcon: class { constructor(readonly id: string) {} },
    TreeItem: class { constructor(readonly label: string, readonly collapsibleState: number) {} },
    Uri: {
      from: (c: { scheme: string; path: string }) => ({ ...c, toString: () => `${c.scheme}:${c.path}` }),
      file: uri,
    },
    commands: {
      registerCommand: (id: string, fn: (...a: unknown[]) => unknown) => {
        if (rec.commands.has(id)) throw new Error(`command ${id} registered twice`);
        rec.commands.set(id, fn);
        return new Disposable(() => rec.commands.delete(id));
      },
      executeCommand: async () => undefined,
    },
    window: {
      createOutputChannel: () => ({
        appendLine: (l: string) => void rec.output.push(l),
        append: () => undefined,
        show: () => undefined,
        dispose: () => undefined,
      }),
      createStatusBarItem: () => {
        const item = { text: '', tooltip: undefined, command: undefined, shown: false, show() { item.shown = true; }, hide() { item.shown = false; }, dispose() {} };
        rec.statusItems.push(item);
        return item;
      },
      registerTreeDataProvider: (id: string) => {
        rec.treeViews.push(id);
        return new Disposable();
      },
      showErrorMessage: async (m: string) => {
        rec.errors.push(m);
        return undefined;
      },
      showInformationMessage: async (m: string) => {
        rec.infos.push(m);
        return undefined;
      },
      showWarningMessage: async () => undefined,
      setStatusBarMessage: () => new Disposable(),
    },
    extensions: {
      getExtension: (id: string) => opts.extensions?.[id],
      onDidChange: () => new Disposable(),
    },
    workspace: {
      workspaceFolders: opts.folder ? [{ uri: uri(opts.folder), name: 'folder', index: 0 }] : undefined,
      isTrusted: opts.trusted ?? true,
      textDocuments: [],
      getConfiguration: (section: string) => ({
        get: (key: string, dflt: unknown) => {
          const full = `${section}.${key}`;
          rec.configKeysRead.add(full);
          return full in settings ? settings[full] : dflt;
        },
      }),
      registerTextDocumentContentProvider: (scheme: string) => {
        rec.contentSchemes.push(scheme);
        return new Disposable();
      },
      onDidChangeConfiguration: () => new Disposable(),
      onDidGrantWorkspaceTrust: () => new Disposable(),
      createFileSystemWatcher: () => inert('watcher'),
    },
  };
  // The namespaces too: what vscode-languageclient subscribes to (onDidOpenTextDocument,
  // ...) once a client starts is inert.
  const withInert = (o: Record<string, unknown>, name: string) =>
    new Proxy(o, { get: (t, p: string) => (p in t ? t[p] : inert(`${name}.${p}`)) });
  for (const ns of ['commands', 'window', 'workspace', 'extensions']) {
    base[ns] = withInert(base[ns] as Record<string, unknown>, `vscode.${ns}`);
  }
  const vscode = withInert(base, 'vscode');
  return { vscode, rec };
}

/** Make `require('vscode')` return `vscode` from now on. */
export function installFake(vscode: unknown): void {
  const M = Module as unknown as { _load: (req: string, ...rest: unknown[]) => unknown };
  const orig = M._load;
  M._load = function (this: unknown, req: string, ...rest: unknown[]) {
    return req === 'vscode' ? vscode : orig.call(this, req, ...rest);
  };
}

/**
 * A stand-in for ms-python.python: the part of its API that `@vscode/python-extension` and
 * the extension use (environments: the active path, resolve, its change event). `choose`
 * picks another interpreter, as "Python: Select Interpreter" does.
 */
export function fakePythonExtension(executable: string): {
  ext: FakeExtension;
  asked: (string | undefined)[];
  choose(executable: string): void;
} {
  const changed = new EventEmitter<{ id: string; path: string; resource: undefined }>();
  const asked: (string | undefined)[] = [];
  let current = executable;
  const environments = {
    getActiveEnvironmentPath: (resource?: { fsPath?: string }) => {
      asked.push(resource?.fsPath);
      return { id: current, path: current };
    },
    resolveEnvironment: async (e: { path: string } | string) => {
      const p = typeof e === 'string' ? e : e.path;
      return { id: p, path: p, executable: { uri: { fsPath: p, path: p, scheme: 'file' } } };
    },
    onDidChangeActiveEnvironmentPath: changed.event,
  };
  const ext: FakeExtension = {
    isActive: false,
    activate: async () => {
      ext.isActive = true;
      ext.exports = { ready: Promise.resolve(), environments };
      return ext.exports;
    },
    exports: undefined,
  };
  return {
    ext,
    asked,
    choose(next: string) {
      current = next;
      changed.fire({ id: next, path: next, resource: undefined });
    },
  };
}
