"""SysV IPC objects (shared memory, semaphores, message queues) outlive the processes that
made them. Each task's are removed when it ends, so that none holds memory past its task or
is seen by a later one. Under bwrap the zygote has an IPC namespace of its own, so whatever
is there after a task is the task's; without it (`--sandbox none`) only objects that
appeared during the task and belong to the task's user are removed."""

import ctypes
import os

KINDS = ("shm", "sem", "msg")
IPC_RMID = 0


def read_table(kind):
    """(id, uid) of each object of `kind`; empty when /proc/sysvipc cannot be read."""
    try:
        with open("/proc/sysvipc/" + kind) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    if not lines:
        return []
    names = lines[0].split()
    try:
        id_col = 1
        uid_col = names.index("uid")
    except ValueError:
        return []
    out = []
    for line in lines[1:]:
        cols = line.split()
        try:
            out.append((int(cols[id_col]), int(cols[uid_col])))
        except (IndexError, ValueError):
            continue
    return out


def snapshot():
    return {(kind, ident) for kind in KINDS for ident, _ in read_table(kind)}


def leftovers(before, uid, private):
    found = []
    for kind in KINDS:
        for ident, owner in read_table(kind):
            if private or ((kind, ident) not in before and owner == uid):
                found.append((kind, ident))
    return found


def remove(found):
    libc = ctypes.CDLL(None, use_errno=True)
    ok = True
    for kind, ident in found:
        if kind == "shm":
            r = libc.shmctl(ident, IPC_RMID, None)
        elif kind == "sem":
            r = libc.semctl(ident, 0, IPC_RMID)
        else:
            r = libc.msgctl(ident, IPC_RMID, None)
        ok = ok and r == 0
    return ok


def remove_new(before, drop, private):
    """Removes the task's objects; False when some could not be removed."""
    uid = drop[0] if drop is not None else os.getuid()
    found = leftovers(before, uid, private)
    if not found:
        return True
    if drop is None:
        return remove(found)
    # Only an object's owner (or CAP_SYS_ADMIN, which the zygote does not keep) may remove
    # it: a child that becomes the task's user does.
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(drop[1])
            os.setuid(drop[0])
            code = 0 if remove(found) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and not leftovers(before, uid, private)
