"""Each task in namespaces of its own, made fresh from the pre-started interpreter.

A task's first process (forked by the zygote, still privileged) unshares mount, IPC, network,
PID and UTS namespaces, and a user namespace where it lacks CAP_SYS_ADMIN; it mounts fresh
tmpfs scratch (the task's temp folder, `/dev/shm`, on the host also `/tmp` and `/var/tmp`),
remounts every other file system read-only, and brings up a loopback of its own. Its first
child is the PID namespace's init, which mounts a `/proc` of that namespace and forks the task
itself (PID 2, with ordinary signal semantics). When the task ends, init exits and the kernel
kills whatever is left in the namespace; the namespaces, their IPC objects, sockets (ports in
TIME_WAIT too) and scratch go with the last process. So every task, the real run and its
twin alike, starts from the same state, and nothing one task does can be seen by the next.

Why not bubblewrap per task: a new sandbox costs a new interpreter and its imports (hundreds
of milliseconds for the scientific stack); namespaces from a fork cost a few milliseconds."""

import ctypes
import fcntl
import os
import signal
import socket
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_MOVE = 8192
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
MNT_DETACH = 2

# Flags a mount keeps when it is remounted: in a user namespace the kernel refuses a remount
# that would clear one of them (they are locked), so each is passed back as it was.
KEPT_FLAGS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}

CAP_SYS_ADMIN = 21
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 1


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


class IsolationError(OSError):
    pass


def _fail(what):
    err = ctypes.get_errno()
    raise IsolationError(err, "%s: %s" % (what, os.strerror(err)))


def _enc(s):
    return None if s is None else s.encode()


def mount(source, target, fstype, flags, data=None):
    if _libc.mount(_enc(source), _enc(target), _enc(fstype), flags, _enc(data)) != 0:
        _fail("mount %s" % target)


def umount(target):
    if _libc.umount2(_enc(target), MNT_DETACH) != 0:
        _fail("umount %s" % target)


def has_sys_admin():
    """Whether this process may make namespaces without a user namespace of its own."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_SYS_ADMIN & 1)
    return False


def _unescape(field):
    # mountinfo escapes space, tab, newline and backslash as octal.
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 4 <= len(field) and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mounts():
    """(mount point, per-mount options) of every mount this process sees, in mount order."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            out.append((_unescape(fields[4]), fields[5].split(",")))
    return out


def kept_flags(options):
    flags = 0
    for o in options:
        flags |= KEPT_FLAGS.get(o, 0)
    return flags


def _under(path, base):
    return path == base or path.startswith(base.rstrip("/") + "/")


class Plan:
    """What a task's namespaces hold, decided once by the zygote."""

    def __init__(self, root, sandboxed, keep):
        self.root = root
        self.sandboxed = sandboxed
        # Paths inside the scratch that must stay (the interpreter's, bound in by bwrap; the
        # shared matplotlib cache): the list is the zygote's, which grows as it pre-imports.
        self.keep = keep
        self.user = not has_sys_admin()
        covers = [root, "/dev/shm"] if sandboxed else ["/tmp", "/var/tmp", "/dev/shm", root]
        seen = []
        for c in covers:
            if os.path.isdir(c) and c not in seen:
                seen.append(c)
        # A folder inside another cover is made again inside the fresh one, not covered twice.
        self.covers = [c for c in seen if not any(o != c and _under(c, o) for o in seen)]
        self.inner = [c for c in seen if c not in self.covers]
        # Each fresh tmpfs as large as the one it covers (bwrap's are sized by the runner's
        # limits), at most 1 GiB on the host (the memory cgroup counts it too).
        self.size = 1 << 30
        self.sizes = {}
        for c in self.covers:
            try:
                st = os.statvfs(c)
                self.sizes[c] = max(min(st.f_blocks * st.f_frsize, self.size), 1 << 20)
            except OSError:
                pass


def _map_self():
    uid, gid = os.getuid(), os.getgid()
    # The maps of a process that is not dumpable belong to root: writable only while it is.
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                           ("gid_map", "%d %d 1" % (gid, gid))):
            with open("/proc/self/" + name, "w") as f:
                f.write(text)
    finally:
        _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def _loopback_up():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        req = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, req)[:18])[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))
    finally:
        s.close()


