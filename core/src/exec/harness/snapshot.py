# ---------------------------------------------------------------------------------------
# Snapshots of what the harness relies on. `take_snapshot` runs in the zygote, before any
# model code; `restore_snapshot` puts back what a task changed and says what that was.

MISSING = object()


def guarded():
    """unittest, json, traceback and builtins: what running and reporting the tests uses."""
    import json.encoder
    import unittest.case
    import unittest.loader
    import unittest.result
    import unittest.suite
    import unittest.util

    classes = [
        unittest.TestCase,
        unittest.TestResult,
        unittest.TestLoader,
        unittest.TestSuite,
        unittest.suite.BaseTestSuite,
        unittest.case._Outcome,
        unittest.SkipTest,
        unittest.mock._patch,
        BaseException,
    ]
    modules = [
        builtins,
        unittest,
        unittest.case,
        unittest.result,
        unittest.loader,
        unittest.suite,
        unittest.util,
        json,
        json.encoder,
        traceback,
        linecache,
    ]
    return classes, modules


def snapshot_of(objs):
    snap = []
    for obj, is_class in objs:
        saved = dict(vars(obj))
        snap.append((obj, is_class, saved, tuple(saved), tuple(saved.values())))
    return snap


def take_snapshot():
    classes, modules = guarded()
    return snapshot_of([(c, True) for c in classes] + [(m, False) for m in modules])


def restore_snapshot(
    snap, vars=vars, setattr=setattr, delattr=delattr, list=list, len=len, all=all, map=map, is_=is_,
    isinstance=isinstance, ModuleType=types.ModuleType, modules=sys.modules,
):
    """Restores every object of `snap`; returns the names that had changed ("module.attr"),
    leaving out submodules a test's own imports added (`import unittest.mock` sets
    `unittest.mock`: a real test needs it)."""
    changed = []
    for obj, is_class, saved, keys, values in snap:
        d = vars(obj)
        # Untouched (the usual case, checked in C): the same keys and values, by identity, in
        # the same order. Identity only: model code's __eq__ is never called.
        if len(d) == len(keys) and all(map(is_, d, keys)) and all(map(is_, d.values(), values)):
            continue
        owner = getattr(obj, "__name__", "?")
        for k in list(d):
            if k not in saved:
                v = d.get(k)
                if (
                    not is_class
                    and isinstance(v, ModuleType)
                    and modules.get(owner + "." + str(k)) is v
                ):
                    continue
                changed.append("%s.%s" % (owner, k))
                try:
                    if is_class:
                        delattr(obj, k)
                    else:
                        del d[k]
                except BaseException:
                    pass
        for k, v in saved.items():
            if d.get(k, MISSING) is not v:
                changed.append("%s.%s" % (owner, k))
                try:
                    if is_class:
                        setattr(obj, k, v)
                    else:
                        d[k] = v
                except BaseException:
                    pass
    return changed


