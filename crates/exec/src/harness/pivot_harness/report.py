"""A task process's report to its zygote: one JSON object written to a pipe at the end.

The task's process runs model code, so what it writes here is not evidence of anything by
itself: a pass is checked against the problem's twin by the runner. The zygote reads the
report as plain data and treats anything else on the pipe as a failed run."""

import json

from .protocol import write_all

REPORT_CAP = 32 << 20


def send(fd, end, details=(), passed=(), skipped=(), line=None):
    """`end`: "pass", "fail" or "timeout"; `details`: [test, traceback] pairs in the
    evaluator's order; `passed` / `skipped`: test names seen to succeed / skip; `line`:
    where a HumanEval program's `check` failed (1-based line of the test source)."""
    body = {"end": end, "details": [list(d) for d in details], "passed": list(passed),
            "skipped": list(skipped), "line": line}
    write_all(fd, json.dumps(body).encode("utf-8", "surrogatepass"))


def parse(data):
    """The report as a dict, or None when the bytes are not one."""
    if not data:
        return None
    try:
        body = json.loads(data.decode("utf-8", "surrogatepass"))
    except ValueError:
        return None
    if not isinstance(body, dict) or body.get("end") not in ("pass", "fail", "timeout"):
        return None
    details = body.get("details")
    if not isinstance(details, list) or not all(
        isinstance(d, list) and len(d) == 2 and all(isinstance(x, str) for x in d) for d in details
    ):
        return None
    for key in ("passed", "skipped"):
        names = body.get(key)
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
            return None
    line = body.get("line")
    if line is not None and type(line) is not int:
        return None
    return body
