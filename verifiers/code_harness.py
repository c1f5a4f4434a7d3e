"""The in-sandbox test harness of the ``code`` verifier, and the host-side test preparation.

The verifier runs this file's *source* as ``python3 -I -c <source>`` inside the sandbox,
so no harness file exists in the work directory for the candidate to rewrite. The
functions at the bottom (``prepare_*``) run on the host: they rewrite the trusted test
code once, so the sandbox needs no ``ast`` (it also keeps start-up to a few milliseconds:
the sandbox side imports only C modules, ``collections`` and, for pytest files, pytest).

Why the sandbox side is built the way it is (each point closes a way to fake a pass):

* It reads ALL of stdin (candidate code, tests, a random per-job nonce) before any
  candidate code runs: the candidate sees EOF, and no test file exists on disk (pytest
  needs one: the harness writes it, loads the module from its in-memory copy, and reports
  a changed file as tampering).
* Results leave only as ``RESULT <nonce> <json>`` lines written through a private dup of
  the original stdout, with references saved before the candidate ran. The candidate's
  fds 1 and 2 are redirected to capture files, so a printed "passed" never reaches the
  verifier as a record, and the candidate does not know the nonce. Exiting early
  (``os._exit(0)``, ``sys.exit(0)``) leaves tests without a record: they fail.
* Asserts are rewritten: comparisons, truth tests and arithmetic operands go through
  strict helpers that accept only values of trusted types (builtin scalars and containers
  of them, recursively, and classes the tests themselves define), so an object whose
  ``__eq__`` always says True, or whose ``__sub__`` returns 0, fails. Function-call cases
  never see their expected value: the return value is serialised, the host compares.
* After every test the harness checks that builtins, loaded modules' functions, trusted
  classes, its own helpers (and their code objects) and ``sys.gettrace()`` are what they
  were before the candidate ran; a change fails that test and every later one.

Residual risk, stated plainly: the candidate runs in the harness's process, so code that
deliberately walks the interpreter's frames or heap (``sys._getframe``, ``gc``, ``ctypes``)
could in principle find the nonce. Only host-side comparison (function-call and
stdin/stdout forms) is immune to that; the sandbox bounds what such code can reach.
"""

import sys

MARK = "RESULT"
CAPTURE_EXCERPT = 400
# Module functions the standard library itself rebinds while running legitimate code
# (warnings.catch_warnings swaps these in and out): the integrity check skips them.
# Value types from C modules that compare by value and hold no arbitrary objects: trusted
# even when the solution (not the tests) imported their module.
SAFE_C_TYPES = {("re", "Match"), ("re", "Pattern"), ("decimal", "Decimal"), ("datetime", "date"),
                ("datetime", "datetime"), ("datetime", "time"), ("datetime", "timedelta"), ("datetime", "timezone")}
VOLATILE = {"warnings": ("showwarning", "_showwarnmsg_impl", "_showwarnmsg", "_formatwarnmsg")}


def _main():
    raw = sys.stdin.buffer.read()  # everything, before any candidate code exists
    import marshal

    payload = marshal.loads(raw)
    del raw
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    import os

    out_fd = os.dup(1)
    os.set_inheritable(out_fd, False)
    _build(payload, out_fd)()


