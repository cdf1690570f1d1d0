# ---------------------------------------------------------------------------------------
# The guard: the audit hook that decides a unittest task's verdict and sees tampering.
#
# Everything it needs is captured here, in its closure, before model code runs; it calls
# only C functions on values whose exact type it checked, so it never runs model code and
# no model frame ever sits above it (its state is reachable through its own frame only).


REPORT_MAGIC = b"PVR1"


def make_guard(res_fd, sec_fd, module_codes, test_codes, mode):
    """Installs the audit hook. `module_codes`/`test_codes`: dicts id -> code object of the
    solution's and of the tests' compiled code (the tests' are trusted, the solution's not).
    `mode`: "unittest" (the hook decides the verdict) or "values" (the hook only reports
    tampering: the verdict is the tester's)."""
    # The key arrives on its own pipe; it exists only in this closure from now on.
    key = b""
    while len(key) < 32:
        chunk = os.read(sec_fd, 32 - len(key))
        if not chunk:
            break
        key += chunk
    os.close(sec_fd)
    sha256 = hashlib.sha256
    ipad = bytes(b ^ 0x36 for b in key.ljust(64, b"\0"))
    opad = bytes(b ^ 0x5C for b in key.ljust(64, b"\0"))
    del key
    os_write, getpid, get_ident, exit_now = os.write, os.getpid, _thread.get_ident, os._exit
    getframe = sys._getframe
    io_open = io.open
    gc_disable, gc_enable, gc_isenabled = gc.disable, gc.enable, gc.isenabled
    FrameType, CodeType, FunctionType, MethodType = types.FrameType, types.CodeType, types.FunctionType, types.MethodType
    ModuleType = types.ModuleType
    str_, bytes_, int_, type_, len_, isinstance_, id_ = str, bytes, int, type, len, isinstance, id
    trusted_codes = TRUST.codes
    roots = TRUST.roots
    snapshot = TRUST.snapshot
    main_thread = TRUST.main_thread
    owner = getpid()
    BaseTC = unittest.TestCase
    tc_dict = vars(BaseTC)
    call_test_code = tc_dict["_callTestMethod"].__code__
    body_code = Body.__call__.__code__
    loop_code = run_suite.__code__
    main_code = task_unittest.__code__
    model_code = task_model.__code__
    recorder_cls = Recorder
    recorder_methods = frozenset(k for c in Recorder.__mro__ for k, v in vars(c).items() if callable(v))
    ModuleWriters = frozenset((id(c) for c in vars(unittest.mock._patch).values()
                               if type(c) is FunctionType for c in [c.__code__]))
    mock_base = unittest.mock.NonCallableMock
    frames_removed_code = sys.modules["importlib._bootstrap"]._call_with_frames_removed.__code__
    create_dynamic, exec_dynamic = _imp.create_dynamic, _imp.exec_dynamic
    ModuleSpec = sys.modules["importlib._bootstrap"].ModuleSpec
    module_dict_of = ModuleType.__dict__["__dict__"].__get__
    # "module.attr" -> (module, attr, value) that an extension module's initialisation set.
    library_writes = {}
    tc_callables = frozenset(k for k, v in tc_dict.items() if callable(v) or isinstance(v, (staticmethod, classmethod)))

    st = {
        # 0 set-up, 1 solution, 2 test source, 3 tests, 4 finished; a value task's model
        # process runs model code from the start.
        "phase": 1 if mode == "values" else 0,
        "seq": 0,
        "tamper": [],
        "tamper_seen": set(),
        "loop": None,
        "recorder": None,
        "tests": {},  # name -> the validated test function
        "classes": [],  # (class, name, function) entries that must not change
        "order": [],
        "started": [],
        "current": None,
        "done": set(),
        "ok_other": set(),  # genuine skips and expected failures (not failures, as unittest)
        "failures": [],
        "errors": [],
        "crash": None,
        "dead": False,
    }
    busy = set()

    def mac(body):
        return sha256(opad + sha256(ipad + body).digest()).digest()

    def record(kind, fields):
        if st["dead"]:
            return
        parts = [int_.to_bytes(st["seq"], 8, "big"), kind]
        for f in fields:
            b = f.encode("utf-8", "surrogatepass") if type_(f) is str_ else b"?"
            parts.append(int_.to_bytes(len_(b), 4, "big"))
            parts.append(b)
        body = b"".join(parts)
        st["seq"] += 1
        msg = REPORT_MAGIC + int_.to_bytes(len_(body), 8, "big") + body + mac(body)
        view = memoryview(msg)
        try:
            while view:
                n = os_write(res_fd, view)
                view = view[n:]
        except OSError:
            st["dead"] = True

    def tamper(what):
        """Reports and ends the task at once: the signed record is out before any more model
        code runs, so nothing the code does next (with what it reached) can take it back."""
        record(b"T", [what])
        exit_now(75)

    def code_kind(code):
        """'test' | 'harness' | 'library' | 'untrusted' (the solution's, or made at run time)."""
        i = id_(code)
        if test_codes.get(i) is code:
            return "test"
        if trusted_codes.get(i) is code:
            return "harness"
        fn = code.co_filename
        if type_(fn) is str_ and (fn.startswith("<frozen ") or fn.startswith(roots)):
            return "library"
        return "untrusted"

    def untrusted_caller(depth, through=None):
        """Whether the code that made this request is the model's: the frame `depth` levels
        out (the caller of the audited operation), past the frames of `through` (a library
        folder whose functions only forward the request, e.g. ctypes' wrappers)."""
        frame = getframe(depth)
        n = 0
        while through is not None and frame is not None and n < 50:
            fn = frame.f_code.co_filename
            if type_(fn) is not str_ or not fn.startswith(through):
                break
            frame = frame.f_back
            n += 1
        return frame is not None and code_kind(frame.f_code) == "untrusted"

    def untrusted_on_stack(depth):
        """Whether the model's code is anywhere on this thread's stack, from the frame `depth`
        levels out: the harness formatting a traceback after the model's code has returned
        (a test's timeout that struck inside this hook, say) is not the model's doing."""
        frame = getframe(depth)
        n = 0
        while frame is not None and n < 500:
            if code_kind(frame.f_code) == "untrusted":
                return True
            frame = frame.f_back
            n += 1
        return False

    def chain_to_loop(frame):
        """Every frame from `frame` out to the registered test loop is unittest's, the tests'
        or the harness's; no model frame, no other thread's."""
        loop = st["loop"]
        n = 0
        while frame is not None and n < 200:
            if frame is loop:
                return True
            k = code_kind(frame.f_code)
            if k not in ("test", "harness"):
                return False
            frame = frame.f_back
            n += 1
        return False

    def is_hook_frame(f):
        return type_(f) is FrameType and id_(f.f_code) in TRUST.hook_codes

    def pristine(exempt_mocks):
        """unittest, json, traceback and builtins as the zygote had them, the test methods as
        the test source made them, the recorder as the harness made it."""
        bad = []
        for obj, is_class, saved, keys, values in snapshot:
            d = obj.__dict__ if is_class else vars(obj)
            if len_(d) == len_(keys) and all(map(is_, d, keys)) and all(map(is_, d.values(), values)):
                continue
            for k, v in saved.items():
                now = d.get(k, MISSING)
                if now is v:
                    continue
                if not (callable(v) or isinstance_(v, (staticmethod, classmethod, property))):
                    continue
                if exempt_mocks and isinstance_(now, mock_base):
                    continue
                bad.append("%s.%s" % (getattr(obj, "__name__", "?"), k))
        for cls, name, fn in st["classes"]:
            if cls.__dict__.get(name, MISSING) is not fn:
                bad.append("test method %s" % name)
        rec = st["recorder"]
        if rec is not None:
            if type_(rec) is not recorder_cls:
                bad.append("the test result object")
            else:
                for k in rec.__dict__:
                    if k in recorder_methods:
                        bad.append("the test result object's %s" % k)
        return bad


    mro_of = type.__dict__["__mro__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    mock_file = unittest.mock.__file__
    contextlib_file = contextlib.__file__

    def on_modset(args, caller):
        """A module attribute is written (the module's class routes every write here)."""
        if st["phase"] not in (1, 2, 3):
            return
        module, name = args[0], args[1]
        if type_(name) is not str_ or name[:1] == "_":
            return
        try:
            old = module.__dict__.get(name, MISSING)
        except BaseException:  # noqa: B036
            return
        if old is MISSING or not callable(old) or isinstance_(old, ModuleType):
            return
        # Whose write it is: past mock's and contextlib's frames (a test's @patch is the
        # test's; the same patch started by the solution is the solution's).
        f = caller.f_back
        n = 0
        while f is not None and n < 50 and f.f_code.co_filename in (mock_file, contextlib_file):
            f = f.f_back
            n += 1
        if f is not None and code_kind(f.f_code) == "untrusted":
            where = "%s.%s" % (getattr(module, "__name__", "?"), name)
            if len_(args) > 2 and extension_init(f):
                library_writes[where] = (module, name, args[2])
                return
            tamper("replaced %s" % where)

    def extension_init(f):
        """Whether `f` runs code that a library's extension module compiled from a string while
        it was first imported. Cython does so to wrap `inspect.isgenerator` (and asyncio's
        coroutine checks) when a module with Cython generators loads, e.g. lxml under pandas'
        `read_excel`; that is the library's doing, not the solution's."""
        if f.f_code.co_filename != "<string>":
            return False
        b = f.f_back
        if b is None or b.f_code is not frames_removed_code:
            return False
        loc = b.f_locals
        fn, a = loc.get("f"), loc.get("args")
        if type_(a) is not tuple or not a:
            return False
        spec = None
        if fn is create_dynamic:
            spec = a[0]
        elif fn is exec_dynamic and isinstance_(a[0], ModuleType):
            spec = module_dict_of(a[0]).get("__spec__")
        if type_(spec) is not ModuleSpec:
            return False
        origin = vars(spec).get("origin")
        return type_(origin) is str_ and origin.startswith(roots)

    def library_set(where):
        """Whether `where` ("module.attr") still holds what an extension's initialisation set."""
        w = library_writes.get(where) if type_(where) is str_ else None
        return w is not None and module_dict_of(w[0]).get(w[1], MISSING) is w[2]

    COMPARING = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__",
                 "__contains__", "__float__", "__int__", "__index__", "__abs__", "__sub__", "__round__")

    def own_comparison(t):
        try:
            mro = mro_of(t)
        except BaseException:  # noqa: B036
            return None
        for c in mro:
            if c is object:
                break
            d = dict_of(c)
            generated = "__dataclass_fields__" in d
            for k in COMPARING:
                f = d.get(k)
                if type_(f) is FunctionType and code_kind(f.__code__) == "untrusted":
                    if generated and f.__code__.co_filename == "<string>" and "__create_fn__" in f.__qualname__:
                        continue
                    return "%s.%s" % (getattr(c, "__qualname__", "?"), k)
        return None

    HEAPTYPE = 1 << 9
    flags_of = type.__dict__["__flags__"].__get__
    type_name_of = type.__dict__["__name__"].__get__
    type_module_of = type.__dict__["__module__"].__get__
    list_iter, tuple_iter, set_iter, fset_iter = list.__iter__, tuple.__iter__, set.__iter__, frozenset.__iter__
    dict_keys, dict_values = dict.keys, dict.values
    islice = itertools.islice
    COMPARE_BUDGET = 50000

    def on_compare(args):
        """An assertion compares values: none may be, or hold at any depth, an object whose
        comparison the solution wrote (an `__eq__` that always answers True passes any
        assertEqual, and a dict or list compares what it holds with it). Containers are read
        through the builtins' own C iterators, so a subclass's Python methods never run here."""
        if st["phase"] != 3:
            return
        values = args[0] if args and type_(args[0]) is tuple else ()
        stack = list(values)
        seen = set()
        budget = COMPARE_BUDGET
        while stack and budget > 0:
            w = stack.pop()
            budget -= 1
            tw = type_(w)
            if isinstance_(w, list):
                stack.extend(islice(list_iter(w), budget))
            elif isinstance_(w, tuple):
                stack.extend(islice(tuple_iter(w), budget))
            elif isinstance_(w, dict):
                stack.extend(islice(dict_keys(w), budget))
                stack.extend(islice(dict_values(w), budget))
            elif isinstance_(w, set):
                stack.extend(islice(set_iter(w), budget))
            elif isinstance_(w, frozenset):
                stack.extend(islice(fset_iter(w), budget))
            elif not flags_of(tw) & HEAPTYPE and type_name_of(tw) == "ndarray" and type_module_of(tw) == "numpy":
                # numpy's own (static) array type: an object array compares its items.
                if w.dtype.hasobject:
                    stack.extend(islice(w.flat, budget))
                continue
            if not flags_of(tw) & HEAPTYPE or tw in seen:
                # A static type's comparison is C code, never the solution's.
                continue
            seen.add(tw)
            what = own_comparison(tw)
            if what is not None:
                tamper("an assertion compared an object whose %s the solution defines" % what)

    def on_pivot(event, args, caller):
        if event == "pivot.suspect" and mode != "values":
            tamper("the tested code raised the harness's event %s" % event)
            return
        if get_ident() != main_thread:
            tamper("a thread of the tested code raised the harness's event %s" % event)
            return
        if event == "pivot.solution":
            if caller.f_code is main_code and st["phase"] == 0:
                st["phase"] = 1
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.tests":
            if caller.f_code is main_code and st["phase"] == 1:
                st["phase"] = 2
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.suite":
            if caller.f_code is not main_code or st["phase"] != 2:
                tamper("the tested code raised the harness's event %s" % event)
                return
            test_cases, suite, recorder = args
            accept_suite(test_cases, suite, recorder)
        elif event == "pivot.loop":
            if caller.f_code is loop_code and st["phase"] == 3 and st["loop"] is None and caller.f_back is not None and caller.f_back.f_code is main_code:
                st["loop"] = caller
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.start":
            if caller.f_code is not trusted_start or not chain_to_loop(caller.f_back):
                tamper("a test was started by the tested code")
                return
            test = args[0]
            name = test_name_of(test)
            if name is None:
                tamper("a test that is not in TestCases was run")
                return
            if name in st["started"]:
                tamper("test %s was run twice" % name)
                return
            st["started"].append(name)
            st["current"] = (name, test)
        elif event == "pivot.done":
            if caller.f_code is not body_code or not chain_to_loop(caller.f_back):
                tamper("the tested code claimed a test ran to its end")
                return
            cur = st["current"]
            m = args[0]
            if cur is None or type_(m) is not MethodType:
                tamper("a test ran outside the test run")
                return
            name, test = cur
            fn = st["tests"].get(name)
            if m.__func__ is not fn or m.__self__ is not test:
                tamper("test %s ran something other than its own method" % name)
                return
            bad = pristine(True)
            if bad:
                tamper("replaced while test %s ran: %s" % (name, ", ".join(bad[:8])))
                return
            st["done"].add(name)
        elif event == "pivot.stop":
            if caller.f_code is not trusted_stop:
                tamper("the tested code raised the harness's event %s" % event)
                return
            bad = pristine(True)
            if bad:
                tamper("replaced while the tests ran: %s" % ", ".join(bad[:8]))
            st["current"] = None
        elif event == "pivot.fail":
            kind, key, text = args
            if type_(key) is not str_ or type_(text) is not str_:
                tamper("a failure record that is not text")
                return
            (st["failures"] if kind == "failure" else st["errors"]).append((key, text))
        elif event == "pivot.skip":
            cur = st["current"]
            if caller.f_code not in (trusted_skip, trusted_xfail) or cur is None or not chain_to_loop(caller.f_back) or not genuine_skip(caller):
                tamper("a test was skipped by the tested code")
                return
            st["ok_other"].add(cur[0])
        elif event == "pivot.changed":
            if caller.f_code is main_code and st["phase"] in (2, 3) and type_(args[0]) is list:
                bad = [x for x in args[0] if not library_set(x)]
                if bad:
                    tamper("replaced %s the tests ran: %s" % ("before" if st["phase"] == 2 else "while",
                                                               ", ".join(str_(x) for x in bad[:8])))
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.suspect":
            if caller.f_code is model_code and type_(args[0]) is str_:
                tamper(args[0])
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.crash":
            if caller.f_code is main_code and st["phase"] < 4:
                st["crash"] = args[0] if type_(args[0]) is str_ else "?"
            else:
                tamper("the tested code raised the harness's event %s" % event)
        elif event == "pivot.finish":
            if caller.f_code is not main_code or st["phase"] == 4:
                tamper("the tested code raised the harness's event %s" % event)
                return
            finish(args[0])
        else:
            tamper("the tested code raised an unknown harness event %s" % event)

    def test_name_of(test):
        for name, t in st["instances"]:
            if t is test:
                return name
        return None

    def accept_suite(test_cases, suite, recorder):
        """The tests are the test source's: TestCases and every class it inherits from are
        unittest's or the test source's, and each test method's code (under decorators such
        as mock's @patch, whose wrappers are library code) is the test source's."""
        if type_(test_cases) is not type_ and type_(type_(test_cases)) is not type_:
            tamper("TestCases is not a plain class")
            return
        meta = type_(test_cases)
        if meta is not type_ and code_kind_of_class(meta) == "untrusted":
            tamper("TestCases has a metaclass from the tested code")
            return
        for c in test_cases.__mro__:
            if c is object or c is BaseTC or c in trusted_bases:
                continue
            if code_kind_of_class(c) == "untrusted":
                tamper("TestCases inherits from %s, a class of the tested code" % c.__name__)
                return
        if type_(suite) is not unittest.TestSuite or type_(recorder) is not recorder_cls:
            tamper("the test suite is not the harness's")
            return
        instances = []
        for t in list(suite._tests):
            if not isinstance_(t, test_cases):
                tamper("a test in the suite is not a TestCases test")
                return
            name = t.__dict__.get("_testMethodName")
            if type_(name) is not str_:
                tamper("a test without a method name")
                return
            instances.append((name, t))
        tests = {}
        for name, t in instances:
            owner_cls, fn = None, None
            for c in test_cases.__mro__:
                v = c.__dict__.get(name, MISSING)
                if v is not MISSING:
                    owner_cls, fn = c, v
                    break
            inner = fn
            depth = 0
            while type_(inner) is FunctionType and depth < 32:
                k = code_kind(inner.__code__)
                if k == "test":
                    break
                if k != "library" and k != "harness":
                    inner = None
                    break
                inner = inner.__dict__.get("__wrapped__")
                depth += 1
            if type_(inner) is not FunctionType or code_kind(inner.__code__) != "test":
                tamper("test %s does not come from the test source" % name)
                return
            tests[name] = fn
            st["classes"].append((owner_cls, name, fn))
        st["tests"] = tests
        st["instances"] = instances
        st["order"] = [n for n, _ in instances]
        st["recorder"] = recorder
        st["phase"] = 3

    def code_kind_of_class(c):
        """'untrusted' when any function defined in the class body is the model's."""
        try:
            d = c.__dict__
        except BaseException:
            return "untrusted"
        for v in list(d.values()):
            f = v
            if isinstance_(v, (staticmethod, classmethod)):
                f = v.__func__
            if type_(f) is FunctionType and code_kind(f.__code__) == "untrusted":
                return "untrusted"
        if test_defined_class(c):
            return "test"
        return "library" if c.__module__ != MODULE_NAME else "unknown"

    def test_defined_class(c):
        for v in c.__dict__.values():
            f = v.__func__ if isinstance_(v, (staticmethod, classmethod)) else v
            if type_(f) is FunctionType and code_kind(f.__code__) == "test":
                return True
        return False

    def genuine_skip(caller):
        """A skip counts as unittest counts it only when no frame of the model raised it."""
        f = caller.f_back
        n = 0
        while f is not None and n < 50:
            e = f.f_locals.get("e") if f.f_code.co_name == "testPartExecutor" else None
            if isinstance_(e, unittest.SkipTest):
                tb = e.__traceback__
                while tb is not None:
                    if code_kind(tb.tb_frame.f_code) == "untrusted":
                        return False
                    tb = tb.tb_next
                return True
            f = f.f_back
            n += 1
        return True

    def finish(recorder):
        st["phase"] = 4
        details = []
        if st["crash"] is not None:
            details.append(("ALL", st["crash"]))
            status = "fail"
        elif not st["tests"] and not st["order"]:
            status = "fail"
        else:
            for key, text in st["failures"] + st["errors"]:
                details.append((key, text))
            status = "pass"
            for name in st["order"]:
                ran = name in st["started"]
                ok = name in st["done"] or name in st["ok_other"]
                failed_here = any(k == name or k.startswith(name + " ") for k, _ in details)
                if not ran:
                    tamper("test %s never ran (the test run was stopped)" % name)
                elif not ok and not failed_here:
                    tamper("test %s ended without running to its end or reporting a failure" % name)
            if details:
                status = "fail"
            if type_(recorder) is recorder_cls:
                if len_(recorder.failures) + len_(recorder.errors) < len_(st["failures"]) + len_(st["errors"]):
                    tamper("the test result object was modified: failures were removed")
                for n in list(recorder.passed):
                    if n not in st["done"] and n not in st["ok_other"]:
                        tamper("the test result object was modified: a test was marked passed")
                        break
            passed = [n for n in st["order"] if (n in st["done"] or n in st["ok_other"])]
        for key, text in details:
            record(b"D", [key if type_(key) is str_ else "?", cap_text(text)])
        if st["crash"] is None:
            for n in passed:
                record(b"P", [n])
        record(b"E", [status])

    def hook(event, args):
        if event not in watched:
            return
        tid = get_ident()
        if tid in busy:
            return
        busy.add(tid)
        was = gc_isenabled()
        gc_disable()
        try:
            if getpid() != owner:
                # A fork of the task (multiprocessing, os.fork): it has no channel and no say.
                return
            if event == "pivot.modset":
                on_modset(args, getframe(1))
            elif event == "pivot.compare":
                on_compare(args)
            elif event[:6] == "pivot.":
                on_pivot(event, args, getframe(1))
            else:
                on_event(event, args)
        except BaseException as e:  # noqa: B036 - fail closed
            tamper("the harness's guard failed on %s: %s" % (event, type_(e).__name__))
        finally:
            if was:
                gc_enable()
            busy.discard(tid)

    def on_event(event, args):
        if event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents"):
            # Libraries use them for their own objects (pandas, matplotlib): only the
            # model's own calls count.
            if untrusted_caller(3):
                tamper("walked the garbage collector's objects (%s)" % event)
            return None
        if event == "sys._current_frames":
            tamper("read other threads' frames (sys._current_frames)")
            return event
        if event in ("sys.settrace", "sys.setprofile"):
            # The event carries no argument: any call by the model's code counts.
            if untrusted_caller(3):
                tamper("installed a trace or profile function (%s)" % event)
            return None
        if event == "sys._getframe":
            if args and is_hook_frame(args[0]):
                tamper("reached the harness's guard through its frame")
                return event
            return None
        if event == "object.__getattr__":
            obj, name = args[0], args[1]
            if name in ("tb_frame", "gi_frame", "cr_frame", "ag_frame"):
                f = getattr(obj, name, None)
                if is_hook_frame(f) and untrusted_on_stack(3):
                    tamper("reached the harness's guard through a frame")
                    return event
            return None
        if event == "code.__new__":
            if untrusted_caller(3):
                tamper("built a code object at run time (CodeType / code.replace)")
                return event
            return None
        if event == "function.__new__":
            code = args[0] if args else None
            if type_(code) is CodeType and code_kind(code) == "harness":
                tamper("made a function of the harness's code")
                return event
            return None
        if event in ("object.__setattr__", "object.__delattr__"):
            obj, name = args[0], args[1]
            if name in ("__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__"):
                if type_(obj) is FunctionType and code_kind(obj.__code__) != "untrusted" and untrusted_caller(3):
                    tamper("rewrote the function %s.%s" % (getattr(obj, "__qualname__", "?"), name))
                    return event
            elif name == "__class__":
                if isinstance_(obj, ModuleType) and type_(obj).__name__ == "GuardedModule" and untrusted_caller(3):
                    tamper("changed the class of the module %s" % getattr(obj, "__name__", "?"))
                    return event
            return None
        if event in ("ctypes.dlsym", "ctypes.cdata", "ctypes.cdata/buffer", "ctypes.addressof",
                     "ctypes.string_at", "ctypes.wstring_at", "ctypes.dlsym/handle"):
            if untrusted_caller(3, ctypes_dir):
                tamper("accessed memory or C functions through ctypes (%s)" % event)
                return event
            return None
        if event == "ctypes.dlopen":
            if args and args[0] is None and untrusted_caller(3, ctypes_dir):
                tamper("opened the interpreter's own symbols through ctypes")
                return event
            return None
        if event == "open":
            p = args[0] if args else None
            if type_(p) is bytes_:
                p = p.decode("utf-8", "replace")
            if type_(p) is str_ and p.startswith("/proc/"):
                parts = p.split("/")
                if parts[-1] in ("mem", "pagemap") or (len_(parts) > 3 and parts[3] == "mem"):
                    tamper("opened process memory (%s)" % p)
                    return event
            return None
        if event == "marshal.loads":
            if untrusted_caller(3):
                tamper("loaded a code object from bytes (marshal.loads)")
            return None
        if event == "compile":
            # Code compiled under a library's file name would pass for that library's code.
            # CPython itself compiles pieces of real files (to point at them in tracebacks),
            # so text that is in the named file is fine.
            src = args[0] if args else None
            fn = args[1] if len_(args) > 1 else None
            if type_(fn) is bytes_:
                fn = fn.decode("utf-8", "replace")
            if type_(fn) is str_ and fn.startswith("<frozen ") and untrusted_caller(3):
                # Frozen modules are compiled into the interpreter, never from text at run time.
                tamper("compiled code under the name of a frozen module (%s)" % fn)
                return None
            if type_(fn) is str_ and fn.startswith(roots) and untrusted_caller(3):
                if type_(src) is bytes_:
                    src = src.decode("utf-8", "replace")
                try:
                    with io_open(fn, encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                except OSError:
                    text = ""
                if type_(src) is not str_ or src not in text:
                    tamper("compiled code under the name of a library file (%s)" % fn)
            return None
        if event == "pivot.modset":
            return None
        return None

    trusted_bases = ()
    ctypes_dir = os.path.dirname(sys.modules["ctypes"].__file__) + "/" if "ctypes" in sys.modules else "\0"
    trusted_start = Recorder.startTest.__code__
    trusted_stop = Recorder.stopTest.__code__
    trusted_skip = Recorder.addSkip.__code__
    trusted_xfail = Recorder.addExpectedFailure.__code__
    st["instances"] = []
    watched = frozenset((
        "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
        "sys.settrace", "sys.setprofile", "sys._getframe", "object.__getattr__", "code.__new__",
        "function.__new__", "object.__setattr__", "object.__delattr__", "ctypes.dlsym",
        "ctypes.cdata", "ctypes.cdata/buffer", "ctypes.addressof", "ctypes.string_at",
        "ctypes.wstring_at", "ctypes.dlsym/handle", "ctypes.dlopen", "open", "marshal.loads",
        "compile", "pivot.modset", "pivot.compare",
    ) + (
        ("pivot.solution", "pivot.tests", "pivot.suite", "pivot.loop", "pivot.start", "pivot.done",
         "pivot.stop", "pivot.fail", "pivot.skip", "pivot.crash", "pivot.finish", "pivot.changed")
        if mode == "unittest" else ("pivot.suspect",)
    ))
    for f in (hook, on_event, on_pivot, on_modset, extension_init, library_set, on_compare, own_comparison, record, tamper, finish, pristine, accept_suite, mac, code_kind,
              chain_to_loop, is_hook_frame, untrusted_caller, genuine_skip, test_name_of,
              code_kind_of_class, test_defined_class):
        TRUST.hook_codes[id(f.__code__)] = f.__code__

    def close_in_fork():
        try:
            os.close(res_fd)
        except OSError:
            pass

    os.register_at_fork(after_in_child=close_in_fork)
    sys.addaudithook(hook)


