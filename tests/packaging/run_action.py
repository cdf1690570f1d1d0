"""Runs the steps of the repository's action.yml (a composite GitHub Action) as a runner would,
as far as a script can: each `run:` step in bash with its `env:` and `working-directory`,
GITHUB_OUTPUT / GITHUB_PATH / RUNNER_TEMP files, `if:` conditions and `${{ }}` expressions
(the subset action.yml uses). A `uses:` step (the code scanning upload) cannot run here: its
condition and `with:` values are evaluated and printed as what would be uploaded.

    python run_action.py ACTION_YML WORKDIR --input NAME=VALUE ... --result FILE

Writes FILE (JSON): per step its id, whether it ran, its exit code, its outputs, and for
`uses:` steps the resolved `with:`; and the action's outputs. Exit code: that of the first
failed step (as the job would fail there), else 0. Needs PyYAML (pre-commit's dependency).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
NAME = re.compile(r"\b(inputs|github|steps\.[A-Za-z0-9_-]+\.outputs)\.([A-Za-z0-9_-]+)")


class Context:
    def __init__(self, inputs, action_path):
        self.inputs = inputs
        self.action_path = action_path
        self.steps = {}
        self.failed = False

    def lookup(self, scope, name):
        if scope == "inputs":
            if name not in self.inputs:
                raise KeyError(f"action.yml uses an undeclared input: {name}")
            return self.inputs[name]
        if scope == "github":
            if name == "action_path":
                return self.action_path
            raise KeyError(f"github.{name} is not provided by this runner")
        step = scope.split(".")[1]
        return self.steps.get(step, {}).get(name, "")

    def evaluate(self, expr):
        """A GitHub expression of the forms action.yml uses: names, 'strings', ==, !=, &&,
        ||, !, always(), success(), failure()."""
        names = []

        def name(m):
            names.append(self.lookup(m.group(1), m.group(2)))
            return f"__v[{len(names) - 1}]"

        py = NAME.sub(name, expr)
        py = py.replace("&&", " and ").replace("||", " or ")
        py = re.sub(r"!(?!=)", " not ", py)
        py = py.replace("always()", "True").replace("success()", "(not __failed)")
        py = py.replace("failure()", "__failed")
        return eval(py, {"__builtins__": {}}, {"__v": names, "True": True, "__failed": self.failed})

    def substitute(self, text):
        return EXPR.sub(lambda m: str(self.evaluate(m.group(1))), str(text))

    def condition(self, cond):
        if cond is None:
            return not self.failed
        cond = str(cond).strip()
        m = EXPR.fullmatch(cond)
        cond = m.group(1) if m else cond
        uses_status = re.search(r"\b(always|failure|success)\(\)", cond)
        value = bool(self.evaluate(cond))
        # Without a status function a condition implies success(), as on GitHub.
        return value if uses_status else value and not self.failed


def read_pairs(path):
    """key=value lines and key<<EOF heredocs of a GITHUB_OUTPUT file."""
    out = {}
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            i += 1
            value = []
            while i < len(lines) and lines[i] != delim:
                value.append(lines[i])
                i += 1
            out[key] = "\n".join(value)
        elif "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("action")
    ap.add_argument("workdir")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--result", required=True)
    a = ap.parse_args()

    action = yaml.safe_load(open(a.action))
    if action["runs"]["using"] != "composite":
        sys.exit("action.yml is not a composite action")
    declared = action.get("inputs", {})
    inputs = {k: str(v.get("default", "")) for k, v in declared.items()}
    for pair in a.input:
        key, value = pair.split("=", 1)
        if key not in declared:
            sys.exit(f"--input {key}: action.yml has no such input")
        inputs[key] = value
    ctx = Context(inputs, os.path.dirname(os.path.abspath(a.action)))

    temp = tempfile.mkdtemp(prefix="pivot-action-")
    path_file = os.path.join(temp, "github_path")
    open(path_file, "w").close()
    env = dict(os.environ)
    env["RUNNER_TEMP"] = temp
    env["GITHUB_WORKSPACE"] = os.path.abspath(a.workdir)
    env["GITHUB_PATH"] = path_file
    first_failure = 0
    report = []
    for n, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", f"step{n}")
        entry = {"id": sid, "name": step.get("name", sid)}
        report.append(entry)
        if not ctx.condition(step.get("if")):
            entry["ran"] = False
            print(f"-- {entry['name']}: skipped")
            continue
        if "uses" in step:
            entry["ran"] = False
            entry["uses"] = step["uses"]
            entry["with"] = {k: ctx.substitute(v) for k, v in (step.get("with") or {}).items()}
            print(f"-- {entry['name']}: would run {step['uses']} with {json.dumps(entry['with'])}")
            continue
        if step.get("shell") != "bash":
            sys.exit(f"step {sid}: only `shell: bash` steps are run here")
        out_file = os.path.join(temp, f"output-{n}")
        open(out_file, "w").close()
        step_env = dict(env)
        step_env["GITHUB_OUTPUT"] = out_file
        for k, v in (step.get("env") or {}).items():
            step_env[k] = ctx.substitute(v)
        # Lines added to GITHUB_PATH by earlier steps go first on PATH.
        added = [p for p in open(path_file).read().splitlines() if p]
        step_env["PATH"] = os.pathsep.join(list(reversed(added)) + [env["PATH"]])
        cwd = os.path.join(os.path.abspath(a.workdir), ctx.substitute(step.get("working-directory", ".")))
        print(f"-- {entry['name']}: bash in {cwd}", flush=True)
        # The script is the YAML text; expressions in it would be substituted by the runner
        # (action.yml keeps them out of scripts, so this finds none to replace).
        script = ctx.substitute(step["run"])
        rc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                            cwd=cwd, env=step_env).returncode
        entry["ran"] = True
        entry["exit_code"] = rc
        entry["outputs"] = read_pairs(out_file)
        ctx.steps[sid] = entry["outputs"]
        if rc != 0 and not ctx.failed:
            ctx.failed = True
            first_failure = rc
    outputs = {k: ctx.substitute(v.get("value", "")) for k, v in (action.get("outputs") or {}).items()}
    json.dump({"steps": report, "outputs": outputs, "failed": ctx.failed}, open(a.result, "w"), indent=2)
    shutil.rmtree(temp, ignore_errors=True)
    return first_failure


if __name__ == "__main__":
    sys.exit(main())
