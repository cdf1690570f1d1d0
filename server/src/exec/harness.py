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


# ---------------------------------------------------------------------------------------
# Task stdout: BigCodeBench's swallow_io gives the code a StringIO that refuses reads (stdin,
# stdout and stderr are that one object); its text is also copied to the task's output pipe
# (capped) for the feedback and the editor.


class TaskStream(io.StringIO):
    def __init__(self, cap):
        io.StringIO.__init__(self)
        self._left = cap

    def write(self, s):
        n = io.StringIO.write(self, s)
        if self._left > 0:
            b = s[: self._left].encode("utf-8", "replace")[: self._left]
            self._left -= len(b)
            try:
                os.write(1, b)
            except OSError:
                self._left = 0
        return n

    def read(self, *args, **kwargs):
        raise OSError

    readline = readlines = read

    def readable(self, *args, **kwargs):
        return False


class ClosedStdin(io.StringIO):
    """--fix-quirks: stdin at end of file (EOFError from input()), output still refused."""

    def readable(self, *args, **kwargs):
        return True


# ---------------------------------------------------------------------------------------
# Snapshots of what the harness relies on. `take_snapshot` runs in the zygote, before any
# model code; `restore_snapshot` puts back what a task changed and says what that was.

MISSING = object()


def guarded():
    """unittest, json, traceback and builtins: what running and reporting the tests uses."""
    import json.encoder
    import unittest.case
    import unittest.loader
    import unittest.result
    import unittest.suite
    import unittest.util

    classes = [
        unittest.TestCase,
        unittest.TestResult,
        unittest.TestLoader,
        unittest.TestSuite,
        unittest.suite.BaseTestSuite,
        unittest.case._Outcome,
        unittest.SkipTest,
        unittest.mock._patch,
        BaseException,
    ]
    modules = [
        builtins,
        unittest,
        unittest.case,
        unittest.result,
        unittest.loader,
        unittest.suite,
        unittest.util,
        json,
        json.encoder,
        traceback,
        linecache,
    ]
    return classes, modules


def snapshot_of(objs):
    snap = []
    for obj, is_class in objs:
        saved = dict(vars(obj))
        snap.append((obj, is_class, saved, tuple(saved), tuple(saved.values())))
    return snap


def take_snapshot():
    classes, modules = guarded()
    return snapshot_of([(c, True) for c in classes] + [(m, False) for m in modules])


def restore_snapshot(
    snap, vars=vars, setattr=setattr, delattr=delattr, list=list, len=len, all=all, map=map, is_=is_,
    isinstance=isinstance, ModuleType=types.ModuleType, modules=sys.modules,
):
    """Restores every object of `snap`; returns the names that had changed ("module.attr"),
    leaving out submodules a test's own imports added (`import unittest.mock` sets
    `unittest.mock`: a real test needs it)."""
    changed = []
    for obj, is_class, saved, keys, values in snap:
        d = vars(obj)
        # Untouched (the usual case, checked in C): the same keys and values, by identity, in
        # the same order. Identity only: model code's __eq__ is never called.
        if len(d) == len(keys) and all(map(is_, d, keys)) and all(map(is_, d.values(), values)):
            continue
        owner = getattr(obj, "__name__", "?")
        for k in list(d):
            if k not in saved:
                v = d.get(k)
                if (
                    not is_class
                    and isinstance(v, ModuleType)
                    and modules.get(owner + "." + str(k)) is v
                ):
                    continue
                changed.append("%s.%s" % (owner, k))
                try:
                    if is_class:
                        delattr(obj, k)
                    else:
                        del d[k]
                except BaseException:
                    pass
        for k, v in saved.items():
            if d.get(k, MISSING) is not v:
                changed.append("%s.%s" % (owner, k))
                try:
                    if is_class:
                        setattr(obj, k, v)
                    else:
                        d[k] = v
                except BaseException:
                    pass
    return changed


# ---------------------------------------------------------------------------------------
# What the zygote trusts, captured before any model code exists (a fork inherits it).


class Trust:
    """Code objects the harness may believe (unittest's, the harness's own), the folders
    library code lives in, and the pristine unittest state. Objects are kept, not ids, so
    an id can never be reused by a code object the model makes."""

    def __init__(self):
        self.codes = {}  # id -> code object: unittest (mock included), contextlib, harness
        self.roots = ()  # folders of the interpreter's own files (stdlib, site-packages)
        self.snapshot = []
        self.hook_codes = {}
        self.main_thread = _thread.get_ident()

    def add_code(self, code, seen=None):
        stack = [code]
        while stack:
            c = stack.pop()
            if id(c) in self.codes:
                continue
            self.codes[id(c)] = c
            stack.extend(k for k in c.co_consts if type(k) is types.CodeType)

    def add_functions_of(self, obj, depth=0):
        for v in list(vars(obj).values()):
            f = getattr(v, "__func__", v)
            if type(f) is types.FunctionType:
                self.add_code(f.__code__)
            elif isinstance(v, (staticmethod, classmethod)):
                f = v.__func__
                if type(f) is types.FunctionType:
                    self.add_code(f.__code__)
            elif isinstance(v, property):
                for g in (v.fget, v.fset, v.fdel):
                    if type(g) is types.FunctionType:
                        self.add_code(g.__code__)
            elif type(v) is type and depth < 2 and getattr(v, "__module__", "") == getattr(obj, "__name__", None):
                self.add_functions_of(v, depth + 1)


TRUST = Trust()


def capture_trust():
    import unittest.case, unittest.loader, unittest.result, unittest.suite, unittest.util  # noqa: E401
    import unittest.async_case

    for m in (unittest, unittest.case, unittest.loader, unittest.result, unittest.suite,
              unittest.util, unittest.mock, unittest.async_case, contextlib, functools):
        TRUST.add_functions_of(m)
    for c in (unittest.TestCase, unittest.TestResult, unittest.TestSuite, unittest.suite.BaseTestSuite,
              unittest.TestLoader, unittest.case._Outcome, unittest.mock._patch,
              contextlib._GeneratorContextManager, Body, Recorder):
        TRUST.add_functions_of(c)
    for f in (run_suite, task_unittest, child_task, task_model):
        TRUST.add_code(f.__code__)
    roots = set()
    for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__)] + list(sys.path):
        if p and os.path.isabs(p) and os.path.isdir(p):
            roots.add(os.path.realpath(p).rstrip("/") + "/")
            roots.add(p.rstrip("/") + "/")
    # The task's own folders are never library folders, whatever sys.path says.
    TRUST.roots = tuple(sorted(r for r in roots if r not in ("/", "/tmp/")))
    TRUST.snapshot = take_snapshot()


def is_library_code(code, roots=None):
    fn = code.co_filename
    if type(fn) is not str:
        return False
    if fn.startswith("<frozen "):
        return True
    return fn.startswith(roots if roots is not None else TRUST.roots)


# ---------------------------------------------------------------------------------------
# The guard: the audit hook that decides a unittest task's verdict and sees tampering.
#
# Everything it needs is captured here, in its closure, before model code runs; it calls
# only C functions on values whose exact type it checked, so it never runs model code and
# no model frame ever sits above it (its state is reachable through its own frame only).


REPORT_MAGIC = b"PVR1"


