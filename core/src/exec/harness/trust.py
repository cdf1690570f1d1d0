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


