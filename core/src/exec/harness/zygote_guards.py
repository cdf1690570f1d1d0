# ---------------------------------------------------------------------------------------
# Installed in the zygote, before any model code: what lets the guard see the quieter ways
# of bending a test (they are part of the pristine state every task starts from).


class ModuleState:
    """Every module's attributes as the zygote had them, to find what a solution replaced
    (e.g. `math.isclose = lambda *a, **k: True` at import)."""

    def __init__(self):
        self.items = []

    def capture(self):
        self.items = []
        for name, m in list(sys.modules.items()):
            if type(m) is not types.ModuleType and not isinstance(m, types.ModuleType):
                continue
            try:
                d = m.__dict__
            except BaseException:  # noqa: B036
                continue
            self.items.append((name, m, d, tuple(d), tuple(d.values())))

    def replaced(self, exempt=(), limit=8):
        """'module.attr' for public callables whose value is no longer the zygote's (but for
        `exempt`: what the harness itself replaced, e.g. BigCodeBench's guard)."""
        out = []
        for name, m, d, keys, values in self.items:
            if len(d) == len(keys) and all(map(is_, d, keys)) and all(map(is_, d.values(), values)):
                continue
            for k, v in zip(keys, values):
                if type(k) is not str or k[:1] == "_":
                    continue
                now = d.get(k, MISSING)
                if now is v or not callable(v) or isinstance(now, unittest.mock.NonCallableMock):
                    continue
                if type(v) is types.ModuleType or "%s.%s" % (name, k) in exempt:
                    continue
                out.append("%s.%s" % (name, k))
                if len(out) >= limit:
                    return out
        return out


MODULES = ModuleState()


def guard_modules():
    """Module attribute writes go through the guard (`pivot.modset`), which reports a
    solution replacing a library's function while the tests run (mock's patching by the
    tests is theirs to do). Each module keeps its own class, subclassed."""
    made = {}
    for m in list(sys.modules.values()):
        # Plain modules only: a library's own module class (cryptography's deprecation
        # proxy, lazy loaders) forwards attribute writes and must be left as it is.
        if type(m) is not types.ModuleType:
            continue
        base = type(m)
        cls = made.get(base)
        if cls is None:

            def __setattr__(self, name, value, _base=base):
                sys.audit("pivot.modset", self, name, value)
                _base.__setattr__(self, name, value)

            def __delattr__(self, name, _base=base):
                sys.audit("pivot.modset", self, name)
                _base.__delattr__(self, name)

            try:
                cls = type(base.__name__, (base,), {"__setattr__": __setattr__, "__delattr__": __delattr__,
                                                    "_pivot_guarded": True, "__module__": base.__module__})
            except TypeError:
                continue
            made[base] = cls
        try:
            m.__class__ = cls
        except TypeError:
            pass
    return made


def guard_assertions():
    """TestCase's assertions tell the guard about the values they compare: an object whose
    comparison the solution defined itself (an `__eq__` that always answers True) must not
    decide a test (`pivot.compare`)."""
    tc = unittest.TestCase
    for name, fn in list(vars(tc).items()):
        if not (name.startswith("assert") or name.startswith("fail")) or type(fn) is not types.FunctionType:
            continue
        if getattr(fn, "_pivot_compare", False):
            continue

        def wrapper(self, *args, _fn=fn, **kwargs):
            sys.audit("pivot.compare", args)
            return _fn(self, *args, **kwargs)

        functools.update_wrapper(wrapper, fn)
        wrapper._pivot_compare = True
        setattr(tc, name, wrapper)


SIGNAL_REAL = {}


def guard_signals():
    """A Python signal handler runs on top of whatever frame the signal interrupted: were
    that the guard's, the handler could read its state. Handlers are wrapped so that a signal
    arriving inside the guard is delivered again once it has returned."""
    import _signal

    real_signal, real_getsignal = _signal.signal, _signal.getsignal
    SIGNAL_REAL["signal"] = real_signal
    handlers = {}
    hook_codes = TRUST.hook_codes
    getpid, kill, getframe = os.getpid, os.kill, sys._getframe

    def make_trampoline(handler):
        def trampoline(signum, frame):
            f, n = frame, 0
            while f is not None and n < 200:
                if id(f.f_code) in hook_codes:
                    kill(getpid(), signum)
                    return None
                f = f.f_back
                n += 1
            return handler(signum, frame)

        return trampoline

    def signal_(signalnum, handler):
        if callable(handler) and not isinstance(handler, int):
            old = real_signal(signalnum, make_trampoline(handler))
        else:
            old = real_signal(signalnum, handler)
        prev = handlers.pop(signalnum, None)
        if callable(handler) and not isinstance(handler, int):
            handlers[signalnum] = handler
        return prev if prev is not None else old

    def getsignal_(signalnum):
        h = handlers.get(signalnum)
        return h if h is not None else real_getsignal(signalnum)

    _signal.signal, _signal.getsignal = signal_, getsignal_
    signal.getsignal = getsignal_
    for f in (signal_, getsignal_, make_trampoline):
        TRUST.add_code(f.__code__)