def _make_parents(path, root):
    # The task user must be able to walk to a kept path, whoever made its folders.
    parts = os.path.relpath(os.path.dirname(path), root).split(os.sep)
    at = root
    for p in parts:
        if p in ("", "."):
            continue
        at = os.path.join(at, p)
        if not os.path.isdir(at):
            os.mkdir(at)
            os.chmod(at, 0o755)


def enter(plan):
    """In the task's first process: new namespaces, fresh scratch, everything else read-only."""
    flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWUTS
    if plan.user:
        flags |= CLONE_NEWUSER
    if _libc.unshare(flags) != 0:
        _fail("unshare")
    if plan.user:
        _map_self()
    # Nothing mounted here reaches the zygote's namespace, nor the host's.
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    # What must stay of the old scratch is held open by path, so that it can be bound into
    # the fresh scratch once the old one is covered.
    keep = [k for k in plan.keep if os.path.exists(k)]
    held = [(k, os.open(k, os.O_PATH), os.path.isdir(k)) for k in keep]
    for c in plan.covers:
        size = plan.sizes.get(c, plan.size)
        mount("tmpfs", c, "tmpfs", MS_NOSUID | MS_NODEV, "size=%d,mode=1777" % size)
    for d in plan.inner:
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o1777)
    for k, fd, is_dir in held:
        _make_parents(k, plan.root)
        if is_dir:
            os.makedirs(k, exist_ok=True)
        else:
            open(k, "a").close()
        mount("/proc/self/fd/%d" % fd, k, None, MS_BIND | MS_REC)
        mount(None, k, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        os.close(fd)
    if os.path.isdir("/dev/mqueue"):
        try:
            mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        except OSError:
            pass  # POSIX queues are the IPC namespace's whether or not this folder shows them
    fresh_points = set(plan.covers) | set(keep) | {"/dev/mqueue"}
    for point, options in mounts():
        if point in fresh_points:
            continue  # the fresh scratch (the mount it covers is hidden under it)
        if _under(point, "/proc") or _under(point, "/sys") or not os.path.isdir(point):
            # /proc is replaced by init; /sys is the kernel's, read-only to an unprivileged
            # task; a file bound on its own (bwrap's /dev/null) is a device, not storage.
            continue
        try:
            mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept_flags(options))
        except OSError as e:
            if point in ("/", "/dev", "/etc") or point in plan.keep:
                raise IsolationError(e.errno, "remounting %s read-only: %s" % (point, os.strerror(e.errno))) from e
    _loopback_up()


def _proc():
    # bwrap covers parts of its /proc; a new one is refused in a user namespace while a
    # covered one is the only one visible, so the covers go first.
    for point, _ in sorted(mounts(), key=lambda m: -len(m[0])):
        if point != "/proc" and _under(point, "/proc"):
            try:
                umount(point)
            except OSError:
                pass
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def run_init(status_w, task):
    """PID 1 of the task's namespace: mounts its /proc, forks `task` (PID 2), reaps whatever
    is orphaned, and when the task ends writes its wait status to `status_w` and exits, which
    kills every other process of the namespace. Never returns."""
    code = 0
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _proc()
        pid = os.fork()
        if pid == 0:
            os.close(status_w)
            task()
            os._exit(0)
        while True:
            try:
                done, status = os.waitpid(-1, 0)
            except ChildProcessError:
                status = 0
                break
            except InterruptedError:
                continue
            if done == pid:
                break
        os.write(status_w, struct.pack("<i", status))
    except BaseException as e:  # noqa: BLE001 - the parent reads no status and fails the task
        code = 72
        try:
            os.write(2, ("[pivot-lsp harness: the task's namespace could not start: %s]\n" % e).encode())
        except OSError:
            pass
    os._exit(code)


def mirror(init, status_r):
    """The task's first process: waits for init and ends as the task ended (the zygote reads
    this process's status). Never returns."""
    while True:
        try:
            os.waitpid(init, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    data = b""
    try:
        data = os.read(status_r, 4)
    except OSError:
        pass
    if len(data) != 4:
        os._exit(72)
    status = struct.unpack("<i", data)[0]
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 72)


def drop_capabilities():
    """Empties every capability set: a task keeps its uid where the runner is not root, and
    must not keep what its namespaces gave it."""

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    hdr = Header(0x20080522, 0)
    data = (Data * 2)()
    _libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    if _libc.capset(ctypes.byref(hdr), data) != 0:
        _fail("capset")
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("CapEff:", "CapPrm:")) and int(line.split()[1], 16) != 0:
                raise IsolationError(1, "capabilities still held after capset: " + line.strip())