def make_guard(res_fd, sec_fd, module_codes, test_codes, mode):
    """Installs the audit hook. `module_codes`/`test_codes`: dicts id -> code object of the
    solution's and of the tests' compiled code (the tests' are trusted, the solution's not).
    `mode`: "unittest" (the hook decides the verdict) or "values" (the hook only reports
    tampering: the verdict is the tester's)."""
    # The key arrives on its own pipe; it exists only in this closure from now on.
    key = b""
    while len(key) < 32:
        chunk = os.read(sec_fd, 32 - len(key))
        if not chunk:
            break
        key += chunk
    os.close(sec_fd)
    sha256 = hashlib.sha256
    ipad = bytes(b ^ 0x36 for b in key.ljust(64, b"\0"))
    opad = bytes(b ^ 0x5C for b in key.ljust(64, b"\0"))
    del key
    os_write, getpid, get_ident, exit_now = os.write, os.getpid, _thread.get_ident, os._exit
    getframe = sys._getframe
    io_open = io.open
    gc_disable, gc_enable, gc_isenabled = gc.disable, gc.enable, gc.isenabled
    FrameType, CodeType, FunctionType, MethodType = types.FrameType, types.CodeType, types.FunctionType, types.MethodType
    ModuleType = types.ModuleType
    str_, bytes_, int_, type_, len_, isinstance_, id_ = str, bytes, int, type, len, isinstance, id
    trusted_codes = TRUST.codes
    roots = TRUST.roots
    snapshot = TRUST.snapshot
    main_thread = TRUST.main_thread
    owner = getpid()
    BaseTC = unittest.TestCase
    tc_dict = vars(BaseTC)
    call_test_code = tc_dict["_callTestMethod"].__code__
    body_code = Body.__call__.__code__
    loop_code = run_suite.__code__
    main_code = task_unittest.__code__
    model_code = task_model.__code__
    recorder_cls = Recorder
    recorder_methods = frozenset(k for c in Recorder.__mro__ for k, v in vars(c).items() if callable(v))
    ModuleWriters = frozenset((id(c) for c in vars(unittest.mock._patch).values()
                               if type(c) is FunctionType for c in [c.__code__]))
    mock_base = unittest.mock.NonCallableMock
    tc_callables = frozenset(k for k, v in tc_dict.items() if callable(v) or isinstance(v, (staticmethod, classmethod)))

    st = {
        # 0 set-up, 1 solution, 2 test source, 3 tests, 4 finished; a value task's model
        # process runs model code from the start.
        "phase": 1 if mode == "values" else 0,
        "seq": 0,
        "tamper": [],
        "tamper_seen": set(),
        "loop": None,
        "recorder": None,
        "tests": {},  # name -> the validated test function
        "classes": [],  # (class, name, function) entries that must not change
        "order": [],
        "started": [],
        "current": None,
        "done": set(),
        "ok_other": set(),  # genuine skips and expected failures (not failures, as unittest)
        "failures": [],
        "errors": [],
        "crash": None,
        "dead": False,
    }
    busy = set()

    def mac(body):
        return sha256(opad + sha256(ipad + body).digest()).digest()

    def record(kind, fields):
        if st["dead"]:
            return
        parts = [int_.to_bytes(st["seq"], 8, "big"), kind]
        for f in fields:
            b = f.encode("utf-8", "surrogatepass") if type_(f) is str_ else b"?"
            parts.append(int_.to_bytes(len_(b), 4, "big"))
            parts.append(b)
        body = b"".join(parts)
        st["seq"] += 1
        msg = REPORT_MAGIC + int_.to_bytes(len_(body), 8, "big") + body + mac(body)
        view = memoryview(msg)
        try:
            while view:
                n = os_write(res_fd, view)
                view = view[n:]
        except OSError:
            st["dead"] = True

    def tamper(what):
        """Reports and ends the task at once: the signed record is out before any more model
        code runs, so nothing the code does next (with what it reached) can take it back."""
        record(b"T", [what])
        exit_now(75)

    def code_kind(code):
        """'test' | 'harness' | 'library' | 'untrusted' (the solution's, or made at run time)."""
        i = id_(code)
        if test_codes.get(i) is code:
            return "test"
        if trusted_codes.get(i) is code:
            return "harness"
        fn = code.co_filename
        if type_(fn) is str_ and (fn.startswith("<frozen ") or fn.startswith(roots)):
            return "library"
        return "untrusted"

    def untrusted_caller(depth, through=None):
        """Whether the code that made this request is the model's: the frame `depth` levels
        out (the caller of the audited operation), past the frames of `through` (a library
        folder whose functions only forward the request, e.g. ctypes' wrappers)."""
        frame = getframe(depth)
        n = 0
        while through is not None and frame is not None and n < 50:
            fn = frame.f_code.co_filename
            if type_(fn) is not str_ or not fn.startswith(through):
                break
            frame = frame.f_back
            n += 1
        return frame is not None and code_kind(frame.f_code) == "untrusted"

    def chain_to_loop(frame):
        """Every frame from `frame` out to the registered test loop is unittest's, the tests'
        or the harness's; no model frame, no other thread's."""
        loop = st["loop"]
        n = 0
        while frame is not None and n < 200:
            if frame is loop:
                return True
            k = code_kind(frame.f_code)
            if k not in ("test", "harness"):
                return False
            frame = frame.f_back
            n += 1
        return False

    def is_hook_frame(f):
        return type_(f) is FrameType and id_(f.f_code) in TRUST.hook_codes

    def pristine(exempt_mocks):
        """unittest, json, traceback and builtins as the zygote had them, the test methods as
        the test source made them, the recorder as the harness made it."""
        bad = []
        for obj, is_class, saved, keys, values in snapshot:
            d = obj.__dict__ if is_class else vars(obj)
            if len_(d) == len_(keys) and all(map(is_, d, keys)) and all(map(is_, d.values(), values)):
                continue
            for k, v in saved.items():
                now = d.get(k, MISSING)
                if now is v:
                    continue
                if not (callable(v) or isinstance_(v, (staticmethod, classmethod, property))):
                    continue
                if exempt_mocks and isinstance_(now, mock_base):
                    continue
                bad.append("%s.%s" % (getattr(obj, "__name__", "?"), k))
        for cls, name, fn in st["classes"]:
            if cls.__dict__.get(name, MISSING) is not fn:
                bad.append("test method %s" % name)
        rec = st["recorder"]
        if rec is not None:
            if type_(rec) is not recorder_cls:
                bad.append("the test result object")
            else:
                for k in rec.__dict__:
                    if k in recorder_methods:
                        bad.append("the test result object's %s" % k)
        return bad


    mro_of = type.__dict__["__mro__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    mock_file = unittest.mock.__file__
    contextlib_file = contextlib.__file__

    def on_modset(args, caller):
        """A module attribute is written (the module's class routes every write here)."""
        if st["phase"] not in (1, 2, 3):
            return
        module, name = args[0], args[1]
        if type_(name) is not str_ or name[:1] == "_":
            return
        try:
            old = module.__dict__.get(name, MISSING)
        except BaseException:  # noqa: B036
            return
        if old is MISSING or not callable(old) or isinstance_(old, ModuleType):
            return
        # Whose write it is: past mock's and contextlib's frames (a test's @patch is the
        # test's; the same patch started by the solution is the solution's).
        f = caller.f_back
        n = 0
        while f is not None and n < 50 and f.f_code.co_filename in (mock_file, contextlib_file):
            f = f.f_back
            n += 1
        if f is not None and code_kind(f.f_code) == "untrusted":
            tamper("replaced %s.%s" % (getattr(module, "__name__", "?"), name))

    COMPARING = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__",
                 "__contains__", "__float__", "__int__", "__index__", "__abs__", "__sub__", "__round__")

    def own_comparison(t):
        try:
            mro = mro_of(t)
        except BaseException:  # noqa: B036
            return None
        for c in mro:
            if c is object:
                break
            d = dict_of(c)
            generated = "__dataclass_fields__" in d
            for k in COMPARING:
                f = d.get(k)
                if type_(f) is FunctionType and code_kind(f.__code__) == "untrusted":
                    if generated and f.__code__.co_filename == "<string>" and "__create_fn__" in f.__qualname__:
                        continue
                    return "%s.%s" % (getattr(c, "__qualname__", "?"), k)
        return None

    def on_compare(args):
        """An assertion compares values: none may be an object whose comparison the solution
        wrote (an `__eq__` that always answers True passes any assertEqual)."""
        if st["phase"] != 3:
            return
        values = args[0] if args and type_(args[0]) is tuple else ()
        for v in values:
            t = type_(v)
            items = ()
            if t is list or t is tuple or t is set or t is frozenset:
                items = v
            elif t is dict:
                items = v.values()
            for w in (v,) + tuple(items)[:1000]:
                tw = type_(w)
                if tw.__module__ == "builtins" if type_(tw.__dict__.get("__module__", "")) is str_ else False:
                    continue
                what = own_comparison(tw)
                if what is not None:
                    tamper("an assertion compared an object whose %s the solution defines" % what)

    def on_pivot(event, args, caller):
        if event == "pivot.suspect" and mode != "values":
            tamper("the tested code raised the harness's event %s" % event)
            return
        if get_ident() != main_thread:
            tamper("a thread of the tested code raised the harness's event %s" % event)
            return
        if event == "pivot.solution":
            if caller.f_code is main_code and st["phase"] == 0:
                st["phase"] = 1
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.tests":
            if caller.f_code is main_code and st["phase"] == 1:
                st["phase"] = 2
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.suite":
            if caller.f_code is not main_code or st["phase"] != 2:
                tamper("the tested code raised the harness's event %s" % event)
                return
            test_cases, suite, recorder = args
            accept_suite(test_cases, suite, recorder)
        elif event == "pivot.loop":
            if caller.f_code is loop_code and st["phase"] == 3 and st["loop"] is None and caller.f_back is not None and caller.f_back.f_code is main_code:
                st["loop"] = caller
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.start":
            if caller.f_code is not trusted_start or not chain_to_loop(caller.f_back):
                tamper("a test was started by the tested code")
                return
            test = args[0]
            name = test_name_of(test)
            if name is None:
                tamper("a test that is not in TestCases was run")
                return
            if name in st["started"]:
                tamper("test %s was run twice" % name)
                return
            st["started"].append(name)
            st["current"] = (name, test)
        elif event == "pivot.done":
            if caller.f_code is not body_code or not chain_to_loop(caller.f_back):
                tamper("the tested code claimed a test ran to its end")
                return
            cur = st["current"]
            m = args[0]
            if cur is None or type_(m) is not MethodType:
                tamper("a test ran outside the test run")
                return
            name, test = cur
            fn = st["tests"].get(name)
            if m.__func__ is not fn or m.__self__ is not test:
                tamper("test %s ran something other than its own method" % name)
                return
            bad = pristine(True)
            if bad:
                tamper("replaced while test %s ran: %s" % (name, ", ".join(bad[:8])))
                return
            st["done"].add(name)
        elif event == "pivot.stop":
            if caller.f_code is not trusted_stop:
                tamper("the tested code raised the harness's event %s" % event)
                return
            bad = pristine(True)
            if bad:
                tamper("replaced while the tests ran: %s" % ", ".join(bad[:8]))
            st["current"] = None
        elif event == "pivot.fail":
            kind, key, text = args
            if type_(key) is not str_ or type_(text) is not str_:
                tamper("a failure record that is not text")
                return
            (st["failures"] if kind == "failure" else st["errors"]).append((key, text))
        elif event == "pivot.skip":
            cur = st["current"]
            if caller.f_code not in (trusted_skip, trusted_xfail) or cur is None or not chain_to_loop(caller.f_back) or not genuine_skip(caller):
                tamper("a test was skipped by the tested code")
                return
            st["ok_other"].add(cur[0])
        elif event == "pivot.changed":
            if caller.f_code is main_code and st["phase"] in (2, 3) and type_(args[0]) is list:
                tamper("replaced before the tests ran: %s" % ", ".join(str_(x) for x in args[0][:8]))
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.suspect":
            if caller.f_code is model_code and type_(args[0]) is str_:
                tamper(args[0])
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.crash":
            if caller.f_code is main_code and st["phase"] < 4:
                st["crash"] = args[0] if type_(args[0]) is str_ else "?"
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.finish":
            if caller.f_code is not main_code or st["phase"] == 4:
                tamper("the tested code raised the harness's event %s" % event)
                return
            finish(args[0])
        else:
            tamper("the tested code raised an unknown harness event %s" % event)

    def test_name_of(test):
        for name, t in st["instances"]:
            if t is test:
                return name
        return None

    def accept_suite(test_cases, suite, recorder):
        """The tests are the test source's: TestCases and every class it inherits from are
        unittest's or the test source's, and each test method's code (under decorators such
        as mock's @patch, whose wrappers are library code) is the test source's."""
        if type_(test_cases) is not type_ and type_(type_(test_cases)) is not type_:
            tamper("TestCases is not a plain class")
            return
        meta = type_(test_cases)
        if meta is not type_ and code_kind_of_class(meta) == "untrusted":
            tamper("TestCases has a metaclass from the tested code")
            return
        for c in test_cases.__mro__:
            if c is object or c is BaseTC or c in trusted_bases:
                continue
            if code_kind_of_class(c) == "untrusted":
                tamper("TestCases inherits from %s, a class of the tested code" % c.__name__)
                return
        if type_(suite) is not unittest.TestSuite or type_(recorder) is not recorder_cls:
            tamper("the test suite is not the harness's")
            return
        instances = []
        for t in list(suite._tests):
            if not isinstance_(t, test_cases):
                tamper("a test in the suite is not a TestCases test")
                return
            name = t.__dict__.get("_testMethodName")
            if type_(name) is not str_:
                tamper("a test without a method name")
                return
            instances.append((name, t))
        tests = {}
        for name, t in instances:
            owner_cls, fn = None, None
            for c in test_cases.__mro__:
                v = c.__dict__.get(name, MISSING)
                if v is not MISSING:
                    owner_cls, fn = c, v
                    break
            inner = fn
            depth = 0
            while type_(inner) is FunctionType and depth < 32:
                k = code_kind(inner.__code__)
                if k == "test":
                    break
                if k != "library" and k != "harness":
                    inner = None
                    break
                inner = inner.__dict__.get("__wrapped__")
                depth += 1
            if type_(inner) is not FunctionType or code_kind(inner.__code__) != "test":
                tamper("test %s does not come from the test source" % name)
                return
            tests[name] = fn
            st["classes"].append((owner_cls, name, fn))
        st["tests"] = tests
        st["instances"] = instances
        st["order"] = [n for n, _ in instances]
        st["recorder"] = recorder
        st["phase"] = 3

    def code_kind_of_class(c):
        """'untrusted' when any function defined in the class body is the model's."""
        try:
            d = c.__dict__
        except BaseException:
            return "untrusted"
        for v in list(d.values()):
            f = v
            if isinstance_(v, (staticmethod, classmethod)):
                f = v.__func__
            if type_(f) is FunctionType and code_kind(f.__code__) == "untrusted":
                return "untrusted"
        if test_defined_class(c):
            return "test"
        return "library" if c.__module__ != MODULE_NAME else "unknown"

    def test_defined_class(c):
        for v in c.__dict__.values():
            f = v.__func__ if isinstance_(v, (staticmethod, classmethod)) else v
            if type_(f) is FunctionType and code_kind(f.__code__) == "test":
                return True
        return False

    def genuine_skip(caller):
        """A skip counts as unittest counts it only when no frame of the model raised it."""
        f = caller.f_back
        n = 0
        while f is not None and n < 50:
            e = f.f_locals.get("e") if f.f_code.co_name == "testPartExecutor" else None
            if isinstance_(e, unittest.SkipTest):
                tb = e.__traceback__
                while tb is not None:
                    if code_kind(tb.tb_frame.f_code) == "untrusted":
                        return False
                    tb = tb.tb_next
                return True
            f = f.f_back
            n += 1
        return True

    def finish(recorder):
        st["phase"] = 4
        details = []
        if st["crash"] is not None:
            details.append(("ALL", st["crash"]))
            status = "fail"
        elif not st["tests"] and not st["order"]:
            status = "fail"
        else:
            for key, text in st["failures"] + st["errors"]:
                details.append((key, text))
            status = "pass"
            for name in st["order"]:
                ran = name in st["started"]
                ok = name in st["done"] or name in st["ok_other"]
                failed_here = any(k == name or k.startswith(name + " ") for k, _ in details)
                if not ran:
                    tamper("test %s never ran (the test run was stopped)" % name)
                elif not ok and not failed_here:
                    tamper("test %s ended without running to its end or reporting a failure" % name)
            if details:
                status = "fail"
            if type_(recorder) is recorder_cls:
                if len_(recorder.failures) + len_(recorder.errors) < len_(st["failures"]) + len_(st["errors"]):
                    tamper("the test result object was modified: failures were removed")
                for n in list(recorder.passed):
                    if n not in st["done"] and n not in st["ok_other"]:
                        tamper("the test result object was modified: a test was marked passed")
                        break
            passed = [n for n in st["order"] if (n in st["done"] or n in st["ok_other"])]
        for key, text in details:
            record(b"D", [key if type_(key) is str_ else "?", cap_text(text)])
        if st["crash"] is None:
            for n in passed:
                record(b"P", [n])
        record(b"E", [status])

    def hook(event, args):
        if event not in watched:
            return
        tid = get_ident()
        if tid in busy:
            return
        busy.add(tid)
        was = gc_isenabled()
        gc_disable()
        try:
            if getpid() != owner:
                # A fork of the task (multiprocessing, os.fork): it has no channel and no say.
                return
            if event == "pivot.modset":
                on_modset(args, getframe(1))
            elif event == "pivot.compare":
                on_compare(args)
            elif event[:6] == "pivot.":
                on_pivot(event, args, getframe(1))
            else:
                on_event(event, args)
        except BaseException as e:  # noqa: B036 - fail closed
            tamper("the harness's guard failed on %s: %s" % (event, type_(e).__name__))
        finally:
            if was:
                gc_enable()
            busy.discard(tid)

    def on_event(event, args):
        if event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents"):
            # Libraries use them for their own objects (pandas, matplotlib): only the
            # model's own calls count.
            if untrusted_caller(3):
                tamper("walked the garbage collector's objects (%s)" % event)
            return None
        if event == "sys._current_frames":
            tamper("read other threads' frames (sys._current_frames)")
            return event
        if event in ("sys.settrace", "sys.setprofile"):
            # The event carries no argument: any call by the model's code counts.
            if untrusted_caller(3):
                tamper("installed a trace or profile function (%s)" % event)
            return None
        if event == "sys._getframe":
            if args and is_hook_frame(args[0]):
                tamper("reached the harness's guard through its frame")
                return event
            return None
        if event == "object.__getattr__":
            obj, name = args[0], args[1]
            if name in ("tb_frame", "gi_frame", "cr_frame", "ag_frame"):
                f = getattr(obj, name, None)
                if is_hook_frame(f):
                    tamper("reached the harness's guard through a frame")
                    return event
            return None
        if event == "code.__new__":
            if untrusted_caller(3):
                tamper("built a code object at run time (CodeType / code.replace)")
                return event
            return None
        if event == "function.__new__":
            code = args[0] if args else None
            if type_(code) is CodeType and code_kind(code) == "harness":
                tamper("made a function of the harness's code")
                return event
            return None
        if event in ("object.__setattr__", "object.__delattr__"):
            obj, name = args[0], args[1]
            if name in ("__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__"):
                if type_(obj) is FunctionType and code_kind(obj.__code__) != "untrusted" and untrusted_caller(3):
                    tamper("rewrote the function %s.%s" % (getattr(obj, "__qualname__", "?"), name))
                    return event
            elif name == "__class__":
                if isinstance_(obj, ModuleType) and type_(obj).__name__ == "GuardedModule" and untrusted_caller(3):
                    tamper("changed the class of the module %s" % getattr(obj, "__name__", "?"))
                    return event
            return None
        if event in ("ctypes.dlsym", "ctypes.cdata", "ctypes.cdata/buffer", "ctypes.addressof",
                     "ctypes.string_at", "ctypes.wstring_at", "ctypes.dlsym/handle"):
            if untrusted_caller(3, ctypes_dir):
                tamper("accessed memory or C functions through ctypes (%s)" % event)
                return event
            return None
        if event == "ctypes.dlopen":
            if args and args[0] is None and untrusted_caller(3, ctypes_dir):
                tamper("opened the interpreter's own symbols through ctypes")
                return event
            return None
        if event == "open":
            p = args[0] if args else None
            if type_(p) is bytes_:
                p = p.decode("utf-8", "replace")
            if type_(p) is str_ and p.startswith("/proc/"):
                parts = p.split("/")
                if parts[-1] in ("mem", "pagemap") or (len_(parts) > 3 and parts[3] == "mem"):
                    tamper("opened process memory (%s)" % p)
                    return event
            return None
        if event == "marshal.loads":
            if untrusted_caller(3):
                tamper("loaded a code object from bytes (marshal.loads)")
            return None
        if event == "compile":
            # Code compiled under a library's file name would pass for that library's code.
            # CPython itself compiles pieces of real files (to point at them in tracebacks),
            # so text that is in the named file is fine.
            src = args[0] if args else None
            fn = args[1] if len_(args) > 1 else None
            if type_(fn) is bytes_:
                fn = fn.decode("utf-8", "replace")
            if type_(fn) is str_ and fn.startswith(roots) and untrusted_caller(3):
                if type_(src) is bytes_:
                    src = src.decode("utf-8", "replace")
                try:
                    with io_open(fn, encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                except OSError:
                    text = ""
                if type_(src) is not str_ or src not in text:
                    tamper("compiled code under the name of a library file (%s)" % fn)
            return None
        if event == "pivot.modset":
            return None
        return None

    trusted_bases = ()
    ctypes_dir = os.path.dirname(sys.modules["ctypes"].__file__) + "/" if "ctypes" in sys.modules else "\0"
    trusted_start = Recorder.startTest.__code__
    trusted_stop = Recorder.stopTest.__code__
    trusted_skip = Recorder.addSkip.__code__
    trusted_xfail = Recorder.addExpectedFailure.__code__
    st["instances"] = []
    watched = frozenset((
        "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
        "sys.settrace", "sys.setprofile", "sys._getframe", "object.__getattr__", "code.__new__",
        "function.__new__", "object.__setattr__", "object.__delattr__", "ctypes.dlsym",
        "ctypes.cdata", "ctypes.cdata/buffer", "ctypes.addressof", "ctypes.string_at",
        "ctypes.wstring_at", "ctypes.dlsym/handle", "ctypes.dlopen", "open", "marshal.loads",
        "compile", "pivot.modset", "pivot.compare",
    ) + (
        ("pivot.solution", "pivot.tests", "pivot.suite", "pivot.loop", "pivot.start", "pivot.done",
         "pivot.stop", "pivot.fail", "pivot.skip", "pivot.crash", "pivot.finish", "pivot.changed")
        if mode == "unittest" else ("pivot.suspect",)
    ))
    for f in (hook, on_event, on_pivot, on_modset, on_compare, own_comparison, record, tamper, finish, pristine, accept_suite, mac, code_kind,
              chain_to_loop, is_hook_frame, untrusted_caller, genuine_skip, test_name_of,
              code_kind_of_class, test_defined_class):
        TRUST.hook_codes[id(f.__code__)] = f.__code__

    def close_in_fork():
        try:
            os.close(res_fd)
        except OSError:
            pass

    os.register_at_fork(after_in_child=close_in_fork)
    sys.addaudithook(hook)


# ---------------------------------------------------------------------------------------
# Running a unittest task in-process (BigCodeBench's shape), with the guard deciding.


class Body:
    """What unittest calls as the test method: the real (validated) method, then a signal to
    the guard that it returned normally. The guard checks that the signal comes from this
    code, called by unittest on behalf of the harness's test loop, for the test that runs."""

    __slots__ = ("method", "__unittest_skip__", "__unittest_skip_why__", "__unittest_expecting_failure__")

    def __init__(self, method):
        self.method = method
        for a in ("__unittest_skip__", "__unittest_skip_why__", "__unittest_expecting_failure__"):
            v = getattr(method, a, MISSING)
            if v is not MISSING:
                setattr(self, a, v)

    def __call__(self):
        m = self.method
        m()
        sys.audit("pivot.done", m)


class Recorder(unittest.TestResult):
    """unittest.TestResult as BigCodeBench's evaluator uses it (failures, then errors; a skip
    is not a failure), telling the guard each test's start, end and failures."""

    def __init__(self):
        unittest.TestResult.__init__(self)
        self.passed = []

    def startTest(self, test):
        sys.audit("pivot.start", test)
        unittest.TestResult.startTest(self, test)

    def stopTest(self, test):
        unittest.TestResult.stopTest(self, test)
        sys.audit("pivot.stop", test)

    def addSuccess(self, test):
        unittest.TestResult.addSuccess(self, test)
        self.passed.append(getattr(test, "_testMethodName", "?"))

    def addFailure(self, test, err):
        unittest.TestResult.addFailure(self, test, err)
        sys.audit("pivot.fail", "failure", str(test.id()).split(".")[-1], self.failures[-1][1])

    def addError(self, test, err):
        unittest.TestResult.addError(self, test, err)
        sys.audit("pivot.fail", "error", str(test.id()).split(".")[-1], self.errors[-1][1])

    def addSubTest(self, test, subtest, err):
        nf, ne = len(self.failures), len(self.errors)
        unittest.TestResult.addSubTest(self, test, subtest, err)
        if len(self.failures) > nf:
            sys.audit("pivot.fail", "failure", str(subtest.id()).split(".")[-1], self.failures[-1][1])
        elif len(self.errors) > ne:
            sys.audit("pivot.fail", "error", str(subtest.id()).split(".")[-1], self.errors[-1][1])

    def addSkip(self, test, reason):
        unittest.TestResult.addSkip(self, test, reason)
        sys.audit("pivot.skip", test)

    def addExpectedFailure(self, test, err):
        unittest.TestResult.addExpectedFailure(self, test, err)
        sys.audit("pivot.skip", test)


def on_alarm(signum, frame):
    raise TimeoutException("Timed out!")


def run_suite(suite, recorder, alarm):
    """The test loop: the guard registers this frame as the one every test runs under."""
    sys.audit("pivot.loop")
    if alarm:
        # BigCodeBench's time_limit: around the whole test run, raising in the running test.
        signal.setitimer(signal.ITIMER_REAL, alarm)
        SIGNAL_REAL.get("signal", signal.signal)(signal.SIGALRM, on_alarm)
    try:
        suite.run(recorder)
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)


