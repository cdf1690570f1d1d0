// A platform-specific .vsix with the server inside (as rust-analyzer ships): copies the
// pivot-lsp binary to server/pivot-lsp and runs `vsce package --target TARGET`. Installed
// with no settings, the extension starts that binary (pivot.serverPath still overrides).
//
//   node package-platform.js [--server BIN] [--target linux-x64] [-o FILE]
//
// BIN defaults to ../../target/release/pivot-lsp, TARGET to this machine's (VS Code's
// names: linux-x64, linux-arm64, darwin-arm64, ...), FILE to pivot-lsp-TARGET.vsix. Run
// `npm run compile && npm run bundle` first (npm run package:platform does).
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;

function option(names, fallback) {
  for (const name of names) {
    const i = process.argv.indexOf(name);
    if (i >= 0) {
      if (!process.argv[i + 1]) throw new Error(`${name} needs a value`);
      return process.argv[i + 1];
    }
  }
  return fallback;
}

/** VS Code's target name for this machine (`vsce package --target`). */
function thisTarget() {
  const os = { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform];
  const arch = { x64: 'x64', arm64: 'arm64', arm: 'armhf' }[process.arch];
  if (!os || !arch) throw new Error(`no VS Code target for ${process.platform}/${process.arch}: pass --target`);
  return `${os}-${arch}`;
}

function main() {
  const server = path.resolve(option(['--server'], path.join(here, '..', '..', 'target', 'release', 'pivot-lsp')));
  const target = option(['--target'], thisTarget());
  const out = path.resolve(option(['-o', '--out'], `pivot-lsp-${target}.vsix`));
  if (!fs.statSync(server, { throwIfNoEntry: false })?.isFile()) {
    throw new Error(`no server binary at ${server} (cargo build --release, or pass --server BIN)`);
  }
  if (!fs.existsSync(path.join(here, 'dist', 'extension.js'))) {
    throw new Error('no dist/extension.js: run `npm run compile && npm run bundle` first');
  }
  const license = path.join(here, '..', '..', 'LICENSE');
  if (fs.existsSync(license)) fs.copyFileSync(license, path.join(here, 'LICENSE'));
  const dir = path.join(here, 'server');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir);
  const exe = path.join(dir, target.startsWith('win32') ? 'pivot-lsp.exe' : 'pivot-lsp');
  fs.copyFileSync(server, exe);
  fs.chmodSync(exe, 0o755);
  const vsce = path.join(here, 'node_modules', '.bin', 'vsce');
  try {
    execFileSync(vsce, ['package', '--no-dependencies', '--allow-missing-repository', '--target', target, '-o', out],
      { cwd: here, stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    // Not left for a universal `npm run package` to pick up.
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`packaged ${out} (${target}, server: ${server})`);
}

try {
  main();
} catch (e) {
  console.error(`package-platform: ${e.message}`);
  process.exit(1);
}
