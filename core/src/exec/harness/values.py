# ---------------------------------------------------------------------------------------
# Value tests (HumanEval): the tester calls the model's function in another process and
# compares plain values. The codec below carries only exact builtin types both ways.

VALUE_CAP = 64 << 20


class Opaque:
    """What the tester gets for a value that is not plain data: equal to nothing, no truth
    value, no arithmetic, so an assertion on it fails."""

    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what

    def __bool__(self):
        raise TypeError("the function returned %s, which is not a plain value the tests can compare" % self.what)

    def __repr__(self):
        return "<%s>" % self.what

    __hash__ = object.__hash__


def encode_value(v, depth=0):
    if depth > 200:
        raise ValueError("nested too deeply")
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return {"i": str(v)} if abs(v) > 2**53 else v
    if t is float:
        return {"f": repr(v)}
    if t is list:
        return {"l": [encode_value(x, depth + 1) for x in v]}
    if t is tuple:
        return {"t": [encode_value(x, depth + 1) for x in v]}
    if t is dict:
        return {"d": [[encode_value(k, depth + 1), encode_value(x, depth + 1)] for k, x in v.items()]}
    if t is set or t is frozenset:
        return {"s" if t is set else "fs": [encode_value(x, depth + 1) for x in v]}
    if t is bytes:
        return {"b": v.hex()}
    if t is complex:
        return {"c": [repr(v.real), repr(v.imag)]}
    raise TypeError(t)


def decode_value(v, depth=0):
    if depth > 200:
        raise ValueError("nested too deeply")
    t = type(v)
    if v is None or t is bool or t is str or t is int:
        return v
    if t is not dict or len(v) != 1:
        raise ValueError("not a value")
    (tag, x), = v.items()
    if tag == "i":
        return int(x)
    if tag == "f":
        return float(x)
    if tag == "l":
        return [decode_value(e, depth + 1) for e in x]
    if tag == "t":
        return tuple(decode_value(e, depth + 1) for e in x)
    if tag == "d":
        return {decode_value(k, depth + 1): decode_value(e, depth + 1) for k, e in x}
    if tag == "s":
        return {decode_value(e, depth + 1) for e in x}
    if tag == "fs":
        return frozenset(decode_value(e, depth + 1) for e in x)
    if tag == "b":
        return bytes.fromhex(x)
    if tag == "c":
        return complex(float(x[0]), float(x[1]))
    if tag == "opaque":
        return Opaque(str(x))
    raise ValueError("unknown tag")


def plain(v, depth=0):
    """A value of the model's function as plain data: library subclasses of plain types
    (numpy's float64, bool_, int64) become the plain type; anything else is opaque."""
    if depth > 200:
        raise ValueError("nested too deeply")
    t = type(v)
    if t in (type(None), bool, int, float, str, bytes, complex):
        return v
    if t in (list, tuple, set, frozenset):
        return t(plain(x, depth + 1) for x in v)
    if t is dict:
        return {plain(k, depth + 1): plain(x, depth + 1) for k, x in v.items()}
    mod = getattr(t, "__module__", "")
    if mod == MODULE_NAME or mod == "builtins":
        raise TypeError(t)
    import numbers

    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, float) or isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, str):
        return str(v)
    raise TypeError(t)


def describe_type(t):
    mod = getattr(t, "__module__", "?")
    name = getattr(t, "__qualname__", getattr(t, "__name__", "?"))
    return name if mod in ("builtins", MODULE_NAME) else "%s.%s" % (mod, name)


COMPARISON_DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__",
                      "__len__", "__hash__", "__float__", "__int__", "__index__", "__abs__", "__sub__")


def own_comparison(t):
    """The comparison or conversion methods the solution defined on a type of its own."""
    out = []
    for c in getattr(t, "__mro__", ()):
        if c is object:
            break
        for k in COMPARISON_DUNDERS:
            f = c.__dict__.get(k)
            if type(f) is types.FunctionType and f.__code__.co_filename == MODULE_FILE:
                out.append(k)
    return sorted(set(out))


def send_frame(fd, obj):
    data = json.dumps(obj).encode("utf-8", "surrogatepass")
    write_all(fd, len(data).to_bytes(8, "big") + data)


