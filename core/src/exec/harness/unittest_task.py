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


