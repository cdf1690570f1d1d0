"""The zygote's life: pre-imports, settling, and serving requests."""

import ast
import gc
import json
import os
import sys
import time
import traceback
import unittest
import warnings

# Pre-imported so that each forked task starts warm: what tests commonly use.
import bisect, collections, copy, functools, hashlib, heapq, itertools, math  # noqa: E401,F401
import random, re, string, statistics, typing, fractions, decimal, datetime  # noqa: E401,F401
import contextlib, importlib, io, subprocess, tempfile  # noqa: E401,F401
import unittest.mock  # noqa: F401

from . import protocol, task_process, task_run
from .base import MODULE_FILE, error_text
from .hardening import count_user_tasks, harden_process, in_private_userns, interpreter_paths, probe_drop
from .isolation import Plan
from .protocol import Channel
from .task_process import zygote_env
from .task_run import run_task
from .unittest_task import new_module

PRELOADED = set()
IMPORT_COST = {}


def settle():
    """Run in the zygote before forking tasks, after start-up or a pre-import: moves every
    object alive now out of the collector's reach (gc.freeze), so a task's collections
    neither walk nor copy the zygote's heap (pandas or sklearn: hundreds of thousands of
    objects)."""
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


def evaluator_head_start(lines):
    """Seconds BigCodeBench's evaluator spends in a task's process before it arms its alarm,
    which a warm zygote does not: importing matplotlib.pyplot (its reliability_guard does, for
    every task) and the task's libraries cold. Its kill comes `alarm + 1` s after the process
    starts, so when this exceeds a second a hanging test is killed (`timeout`) before the
    alarm can fail it; the runner's kill is brought forward by as much, so the same happens
    here whatever the pre-imports saved. Costs are the zygote's own cold imports, measured
    once in CPU seconds, then stretched by how loaded the machine is now (load_factor), as
    the evaluator's wall time is. (Its Manager is started before the process, so it costs
    the process nothing.)"""
    names = set(imported_names(lines)) | {"matplotlib", "matplotlib.pyplot"}
    # The evaluator's own process imported numpy (`bigcodebench.eval` does) before it forks
    # the task's: that costs the task nothing there.
    names = {n for n in names if n.split(".")[0] not in EVALUATOR_PARENT}
    return sum(IMPORT_COST.get(n, 0.0) for n in names) * load_factor()


def load_factor():
    """How much longer than its CPU time a process's work takes now: the 1-minute load average
    per usable core, at least 1. Neither a wall time measured once (zygotes measure side by
    side at start, with the files cold: twice the evaluator's cost on a quiet CI machine,
    BigCodeBench/254) nor the CPU time alone (half of it while a build ran beside the
    evaluator: BigCodeBench/94 and 360) matched the evaluator's head start on both machines."""
    try:
        cores = len(os.sched_getaffinity(0)) or 1
        return max(1.0, os.getloadavg()[0] / cores)
    except OSError:
        return 1.0