def new_module():
    module = types.ModuleType(MODULE_NAME)
    # What BigCodeBench's evaluator gives the module (unsafe_execute).
    module.__dict__.update(
        {
            "__builtins__": builtins,
            "__file__": MODULE_FILE,
            "__package__": None,
            "__doc__": None,
            "sys": sys,
            "os": os,
            "environ": os.environ,
        }
    )
    return module


def codes_of(code):
    out = {}
    stack = [code]
    while stack:
        c = stack.pop()
        if id(c) in out:
            continue
        out[id(c)] = c
        stack.extend(k for k in c.co_consts if type(k) is types.CodeType)
    return out


def compile_parts(solution, test):
    """(solution code, tests code) compiled apart, the tests' lines numbered as in
    `solution + "\\n" + test` (BigCodeBench compiles that one text): the test methods can then
    be told from the solution's by the code object they hold, not by a line number. On a
    syntax error, the error BigCodeBench's one compile gives."""
    try:
        sol = compile(solution, MODULE_FILE, "exec", dont_inherit=True)
        tst = compile(
            "\n" * (python_lines(solution) + 1) + test,
            MODULE_FILE,
            "exec",
            flags=sol.co_flags & FUTURE_FLAGS,
            dont_inherit=True,
        )
        return sol, tst, None
    except BaseException:  # noqa: B036 - the message comes from the combined compile
        pass
    try:
        compile(solution + "\n" + test, MODULE_FILE, "exec", dont_inherit=True)
    except BaseException as e:  # noqa: B036
        return None, None, cap_text(error_text(e))
    return None, None, "the solution's text runs on into the tests (an unclosed string or bracket)"


