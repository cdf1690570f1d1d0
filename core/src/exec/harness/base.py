# Pivot LSP execution harness (embedded in the binary; run as `python3 -c SRC MODE ...`).
#
# Modes:
#   compile              stdin: JSON list of sources; stdout: JSON list of null | traceback text
#   zygote ROOT UID GID WIPE KEEP SECCOMP
#                        serve JSON-line requests on stdin, fork the processes of each task;
#                        task folders go in ROOT; WIPE=1 (a private tmpfs) empties ROOT and
#                        /dev/shm after each, except the bound paths in KEEP (JSON list);
#                        SECCOMP: hex of the seccomp programs the runner generated ("" = none)
#   once                 stdin: one request; run it in this very process (the speed baseline)
#   probe UID GID PATHS  exit 0 if a process dropped to UID can read PATHS
#
# Two ways to decide a verdict (README "Security"):
#
# * Value tests (HumanEval's `check(candidate)`): the model's code runs in one process, the
#   tests in another that never runs model code. The tester calls the candidate through a
#   pipe and gets back plain values (numbers, strings, lists, ...), so what an assertion
#   compares cannot lie, and nothing the model's process does reaches the verdict.
# * unittest tests (BigCodeBench: mocks, files, DataFrames): the assertions must run beside
#   the code. There the verdict is decided by a CPython audit hook (PEP 578; Python code
#   cannot remove it) that the harness installs before any model code: the hook sees each
#   test start, run to its end and fail, checks that every such event comes from the genuine
#   unittest call chain, and signs its report with a key only it holds. The same hook sees
#   the tools of tampering (frame and gc walks to the harness, code objects built at run
#   time, ctypes memory access, /proc/*/mem, trace functions) and reports them at once, so
#   a sample that tampers is reported `tampered`, with what it touched.

import builtins
import gc
import json
import os
import select
import signal
import sys
import time
import traceback
import types
import unittest
import unittest.mock
import _imp
import _thread

import linecache
from operator import is_
import resource
import stat as stat_mod

# Pre-import what tests commonly use so each forked child starts warm.
import bisect, collections, copy, functools, hashlib, heapq, itertools, math  # noqa: E401,F401
import random, re, string, statistics, typing, fractions, decimal, datetime  # noqa: E401,F401
import ast, contextlib, importlib, io, subprocess, tempfile, warnings  # noqa: E401,F401
import __future__

# unittest leaves frames of modules holding this name out of tracebacks: the harness's own
# frames (e.g. the wrapper around each test method) never show in the feedback text.
__unittest = True

PROTO_FD = None  # the zygote's private copy of its stdout (the protocol channel)
# RLIMIT_NPROC counts every process of the user; when tasks share the uid with other
# processes (no uid drop, no private user namespace) the budget is added to their count.
NPROC_BASE = 0
WIPE = False
DETAIL_CAP = 200_000
MODULE_NAME = "__test__"
MODULE_FILE = MODULE_NAME + ".py"
FUTURE_FLAGS = 0
for _f in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _f).compiler_flag


class TimeoutException(Exception):
    """BigCodeBench's alarm exception; named as the evaluator names it, so that the error line
    of a test that ran out of time reads exactly as in BigCodeBench's details."""


TimeoutException.__module__ = "bigcodebench.eval.utils"


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


def mode_compile():
    codes = json.loads(sys.stdin.read())
    out = [compile_feedback(c) for c in codes]
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()


def cap_text(s):
    if len(s) <= DETAIL_CAP:
        return s
    half = DETAIL_CAP // 2
    return s[:half] + "\n...\n" + s[-half:]


def error_text(e):
    try:
        return str(e)
    except BaseException:
        return "<unprintable %s>" % type(e).__name__


def python_lines(text):
    """Lines CPython counts in `text` (\\r\\n, \\r and \\n each end one), so that the tests,
    compiled on their own, keep the line numbers they have in `solution + "\\n" + test`."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