def _build(payload, out_fd):
    """Build the harness as closures over references saved now, before the candidate runs.

    A closure's free variables cannot be rebound by patching a module or builtins, so what
    the candidate does to ``os`` or ``builtins`` does not change how results are judged or
    written (and if it tries, the integrity check sees it).
    """
    import _json
    import _operator
    import _signal as signals
    import builtins
    import collections
    import os
    import time

    _type, _isinstance, _len, _id, _repr, _str, _bool = type, isinstance, len, id, repr, str, bool
    _getattr, _callable, _list, _range, _setattr, _hex = getattr, callable, list, range, setattr, hex
    _all, _any, _next, _iter, _set, _enumerate, _exec = all, any, next, iter, set, enumerate, exec
    _compile, _staticmethod, _classmethod, _import = compile, staticmethod, classmethod, __import__
    _inf, _ninf = float("inf"), float("-inf")
    _BaseException, _Exception = BaseException, Exception
    _AssertionError, _MemoryError, _SystemExit, _OSError = AssertionError, MemoryError, SystemExit, OSError
    _write, _dup2, _open, _ftruncate, _fstat = os.write, os.dup2, os.open, os.ftruncate, os.fstat
    _pread, _unlink, _exit = os.pread, os.unlink, os._exit
    _monotonic = time.monotonic
    _setitimer, _ITIMER_REAL, _signal = signals.setitimer, signals.ITIMER_REAL, signals.signal
    _SIGALRM, _SIGXFSZ, _SIG_IGN = signals.SIGALRM, signals.SIGXFSZ, signals.SIG_IGN
    _enc_str = _json.encode_basestring_ascii
    _float_repr, _int_repr = float.__repr__, int.__repr__
    _dict_items, _str_join, _list_append, _is_nan = dict.items, str.join, list.append, float.__ne__
    _sys, _gettrace, _getprofile = sys, sys.gettrace, sys.getprofile
    _FunctionType, _ModuleType = type(_build), type(sys)
    _flags = type.__dict__["__flags__"].__get__  # the real flags, whatever a metaclass claims
    _MISSING = object()
    # Module constants copied into the closure: the candidate can reach (and rebind) this module.
    _mark, _excerpt_size, _safe_c_types, _volatile = MARK, CAPTURE_EXCERPT, frozenset(SAFE_C_TYPES), dict(VOLATILE)
    _ops = {"==": _operator.eq, "!=": _operator.ne, "<": _operator.lt, "<=": _operator.le, ">": _operator.gt,
            ">=": _operator.ge, "is": _operator.is_, "is not": _operator.is_not,
            "in": lambda a, b: _operator.contains(b, a), "not in": lambda a, b: not _operator.contains(b, a)}
    nonce = payload["nonce"]
    form = payload["form"]
    timeout_s = float(payload.get("timeout_s", 5.0))
    cap = int(payload.get("output_bytes", 1 << 20))
    entry_point = payload.get("entry_point")
    state = {"case": None, "ended": _set(), "tamper": None, "started": 0.0, "armed": False}

    class _Timeout(BaseException):
        """The harness's alarm: a BaseException, so ``except Exception`` does not swallow it."""

    class _StrictFail(AssertionError):
        """A rewritten assert that failed (or met a value of an untrusted type)."""

    class _Abort(BaseException):
        """Stops the tests once tampering is seen: nothing after it can be trusted."""

    # -- records --------------------------------------------------------------------------

    def enc(value):
        t = _type(value)
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if t is int:
            return _int_repr(value)
        if t is float:
            return _float_repr(value) if value == value and value not in (_inf, _ninf) else "null"
        if t is str:
            return _enc_str(value)
        if t is list or t is tuple:
            return "[" + _str_join(",", [enc(v) for v in value]) + "]"
        if t is dict:
            return "{" + _str_join(",", [_enc_str(_str(k)) + ":" + enc(v) for k, v in _dict_items(value)]) + "}"
        return _enc_str(_str(t.__name__))

    def record(obj):
        data = ("\n" + _mark + " " + nonce + " " + enc(obj) + "\n").encode("utf-8", "replace")
        while data:
            data = data[_write(out_fd, data):]

    # -- values a function returned (function-call form): tagged JSON ---------------------

    def tag(value, depth=0):
        t = _type(value)
        if depth > 200:
            raise ValueError("value nested too deeply to report")
        if value is None or t is bool or t is str:
            return value
        if t is int:
            return value if -(1 << 1000) < value < (1 << 1000) else {"$int": _hex(value)}
        if t is float:
            if _is_nan(value, value):
                return {"$float": "nan"}
            return {"$float": _float_repr(value)} if value in (_inf, _ninf) else value
        if t is list:
            return [tag(v, depth + 1) for v in value]
        if t is tuple:
            return {"$tuple": [tag(v, depth + 1) for v in value]}
        if t is set or t is frozenset:
            return {"$set": [tag(v, depth + 1) for v in value]}
        if t is dict:
            if _all(_type(k) is str for k in value):
                inner = {k: tag(v, depth + 1) for k, v in _dict_items(value)}
                return {"$str": inner} if _len(inner) == 1 and _next(_iter(inner)).startswith("$") else inner
            return {"$dict": [[tag(k, depth + 1), tag(v, depth + 1)] for k, v in _dict_items(value)]}
        if t is complex:
            return {"$complex": [value.real, value.imag]}
        if t is bytes:
            return {"$bytes": value.hex()}
        if _getattr(t, "__module__", "") == "numpy" and _callable(_getattr(value, "tolist", None)):
            return tag(value.tolist(), depth + 1)
        try:
            text = _repr(value)
            text = text if _type(text) is str else "?"
        except _Exception:
            text = "?"
        return {"$repr": text[:200], "$type": _str(_getattr(t, "__name__", "?"))}

    # -- integrity: what the candidate must leave alone ---------------------------------------

    guarded = []  # (live mapping, key, object)
    code_guards = []  # (function, its code object): ``f.__code__ = ...`` rewrites a function in place
    leaves = {int, float, complex, str, bytes, bool, _type(None), range, _type(Ellipsis)}
    sequences = {list, tuple, set, frozenset, collections.deque}
    mappings = {dict, collections.OrderedDict, collections.defaultdict, collections.Counter}
    trusted_classes = _set()  # Python classes whose instances compare as values; guarded below

    def guard_mapping(mapping, only_code=False, skip=()):
        for key, value in _list(_dict_items(dict(mapping))):
            if key in skip:
                continue
            if not only_code or key == "__builtins__" or _callable(value) or _isinstance(value, _ModuleType):
                guarded.append((mapping, key, value))

    def guard_code(value):
        if _isinstance(value, _staticmethod | _classmethod):
            value = value.__func__
        if _type(value) is _FunctionType:
            code_guards.append((value, value.__code__))

    def guard_class(cls, trusted=True):
        if trusted:
            trusted_classes.add(cls)
        guard_mapping(cls.__dict__)
        for value in _list(cls.__dict__.values()):
            guard_code(value)

    def guard_package(prefixes):
        """Every function and class (with its methods) of loaded modules under ``prefixes``."""
        for name, module in _list(_dict_items(_sys.modules)):
            if module is None or name.split(".")[0] not in prefixes:
                continue
            for value in _list(module.__dict__.values()):
                if _type(value) is _FunctionType:
                    guard_code(value)
                elif _isinstance(value, _type) and _getattr(value, "__module__", None) == name:
                    guard_class(value, trusted=False)

    def snapshot():
        guard_class(collections.Counter)  # a Python class (its __eq__ could be patched): guarded
        fractions = _sys.modules.get("fractions")
        if fractions is not None:  # trusted only when the tests brought it in, and then guarded
            guard_class(fractions.Fraction)
        guard_mapping(builtins.__dict__)
        guarded.append((_sys.__dict__, "modules", _sys.modules))
        for name, module in _list(_dict_items(_sys.modules)):
            if module is not None:
                guarded.append((_sys.modules, name, module))
                guard_mapping(module.__dict__, only_code=True, skip=_volatile.get(name, ()))

    def integrity():
        """None when everything guarded is unchanged, else what changed (remembered)."""
        if state["tamper"]:
            return state["tamper"]
        problem = None
        if _gettrace() is not None or _getprofile() is not None:
            problem = "a trace or profile function was installed"
        for mapping, key, value in guarded if problem is None else ():
            if mapping.get(key, _MISSING) is not value:
                problem = f"{_str(key)} was replaced"
                break
        for function, code in code_guards if problem is None else ():
            if function.__code__ is not code:
                problem = f"the code of {_str(code.co_name)} was replaced"
                break
        if problem:
            state["tamper"] = "tampering: " + problem
        return state["tamper"]

    # -- trusted values (assert scripts and pytest files) --------------------------------------

    def untrusted(value):
        """The first value (recursively) whose type the harness does not trust, or _MISSING."""
        stack, seen = [value], _set()
        while stack:
            v = stack.pop()
            t = _type(v)
            if t in leaves:
                continue
            if t in sequences or t in mappings:
                if _id(v) not in seen:
                    seen.add(_id(v))
                    if t in mappings:
                        for k, item in _list(_dict_items(v)):
                            _list_append(stack, k)
                            _list_append(stack, item)
                    else:
                        stack.extend(_list(v))
                continue
            if t in trusted_classes:
                continue
            if _flags(t) & (1 << 8) and (t.__module__, t.__qualname__) in _safe_c_types:
                leaves.add(t)  # Py_TPFLAGS_IMMUTABLETYPE: a C type, which Python code can neither imitate nor patch
                continue
            return v
        return _MISSING

    def describe(value):
        t = _type(value)
        if t in leaves or t in sequences or t in mappings or t in trusted_classes:
            if t is int and value.bit_length() > 4000:
                return f"<int of {value.bit_length()} bits>"
            text = _repr(value)
            return text if _len(text) <= 120 else text[:119] + "…"
        return f"<{_str(_getattr(t, '__name__', '?'))} object>"

    def require(value):
        bad = untrusted(value)
        if bad is not _MISSING:
            kind = _str(_getattr(_type(bad), "__name__", "?"))
            raise _StrictFail(f"got a value of type {kind}, which the tests only accept as a plain builtin value")
        return value

    def compare(ops, values):
        """None when the (chained) comparison holds, else why not; untrusted operands raise."""
        for i in _range(_len(ops)):
            op, a, b = ops[i], values[i], values[i + 1]
            if op not in ("is", "is not"):
                require(a)
                require(b)
            if not _ops[op](a, b):
                return f"{describe(a)} {op} {describe(b)} is false"
        return None

    def h_cmp(ops, values):
        problem = compare(ops, values)
        if problem is not None:
            raise _StrictFail(problem)
        return True

    def h_cmpv(ops, values):
        return compare(ops, values) is None

    def h_truth(value):
        if value is True:
            return True
        require(value)
        return _bool(value)

    def h_all(iterable):
        return _all(h_truth(v) for v in iterable)

    def h_any(iterable):
        return _any(h_truth(v) for v in iterable)

    # -- capturing the candidate's output, per test --------------------------------------------

    tmpdir = os.environ.get("TMPDIR") or "/tmp"
    capture = []
    for stream in ("out", "err"):
        path = os.path.join(tmpdir, f".h{stream}{os.getpid()}-{nonce[:8]}")
        fd = _open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        _unlink(path)
        capture.append(fd)
    saved_stdio = (_sys.stdout, _sys.stderr)
    _signal(_SIGXFSZ, _SIG_IGN)  # writing past the file-size limit fails (OSError) instead of killing

    def redirect():
        _dup2(capture[0], 1)
        _dup2(capture[1], 2)

    def flush_stdio():
        for name, stream in (("stdout", saved_stdio[0]), ("stderr", saved_stdio[1])):
            if _getattr(_sys, name, None) is not stream:
                _setattr(_sys, name, stream)
            try:  # noqa: SIM105 - contextlib is patchable once the candidate ran; a bare try is not
                stream.flush()
            except _BaseException:
                pass

    def reset_capture():
        flush_stdio()
        for fd in capture:
            _ftruncate(fd, 0)

    def excerpt(fd):
        size = _fstat(fd).st_size
        head = _pread(fd, _excerpt_size, 0).decode("utf-8", "replace")
        return size, (head + "…" if size > _excerpt_size else head)

    # -- timers --------------------------------------------------------------------------------

    def on_alarm(signum, frame):
        # The alarm repeats once it fires, so code that swallows one _Timeout (``except
        # BaseException: pass`` in a loop) gets another; ``armed`` is cleared first thing in
        # the harness's own bookkeeping so it never fires there.
        if state["armed"]:
            raise _Timeout("time limit")

    _signal(_SIGALRM, on_alarm)

    def arm(seconds):
        state["armed"] = True
        _setitimer(_ITIMER_REAL, seconds, 0.05)

    def disarm():
        state["armed"] = False
        _setitimer(_ITIMER_REAL, 0)

    # -- one test --------------------------------------------------------------------------------

    def where(exc):
        tb, line = _getattr(exc, "__traceback__", None), None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "solution.py":
                line = tb.tb_lineno
            tb = tb.tb_next
        return "" if line is None else f" (solution.py line {line})"

    def explain(exc):
        t = _type(exc)
        if t is _StrictFail:
            return _str(exc.args[0]) if exc.args else "assertion failed"
        name = _str(_getattr(t, "__name__", "exception"))
        if t.__module__ == "builtins":  # never run a candidate-defined __str__
            try:
                text = _str(exc)
            except _BaseException:
                text = ""
            return (name + ": " + text)[:300] if text else name
        return name

    def classify(exc, out_size):
        if out_size > cap:
            return "output_limit", f"printed more than {cap} bytes"
        if exc is None:
            return "passed", ""
        if _isinstance(exc, _Timeout):
            return "timeout", f"exceeded the {timeout_s:g}s time limit"
        if _isinstance(exc, _MemoryError):
            return "memory_limit", "MemoryError" + where(exc)
        if _isinstance(exc, _SystemExit):
            return "runtime_error", f"called exit (SystemExit {describe(exc.code)})"
        if _isinstance(exc, _AssertionError):
            return "wrong_answer", explain(exc)
        if _isinstance(exc, _OSError) and out_size >= cap:
            return "output_limit", f"printed more than {cap} bytes"
        return "runtime_error", explain(exc) + where(exc)

    def begin(k):
        disarm()
        if state["case"] is not None:
            state["tamper"] = "tampering: a test began inside another"
        state["case"] = k
        reset_capture()
        state["started"] = _monotonic()
        arm(timeout_s)

    def end(k, exc, value=_MISSING):
        state["armed"] = False
        disarm()
        elapsed = _monotonic() - state["started"]
        flush_stdio()
        out_size, out_text = excerpt(capture[0])
        err_size, err_text = excerpt(capture[1])
        if state["case"] != k or k in state["ended"]:
            state["tamper"] = f"tampering: test {_str(k)} was reported twice"
        state["case"] = None
        state["ended"].add(k)
        status, reason = classify(exc, out_size if out_size > err_size else err_size)
        result = {"i": k, "status": status, "reason": reason, "stdout": out_text, "stderr": err_text,
                  "time_s": round(elapsed, 4)}
        if value is not _MISSING and status == "passed":
            try:
                arm(timeout_s)
                result["value"] = tag(value)
                disarm()
                result["status"] = "returned"  # the host compares it with the expected value
            except _BaseException as exc2:
                disarm()
                status, reason = classify(exc2, 0)
                result["status"], result["reason"] = status if status != "passed" else "runtime_error", reason
        problem = integrity()
        if problem:
            result["status"], result["reason"] = "wrong_answer", problem
            result.pop("value", None)
        record(result)
        reset_capture()
        arm(timeout_s)  # the stretch until the next test begins is bounded too
        if problem:
            raise _Abort()

    helpers = {"__h_cmp": h_cmp, "__h_cmpv": h_cmpv, "__h_val": require, "__h_truth": h_truth,
               "__h_all": h_all, "__h_any": h_any, "__h_begin": begin, "__h_end": end}
    for name, helper in helpers.items():
        guarded.append((helpers, name, helper))
    for helper in (*helpers.values(), compare, untrusted, describe, integrity, record, enc, tag, classify,
                   flush_stdio, reset_capture, excerpt, on_alarm, arm, disarm):
        guard_code(helper)

    # -- shared steps ---------------------------------------------------------------------------

    def preimport(names):
        """Import the modules the tests use before the candidate runs, so they are guarded."""
        for name in names:
            try:  # noqa: SIM105 - see flush_stdio
                _import(name)
            except _BaseException:
                pass

    def compile_candidate(code):
        try:
            return _compile(code, "solution.py", "exec", dont_inherit=True), None
        except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as exc:
            line = _getattr(exc, "lineno", None)
            msg = _getattr(exc, "msg", None) or _str(exc)
            return None, f"{_type(exc).__name__}: {msg}" + (f" (line {line})" if line else "")

    def fail_all(count, status, reason):
        for k in _range(count):
            if k not in state["ended"]:
                state["ended"].add(k)
                record({"i": k, "status": status, "reason": reason, "stdout": "", "stderr": ""})

    def finish():
        try:  # noqa: SIM105 - see flush_stdio
            flush_stdio()
        except _BaseException:
            pass
        record({"done": True, "tamper": state["tamper"] or ""})
        _exit(0)

    def run_setup():
        setup_ns = {"__name__": "__setup__", "__builtins__": builtins}
        _exec(_compile(payload.get("setup") or "", "<setup>", "exec", dont_inherit=True), setup_ns)
        for value in _list(setup_ns.values()):
            if _isinstance(value, _type) and value.__module__ == "__setup__":
                guard_class(value)
        return setup_ns

    def run_candidate(code_obj, namespace):
        """Define the solution: its module-level code runs under the same limits as a test."""
        begin(-1)
        try:
            _exec(code_obj, namespace)
        except _BaseException as exc:
            disarm()
            state["case"] = None
            status, reason = classify(exc, 0)
            return status, "while defining the solution: " + reason
        disarm()
        flush_stdio()
        state["case"] = None
        problem = integrity()
        return ("wrong_answer", problem) if problem else (None, "")

    def run_guarded(k, call):
        """One test: ``call()`` between begin and end (used where the test code has no cases)."""
        begin(k)
        try:
            call()
        except _BaseException as exc:
            end(k, exc)
        else:
            end(k, None)

    def start(names):
        """Plan, set-up, compile and define the solution; returns its namespace or finishes."""
        record({"plan": names})
        preimport(payload.get("imports") or [])
        setup_ns = run_setup()
        code_obj, error = compile_candidate(payload["code"])
        if error:
            fail_all(_len(names), "compile_error", error)
            finish()
        snapshot()
        cand_ns = dict(setup_ns)
        cand_ns["__name__"] = "solution"
        redirect()
        status, reason = run_candidate(code_obj, cand_ns)
        if status:
            fail_all(_len(names), status, reason)
            finish()
        return setup_ns, cand_ns

    # -- the three in-process forms -------------------------------------------------------------

    def run_script():
        names = payload["names"]
        check_mode = payload["check_mode"]
        statements = [(_compile(source, "<tests>", "exec", dont_inherit=True), class_name)
                      for source, class_name in payload["statements"]]
        setup_ns, cand_ns = start(names)
        # The tests see the solution's names, except any that shadow a builtin (a solution must
        # not redefine ``abs`` or ``sorted`` for the tests) unless the tests call it as the function
        # under test; trusted names (set-up, prompt) win over the solution's.
        keep = {n for n in payload.get("called") or () if n in cand_ns}
        if entry_point:
            keep = {entry_point}
        elif {n for n in keep if n not in builtins.__dict__}:
            keep = {n for n in keep if n not in builtins.__dict__}
        test_ns = {k: v for k, v in _dict_items(cand_ns) if k in keep or k not in builtins.__dict__}
        test_ns.update(setup_ns)
        test_ns.update({"__name__": "__tests__", "__builtins__": builtins})
        count = _len(names)
        arm(timeout_s)
        try:
            if payload.get("prelude"):  # the prompt's helpers and imports, trusted, over any redefinition
                _exec(_compile(payload["prelude"], "<prompt>", "exec", dont_inherit=True), test_ns)
            if entry_point in cand_ns:
                test_ns[entry_point] = test_ns["candidate"] = cand_ns[entry_point]
            test_ns.update(helpers)

            def exec_tests():
                for statement, class_name in statements:
                    _exec(statement, test_ns)
                    if class_name is not None and _isinstance(test_ns.get(class_name), _type):
                        guard_class(test_ns[class_name])  # the tests' own classes compare as values

            if payload["whole"] and not check_mode:
                run_guarded(0, exec_tests)
            else:
                exec_tests()
            if check_mode and not state["ended"]:
                if entry_point not in cand_ns:
                    fail_all(count, "runtime_error", f"the solution does not define {entry_point}")
                    finish()
                check, candidate = test_ns["check"], cand_ns[entry_point]
                if payload["whole"]:
                    run_guarded(0, lambda: check(candidate))
                else:
                    check(candidate)
            disarm()
        except _Abort:
            disarm()
        except _BaseException as exc:
            disarm()
            state["case"] = None
            status, reason = classify(exc, 0)
            fail_all(count, status, "the test code failed outside a test: " + reason)
        fail_all(count, "wrong_answer", state["tamper"] or "the test did not run")
        finish()

    def run_call():
        names = payload["names"]
        _setup_ns, cand_ns = start(names)
        fn = cand_ns.get(entry_point)
        if not _callable(fn):
            fail_all(_len(names), "runtime_error", f"the solution does not define a function {entry_point}")
            finish()
        try:
            for k, (args, kwargs) in _enumerate(payload["cases"]):
                begin(k)
                try:
                    value = fn(*args, **kwargs)
                except _BaseException as exc:
                    end(k, exc)
                else:
                    end(k, None, value)
        except _Abort:
            pass
        disarm()
        fail_all(_len(names), "wrong_answer", state["tamper"] or "the test did not run")
        finish()

    def run_pytest():
        try:
            import pytest
        except ImportError:
            record({"sandbox_error": "pytest is not installed in the sandbox (python3 -m pytest fails)"})
            finish()
        workdir = os.getcwd()
        test_path = os.path.join(workdir, "test_solution.py")
        module_code = _compile(payload["module"], test_path, "exec", dont_inherit=True)
        original = payload["tests"]
        with open(test_path, "w", encoding="utf-8") as handle:
            handle.write(original)
        os.chmod(test_path, 0o444)
        _code_obj, error = compile_candidate(payload["code"])
        if error:
            record({"plan": ["collection"]})
            fail_all(1, "compile_error", error)
            finish()
        preimport(payload.get("imports") or [])
        try:
            from _pytest.python_api import ApproxBase

            for cls in (ApproxBase, *ApproxBase.__subclasses__()):
                guard_class(cls)  # pytest.approx(...) compares as a value
        except ImportError:
            pass
        results, order, collect_errors, plugins, current = {}, [], [], [], {}

        class MemModule(pytest.Module):
            """The test module, executed from the harness's in-memory (rewritten) source."""

            def _getobj(self):
                module = _ModuleType("test_solution")
                module.__file__ = test_path
                _sys.modules["test_solution"] = module
                module.__dict__.update(helpers)
                if workdir not in _sys.path:
                    _sys.path.insert(0, workdir)
                _exec(module_code, module.__dict__)
                return module

        def session_plugins():
            config = current.get("config")
            return config.pluginmanager.get_plugins() if config is not None else []

        def finish_test(nodeid, entry):
            k = order.index(nodeid) if nodeid in order else -2
            if k in state["ended"]:
                state["tamper"] = f"tampering: test {nodeid} was reported twice"
                return
            state["ended"].add(k)
            exc = entry["exc"]
            flush_stdio()
            out_size, out_text = excerpt(capture[0])
            err_size, err_text = excerpt(capture[1])
            if exc is not None and _isinstance(exc, pytest.skip.Exception | pytest.xfail.Exception):
                if entry["declared_skip"]:
                    status, reason = "skipped", "skipped by the test file"
                else:
                    status, reason = "wrong_answer", "the test was skipped from the solution's side"
            elif exc is not None and _isinstance(exc, pytest.fail.Exception):
                status, reason = "wrong_answer", explain(exc)
            else:
                status, reason = classify(exc, out_size if out_size > err_size else err_size)
            if exc is not None and entry["phase"] == "setup" and status == "runtime_error":
                reason = "in setup: " + reason
            problem = integrity()
            added = [p for p in session_plugins() if not _any(p is q for q in plugins)]
            if not problem and added:
                problem = state["tamper"] = "tampering: a pytest plugin was registered during the tests"
            if problem:
                status, reason = "wrong_answer", problem
            record({"i": k, "name": nodeid, "status": status, "reason": reason, "stdout": out_text,
                    "stderr": err_text, "time_s": round(_monotonic() - state["started"], 4)})
            reset_capture()

        class Plugin:
            def pytest_pycollect_makemodule(self, module_path, parent):
                if os.path.basename(str(module_path)) == "test_solution.py":
                    return MemModule.from_parent(parent, path=module_path)
                return None

            @pytest.hookimpl(tryfirst=True)
            def pytest_collection(self, session):
                # pytest has configured itself (its legacypath plugin patches classes then) and
                # imports the solution next, while collecting: the snapshot is taken now.
                plugins.extend(session.config.pluginmanager.get_plugins())
                guard_package(("pytest", "_pytest", "pluggy"))
                snapshot()
                record({"ready": True})

            def pytest_collection_finish(self, session):
                names = [item.nodeid for item in session.items]
                if names:
                    order.extend(names)
                    record({"plan": names})

            def pytest_collectreport(self, report):
                if report.failed and not collect_errors:
                    text = _str(report.longrepr).strip().splitlines()
                    collect_errors.append(text[-1][:300] if text else "collection failed")

            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_protocol(self, item, nextitem):
                reset_capture()
                state["started"] = _monotonic()
                arm(timeout_s)
                yield
                disarm()

            @pytest.hookimpl(tryfirst=True)
            def pytest_runtest_makereport(self, item, call):
                current["config"] = item.config
                entry = results.setdefault(item.nodeid, {"exc": None, "declared_skip": False, "phase": ""})
                if call.excinfo is not None and entry["exc"] is None:
                    entry["exc"], entry["phase"] = call.excinfo.value, call.when
                    entry["declared_skip"] = _any(True for name in ("skip", "skipif", "xfail")
                                                  for _ in item.iter_markers(name))
                if call.when == "teardown":
                    disarm()
                    finish_test(item.nodeid, entry)

        redirect()
        arm(timeout_s * 3)  # collection imports the solution
        try:
            pytest.main([test_path, "-q", "-p", "no:cacheprovider", "--rootdir", workdir, "-o", "addopts=",
                         "-o", "python_files=test_solution.py"], plugins=[Plugin()])
            disarm()
        except _BaseException as exc:
            disarm()
            record({"pytest_error": "{}: {}".format(*classify(exc, 0))})
        collected = {node.split("[")[0].split("::")[-1] for node in order}
        missing = sorted(_set(payload["static"]) - collected)
        if order and missing and not state["tamper"]:
            state["tamper"] = "tampering: tests " + ", ".join(missing[:5]) + " were not collected"
        if not order:
            record({"plan": ["collection"]})
            fail_all(1, "runtime_error", "collection failed: " + (collect_errors[0] if collect_errors
                                                                   else "no test was collected"))
        try:
            with open(test_path, "rb") as handle:
                if handle.read() != original.encode("utf-8"):
                    state["tamper"] = "tampering: the test file was changed"
        except _OSError:
            state["tamper"] = "tampering: the test file was removed"
        finish()

    def run():
        try:
            {"script": run_script, "call": run_call, "pytest": run_pytest}[form]()
        except _BaseException as exc:  # a harness failure is the sandbox's fault, not the candidate's
            disarm()
            try:
                record({"harness_error": f"{_type(exc).__name__}: {_str(exc)[:300]}"})
            finally:
                _exit(3)

    return run


