"""A task's process: its descriptors, user, limits and environment."""

import builtins
import gc
import os
import random
import resource
import signal
import sys
import tempfile
import time
import traceback

# RLIMIT_NPROC counts every process of the user; when tasks share the uid with other
# processes (no uid drop, no private user namespace) the zygote adds their count here.
NPROC_BASE = 0


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
    fresh_generators()
    # The zygote runs with the collector off; the task's code gets it on, as in a new
    # interpreter (what the zygote froze stays out of its reach).
    gc.enable()
    return moved


def fresh_generators():
    """New seeds for the random generators the zygote's libraries made at import. Under the
    evaluator every task is a new interpreter, seeded anew; a fork would give every task of a
    worker the same numbers (two samples of a task, or a flaky test, would then never
    differ). CPython reseeds `random` at fork itself; numpy's global generator, Faker's and
    torch's it does not."""
    mtrand = sys.modules.get("numpy.random.mtrand")
    state = getattr(mtrand, "_rand", None)
    if state is not None:
        state.seed()
    faker_generator = sys.modules.get("faker.generator")
    shared = getattr(faker_generator, "random", None)
    if isinstance(shared, random.Random):
        shared.seed()
    torch = sys.modules.get("torch")
    if torch is not None and callable(getattr(torch, "seed", None)):
        torch.seed()


def set_limits(req):
    def lim(kind, value):
        # Lowering a limit cannot fail; if it does, the task must not run unlimited.
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))

    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    # Every limit is required and positive (protocol.validate): none is ever left unset.
    lim(resource.RLIMIT_CPU, req["cpu"])
    lim(resource.RLIMIT_AS, req["memory"])
    lim(resource.RLIMIT_FSIZE, req["fsize"])
    lim(resource.RLIMIT_NOFILE, req["nofile"])
    lim(resource.RLIMIT_NPROC, req["nproc"] + NPROC_BASE)


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
    except Exception:  # noqa: BLE001 - best effort, as the evaluators' own guard
        pass
    builtins.exit = None
    builtins.quit = None


def child_task(req, dirs, fds, drop):
    """The body of a forked task process; never returns."""
    from .humaneval_task import task_humaneval
    from .unittest_task import task_unittest

    code = 0
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    try:
        work, home, tmp = dirs
        (res,) = child_setup(req, work, home, tmp, fds["out"], [fds["res"]], drop)
        if req["mode"] == "humaneval":
            task_humaneval(req, res)
        else:
            task_unittest(req, res)
    except BaseException:  # noqa: BLE001 - the report tells; a harness error must not hang
        code = 70
        try:
            text = "[pivot-lsp harness error in the task process]\n%s" % traceback.format_exc()
            os.write(2, text.encode("utf-8", "replace"))
        except BaseException:  # noqa: BLE001
            pass
    os._exit(code)
