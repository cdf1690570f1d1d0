#!/usr/bin/env bash
# Editor tests, offline, against the real language server:
#  1. VS Code: npm ci, tsc, esbuild bundle, .vsix packaging; then node:test suites: the
#     extension's pure logic, its activation under a stand-in `vscode` module, and the
#     JSON-RPC protocol the extension relies on (vscode-jsonrpc client <-> pivot-lsp).
#  2. Neovim: Debian's nvim headless with tests/editors/nvim/test_pivot.lua (the 0.11+
#     vim.lsp.config/enable path on 0.11+, the vim.lsp.start_client fallback before).
# Installs what it needs (neovim from Debian, the extension's npm packages). The server is
# $PIVOT_LSP_BIN, else target/debug/pivot-lsp (cargo build); when it is missing this
# prints SKIP and exits 0. Extra Neovim binaries to run the plugin test with: $PIVOT_EXTRA_NVIM
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

if ! command -v nvim >/dev/null 2>&1; then
  echo "== installing neovim (Debian)"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq neovim >/dev/null
fi
for tool in node npm nvim; do
  command -v "$tool" >/dev/null 2>&1 || { echo "editors/test.sh: $tool is not installed" >&2; exit 1; }
done

passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== editors/vscode: npm ci, compile, bundle, package"
(
  cd "$here/vscode"
  npm ci --no-audit --no-fund --loglevel=error
  npm run -s compile
  npm run -s bundle -- --log-level=warning
  npx vsce package --no-dependencies --allow-missing-repository --skip-license -o pivot-lsp.vsix >/dev/null
  contents=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' pivot-lsp.vsix)
  case "$contents" in
    *extension/dist/extension.js*) ;;
    *) echo "the .vsix has no extension/dist/extension.js" >&2; exit 1 ;;
  esac
  echo "packaged editors/vscode/pivot-lsp.vsix"
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

run_nvim() {
  local nvim=$1
  echo "== editors/nvim: $("$nvim" --version | head -1) headless"
  set +e
  timeout 300 "$nvim" --headless -u NONE -i NONE -n \
    --cmd "set rtp^=$here/nvim" \
    -c "luafile $repo/tests/editors/nvim/test_pivot.lua" >"$log" 2>&1 </dev/null
  local rc=$?
  set -e
  cat "$log"
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
for extra in ${PIVOT_EXTRA_NVIM:-}; do
  run_nvim "$extra"
done

echo "editors: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
