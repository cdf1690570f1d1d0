# ---------------------------------------------------------------------------------------
# Running one task: its processes, its time limit, its clean-up, and reading its verdict.


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