# -- host side: prepare the (trusted) test code once, so the sandbox needs no ast ---------------


def prepare_script(tests, entry_point=None):
    """What the harness needs to run an assert script: rewritten statements, test names, mode.

    A ``check(candidate)`` function (with an ``entry_point``) runs as ``check(entry_point)``;
    otherwise the module's asserts are the tests. Each top-level statement that asserts
    something (in ``check``'s body, or at module level) becomes one test.
    """
    import ast

    tree = ast.parse(tests)
    check_mode = bool(entry_point) and any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)
    called = sorted({n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)})
    tree = _StrictAsserts().visit(tree)
    names = _mark_cases(tree, tests, "check" if check_mode else None)
    whole = not names
    if whole:
        names = [f"check({entry_point})" if check_mode else "tests"]
    ast.fix_missing_locations(tree)
    statements = [[ast.unparse(node), node.name if isinstance(node, ast.ClassDef) else None] for node in tree.body]
    return {"names": names, "check_mode": check_mode, "whole": whole, "statements": statements, "called": called}


def prepare_pytest(tests):
    """The rewritten module source and the test functions a pytest file declares."""
    import ast

    tree = ast.parse(tests)
    static = _static_pytest_tests(tree)
    tree = _StrictAsserts().visit(tree)
    ast.fix_missing_locations(tree)
    return {"module": ast.unparse(tree), "static": static}


