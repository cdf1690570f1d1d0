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
# The runner's seccomp programs (hex, comma-separated), installed in each task's process
# once its namespaces are made.
SECCOMP = ""


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
    # From the seed: the real and twin runs of a sample see the same numbers.
    draw = random.Random(req["seed"])
    for fd in keep:
        rnd = bytes(draw.getrandbits(8) for _ in range(2))
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
    seed_generators(req["seed"])
    # The zygote runs with the collector off; the task's code gets it on, as in a new
    # interpreter (what the zygote froze stays out of its reach).
    gc.enable()
    return moved


def seed_generators(seed):
    """Seeds the random generators the task can reach with the request's seed: the real run
    and the twin run of a sample get the same one, so an unseeded test draws the same numbers
    in both; every other task gets its own (under the evaluators each task is a new
    interpreter, seeded anew, and a fork would otherwise give every task of a worker the same
    numbers). `random`, numpy's global generator, Faker's and torch's."""
    random.seed(seed)
    mtrand = sys.modules.get("numpy.random.mtrand")
    state = getattr(mtrand, "_rand", None)
    if state is not None:
        state.seed(seed % (1 << 32))
    faker_generator = sys.modules.get("faker.generator")
    shared = getattr(faker_generator, "random", None)
    if isinstance(shared, random.Random):
        shared.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None and callable(getattr(torch, "manual_seed", None)):
        torch.manual_seed(seed)


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


def say_harness_error():
    """Writes the exception being handled to the task's output (best effort)."""
    try:
        text = "[pivot-lsp harness error in the task process]\n%s" % traceback.format_exc()
        os.write(2, text.encode("utf-8", "replace"))
    except BaseException:  # noqa: BLE001
        pass


def make_dirs(dirs, drop):
    """The task's folders, inside its fresh scratch, owned by the task's user."""
    for d in dirs:
        if d is None:
            continue
        os.mkdir(d, 0o700)
        if drop is not None:
            os.chown(d, drop[0], drop[1])


def child_task(req, dirs, fds, drop, plan):
    """The body of a forked task process; never returns. With a plan (`isolation.Plan`) this
    first process makes the task's namespaces and waits for their init; the task runs in
    init's child."""
    from . import isolation

    code = 0
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    try:
        if plan is None:
            task_body(req, dirs, fds, drop, None)
        else:
            isolation.enter(plan)
            make_dirs(dirs, drop)
            status_r, status_w = os.pipe()
            init = os.fork()
            if init == 0:
                os.close(status_r)
                isolation.run_init(status_w, lambda: task_body(req, dirs, fds, drop, plan))
            os.close(status_w)
            os.close(fds["out"])
            os.close(fds["res"])
            isolation.mirror(init, status_r)
    except BaseException:  # noqa: BLE001 - the report tells; a harness error must not hang
        code = 70
        say_harness_error()
    os._exit(code)


def task_body(req, dirs, fds, drop, plan):
    """The task itself: its process set up, then the tests. Never returns."""
    from .hardening import install_seccomp
    from .humaneval_task import task_humaneval
    from .isolation import drop_capabilities
    from .unittest_task import task_unittest

    code = 0
    try:
        work, home, tmp = dirs
        (res,) = child_setup(req, work, home, tmp, fds["out"], [fds["res"]], drop)
        if plan is not None and drop is None:
            drop_capabilities()
        why = install_seccomp(SECCOMP)
        if why and SECCOMP:
            raise RuntimeError("the task's seccomp filter: " + why)
        if req["mode"] == "humaneval":
            task_humaneval(req, res)
        else:
            task_unittest(req, res)
    except BaseException:  # noqa: BLE001 - the report tells; a harness error must not hang
        code = 70
        say_harness_error()
    os._exit(code)
