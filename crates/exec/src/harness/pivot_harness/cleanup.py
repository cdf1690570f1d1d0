"""Removing what a task left, by descriptor and without recursion (a task may leave a
3,000-deep chain of folders, mode-0 folders, symlinks anywhere)."""

import os
import stat as stat_mod


def remove_tree_all(paths):
    ok = True
    for p in paths:
        ok = remove_tree(p) and ok
    return ok


def remove_tree(path):
    """Removes a folder the task may have filled with anything (a 3,000-deep chain, mode-0
    folders, symlinks anywhere): by descriptors, never following a link, without recursion.
    False when something could not be removed (the zygote is then replaced)."""
    parent, name = os.path.split(path)
    try:
        pfd = os.open(parent or "/", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        return remove_entry(pfd, name)
    finally:
        os.close(pfd)


MAX_OPEN = 200


def remove_entry(pfd, name):
    try:
        st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not stat_mod.S_ISDIR(st.st_mode):
        try:
            os.unlink(name, dir_fd=pfd)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False
    # Depth-first with an explicit stack of (descriptor, name in parent); at most MAX_OPEN
    # descriptors: deeper trees are given up (and the zygote replaced).
    stack = [(pfd, name, None)]
    ok = True
    while stack:
        parent_fd, dname, fd = stack[-1]
        if fd is None:
            fd = open_dir(parent_fd, dname)
            if fd is None or len(stack) > MAX_OPEN:
                if fd is not None:
                    os.close(fd)
                return close_stack(stack[1:], False)
            stack[-1] = (parent_fd, dname, fd)
        descended = False
        try:
            with os.scandir(fd) as it:
                for e in it:
                    try:
                        is_dir = e.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if is_dir:
                        stack.append((fd, e.name, None))
                        descended = True
                        break
                    try:
                        os.unlink(e.name, dir_fd=fd)
                    except FileNotFoundError:
                        pass
                    except OSError:
                        ok = False
        except OSError:
            return close_stack(stack, False)
        if descended:
            continue
        stack.pop()
        os.close(fd)
        try:
            os.rmdir(dname, dir_fd=parent_fd)
        except OSError:
            if not ok:
                return close_stack(stack, False)
            ok = False
            return close_stack(stack, False)
    return ok


def open_dir(parent_fd, name):
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=parent_fd)
    except PermissionError:
        # The task took its own permissions away (mode 0): give them back, then open.
        try:
            os.chmod(name, 0o700, dir_fd=parent_fd, follow_symlinks=False)
        except (OSError, NotImplementedError):
            return None
        try:
            return os.open(name, flags, dir_fd=parent_fd)
        except OSError:
            return None
    except OSError:
        return None


def close_stack(stack, result):
    for _, _, fd in stack:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
    return result


def wipe(base, keep):
    """Empties `base` but for the bound paths in `keep`; False when something stayed."""
    try:
        names = os.listdir(base)
    except OSError:
        return True
    ok = True
    for name in names:
        path = os.path.join(base, name)
        holds = [k for k in keep if k == path or k.startswith(path + "/")]
        if holds:
            if path not in holds and os.path.isdir(path) and not os.path.islink(path):
                ok = wipe(path, holds) and ok
            continue
        ok = remove_tree(path) and ok
    return ok