def warm_font_cache(mpl):
    """Builds matplotlib's font cache in `mpl` from a child interpreter, so that the zygote's
    timed import of pyplot costs what it costs the evaluator's tasks: they find the cache
    its first task built (their HOME lasts the run), and building it takes as long as the
    import itself. Best effort: without it the import is timed with the build."""
    code = "import matplotlib; matplotlib.use('Agg'); import matplotlib.font_manager"
    env = dict(os.environ, MPLCONFIGDIR=mpl)
    try:
        subprocess.run([sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    except (OSError, subprocess.SubprocessError):
        pass


# Third-party packages the evaluator's process has loaded before it forks a task's.
EVALUATOR_PARENT = {"numpy"}


def preload(lines, root, keep):
    """Imports, in the zygote, the modules a task's own import lines name (the problem's
    `code_prompt` and tests, never model code), so that every later fork starts with them
    loaded. Only plain import statements are honoured; a module that fails to import is left
    to the task, which then reports the error itself."""
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
            warm_font_cache(mpl)
        # CPU time, not wall time: the cost as the evaluator's task pays it on a core of its
        # own. Zygotes start side by side (one per worker) and read the libraries cold, which
        # doubled the wall time on a loaded CI machine and took a hang the evaluator fails
        # near its kill for a timeout (BigCodeBench/254).
        t = time.process_time()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if name.split(".")[0] == "matplotlib":
                    import matplotlib

                    matplotlib.use("Agg")
                    import matplotlib.pyplot  # noqa: F401 - builds the font cache
                importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - a broken import is the task's to report
            pass
        IMPORT_COST[name] = time.process_time() - t
    if "MPLCONFIGDIR" in os.environ:
        for base, dirs, files in os.walk(os.environ["MPLCONFIGDIR"]):
            for n in dirs + files:
                os.chmod(os.path.join(base, n), 0o755 if n in dirs else 0o644)
        os.chmod(os.environ["MPLCONFIGDIR"], 0o755)
    return fresh


def mode_zygote(root, uid, gid, wipe_root, keep, seccomp_hex):
    task_run.WIPE = wipe_root
    # Nothing is imported from the working folder: tasks running as our uid could plant
    # modules there (`-c` puts it first on sys.path).
    sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
    os.chdir("/")
    zygote_env()  # before any pre-import
    Channel.fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stray prints must not corrupt the protocol
    drop = None
    if os.geteuid() == 0:
        # Never root: tasks run as the unprivileged user, or nothing runs.
        if uid < 0 or not probe_drop(uid, gid, interpreter_paths()):
            Channel.send(
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
        task_process.NPROC_BASE = count_user_tasks(os.getuid())
    subreaper = harden_process()
    task_process.SECCOMP = seccomp_hex
    # Off only to measure what the namespaces cost (`bench exec`); never left for tasks.
    namespaces = os.environ.pop("PIVOT_TASK_NAMESPACES", "1") != "0"
    plan = Plan(root, wipe_root, keep)
    # Every task gets namespaces of its own; tried once here with the very code tasks run,
    # so that a machine that cannot make them is known before the first task.
    isolation_error, seccomp = task_run.probe(plan, drop)
    if not namespaces:
        isolation_error = isolation_error or "turned off to measure their cost"
        plan = None
    elif isolation_error:
        if wipe_root:
            Channel.send({"error": "tasks cannot get namespaces of their own in the sandbox: %s" % isolation_error})
            return
        # --sandbox none was chosen by name: tasks then share the worker's state, as said.
        plan = None
    task_run.PLAN = plan
    # The zygote's own garbage between tasks is small and short-lived; a task (a fork)
    # switches the collector back on for the model's code.
    settle()
    gc.disable()
    Channel.send(
        {
            "ready": True,
            "version": protocol.VERSION,
            "pid": os.getpid(),
            "drop": drop is not None,
            "root": os.geteuid() == 0,
            "subreaper": subreaper,
            "seccomp": seccomp or "",
            "isolation": isolation_error,
            "python": sys.version.split()[0],
        }
    )
    served = 0
    while True:
        line = read_line(0)
        if not line:
            return
        try:
            head = protocol.validate_head(json.loads(line))
        except (ValueError, protocol.ProtocolError) as e:
            rid = None
            try:
                rid = json.loads(line).get("id")
            except Exception:  # noqa: BLE001 - the id is only echoed when it can be read
                pass
            read_line(0)  # the request that follows its head goes unread
            Channel.send({"id": rid, "status": "error", "error": "bad request: %s" % e})
            continue
        try:
            prepared = prepare(head, root, keep)
        except Exception:  # noqa: BLE001 - a failed pre-import only costs the task its warm start
            prepared = (0.0, None)
        # The request itself (solution and tests) is read by a process forked for this task
        # alone, which runs it and replies, and goes: no task's text is ever in the zygote's
        # memory, freed or not, where a later task (a fork of it) could read it.
        # Its reply comes back through a pipe and goes out once the server is gone (nothing of
        # the task is alive when the runner reads it), relayed through buffers zeroed after.
        reply_r, reply_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(reply_r)
            Channel.fd = reply_w
            serve(head, prepared, root, drop, keep)
        os.close(reply_w)
        chunks = read_to_end(reply_r)
        os.close(reply_r)
        while True:
            try:
                _, st = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        ok = os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0
        if ok and chunks:
            for buf, n in chunks:
                protocol.write_all(Channel.fd, memoryview(buf)[:n])
        else:
            Channel.send({"id": head["id"], "status": "fail", "note": "", "scratch_clean": False,
                          "details": [["ALL", "harness error: the task's server ended (status %d)" % st]]})
        for buf, _ in chunks:
            buf[:] = bytes(len(buf))
        del line, head, prepared, chunks
        served += 1
        if served % 64 == 0:
            gc.collect()  # the collector is off in the zygote; frozen objects are skipped


def read_line(fd, chunk=1):
    """One line from `fd`, b"" at the end of the input. The zygote reads a byte at a time:
    the request after the head is its server's to read. The server may read in chunks:
    nothing follows the request until its reply is sent."""
    out = bytearray()
    while not out.endswith(b"\n"):
        try:
            b = os.read(fd, chunk)
        except InterruptedError:
            continue
        if not b:
            break
        out += b
    return bytes(out)


def read_to_end(fd):
    """Everything `fd` gives until its end, in mutable buffers (no bytes object is made of
    it, so the caller can zero all of it): a list of (buffer, length)."""
    chunks = []
    while True:
        buf = bytearray(1 << 16)
        try:
            n = os.readv(fd, [buf])
        except InterruptedError:
            continue
        if n == 0:
            return chunks
        chunks.append((buf, n))


def prepare(head, root, keep):
    """What the zygote does for a task before forking it: imports the problem's libraries
    (so that every later fork starts with them) and, for BigCodeBench's alarm, the head
    start its evaluator's process would have. Returns (preload seconds, head start)."""
    preload_time = 0.0
    quirks_alarm = head["quirks"] and head["alarm"]
    preload_lines = list(head["preload"])
    if quirks_alarm:
        # BigCodeBench's evaluator imports pyplot in every task (reliability_guard), before
        # the task's code. numpy first, as in the evaluator's process, then pyplot, so that
        # each cost is what the evaluator's task pays for it: pyplot's own, then what a
        # library adds to both (see evaluator_head_start).
        preload_lines = ["import numpy", "import matplotlib.pyplot"] + preload_lines
    if preload_lines:
        t = time.monotonic()
        if preload(preload_lines, root, keep):
            settle()
        preload_time = time.monotonic() - t
    head_start = evaluator_head_start(preload_lines) if quirks_alarm else None
    return preload_time, head_start


def serve(head, prepared, root, drop, keep):
    """The task's server (a fork of the zygote): reads the request that follows `head`, runs
    it, replies, and exits. Never returns."""
    code = 1
    try:
        harden_process()  # a subreaper of its own: the attribute is not inherited
        preload_time, head_start = prepared
        try:
            req = protocol.validate(json.loads(read_line(0, 1 << 16)))
            protocol.check_head(req, head)
        except (ValueError, protocol.ProtocolError) as e:
            Channel.send({"id": head["id"], "status": "error", "error": "bad request: %s" % e})
            code = 0
            return
        if head_start is not None:
            req = dict(req, timeout=max(float(req["timeout"]) - head_start, 1.0))
        try:
            reply = run_task(req, root, drop, keep)
        except Exception as e:  # noqa: BLE001 - a harness bug must still be answered
            reply = {"status": "fail", "details": [["ALL", "harness error: %s\n%s" % (e, traceback.format_exc())]],
                     "note": "", "scratch_clean": False}
        reply["preload"] = preload_time
        if head_start is not None:
            reply["head_start"] = head_start
        reply["id"] = req["id"]
        Channel.send(reply)
        code = 0
    finally:
        os._exit(code)


def mode_once():
    """The speed baseline: one request run in this very process, no sandbox."""
    req = json.loads(sys.stdin.read())
    Channel.fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    module = new_module()
    details = []
    try:
        exec(compile(req["solution"] + "\n" + req["test"], MODULE_FILE, "exec"), module.__dict__)
        sys.modules[module.__name__] = module
        suite = unittest.TestLoader().loadTestsFromTestCase(module.TestCases)
        result = unittest.TestResult()
        suite.run(result)
        for t, trace in result.failures + result.errors:
            details.append((t.id().split(".")[-1], trace))
        ok = result.testsRun > 0 and not details
    except BaseException as e:  # noqa: BLE001
        details = [("ALL", error_text(e))]
        ok = False
    Channel.send({"status": "pass" if ok else "fail", "details": details})
    os._exit(0)