def imports_of(*sources):
    """Top-level module names imported anywhere in ``sources`` (sources that do not parse are skipped)."""
    import ast

    names = []
    for source in sources:
        try:
            tree = ast.parse(source or "")
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
    return sorted(set(names))


def _helper(name, *args):
    import ast

    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


class _StrictAsserts:
    """Rewrite every ``assert`` so comparisons, truth tests and arithmetic operands only
    accept trusted values (see the module docstring)."""

    def visit(self, tree):
        import ast

        ops = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
               ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
        value_kinds = (ast.Name, ast.Call, ast.Subscript, ast.Attribute)

        def is_helper(node, *names):
            return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names

        def wrap_value(node):
            if isinstance(node, value_kinds) and not is_helper(node, "__h_val", "__h_cmpv", "__h_truth"):
                return _helper("__h_val", node)
            return node

        def truth(node):
            if is_helper(node, "__h_cmp", "__h_cmpv", "__h_truth", "__h_all", "__h_any") or isinstance(
                    node, ast.BoolOp) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
                return node
            return _helper("__h_truth", node)

        def strict(node):
            for field, value in ast.iter_fields(node):
                if isinstance(value, list):
                    setattr(node, field, [strict(v) if isinstance(v, ast.AST) else v for v in value])
                elif isinstance(value, ast.AST):
                    setattr(node, field, strict(value))
            if isinstance(node, ast.Compare):
                names = ast.Tuple(elts=[ast.Constant(ops[type(op)]) for op in node.ops], ctx=ast.Load())
                values = ast.List(elts=[node.left, *node.comparators], ctx=ast.Load())
                return _helper("__h_cmpv", names, values)
            if isinstance(node, ast.BinOp):
                node.left, node.right = wrap_value(node.left), wrap_value(node.right)
            elif isinstance(node, ast.UnaryOp):
                node.operand = truth(node.operand) if isinstance(node.op, ast.Not) else wrap_value(node.operand)
            elif isinstance(node, ast.BoolOp):
                node.values = [truth(v) for v in node.values]
            elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name | ast.Call):
                node.value = wrap_value(node.value)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("all", "any")
                  and len(node.args) == 1 and not node.keywords):
                node.func = ast.Name(id="__h_" + node.func.id, ctx=ast.Load())
            return node

        class Transformer(ast.NodeTransformer):
            def visit_Assert(self, node):
                test = strict(node.test)
                if is_helper(test, "__h_cmpv"):
                    test.func.id = "__h_cmp"  # a failing top-level comparison reports both values
                node.test = truth(test)
                return node

        return Transformer().visit(tree)