def task_unittest(req, res_fd, sec_fd, quirks):
    """Runs the solution and its unittest tests in this process; the guard decides."""
    solution, test = req["solution"], req["test"]
    sol_code, test_code, syntax = compile_parts(solution, test)
    make_guard(res_fd, sec_fd, codes_of(sol_code) if sol_code else {},
               codes_of(test_code) if test_code else {}, "unittest")
    if syntax is not None:
        sys.audit("pivot.crash", syntax)
        sys.audit("pivot.finish", None)
        return
    module = new_module()
    env = enter_task_env(quirks, int(req.get("output_cap", 65536)))
    sys.audit("pivot.solution")
    try:
        exec(sol_code, module.__dict__)
    except BaseException as e:  # noqa: B036 - SystemExit from the code is a failure too
        sys.audit("pivot.crash", cap_text(error_text(e)))
        sys.audit("pivot.finish", None)
        return
    changed = restore_snapshot(TRUST.snapshot) + MODULES.replaced(env[1])
    for name in GUARDED_MODULE_NAMES:
        if sys.modules.get(name) is not GUARDED_MODULES[name]:
            changed.append("sys.modules[%r]" % name)
            sys.modules[name] = GUARDED_MODULES[name]
    sys.audit("pivot.tests")
    if changed:
        sys.audit("pivot.changed", changed)
    try:
        exec(test_code, module.__dict__)
        sys.modules[MODULE_NAME] = module
        test_cases = getattr(module, "TestCases")
        suite = unittest.TestLoader().loadTestsFromTestCase(test_cases)
        recorder = Recorder()
        for t in list(suite._tests):
            name = t._testMethodName
            object.__setattr__(t, name, Body(getattr(t, name)))
        sys.audit("pivot.suite", test_cases, suite, recorder)
        run_suite(suite, recorder, req.get("alarm"))
    except BaseException as e:  # noqa: B036
        sys.audit("pivot.crash", cap_text(error_text(e)))
        sys.audit("pivot.finish", None)
        return
    finally:
        leave_task_env(env)
    replaced = MODULES.replaced(env[1])
    if replaced:
        sys.audit("pivot.changed", replaced)
    sys.audit("pivot.finish", recorder)


GUARDED_MODULE_NAMES = ("unittest", "unittest.case", "unittest.result", "unittest.loader", "unittest.suite",
                        "unittest.util", "unittest.mock", "json", "traceback", "linecache", "builtins")
GUARDED_MODULES = {}


# ---------------------------------------------------------------------------------------
# The task's environment as BigCodeBench's evaluator makes it (safe_environment, swallow_io,
# reliability_guard): with `quirks`, its guard's interceptions, printed messages included,
# since tests see them (a patched stdout, `subprocess` returning b"" for commands with "ps").


def enter_task_env(quirks, cap):
    stream = TaskStream(cap)
    saved = (sys.stdout, sys.stderr, sys.stdin)
    sys.stdout = sys.stderr = stream
    sys.stdin = stream if quirks else ClosedStdin()
    replaced = evaluator_guard() if quirks else set()
    return saved, replaced


def leave_task_env(env):
    # The task process ends right after; nothing needs undoing but the streams, which the
    # report no longer uses.
    pass


def evaluator_guard():
    """BigCodeBench's safe_environment and swallow_subprocess_output, in their order: the
    code sees `subprocess.Popen` as a function, `os.kill` refusing processes it did not start
    through subprocess, `os.system`/`subprocess.*` with "kill" in the command doing nothing,
    `subprocess.check_output` of a command containing "ps" returning b"", exec refused."""
    real = {
        "kill": os.kill, "killpg": os.killpg, "system": os.system, "popen": os.popen,
        "execv": os.execv, "execvp": os.execvp, "execvpe": os.execvpe,
        "call": subprocess.call, "check_output": subprocess.check_output,
        "run": subprocess.run, "Popen": subprocess.Popen,
    }
    me = os.getpid()
    my_group = os.getpgid(me)
    started = []

    def kill(pid, sig):
        try:
            os.getpgid(pid)
            if pid == me or pid in started:
                print(f"Allowed to kill PID {pid} with signal {sig}")
                real["kill"](pid, sig)
            else:
                print(f"Prevented attempt to kill PID {pid} with signal {sig}")
        except ProcessLookupError:
            print(f"Process {pid} does not exist.")

    def killpg(pgid, sig):
        if pgid == my_group or pgid in {os.getpgid(p) for p in started}:
            print(f"Allowed to kill PGID {pgid} with signal {sig}")
            real["killpg"](pgid, sig)
        else:
            print(f"Prevented attempt to kill PGID {pgid} with signal {sig}")

    def system(command):
        print(f"Intercepted system command: {command}")
        if "kill" in command or "killall" in command:
            return 0
        return real["system"](command)

    def call(command, *args, **kwargs):
        print(f"Intercepted subprocess call: {command}")
        if "kill" in command or "killall" in command:
            return 0
        return real["call"](command, *args, **kwargs)

    def check_output(command, *args, **kwargs):
        print(f"Intercepted command: {command}")
        if "ps" in command:
            return b""
        return real["check_output"](command, *args, **kwargs)

    def run(*args, **kwargs):
        print(f"Intercepted subprocess run command: {args}")
        if "kill" in args[0] or "killall" in args[0]:
            return subprocess.CompletedProcess(args, 0, b"", b"")
        return real["run"](*args, **kwargs)

    class SafePopen(real["Popen"]):
        def __init__(self, *args, **kwargs):
            print(f"Intercepted Popen command: {args}")
            kwargs["preexec_fn"] = os.setsid
            super().__init__(*args, **kwargs)
            started.append(self.pid)

        def communicate(self, *args, **kwargs):
            try:
                return super().communicate(*args, **kwargs)
            except subprocess.TimeoutExpired:
                print("Timeout expired, intercepted and returning None")
                return None, None

        def kill(self):
            print(f"Intercepted kill call for PID {self.pid}")
            kill(self.pid, signal.SIGTERM)

        def terminate(self):
            print(f"Intercepted terminate call for PID {self.pid}")
            kill(self.pid, signal.SIGTERM)

    def popen(command):
        print(f"Intercepted os.popen command: {command}")
        if "kill" in command or "killall" in command:
            return os.popen("echo Intercepted")
        return real["popen"](command)

    def refuse_exec(*args, **kwargs):
        print(f"Intercepted exec command: {args}")

    os.kill, os.killpg, os.system, os.popen = kill, killpg, system, popen
    os.execv = os.execvp = os.execvpe = refuse_exec
    subprocess.call, subprocess.check_output, subprocess.run = call, check_output, run
    subprocess.Popen = SafePopen
    # swallow_subprocess_output, entered inside: Popen and run become functions that pipe
    # the output of commands that did not ask to capture it.
    inner_popen, inner_run = subprocess.Popen, subprocess.run

    def popen_patch(*args, **kwargs):
        if "capture_output" in kwargs and kwargs["capture_output"]:
            kwargs.pop("stdout", None)
            kwargs.pop("stderr", None)
        else:
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        return inner_popen(*args, **kwargs)

    def run_patch(*args, **kwargs):
        if "capture_output" in kwargs and kwargs["capture_output"]:
            kwargs.pop("stdout", None)
            kwargs.pop("stderr", None)
        else:
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        return inner_run(*args, **kwargs)

    subprocess.Popen, subprocess.run = popen_patch, run_patch
    return {"os." + k for k in ("kill", "killpg", "system", "popen", "execv", "execvp", "execvpe")} | {
        "subprocess." + k for k in ("call", "check_output", "run", "Popen")}


# ---------------------------------------------------------------------------------------
# Value tests (HumanEval): the tester calls the model's function in another process and
# compares plain values. The codec below carries only exact builtin types both ways.

VALUE_CAP = 64 << 20


class Opaque:
    """What the tester gets for a value that is not plain data: equal to nothing, no truth
    value, no arithmetic, so an assertion on it fails."""

    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what

    def __bool__(self):
        raise TypeError("the function returned %s, which is not a plain value the tests can compare" % self.what)

    def __repr__(self):
        return "<%s>" % self.what

    __hash__ = object.__hash__


def encode_value(v, depth=0):
    if depth > 200:
        raise ValueError("nested too deeply")
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return {"i": str(v)} if abs(v) > 2**53 else v
    if t is float:
        return {"f": repr(v)}
    if t is list:
        return {"l": [encode_value(x, depth + 1) for x in v]}
    if t is tuple:
        return {"t": [encode_value(x, depth + 1) for x in v]}
    if t is dict:
        return {"d": [[encode_value(k, depth + 1), encode_value(x, depth + 1)] for k, x in v.items()]}
    if t is set or t is frozenset:
        return {"s" if t is set else "fs": [encode_value(x, depth + 1) for x in v]}
    if t is bytes:
        return {"b": v.hex()}
    if t is complex:
        return {"c": [repr(v.real), repr(v.imag)]}
    raise TypeError(t)


