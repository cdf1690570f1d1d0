# ---------------------------------------------------------------------------------------
# The zygote's life: pre-imports, settling, and serving requests.


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


def evaluator_head_start(lines):
    """Seconds BigCodeBench's evaluator spends in a task's process before it arms its alarm,
    which a warm zygote does not: importing matplotlib.pyplot (its reliability_guard does, for
    every task) and the task's libraries cold. Its kill comes `alarm + 1` s after the process
    starts, so when this exceeds a second a hanging test is killed (`timeout`) before the
    alarm can fail it; the runner's kill is brought forward by as much, so the same happens
    here whatever the pre-imports saved. Costs are the zygote's own cold imports, measured
    once. (Its Manager is started before the process, so it costs the process nothing.)"""
    names = set(imported_names(lines)) | {"matplotlib", "matplotlib.pyplot"}
    # The evaluator's own process imported numpy (`bigcodebench.eval` does) before it forks
    # the task's: that costs the task nothing there.
    names = {n for n in names if n.split(".")[0] not in EVALUATOR_PARENT}
    return sum(IMPORT_COST.get(n, 0.0) for n in names)


def warm_font_cache(mpl):
    """Builds matplotlib's font cache in `mpl` from a child interpreter, so that the zygote's
    timed import of pyplot costs what it costs the evaluator's tasks: they find the cache
    its first task built (their HOME lasts the run), and building it takes as long as the
    import itself. Best effort: without it the import is timed with the build."""
    import subprocess

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
            warm_font_cache(mpl)
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
                # BigCodeBench's evaluator imports pyplot in every task (reliability_guard),
                # before the task's code. numpy first, as in the evaluator's process, then
                # pyplot, so that each cost is what the evaluator's task pays for it: pyplot's
                # own, then what a library adds to both (see evaluator_head_start).
                req["preload"] = ["import numpy", "import matplotlib.pyplot"] + list(req.get("preload") or [])
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
