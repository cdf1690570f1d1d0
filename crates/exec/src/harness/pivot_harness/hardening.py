"""The zygote's own set-up: who tasks run as, and what protects the zygote from them."""

import os
import sys


def probe_drop(uid, gid, paths):
    # Sorted out while still privileged: afterwards an unreadable dir looks like a missing one.
    dirs = [p for p in paths if os.path.isdir(p)]
    files = [p for p in paths if os.path.isfile(p)]
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            for p in dirs:
                os.listdir(p)
            for p in files:
                open(p, "rb").close()
            os._exit(0)
        except BaseException:  # noqa: BLE001 - any failure means "cannot read"
            os._exit(1)
    _, st = os.waitpid(pid, 0)
    return os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0


def in_private_userns():
    try:
        with open("/proc/self/uid_map") as f:
            return f.read().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


def count_user_tasks(uid):
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                st = os.stat("/proc/" + name)
                if st.st_uid == uid:
                    n += len(os.listdir("/proc/%s/task" % name))
            except OSError:
                pass
    return n


def interpreter_paths():
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__), os.__file__]
    paths += [p for p in sys.path if p and os.path.exists(p)]
    return paths


def harden_process():
    """The zygote's own protection, before any task: not dumpable (so no task, whatever its
    uid, can ptrace it or open its /proc/PID/mem), and a subreaper (orphans come back to be
    killed). Returns whether it is a subreaper."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36
    libc.prctl(PR_SET_DUMPABLE, 0, None, 0, 0)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, None, 0, 0) == 0


def install_seccomp(seccomp_hex):
    """Installs the seccomp programs the runner generated on this process (a task's, after its
    namespaces are made: the filter refuses making more). Returns why it is not installed, or
    "" when it is."""
    import ctypes

    if not seccomp_hex:
        return "no seccomp filter for this machine"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 38, 22
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        return "PR_SET_NO_NEW_PRIVS failed: %s" % os.strerror(ctypes.get_errno())
    for prog_hex in seccomp_hex.split(","):
        prog = bytes.fromhex(prog_hex)

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        buf = ctypes.create_string_buffer(prog, len(prog))
        fprog = SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
        if libc.prctl(PR_SET_SECCOMP, 2, ctypes.cast(ctypes.pointer(fprog), ctypes.c_void_p), 0, 0) != 0:
            return "seccomp filter refused: %s" % os.strerror(ctypes.get_errno())
    return ""