def decode_value(v, depth=0):
    if depth > 200:
        raise ValueError("nested too deeply")
    t = type(v)
    if v is None or t is bool or t is str or t is int:
        return v
    if t is not dict or len(v) != 1:
        raise ValueError("not a value")
    (tag, x), = v.items()
    if tag == "i":
        return int(x)
    if tag == "f":
        return float(x)
    if tag == "l":
        return [decode_value(e, depth + 1) for e in x]
    if tag == "t":
        return tuple(decode_value(e, depth + 1) for e in x)
    if tag == "d":
        return {decode_value(k, depth + 1): decode_value(e, depth + 1) for k, e in x}
    if tag == "s":
        return {decode_value(e, depth + 1) for e in x}
    if tag == "fs":
        return frozenset(decode_value(e, depth + 1) for e in x)
    if tag == "b":
        return bytes.fromhex(x)
    if tag == "c":
        return complex(float(x[0]), float(x[1]))
    if tag == "opaque":
        return Opaque(str(x))
    raise ValueError("unknown tag")


def plain(v, depth=0):
    """A value of the model's function as plain data: library subclasses of plain types
    (numpy's float64, bool_, int64) become the plain type; anything else is opaque."""
    if depth > 200:
        raise ValueError("nested too deeply")
    t = type(v)
    if t in (type(None), bool, int, float, str, bytes, complex):
        return v
    if t in (list, tuple, set, frozenset):
        return t(plain(x, depth + 1) for x in v)
    if t is dict:
        return {plain(k, depth + 1): plain(x, depth + 1) for k, x in v.items()}
    mod = getattr(t, "__module__", "")
    if mod == MODULE_NAME or mod == "builtins":
        raise TypeError(t)
    import numbers

    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, float) or isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, str):
        return str(v)
    raise TypeError(t)


def describe_type(t):
    mod = getattr(t, "__module__", "?")
    name = getattr(t, "__qualname__", getattr(t, "__name__", "?"))
    return name if mod in ("builtins", MODULE_NAME) else "%s.%s" % (mod, name)


COMPARISON_DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__",
                      "__len__", "__hash__", "__float__", "__int__", "__index__", "__abs__", "__sub__")


def own_comparison(t):
    """The comparison or conversion methods the solution defined on a type of its own."""
    out = []
    for c in getattr(t, "__mro__", ()):
        if c is object:
            break
        for k in COMPARISON_DUNDERS:
            f = c.__dict__.get(k)
            if type(f) is types.FunctionType and f.__code__.co_filename == MODULE_FILE:
                out.append(k)
    return sorted(set(out))


def send_frame(fd, obj):
    data = json.dumps(obj).encode("utf-8", "surrogatepass")
    write_all(fd, len(data).to_bytes(8, "big") + data)


def read_exact(fd, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, min(1 << 20, n - len(buf)))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def read_frame(fd, cap=VALUE_CAP):
    n = int.from_bytes(read_exact(fd, 8), "big")
    if n > cap:
        raise ValueError("message too large")
    return json.loads(read_exact(fd, n).decode("utf-8", "surrogatepass"))


def task_model(req, call_r, reply_w, res_fd, sec_fd):
    """The model's side of a value task: runs the solution, then serves calls of its entry
    point. Nothing it sends is trusted by the tester but plain values."""
    solution = req["solution"]
    try:
        code = compile(solution, MODULE_FILE, "exec", dont_inherit=True)
    except BaseException as e:  # noqa: B036
        make_guard(res_fd, sec_fd, {}, {}, "values")
        send_frame(reply_w, {"syntax": cap_text(error_text(e))})
        return
    make_guard(res_fd, sec_fd, codes_of(code), {}, "values")
    module = new_module()
    enter_task_env(False, int(req.get("output_cap", 65536)))
    try:
        exec(code, module.__dict__)
    except BaseException as e:  # noqa: B036
        send_frame(reply_w, {"crash": cap_text(error_text(e))})
        return
    sys.modules[MODULE_NAME] = module
    send_frame(reply_w, {"ready": True})
    entry = req["entry_point"]
    while True:
        try:
            call = read_frame(call_r)
        except (EOFError, OSError, ValueError):
            return
        fn = module.__dict__.get(entry, MISSING)
        try:
            if fn is MISSING:
                raise NameError("name %r is not defined" % entry)
            args = decode_value(call["args"])
            kwargs = decode_value(call["kwargs"])
            value = fn(*args, **kwargs)
        except BaseException as e:  # noqa: B036
            send_frame(reply_w, {"raise": remote_error(e)})
            continue
        try:
            reply = {"value": encode_value(plain(value))}
        except BaseException:  # noqa: B036
            t = type(value)
            what = describe_type(t)
            own = own_comparison(t)
            if own:
                sys.audit("pivot.suspect", "returned an object whose %s its own class %s defines" % ("/".join(own), what))
            reply = {"value": {"opaque": "an object of type " + what}}
        send_frame(reply_w, reply)


def remote_error(e):
    """The exception as the tester will raise it, with the traceback text of the model's
    frames (the serving loop's own frame left out)."""
    t = type(e)
    tb = e.__traceback__
    tb = tb.tb_next if tb is not None else None
    try:
        text = "".join(traceback.format_exception(t, e, tb))
    except BaseException:  # noqa: B036
        text = "Traceback (most recent call last):\n%s\n" % describe_type(t)
    return {
        "type": getattr(t, "__name__", "Exception"),
        "builtin": getattr(builtins, getattr(t, "__name__", ""), None) is t,
        "module": getattr(t, "__module__", ""),
        "qualname": getattr(t, "__qualname__", ""),
        "message": cap_text(error_text(e)),
        "text": cap_text(text),
    }


class RemoteCall:
    """The entry point as the tests see it: a call to the model's process."""

    def __init__(self, name, call_w, reply_r):
        self.name, self.call_w, self.reply_r = name, call_w, reply_r

    def __call__(self, *args, **kwargs):
        try:
            send_frame(self.call_w, {"args": encode_value(list(args)), "kwargs": encode_value(dict(kwargs))})
        except TypeError:
            raise TypeError("the tests passed a value that is not plain data to %s" % self.name)
        try:
            reply = read_frame(self.reply_r)
        except (EOFError, OSError):
            raise RuntimeError("the process running the solution ended during a call of %s" % self.name) from None
        except ValueError as e:
            raise RuntimeError("the process running the solution sent an unreadable answer: %s" % e) from None
        if "value" in reply:
            try:
                return decode_value(reply["value"])
            except (ValueError, TypeError, KeyError):
                return Opaque("an unreadable value")
        err = reply.get("raise")
        if type(err) is not dict:
            raise RuntimeError("the process running the solution sent an unreadable answer")
        raise remote_exception(err)