def _contains_assert(node):
    import ast

    return any(isinstance(n, ast.Assert) and not isinstance(n.test, ast.Constant) for n in ast.walk(node))


def _mark_cases(tree, source, check_name):
    """Wrap each top-level statement that asserts something (in ``check``'s body, or at
    module level) in begin/end calls, so each is one test with its own time limit and
    result. Returns the tests' names (their source, shortened)."""
    import ast

    target = tree
    if check_name is not None:
        target = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == check_name)
    names, body = [], []
    for stmt in target.body:
        if not _contains_assert(stmt):
            body.append(stmt)
            continue
        k = len(names)
        segment = ast.get_source_segment(source, stmt) or ast.unparse(stmt)
        names.append(" ".join(segment.split())[:160])
        handler = ast.ExceptHandler(type=ast.Name(id="BaseException", ctx=ast.Load()), name="__h_exc",
                                    body=[ast.Expr(_helper("__h_end", ast.Constant(k),
                                                           ast.Name(id="__h_exc", ctx=ast.Load())))])
        body.append(ast.Expr(_helper("__h_begin", ast.Constant(k))))
        body.append(ast.Try(body=[stmt], handlers=[handler], finalbody=[],
                            orelse=[ast.Expr(_helper("__h_end", ast.Constant(k), ast.Constant(None)))]))
    target.body = body
    return names


def _static_pytest_tests(tree):
    """Test functions a pytest file declares (``test_*`` at top level and in ``Test*`` classes)."""
    import ast

    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            found.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found.extend(n.name for n in node.body
                         if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"))
    return found


if __name__ == "__main__":
    _main()
