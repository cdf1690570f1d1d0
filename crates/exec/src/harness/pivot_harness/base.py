"""Constants and small helpers every mode uses."""

import linecache
import traceback

# unittest leaves frames of modules holding this name out of tracebacks: the harness's own
# frames never show in the feedback text.
__unittest = True

DETAIL_CAP = 200_000
MODULE_NAME = "__test__"
MODULE_FILE = MODULE_NAME + ".py"


class TimeoutException(Exception):
    """The evaluators' alarm exception; named as BigCodeBench names it, so that the error line
    of a test that ran out of time reads exactly as in BigCodeBench's details."""


TimeoutException.__module__ = "bigcodebench.eval.utils"


def cap_text(s):
    if len(s) <= DETAIL_CAP:
        return s
    half = DETAIL_CAP // 2
    return s[:half] + "\n...\n" + s[-half:]


def error_text(e):
    try:
        return str(e)
    except BaseException:  # noqa: BLE001 - str() of the code's own exception may raise anything
        return "<unprintable %s>" % type(e).__name__


def python_lines(text):
    """Lines CPython counts in `text` (\\r\\n, \\r and \\n each end one)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def compile_feedback(code):
    # The harness frame mirrors ConvCodeWorld's pot.py: `compile_code` whose line 23 is the call.
    src = "\n" * 20 + (
        "def compile_code(code):\n"
        "    try:\n"
        "        compile(code, 'tmp.py', mode='exec')\n"
        "    except Exception as e:\n"
        "        return traceback.format_exc()\n"
        "    return None\n"
    )
    linecache.cache["pot.py"] = (len(src), None, src.splitlines(True), "pot.py")
    ns = {"traceback": traceback}
    exec(compile(src, "pot.py", "exec"), ns)
    return ns["compile_code"](code)