def remote_exception(err):
    name = str(err.get("type", "Exception"))
    message = str(err.get("message", ""))
    cls = getattr(builtins, name, None) if err.get("builtin") else None
    if not (isinstance(cls, type) and issubclass(cls, BaseException)) or issubclass(cls, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        cls = type(name, (Exception,), {"__module__": str(err.get("module") or MODULE_NAME), "__qualname__": str(err.get("qualname") or name)})
    try:
        exc = cls(message)
    except BaseException:  # noqa: B036
        exc = RuntimeError(message)
    exc._pivot_remote = str(err.get("text", ""))
    return exc


def local_frames(tb):
    """The tester's frames of an error from the model's process, as traceback prints them:
    unittest's leading frames and the call through the pipe left out."""
    while tb is not None and "__unittest" in tb.tb_frame.f_globals and tb.tb_frame.f_code is not RemoteCall.__call__.__code__:
        tb = tb.tb_next
    frames = []
    while tb is not None:
        if tb.tb_frame.f_code is not RemoteCall.__call__.__code__:
            frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return "".join(traceback.StackSummary.extract(frames).format())


def splice_traceback(frames, remote_text):
    """The text one process would have printed: the tester's frames (the test method's line)
    followed by the model's frames, then the model's exception line(s) and its chain."""
    header = "Traceback (most recent call last):\n"
    at = remote_text.rfind(header)
    if at < 0:
        return header + frames + remote_text
    at += len(header)
    return remote_text[:at] + frames + remote_text[at:]


class TesterResult(unittest.TestResult):
    """The tester's result: unittest's, with the model's traceback spliced into errors that
    came from a call of the model's function."""

    def __init__(self):
        unittest.TestResult.__init__(self)
        self.passed = []

    def addSuccess(self, test):
        unittest.TestResult.addSuccess(self, test)
        self.passed.append(test._testMethodName)

    def _exc_info_to_string(self, err, test):
        remote = getattr(err[1], "_pivot_remote", None)
        if remote:
            return splice_traceback(local_frames(err[2]), remote)
        return unittest.TestResult._exc_info_to_string(self, err, test)


def task_tester(req, call_w, reply_r, report_fd):
    """The tests' side of a value task: never runs model code. The problem's prompt (its
    helper functions, e.g. HumanEval/32's `poly`) and tests run here; the entry point is a
    call to the model's process."""
    solution, test, prompt, entry = req["solution"], req["test"], req.get("prompt", ""), req["entry_point"]
    module = new_module()
    details, passed = [], []
    try:
        first = read_frame(reply_r)
    except (EOFError, OSError, ValueError):
        first = {"crash": "the process running the solution ended before the tests started"}
    if "syntax" in first:
        try:
            compile(solution + "\n" + test, MODULE_FILE, "exec", dont_inherit=True)
            msg = first["syntax"]
        except BaseException as e:  # noqa: B036 - BigCodeBench's one compile gives the message
            msg = cap_text(error_text(e))
        report_values(report_fd, "fail", [("ALL", str(msg))], [])
        return
    if "crash" in first:
        report_values(report_fd, "fail", [("ALL", str(first["crash"]))], [])
        return
    try:
        if prompt:
            exec(compile(prompt, "<prompt>", "exec", dont_inherit=True), module.__dict__)
        module.__dict__[entry] = RemoteCall(entry, call_w, reply_r)
        code = compile("\n" * (python_lines(solution) + 1) + test, MODULE_FILE, "exec", dont_inherit=True)
        exec(code, module.__dict__)
        sys.modules[MODULE_NAME] = module
        suite = unittest.TestLoader().loadTestsFromTestCase(module.TestCases)
        names = [t._testMethodName for t in suite._tests]
        result = TesterResult()
        suite.run(result)
    except BaseException as e:  # noqa: B036
        report_values(report_fd, "fail", [("ALL", cap_text(error_text(e)))], [])
        return
    for t, trace in result.failures + result.errors:
        details.append((str(t.id()).split(".")[-1], cap_text(trace)))
    for t, reason in result.skipped:
        details.append((t._testMethodName, "SkipTest: %s (a skipped test is a failure)" % reason))
    for n in names:
        if n not in result.passed and not any(k == n for k, _ in details):
            details.append((n, "the test never reported success"))
    if not names:
        details.append(("ALL", "no tests found in TestCases"))
    status = "pass" if not details else "fail"
    report_values(report_fd, status, details, [n for n in names if n in result.passed])


def report_values(fd, status, details, passed):
    write_all(fd, json.dumps({"status": status, "details": details, "passed": passed}).encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------------------------
# The zygote: one per worker, forks the processes of each task.


def write_all(fd, data):
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        view = view[n:]


def proto_send(obj):
    # Text from the task may hold lone surrogates, which JSON readers refuse: U+FFFD instead.
    text = json.dumps(obj, ensure_ascii=False) + "\n"
    write_all(PROTO_FD, text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8"))


def child_setup(req, work, home, tmp, out_fd, keep, drop):
    """A task process's start: its own descriptors (stdin /dev/null, stdout and stderr the
    output pipe, `keep` moved to unguessable numbers; nothing else), no privileges, limits,
    its folders and a clean environment. Returns the new numbers of `keep`."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    moved = []
    base = 300
    for fd in keep:
        rnd = os.urandom(2)
        new = base + (rnd[0] << 2 | rnd[1] >> 6)
        os.dup2(fd, new, inheritable=False)
        moved.append(new)
        base = new + 1
    high = sorted(moved)
    lo = 3
    for fd in high:
        os.closerange(lo, fd)
        lo = fd + 1
    os.closerange(lo, 1 << 16)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if drop is not None:
        uid, gid = drop
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        if os.getuid() != uid or os.geteuid() != uid or os.getgroups():
            os._exit(71)
    set_limits(req)
    os.chdir(work)
    env = os.environ
    env["HOME"] = home
    if tmp is None:
        env.pop("TMPDIR", None)
        tempfile.tempdir = None
    else:
        env["TMPDIR"] = tmp
        tempfile.tempdir = tmp
    return moved


def set_limits(req):
    def lim(kind, value):
        if value is None or value <= 0:
            return
        try:
            soft, hard = resource.getrlimit(kind)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(kind, (value, value))
        except (ValueError, OSError):
            pass

    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    lim(resource.RLIMIT_CPU, int(req.get("cpu", 0)))
    lim(resource.RLIMIT_AS, int(req.get("memory", 0)))
    lim(resource.RLIMIT_FSIZE, int(req.get("fsize", 0)))
    lim(resource.RLIMIT_NOFILE, int(req.get("nofile", 0)))
    nproc = int(req.get("nproc", 0))
    lim(resource.RLIMIT_NPROC, nproc + NPROC_BASE if nproc > 0 else 0)


def zygote_env():
    """The environment every task shares, set before any fork: as BigCodeBench's
    reliability_guard sets it (time zone UTC, one BLAS thread, TensorFlow quiet, no
    faulthandler, no exit()/quit()), matplotlib without an interactive backend."""
    env = os.environ
    env["OMP_NUM_THREADS"] = "1"
    env["OPENBLAS_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env["TF_ENABLE_ONEDNN_OPTS"] = "0"
    env["MPLBACKEND"] = "Agg"
    env["TZ"] = "UTC"
    time.tzset()
    try:
        import faulthandler

        faulthandler.disable()
    except Exception:
        pass
    builtins.exit = None
    builtins.quit = None


def child_task(req, dirs, fds, drop, role):
    """The body of a forked task process; never returns."""
    code = 0
    try:
        os.setpgid(0, fds.get("pgid", 0))
    except OSError:
        pass
    try:
        work, home, tmp = dirs
        if role == "unittest":
            res, sec = child_setup(req, work, home, tmp, fds["out"], [fds["res"], fds["sec"]], drop)
            task_unittest(req, res, sec, bool(req.get("quirks")))
        elif role == "model":
            call_r, reply_w, res, sec = child_setup(
                req, work, home, tmp, fds["out"], [fds["call_r"], fds["reply_w"], fds["res"], fds["sec"]], drop)
            task_model(req, call_r, reply_w, res, sec)
        else:
            call_w, reply_r, report = child_setup(
                req, work, home, tmp, fds["out"], [fds["call_w"], fds["reply_r"], fds["report"]], drop)
            task_tester(req, call_w, reply_r, report)
    except BaseException:  # noqa: B036 - the report tells; a harness error must not hang
        code = 70
        try:
            os.write(2, ("[pivot-lsp harness error in the %s process]\n%s" % (role, traceback.format_exc())).encode("utf-8", "replace"))
        except BaseException:  # noqa: B036
            pass
    os._exit(code)


def children_of_self():
    me = os.getpid()
    path = "/proc/%d/task/%d/children" % (me, me)
    try:
        with open(path) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        pass
    kids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                st = f.read()
            if int(st.rsplit(")", 1)[1].split()[1]) == me:
                kids.append(int(name))
        except (OSError, ValueError, IndexError):
            pass
    return kids


def reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_everything(pgids):
    """Kills the task's process groups and every other descendant (we are a subreaper, so
    daemons and setsid'ed grandchildren come back to us as children)."""
    for g in pgids:
        try:
            os.killpg(g, signal.SIGKILL)
        except OSError:
            pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reap_all()
        kids = children_of_self()
        if not kids:
            return True
        for k in kids:
            for fn in (os.killpg, os.kill):
                try:
                    fn(k, signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(0.001)
    return False


def signal_name(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "signal %d" % sig


def task_dirs(root, drop, private_tmp):
    """The task's working folder (as BigCodeBench's, a fresh `tmpXXXXXXXX` in the temp
    folder), HOME, and TMPDIR (None under the sandbox: /tmp itself, private and emptied
    after every task; else a folder of the task's own)."""
    work = tempfile.mkdtemp(dir=root)
    home = os.path.join(root, ".home-" + os.path.basename(work)[3:])
    os.mkdir(home, 0o700)
    made = [work, home]
    tmp = None
    if not private_tmp:
        tmp = os.path.join(root, ".tmp-" + os.path.basename(work)[3:])
        os.mkdir(tmp, 0o700)
        made.append(tmp)
    if drop is not None:
        for d in made:
            os.chown(d, drop[0], drop[1])
    return (work, home, tmp), made


def run_task(req, root, drop, keep):
    begun = time.monotonic()
    (dirs, made) = task_dirs(root, drop, WIPE)
    values = req.get("mode") == "values"
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()  # the guard's signed records (unittest: the verdict too)
    sec_r, sec_w = os.pipe()  # the guard's key, written after the fork
    # A decoy: a report signed with this (a forged one, from a frame of this function that
    # the forked task inherits) is tampering; the real key never exists before the fork.
    secret = os.urandom(24).hex().encode()  # noqa: F841 - read by forgers, on purpose
    pipes = [out_r, out_w, res_r, res_w, sec_r, sec_w]
    pids = []
    report_r = None
    started = time.monotonic()
    if values:
        call_r, call_w = os.pipe()
        reply_r, reply_w = os.pipe()
        report_r, report_w = os.pipe()
        pipes += [call_r, call_w, reply_r, reply_w, report_r, report_w]
        model = os.fork()
        if model == 0:
            for fd in (out_r, res_r, sec_w, call_w, reply_r, report_r, report_w):
                os.close(fd)
            child_task(req, dirs, {"out": out_w, "call_r": call_r, "reply_w": reply_w, "res": res_w, "sec": sec_r}, drop, "model")
        pids.append(model)
        tester = os.fork()
        if tester == 0:
            for fd in (out_r, res_r, res_w, sec_r, sec_w, call_r, reply_w, report_r):
                os.close(fd)
            child_task(req, dirs, {"out": out_w, "call_w": call_w, "reply_r": reply_r, "report": report_w, "pgid": model}, drop, "tester")
        pids.append(tester)
        for fd in (call_r, call_w, reply_r, reply_w, report_w):
            os.close(fd)
        main = tester
    else:
        main = os.fork()
        if main == 0:
            for fd in (out_r, res_r, sec_w):
                os.close(fd)
            child_task(req, dirs, {"out": out_w, "res": res_w, "sec": sec_r}, drop, "unittest")
        pids.append(main)
    key = os.urandom(32)
    os.write(sec_w, key)
    for fd in (out_w, res_w, sec_r, sec_w):
        os.close(fd)
    for p in pids:
        try:
            os.setpgid(p, pids[0])
        except OSError:
            pass
    timeout = float(req.get("timeout", 10))
    caps = {out_r: int(req.get("output_cap", 65536)), res_r: int(req.get("result_cap", 32 << 20))}
    bufs = {out_r: bytearray(), res_r: bytearray()}
    if report_r is not None:
        caps[report_r] = 32 << 20
        bufs[report_r] = bytearray()
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(main)
        except OSError:
            pidfd = None
    status = None
    timed_out = False
    open_fds = list(bufs)
    while True:
        left = started + timeout - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        watch = open_fds + ([pidfd] if pidfd is not None else [])
        wait = left if pidfd is not None else min(left, 0.005)
        try:
            ready, _, _ = select.select(watch, [], [], wait)
        except InterruptedError:
            continue
        for fd in ready:
            if fd == pidfd:
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                open_fds.remove(fd)
            elif len(bufs[fd]) < caps[fd]:
                bufs[fd] += chunk[: caps[fd] - len(bufs[fd])]
        if pidfd is not None and pidfd in ready:
            break
        if pidfd is None:
            done, st = os.waitpid(main, os.WNOHANG)
            if done:
                status = st
                break
    ended = time.monotonic()
    elapsed = ended - started
    if timed_out:
        for p in pids:
            for fn in (os.kill, os.killpg):
                try:
                    fn(p, signal.SIGKILL)
                except OSError:
                    pass
    cpu = 0.0
    if status is None:
        _, status, usage = os.wait4(main, 0)
        cpu += usage.ru_utime + usage.ru_stime
    # The model's process of a value task may still run: it has nothing more to say.
    for p in pids:
        if p != main:
            try:
                os.kill(p, signal.SIGKILL)
                _, _, usage = os.wait4(p, 0)
                cpu += usage.ru_utime + usage.ru_stime
            except OSError:
                pass
    clean = kill_everything(pids)
    for fd in list(open_fds):
        os.set_blocking(fd, False)
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            if len(bufs[fd]) < caps[fd]:
                bufs[fd] += chunk[: caps[fd] - len(bufs[fd])]
    for fd in bufs:
        os.close(fd)
    if pidfd is not None:
        os.close(pidfd)
    cleaned = remove_tree_all(made)
    if WIPE:
        # Private tmpfs scratch: nothing a task left anywhere in it reaches the next task;
        # the interpreter's paths bound into it are kept.
        for base in (root, "/dev/shm"):
            cleaned = wipe(base, keep) and cleaned
    records = parse_records(bytes(bufs[res_r]), key)
    report = None
    if report_r is not None:
        try:
            report = json.loads(bytes(bufs[report_r]).decode("utf-8", "surrogatepass")) if bufs[report_r] else None
        except ValueError:
            report = {"status": "fail", "details": [["ALL", "the tester's report was unreadable"]], "passed": []}
    reply = classify(status, timed_out, records, report, timeout, values, bytes(bufs[res_r]).find(secret) >= 0,
                     bool(req.get("quirks")))
    reply["output"] = bytes(bufs[out_r]).decode("utf-8", "replace")
    reply["elapsed"] = elapsed
    reply["clean"] = clean
    reply["scratch_clean"] = cleaned
    reply["cpu"] = cpu
    reply["setup"] = started - begun
    reply["teardown"] = time.monotonic() - ended
    return reply


def parse_records(data, key):
    """The guard's records: (kind, fields) each, or None when anything on the channel is not
    a record signed with this task's key (the tested code wrote there)."""
    ipad = bytes(b ^ 0x36 for b in key.ljust(64, b"\0"))
    opad = bytes(b ^ 0x5C for b in key.ljust(64, b"\0"))
    out = []
    i = 0
    seq = 0
    n = len(data)
    while i < n:
        if data[i : i + 4] != REPORT_MAGIC or i + 12 > n:
            return None
        size = int.from_bytes(data[i + 4 : i + 12], "big")
        body = data[i + 12 : i + 12 + size]
        sig = data[i + 12 + size : i + 12 + size + 32]
        if len(body) != size or len(sig) != 32:
            return None
        if hashlib.sha256(opad + hashlib.sha256(ipad + body).digest()).digest() != sig:
            return None
        if int.from_bytes(body[:8], "big") != seq:
            return None
        seq += 1
        kind = body[8:9]
        fields = []
        j = 9
        while j < len(body):
            ln = int.from_bytes(body[j : j + 4], "big")
            fields.append(body[j + 4 : j + 4 + ln].decode("utf-8", "surrogatepass"))
            j += 4 + ln
        out.append((kind, fields))
        i += 12 + size + 32
    return out


def classify(status, timed_out, records, report, timeout, values, decoy, quirks):
    tamper = []
    if decoy:
        tamper.append("forged a test report with a secret read from the harness's memory")
    if records is None:
        tamper.append("wrote to the harness's report channel")
        records = []
    end = None
    details, passed = [], []
    for kind, fields in records:
        if kind == b"T":
            tamper.append(fields[0] if fields else "?")
        elif kind == b"D" and len(fields) == 2:
            details.append(fields)
        elif kind == b"P" and fields:
            passed.append(fields[0])
        elif kind == b"E" and fields:
            end = fields[0]
    if values:
        if report is not None and end is None:
            end = report.get("status", "fail")
            details = report.get("details", [])
            passed = report.get("passed", [])
    if timed_out:
        base = {"status": "timeout", "details": [], "note": "wall time limit of %gs" % timeout}
    elif end is not None:
        base = {"status": "pass" if end == "pass" else "fail", "details": details, "passed": passed, "note": ""}
    elif quirks and not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS):
        # BigCodeBench's evaluator calls every task whose process ended without a report a
        # timeout (its status stays unknown), whatever ended it.
        if os.WIFSIGNALED(status):
            why = "the test process was killed by %s before reporting results" % signal_name(os.WTERMSIG(status))
        else:
            why = "the test process exited with code %d before reporting results" % os.WEXITSTATUS(status)
        base = {"status": "timeout", "details": [], "note": why + " (BigCodeBench's evaluator reports that as a timeout)"}
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            base = {"status": "timeout", "details": [], "note": "CPU time limit"}
        else:
            msg = "The test process was killed by %s before reporting results" % signal_name(sig)
            if sig == signal.SIGXFSZ:
                msg += " (file size limit)"
            if sig == signal.SIGSYS:
                msg += " (a forbidden system call: ptrace or another process's memory)"
                tamper.append("used a system call that reaches other processes (ptrace, process_vm_*)")
            base = {"status": "fail", "details": [["ALL", msg]], "note": msg}
    else:
        msg = "The test process exited with code %d before reporting results" % os.WEXITSTATUS(status)
        base = {"status": "fail", "details": [["ALL", msg]], "note": msg}
    if tamper:
        base["status"] = "tampered"
        base["tamper"] = tamper
        base["details"] = [["ALL", "The tested code tampered with the tests or the harness: " + "; ".join(tamper)]]
        base["note"] = ""
    return base


def remove_tree_all(paths):
    ok = True
    for p in paths:
        ok = remove_tree(p) and ok
    return ok


def remove_tree(path):
    """Removes a folder the task may have filled with anything (a 3,000-deep chain, mode-0
    folders, symlinks anywhere): by descriptors, never following a link, without recursion.
    False when something could not be removed (the zygote is then replaced)."""
    parent, name = os.path.split(path)
    try:
        pfd = os.open(parent or "/", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        return remove_entry(pfd, name)
    finally:
        os.close(pfd)


MAX_OPEN = 200


def remove_entry(pfd, name):
    try:
        st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not stat_mod.S_ISDIR(st.st_mode):
        try:
            os.unlink(name, dir_fd=pfd)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False
    # Depth-first with an explicit stack of (descriptor, name in parent); at most MAX_OPEN
    # descriptors: deeper trees are given up (and the zygote replaced).
    stack = [(pfd, name, None)]
    ok = True
    while stack:
        parent_fd, dname, fd = stack[-1]
        if fd is None:
            fd = open_dir(parent_fd, dname)
            if fd is None or len(stack) > MAX_OPEN:
                if fd is not None:
                    os.close(fd)
                return close_stack(stack[1:], False)
            stack[-1] = (parent_fd, dname, fd)
        descended = False
        try:
            with os.scandir(fd) as it:
                for e in it:
                    try:
                        is_dir = e.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if is_dir:
                        stack.append((fd, e.name, None))
                        descended = True
                        break
                    try:
                        os.unlink(e.name, dir_fd=fd)
                    except FileNotFoundError:
                        pass
                    except OSError:
                        ok = False
        except OSError:
            return close_stack(stack, False)
        if descended:
            continue
        stack.pop()
        os.close(fd)
        try:
            os.rmdir(dname, dir_fd=parent_fd)
        except OSError:
            if not ok:
                return close_stack(stack, False)
            ok = False
            return close_stack(stack, False)
    return ok


def open_dir(parent_fd, name):
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=parent_fd)
    except PermissionError:
        # The task took its own permissions away (mode 0): give them back, then open.
        try:
            os.chmod(name, 0o700, dir_fd=parent_fd, follow_symlinks=False)
        except (OSError, NotImplementedError):
            return None
        try:
            return os.open(name, flags, dir_fd=parent_fd)
        except OSError:
            return None
    except OSError:
        return None


def close_stack(stack, result):
    for _, _, fd in stack:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
    return result


def wipe(base, keep):
    """Empties `base` but for the bound paths in `keep`; False when something stayed."""
    try:
        names = os.listdir(base)
    except OSError:
        return True
    ok = True
    for name in names:
        path = os.path.join(base, name)
        holds = [k for k in keep if k == path or k.startswith(path + "/")]
        if holds:
            if path not in holds and os.path.isdir(path) and not os.path.islink(path):
                ok = wipe(path, holds) and ok
            continue
        ok = remove_tree(path) and ok
    return ok


def probe_drop(uid, gid, paths):
    # Sorted out while still privileged: afterwards an unreadable dir looks like a missing one.
    dirs = [p for p in paths if os.path.isdir(p)]
    files = [p for p in paths if os.path.isfile(p)]
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            for p in dirs:
                os.listdir(p)
            for p in files:
                open(p, "rb").close()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, st = os.waitpid(pid, 0)
    return os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0


def in_private_userns():
    try:
        with open("/proc/self/uid_map") as f:
            return f.read().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


def count_user_tasks(uid):
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                st = os.stat("/proc/" + name)
                if st.st_uid == uid:
                    n += len(os.listdir("/proc/%s/task" % name))
            except OSError:
                pass
    return n


def interpreter_paths():
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__), os.__file__]
    paths += [p for p in sys.path if p and os.path.exists(p)]
    return paths


def harden_process(seccomp_hex):
    """The zygote's own protection, before any task: not dumpable (so no task, whatever its
    uid, can ptrace it or open its /proc/PID/mem), a subreaper (orphans come back to be
    killed), and the seccomp programs the runner generated. Returns (subreaper, why seccomp
    is not installed or "")."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 4, 36, 38, 22
    libc.prctl(PR_SET_DUMPABLE, 0, None, 0, 0)
    subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, None, 0, 0) == 0
    why = ""
    if not seccomp_hex:
        why = "no seccomp filter for this machine"
    else:
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            why = "PR_SET_NO_NEW_PRIVS failed: %s" % os.strerror(ctypes.get_errno())
        for prog_hex in seccomp_hex.split(",") if not why else []:
            prog = bytes.fromhex(prog_hex)

            class SockFprog(ctypes.Structure):
                _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

            buf = ctypes.create_string_buffer(prog, len(prog))
            fprog = SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
            if libc.prctl(PR_SET_SECCOMP, 2, ctypes.cast(ctypes.pointer(fprog), ctypes.c_void_p), 0, 0) != 0:
                why = "seccomp filter refused: %s" % os.strerror(ctypes.get_errno())
                break
    lock_ctypes(ctypes)
    return subreaper, why


def lock_ctypes(ctypes):
    """ctypes stays importable (tasks load libraries with it), but its raw memory functions
    are replaced by ones that report to the guard first, and the addresses they are built
    from are gone, so memory access through ctypes is seen."""
    import _ctypes

    for name in ("memmove", "memset", "cast"):
        real = getattr(ctypes, name)

        def wrapped(*args, _real=real, _name=name, **kwargs):
            sys.audit("ctypes.addressof", "ctypes." + _name)
            return _real(*args, **kwargs)

        wrapped.__name__ = name
        setattr(ctypes, name, wrapped)
    for mod in (ctypes, _ctypes):
        for name in ("_memmove_addr", "_memset_addr", "_string_at_addr", "_wstring_at_addr", "_cast_addr"):
            mod.__dict__.pop(name, None)



# ---------------------------------------------------------------------------------------
# Installed in the zygote, before any model code: what lets the guard see the quieter ways
# of bending a test (they are part of the pristine state every task starts from).


class ModuleState:
    """Every module's attributes as the zygote had them, to find what a solution replaced
    (e.g. `math.isclose = lambda *a, **k: True` at import)."""

    def __init__(self):
        self.items = []

    def capture(self):
        self.items = []
        for name, m in list(sys.modules.items()):
            if type(m) is not types.ModuleType and not isinstance(m, types.ModuleType):
                continue
            try:
                d = m.__dict__
            except BaseException:  # noqa: B036
                continue
            self.items.append((name, m, d, tuple(d), tuple(d.values())))

    def replaced(self, exempt=(), limit=8):
        """'module.attr' for public callables whose value is no longer the zygote's (but for
        `exempt`: what the harness itself replaced, e.g. BigCodeBench's guard)."""
        out = []
        for name, m, d, keys, values in self.items:
            if len(d) == len(keys) and all(map(is_, d, keys)) and all(map(is_, d.values(), values)):
                continue
            for k, v in zip(keys, values):
                if type(k) is not str or k[:1] == "_":
                    continue
                now = d.get(k, MISSING)
                if now is v or not callable(v) or isinstance(now, unittest.mock.NonCallableMock):
                    continue
                if type(v) is types.ModuleType or "%s.%s" % (name, k) in exempt:
                    continue
                out.append("%s.%s" % (name, k))
                if len(out) >= limit:
                    return out
        return out


MODULES = ModuleState()


def guard_modules():
    """Module attribute writes go through the guard (`pivot.modset`), which reports a
    solution replacing a library's function while the tests run (mock's patching by the
    tests is theirs to do). Each module keeps its own class, subclassed."""
    made = {}
    for m in list(sys.modules.values()):
        # Plain modules only: a library's own module class (cryptography's deprecation
        # proxy, lazy loaders) forwards attribute writes and must be left as it is.
        if type(m) is not types.ModuleType:
            continue
        base = type(m)
        cls = made.get(base)
        if cls is None:

            def __setattr__(self, name, value, _base=base):
                sys.audit("pivot.modset", self, name)
                _base.__setattr__(self, name, value)

            def __delattr__(self, name, _base=base):
                sys.audit("pivot.modset", self, name)
                _base.__delattr__(self, name)

            try:
                cls = type(base.__name__, (base,), {"__setattr__": __setattr__, "__delattr__": __delattr__,
                                                    "_pivot_guarded": True, "__module__": base.__module__})
            except TypeError:
                continue
            made[base] = cls
        try:
            m.__class__ = cls
        except TypeError:
            pass
    return made


def guard_assertions():
    """TestCase's assertions tell the guard about the values they compare: an object whose
    comparison the solution defined itself (an `__eq__` that always answers True) must not
    decide a test (`pivot.compare`)."""
    tc = unittest.TestCase
    for name, fn in list(vars(tc).items()):
        if not (name.startswith("assert") or name.startswith("fail")) or type(fn) is not types.FunctionType:
            continue
        if getattr(fn, "_pivot_compare", False):
            continue

        def wrapper(self, *args, _fn=fn, **kwargs):
            sys.audit("pivot.compare", args)
            return _fn(self, *args, **kwargs)

        functools.update_wrapper(wrapper, fn)
        wrapper._pivot_compare = True
        setattr(tc, name, wrapper)


SIGNAL_REAL = {}


def guard_signals():
    """A Python signal handler runs on top of whatever frame the signal interrupted: were
    that the guard's, the handler could read its state. Handlers are wrapped so that a signal
    arriving inside the guard is delivered again once it has returned."""
    import _signal

    real_signal, real_getsignal = _signal.signal, _signal.getsignal
    SIGNAL_REAL["signal"] = real_signal
    handlers = {}
    hook_codes = TRUST.hook_codes
    getpid, kill, getframe = os.getpid, os.kill, sys._getframe

    def make_trampoline(handler):
        def trampoline(signum, frame):
            f, n = frame, 0
            while f is not None and n < 200:
                if id(f.f_code) in hook_codes:
                    kill(getpid(), signum)
                    return None
                f = f.f_back
                n += 1
            return handler(signum, frame)

        return trampoline

    def signal_(signalnum, handler):
        if callable(handler) and not isinstance(handler, int):
            old = real_signal(signalnum, make_trampoline(handler))
        else:
            old = real_signal(signalnum, handler)
        prev = handlers.pop(signalnum, None)
        if callable(handler) and not isinstance(handler, int):
            handlers[signalnum] = handler
        return prev if prev is not None else old

    def getsignal_(signalnum):
        h = handlers.get(signalnum)
        return h if h is not None else real_getsignal(signalnum)

    _signal.signal, _signal.getsignal = signal_, getsignal_
    signal.getsignal = getsignal_
    for f in (signal_, getsignal_, make_trampoline):
        TRUST.add_code(f.__code__)


PRELOADED = set()
IMPORT_COST = {}


def settle():
    """Run in the zygote before forking tasks, after start-up or a pre-import: captures what
    the guard trusts (code objects, the pristine unittest state) and moves every object alive
    now out of the collector's reach (gc.freeze), so a task's collections neither walk nor
    copy the zygote's heap (pandas or sklearn: hundreds of thousands of objects)."""
    guard_modules()
    capture_trust()
    MODULES.capture()
    for name in GUARDED_MODULE_NAMES:
        if name in sys.modules:
            GUARDED_MODULES[name] = sys.modules[name]
    gc.collect()
    gc.freeze()


def imported_names(lines):
    """The modules plain import statements among `lines` name."""
    names = []
    for line in lines:
        try:
            tree = ast.parse(line)
        except SyntaxError:
            continue
        if len(tree.body) != 1:
            continue
        node = tree.body[0]
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names += [node.module + "." + a.name for a in node.names if a.name != "*"]
    return names


MANAGER_COST = []


def evaluator_head_start(lines):
    """Seconds BigCodeBench's evaluator spends in a task's process before it arms its alarm,
    which a warm zygote does not: starting a multiprocessing Manager, importing
    matplotlib.pyplot (its reliability_guard does, for every task) and importing the task's
    libraries cold. Its kill comes `alarm + 1` s after the process starts, so when this
    exceeds a second a hanging test is killed (`timeout`) before the alarm can fail it; the
    runner's kill is brought forward by as much, so the same happens here whatever the
    pre-imports saved. Costs are the zygote's own cold imports, measured once."""
    if not MANAGER_COST:
        t = time.monotonic()
        try:
            import multiprocessing

            m = multiprocessing.Manager()
            MANAGER_COST.append(time.monotonic() - t)
            m.shutdown()
        except BaseException:  # noqa: B036
            MANAGER_COST.append(0.0)
    names = set(imported_names(lines)) | {"matplotlib", "matplotlib.pyplot"}
    return MANAGER_COST[0] + sum(IMPORT_COST.get(n, 0.0) for n in names)


def preload(lines, root, keep):
    """Imports, in the zygote, the modules a task's own import lines name (the problem's
    `code_prompt` and tests, never model code), so that every later fork starts with them
    loaded. Only plain import statements are honoured; a module that fails to import is left
    to the task, which then reports the error itself."""
    import importlib

    names = imported_names(lines)
    fresh = False
    for name in names:
        if name in PRELOADED:
            continue
        PRELOADED.add(name)
        fresh = True
        if name.split(".")[0] == "matplotlib" and "matplotlib" not in PRELOADED:
            PRELOADED.add("matplotlib")
            # A config and font cache shared by every task, warmed here once, then read-only.
            mpl = os.path.join(root, ".matplotlib")
            os.makedirs(mpl, exist_ok=True)
            keep.append(mpl)
            os.environ["MPLCONFIGDIR"] = mpl
        t = time.monotonic()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if name.split(".")[0] == "matplotlib":
                    import matplotlib

                    matplotlib.use("Agg")
                    import matplotlib.pyplot  # noqa: F401 - builds the font cache
                importlib.import_module(name)
        except BaseException:  # noqa: B036 - a broken import is the task's to report
            pass
        IMPORT_COST[name] = time.monotonic() - t
    if "MPLCONFIGDIR" in os.environ:
        for base, dirs, files in os.walk(os.environ["MPLCONFIGDIR"]):
            for n in dirs + files:
                os.chmod(os.path.join(base, n), 0o755 if n in dirs else 0o644)
        os.chmod(os.environ["MPLCONFIGDIR"], 0o755)
    return fresh


def mode_zygote(root, uid, gid, wipe_root, keep, seccomp_hex):
    global PROTO_FD, WIPE, NPROC_BASE
    WIPE = wipe_root
    # Nothing is imported from the working folder: tasks running as our uid could plant
    # modules there (`-c` puts it first on sys.path).
    sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
    os.chdir("/")
    zygote_env()  # before any pre-import
    PROTO_FD = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stray prints must not corrupt the protocol
    drop = None
    if os.geteuid() == 0:
        # Never root: tasks run as the unprivileged user, or nothing runs.
        if uid < 0 or not probe_drop(uid, gid, interpreter_paths()):
            proto_send(
                {
                    "error": "tasks would run as root: user %d cannot read the interpreter's files (%s); "
                    "use an interpreter outside private folders such as /root, or the bwrap sandbox, "
                    "which binds them" % (uid, sys.prefix)
                }
            )
            return
        drop = (uid, gid)
    if wipe_root:
        # The private /tmp is the tasks' temp folder, as /tmp is BigCodeBench's.
        os.chmod(root, 0o1777)
    if drop is None and not in_private_userns():
        NPROC_BASE = count_user_tasks(os.getuid())
    subreaper, seccomp = harden_process(seccomp_hex)
    guard_assertions()
    guard_signals()
    # The zygote's own garbage between tasks is small and short-lived; a task (a fork)
    # switches the collector back on for the model's code.
    settle()
    gc.disable()
    proto_send(
        {
            "ready": True,
            "pid": os.getpid(),
            "drop": drop is not None,
            "root": os.geteuid() == 0,
            "subreaper": subreaper,
            "seccomp": seccomp or "",
            "python": sys.version.split()[0],
        }
    )
    stdin = sys.stdin.buffer
    served = 0
    while True:
        line = stdin.readline()
        if not line:
            return
        try:
            req = json.loads(line)
        except ValueError:
            proto_send({"error": "bad request"})
            continue
        try:
            preload_time = 0.0
            quirks_alarm = req.get("quirks") and req.get("alarm")
            if quirks_alarm:
                # BigCodeBench's evaluator imports pyplot in every task (reliability_guard).
                req["preload"] = list(req.get("preload") or []) + ["import matplotlib.pyplot"]
            if req.get("preload"):
                t = time.monotonic()
                if preload(req["preload"], root, keep):
                    settle()
                preload_time = time.monotonic() - t
            if quirks_alarm:
                head = evaluator_head_start(req["preload"])
                req["timeout"] = max(float(req["timeout"]) - head, 1.0)
                req["head_start"] = head
            reply = run_task(req, root, drop, keep)
            reply["preload"] = preload_time
        except Exception as e:  # a harness bug must not take the zygote down
            reply = {"status": "fail", "details": [["ALL", "harness error: %s\n%s" % (e, traceback.format_exc())]],
                     "note": "", "scratch_clean": False}
        reply["id"] = req.get("id")
        proto_send(reply)
        served += 1
        if served % 64 == 0:
            gc.collect()  # the collector is off in the zygote; frozen objects are skipped


def mode_once():
    """The speed baseline: one request run in this very process, no sandbox, no guard."""
    global PROTO_FD
    req = json.loads(sys.stdin.read())
    PROTO_FD = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    module = new_module()
    details = []
    try:
        exec(compile(req["solution"] + "\n" + req["test"], MODULE_FILE, "exec"), module.__dict__)
        sys.modules[MODULE_NAME] = module
        suite = unittest.TestLoader().loadTestsFromTestCase(module.TestCases)
        result = unittest.TestResult()
        suite.run(result)
        for t, trace in result.failures + result.errors:
            details.append((t.id().split(".")[-1], trace))
        ok = result.testsRun > 0 and not details
    except BaseException as e:  # noqa: B036
        details = [("ALL", error_text(e))]
        ok = False
    proto_send({"status": "pass" if ok else "fail", "details": details})
    os._exit(0)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "compile":
        mode_compile()
    elif mode == "zygote":
        mode_zygote(
            sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1", json.loads(sys.argv[6]),
            sys.argv[7] if len(sys.argv) > 7 else "",
        )
    elif mode == "once":
        mode_once()
    elif mode == "probe":
        sys.exit(0 if probe_drop(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]) else 1)
    else:
        sys.stderr.write("unknown mode %r\n" % mode)
        sys.exit(2)


if __name__ == "__main__":
    main()
