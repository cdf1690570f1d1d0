"""The task's environment as BigCodeBench's evaluator makes it (safe_environment,
swallow_io, reliability_guard): with `quirks`, its guard's interceptions, printed messages
included, since tests see them (a patched stdout, `subprocess` returning b"" for commands
with "ps")."""

import os
import signal
import subprocess
import sys

from .streams import ClosedStdin, TaskStream


def enter_task_env(quirks, cap):
    stream = TaskStream(cap)
    saved = (sys.stdout, sys.stderr, sys.stdin)
    sys.stdout = sys.stderr = stream
    sys.stdin = stream if quirks else ClosedStdin()
    replaced = evaluator_guard() if quirks else set()
    return saved, replaced


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