def read_exact(fd, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, min(1 << 20, n - len(buf)))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def read_frame(fd, cap=VALUE_CAP):
    n = int.from_bytes(read_exact(fd, 8), "big")
    if n > cap:
        raise ValueError("message too large")
    return json.loads(read_exact(fd, n).decode("utf-8", "surrogatepass"))


def task_model(req, call_r, reply_w, res_fd, sec_fd):
    """The model's side of a value task: runs the solution, then serves calls of its entry
    point. Nothing it sends is trusted by the tester but plain values."""
    solution = req["solution"]
    try:
        code = compile(solution, MODULE_FILE, "exec", dont_inherit=True)
    except BaseException as e:  # noqa: B036
        make_guard(res_fd, sec_fd, {}, {}, "values")
        send_frame(reply_w, {"syntax": cap_text(error_text(e))})
        return
    make_guard(res_fd, sec_fd, codes_of(code), {}, "values")
    module = new_module()
    enter_task_env(False, int(req.get("output_cap", 65536)))
    try:
        exec(code, module.__dict__)
    except BaseException as e:  # noqa: B036
        send_frame(reply_w, {"crash": cap_text(error_text(e))})
        return
    sys.modules[MODULE_NAME] = module
    send_frame(reply_w, {"ready": True})
    entry = req["entry_point"]
    while True:
        try:
            call = read_frame(call_r)
        except (EOFError, OSError, ValueError):
            return
        fn = module.__dict__.get(entry, MISSING)
        try:
            if fn is MISSING:
                raise NameError("name %r is not defined" % entry)
            args = decode_value(call["args"])
            kwargs = decode_value(call["kwargs"])
            value = fn(*args, **kwargs)
        except BaseException as e:  # noqa: B036
            send_frame(reply_w, {"raise": remote_error(e)})
            continue
        try:
            reply = {"value": encode_value(plain(value))}
        except BaseException:  # noqa: B036
            t = type(value)
            what = describe_type(t)
            own = own_comparison(t)
            if own:
                sys.audit("pivot.suspect", "returned an object whose %s its own class %s defines" % ("/".join(own), what))
            reply = {"value": {"opaque": "an object of type " + what}}
        send_frame(reply_w, reply)


def remote_error(e):
    """The exception as the tester will raise it, with the traceback text of the model's
    frames (the serving loop's own frame left out)."""
    t = type(e)
    tb = e.__traceback__
    tb = tb.tb_next if tb is not None else None
    try:
        text = "".join(traceback.format_exception(t, e, tb))
    except BaseException:  # noqa: B036
        text = "Traceback (most recent call last):\n%s\n" % describe_type(t)
    return {
        "type": getattr(t, "__name__", "Exception"),
        "builtin": getattr(builtins, getattr(t, "__name__", ""), None) is t,
        "module": getattr(t, "__module__", ""),
        "qualname": getattr(t, "__qualname__", ""),
        "message": cap_text(error_text(e)),
        "text": cap_text(text),
    }


class RemoteCall:
    """The entry point as the tests see it: a call to the model's process."""

    def __init__(self, name, call_w, reply_r):
        self.name, self.call_w, self.reply_r = name, call_w, reply_r

    def __call__(self, *args, **kwargs):
        try:
            send_frame(self.call_w, {"args": encode_value(list(args)), "kwargs": encode_value(dict(kwargs))})
        except TypeError:
            raise TypeError("the tests passed a value that is not plain data to %s" % self.name)
        try:
            reply = read_frame(self.reply_r)
        except (EOFError, OSError):
            raise RuntimeError("the process running the solution ended during a call of %s" % self.name) from None
        except ValueError as e:
            raise RuntimeError("the process running the solution sent an unreadable answer: %s" % e) from None
        if "value" in reply:
            try:
                return decode_value(reply["value"])
            except (ValueError, TypeError, KeyError):
                return Opaque("an unreadable value")
        err = reply.get("raise")
        if type(err) is not dict:
            raise RuntimeError("the process running the solution sent an unreadable answer")
        raise remote_exception(err)


