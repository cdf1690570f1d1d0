"""BigCodeBench-format tasks, run as its `untrusted_check` runs them: `solution + "\\n" +
test` compiled as one module `__test__`, TestCases loaded and run into a plain TestResult
under the alarm, failures then errors as the details; a skip is not a failure. Nothing is
checked, restored or hidden from the code: a correct solution gets the evaluator's verdict
by construction."""

import builtins
import os
import signal
import sys
import types
import unittest

from . import report
from .base import MODULE_FILE, MODULE_NAME, TimeoutException, cap_text, error_text
from .evaluator_env import enter_task_env

__unittest = True


class Recorder(unittest.TestResult):
    """unittest.TestResult as the evaluator uses it, also noting which tests succeeded and
    which were skipped (the twin check reads them)."""

    def __init__(self):
        unittest.TestResult.__init__(self)
        self.succeeded = []

    def addSuccess(self, test):
        unittest.TestResult.addSuccess(self, test)
        self.succeeded.append(test_name(test))


def test_name(test):
    return str(test.id()).split(".")[-1]


def on_alarm(signum, frame):
    raise TimeoutException("Timed out!")


def run_suite(suite, result, alarm):
    if alarm:
        # BigCodeBench's time_limit: around the whole test run, raising in the running test.
        signal.setitimer(signal.ITIMER_REAL, alarm)
        signal.signal(signal.SIGALRM, on_alarm)
    try:
        suite.run(result)
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


def task_unittest(req, res_fd):
    module = new_module()
    enter_task_env(req["quirks"], req["output_cap"])
    try:
        code = compile(req["solution"] + "\n" + req["test"], MODULE_FILE, "exec")
        exec(code, module.__dict__)
        sys.modules[MODULE_NAME] = module
        test_cases = module.TestCases
        suite = unittest.TestLoader().loadTestsFromTestCase(test_cases)
        result = Recorder()
        run_suite(suite, result, req["alarm"])
    except BaseException as e:  # noqa: BLE001 - the evaluator's `except BaseException`
        report.send(res_fd, "fail", [["ALL", cap_text(error_text(e))]])
        return
    details = [[test_name(t), cap_text(trace)] for t, trace in result.failures + result.errors]
    skipped = [test_name(t) for t, _ in result.skipped]
    report.send(res_fd, "fail" if details else "pass", details, result.succeeded, skipped)