def remote_exception(err):
    name = str(err.get("type", "Exception"))
    message = str(err.get("message", ""))
    cls = getattr(builtins, name, None) if err.get("builtin") else None
    if not (isinstance(cls, type) and issubclass(cls, BaseException)) or issubclass(cls, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        cls = type(name, (Exception,), {"__module__": str(err.get("module") or MODULE_NAME), "__qualname__": str(err.get("qualname") or name)})
    try:
        exc = cls(message)
    except BaseException:  # noqa: B036
        exc = RuntimeError(message)
    exc._pivot_remote = str(err.get("text", ""))
    return exc


def local_frames(tb):
    """The tester's frames of an error from the model's process, as traceback prints them:
    unittest's leading frames and the call through the pipe left out."""
    while tb is not None and "__unittest" in tb.tb_frame.f_globals and tb.tb_frame.f_code is not RemoteCall.__call__.__code__:
        tb = tb.tb_next
    frames = []
    while tb is not None:
        if tb.tb_frame.f_code is not RemoteCall.__call__.__code__:
            frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return "".join(traceback.StackSummary.extract(frames).format())


def splice_traceback(frames, remote_text):
    """The text one process would have printed: the tester's frames (the test method's line)
    followed by the model's frames, then the model's exception line(s) and its chain."""
    header = "Traceback (most recent call last):\n"
    at = remote_text.rfind(header)
    if at < 0:
        return header + frames + remote_text
    at += len(header)
    return remote_text[:at] + frames + remote_text[at:]


class TesterResult(unittest.TestResult):
    """The tester's result: unittest's, with the model's traceback spliced into errors that
    came from a call of the model's function."""

    def __init__(self):
        unittest.TestResult.__init__(self)
        self.passed = []

    def addSuccess(self, test):
        unittest.TestResult.addSuccess(self, test)
        self.passed.append(test._testMethodName)

    def _exc_info_to_string(self, err, test):
        remote = getattr(err[1], "_pivot_remote", None)
        if remote:
            return splice_traceback(local_frames(err[2]), remote)
        return unittest.TestResult._exc_info_to_string(self, err, test)


def task_tester(req, call_w, reply_r, report_fd):
    """The tests' side of a value task: never runs model code. The problem's prompt (its
    helper functions, e.g. HumanEval/32's `poly`) and tests run here; the entry point is a
    call to the model's process."""
    solution, test, prompt, entry = req["solution"], req["test"], req.get("prompt", ""), req["entry_point"]
    module = new_module()
    details, passed = [], []
    try:
        first = read_frame(reply_r)
    except (EOFError, OSError, ValueError):
        first = {"crash": "the process running the solution ended before the tests started"}
    if "syntax" in first:
        try:
            compile(solution + "\n" + test, MODULE_FILE, "exec", dont_inherit=True)
            msg = first["syntax"]
        except BaseException as e:  # noqa: B036 - BigCodeBench's one compile gives the message
            msg = cap_text(error_text(e))
        report_values(report_fd, "fail", [("ALL", str(msg))], [])
        return
    if "crash" in first:
        report_values(report_fd, "fail", [("ALL", str(first["crash"]))], [])
        return
    try:
        if prompt:
            exec(compile(prompt, "<prompt>", "exec", dont_inherit=True), module.__dict__)
        module.__dict__[entry] = RemoteCall(entry, call_w, reply_r)
        code = compile("\n" * (python_lines(solution) + 1) + test, MODULE_FILE, "exec", dont_inherit=True)
        exec(code, module.__dict__)
        sys.modules[MODULE_NAME] = module
        suite = unittest.TestLoader().loadTestsFromTestCase(module.TestCases)
        names = [t._testMethodName for t in suite._tests]
        result = TesterResult()
        suite.run(result)
    except BaseException as e:  # noqa: B036
        report_values(report_fd, "fail", [("ALL", cap_text(error_text(e)))], [])
        return
    for t, trace in result.failures + result.errors:
        details.append((str(t.id()).split(".")[-1], cap_text(trace)))
    for t, reason in result.skipped:
        details.append((t._testMethodName, "SkipTest: %s (a skipped test is a failure)" % reason))
    for n in names:
        if n not in result.passed and not any(k == n for k, _ in details):
            details.append((n, "the test never reported success"))
    if not names:
        details.append(("ALL", "no tests found in TestCases"))
    status = "pass" if not details else "fail"
    report_values(report_fd, status, details, [n for n in names if n in result.passed])


def report_values(fd, status, details, passed):
    write_all(fd, json.dumps({"status": status, "details": details, "passed": passed}).encode("utf-8", "surrogatepass"))


