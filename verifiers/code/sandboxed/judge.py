"""The judge: runs the tests in a process the candidate's code never runs in.

Runs in the sandbox as ``python3 -I -c <wire.py source + this source>``, as a user other
than the candidate's, in a directory the candidate cannot read, with the payload (tests,
limits, a nonce) on stdin and a socket to the candidate's keeper on file descriptor 3
(see ``candidate.py``). Results leave as ``RESULT <nonce> <json>`` lines on stdout.

The tests see the candidate only through stand-ins: a function of the solution is a
:class:`Remote` whose call sends the arguments as plain data and builds the judge's own
objects from the plain data that comes back. So every comparison, every assert and every
standard-library module the tests use belong to this process: patching ``int.__eq__``,
``string.ascii_lowercase`` or the harness's tables in the candidate's process changes
nothing here, and a returned object whose ``__eq__`` always says True cannot even be
compared (it stays in the candidate's process; comparing it fails the test with
``unsupported_value``). Defined treatments:

* a list, dict, set or bytearray argument the candidate changed in place is copied back
  into the test's own object after the call (in-place sorts are testable), and a return
  value that *is* such an argument is the test's own object (identity tests work);
* an exception of a builtin type is raised here as the judge's own exception of that type
  and message (``pytest.raises(ValueError)`` works); any other exception is a
  :class:`RemoteError`;
* every test has its own time limit; a test that runs out (or a candidate that dies) gets
  a fresh worker for the next test, with the solution loaded again;
* the tests' names are the tests': the solution gives them only its entry points (chosen on
  the host, see ``code/names.py``); a value of one of the task's classes (set-up, prelude) is
  rebuilt here as that class; a function of the tests the solution holds is called back here;
* in a pytest run, what the solution prints is written to this process's stdout/stderr
  during the test (``capsys`` reads it), ``monkeypatch.setattr(solution, ...)`` changes
  the name in the solution's module, and what the test patches around it (environment,
  directory, argv, stdin, ``builtins.input``, a module's attribute) is sent to its process
  before each request (:class:`Surroundings`);
* the solution's objects take Python's protocols as requests (``next``, ``with``, ``await``,
  ``async for``/``with``, ``isinstance``); a context manager of the solution never swallows the
  test's exception, and a form that cannot be supported safely is ``unsupported_test``.
"""

import builtins
import contextlib
import os
import signal
import socket
import sys
import time

from .wire import (  # sandbox: inlined
    FRAME,
    Channel,
    Classes,
    WireError,
    attributes,
    decode,
    encode,
    instance_of,
    rebuildable,
)

MARK = "RESULT"
EXCERPT = 400
# Never taken from the solution for the tests: names pytest and the test module give meaning to.
# The module the tests run as: ``python tests.py`` runs them as ``__main__`` (so its
# ``if __name__ == "__main__":`` block runs, and its classes are the task's).
TESTS_MODULE = "__main__"
RESERVED = ("pytestmark", "pytest_plugins", "setup_module", "teardown_module", "setup_function",
            "teardown_function", "setUpModule", "tearDownModule", "conftest")


class Timeout(BaseException):
    """A test ran out of time (a BaseException: ``except Exception`` in a test does not eat it)."""


class UnsupportedValue(TypeError):
    """The tests asked a value that lives in the candidate's process to compare itself."""


class UnsupportedTest(BaseException):
    """The test uses the solution in a way the judge cannot support safely (a context manager of
    the solution that would swallow the test's exception, a patch that cannot reach the solution's
    process): the test fails with status ``unsupported_test`` and a reason that names the construct.
    A BaseException, so that the test's own ``except Exception`` does not hide it."""


class RemoteError(Exception):
    """The candidate raised an exception of a type that is not a builtin."""

    def __init__(self, info):
        super().__init__(info.get("type", "Exception") + (": " + info["message"] if info.get("message") else ""))
        self.info = info


class CandidateGone(Exception):
    """The candidate's worker died or broke the protocol."""

    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status


class Candidate:
    """The judge's handle on the candidate's keeper and its current worker."""

    def __init__(self, setup):
        self.control = Channel(socket.socket(fileno=3))
        self.setup = setup
        self.channel = None
        self.generation = 0
        self.output = {"out": "", "err": "", "out_size": 0, "err_size": 0}
        self.classes = TaskClasses()  # set-up and prelude classes: the solution's values of theirs are rebuilt
        self.sendable = TaskClasses()  # those and the tests' own: the tests' values sent as their data
        self.cache = Classes()  # the namedtuple and enum classes this job rebuilt (capped; this job's only)
        self.callbacks = {}  # our functions the solution holds, by number
        self.surroundings = None  # a pytest run: what its tests patch around the solution (Surroundings)
        self.defined = {}  # the solution's names and their kinds (from loading it)
        self.syncing = False
        self.forward = False  # the solution's output comes whole (pytest captures it during a test)
        self.forwarding = False  # ... and goes to our stdout/stderr: only inside a test, where pytest captures
        self.rebuilding = 0

    # -- workers --------------------------------------------------------------------------

    def start(self):
        """A fresh worker with the solution loaded; returns the load reply."""
        self.generation += 1
        self.channel = None
        self.control.send({"op": "spawn"})
        header, fds = b"", []
        while len(header) < FRAME.size:
            data, got, _flags, _addr = socket.recv_fds(self.control.sock, FRAME.size - len(header), 1)
            if not data:
                raise CandidateGone("runtime_error", "the solution's process ended")
            header += data
            fds += got
        (size,) = FRAME.unpack(header)
        self.control._exact(size)
        if not fds:
            raise CandidateGone("runtime_error", "the solution's process broke the protocol")
        self.channel = Channel(socket.socket(fileno=fds[0]))
        if self.surroundings is not None:
            self.surroundings.sent = self.surroundings.baseline()  # a fresh worker has its own, unpatched
        reply = self.request({"op": "load", "setup": self.setup, "forward": self.forward})
        return reply

    def restart(self):
        """After a timeout or a crash: stop the worker (the keeper kills it) and start another."""
        self.channel = None
        try:
            self.control.send({"op": "kill"})
            self.control.receive()
        except (OSError, EOFError, WireError):
            pass
        self.start()

    def ended(self):
        """How the current worker ended (asked of the keeper after it closed its socket)."""
        try:
            self.control.send({"op": "status", "wait": True})
            return str(self.control.receive().get("exit") or "")
        except (OSError, EOFError, WireError):
            return ""

    # -- requests -------------------------------------------------------------------------

    def request(self, message):
        if self.channel is None:
            raise CandidateGone("runtime_error", "the solution's process is gone")
        if self.forwarding and self.surroundings is not None and not self.syncing:
            self.sync()
        try:
            self.channel.send(message)
            reply = self.channel.receive()
            while "callback" in reply:  # the solution calls one of our functions while it works
                self.channel.send(self.serve_callback(reply))
                reply = self.channel.receive()
        except WireError as exc:
            self.channel = None
            raise CandidateGone(exc.status, str(exc)) from None
        except (EOFError, OSError):
            self.channel = None
            how = self.ended()
            status = "memory_limit" if how == "signal 9" else "runtime_error"
            raise CandidateGone(status, "the solution's process died" + (f" ({how})" if how else "")) from None
        for key in ("out", "err"):
            size = reply.get(key + "_size")
            if type(size) is int and size > 0:
                self.output[key + "_size"] += size
                if not self.output[key]:
                    self.output[key] = str(reply.get(key, ""))[:EXCERPT + 1]
            if self.forwarding and type(reply.get(key + "_full")) is str:  # for pytest's capsys and capfd
                (sys.stdout if key == "out" else sys.stderr).write(reply[key + "_full"])
        if "wire_error" in reply:
            status, text = [*list(reply["wire_error"]), "", ""][:2]
            raise WireError(str(status) if status in ("output_limit", "unsupported_value") else "unsupported_value",
                            str(text)[:200])
        if "raised" in reply:
            raise_remote(reply["raised"])
        return reply

    def serve_callback(self, message):
        """Run the function of ours the solution called (by number) on the arguments it sent;
        its answer, or what it raised, goes back. A timeout or a lost candidate ends the test."""
        function = self.callbacks.get(message.get("callback"))
        try:
            if function is None:
                raise TypeError("an unknown function of the tests")
            args = [self.value({"value": a}) for a in message.get("args") or []]
            kwargs = {str(k): self.value({"value": v}) for k, v in (message.get("kwargs") or {}).items()}
            return {"returned": self.send_value(function(*args, **kwargs))}
        except (Timeout, CandidateGone):
            raise
        except BaseException as exc:
            return {"raised": {"type": type(exc).__name__, "message": str(exc)[:300]}}

    def value(self, reply, args=(), kwargs=None):
        data = reply.get("value")
        if type(data) is dict and len(data) == 1 and "$arg" in data and type(data["$arg"]) is int \
                and 0 <= data["$arg"] < len(args):
            return args[data["$arg"]]
        if type(data) is dict and len(data) == 1 and "$kwarg" in data and kwargs and data["$kwarg"] in kwargs:
            return kwargs[data["$kwarg"]]
        generation = self.generation
        return decode(data, lambda ref, type_name: self.stand_in(ref, type_name, generation), self.classes,
                      inside=lambda ref, type_name: self.rebuilt(ref, type_name, generation), cache=self.cache)

    def stand_in(self, ref, type_name, generation):
        """What the tests get for an object of the solution: the task's own object rebuilt from its
        data, else a :class:`Remote` (a coroutine's is a coroutine of ours, so ``asyncio.run`` takes it)."""
        obj = self.rebuilt(ref, type_name, generation)
        if obj is not None:
            return obj
        remote = Remote(self, generation, ref=ref, type_name=type_name)
        return awaiting(remote) if type_name == "coroutine" else remote

    def rebuilt(self, ref, type_name, generation):
        """An instance of one of the task's own plain classes (a set-up's or prelude's ``Point``),
        rebuilt here from its attributes as the task's class, so its ``__eq__``, ``isinstance`` and
        methods are the task's; None when it cannot be from plain data (an attribute that is an
        object of the solution's, or one the class does not allow: see ``wire.instance_of``)."""
        klass = self.classes.get(type_name)
        if not rebuildable(klass) or self.rebuilding >= 50:
            return None
        self.rebuilding += 1
        try:
            reply = self.request({"op": "state", "ref": ref})
            table = decode(reply.get("value"), classes=self.classes, cache=self.cache, plain=True,
                           inside=lambda inner, name: self.rebuilt(inner, name, generation))
            return instance_of(klass, table)
        except (CandidateGone, Timeout, UnsupportedTest):
            raise
        except BaseException:
            return None
        finally:
            self.rebuilding -= 1

    def send_value(self, value):
        generation = self.generation

        def keep(obj):
            if type(obj) is Remote:
                if obj._ref is None:  # a name of the solution's, handed back to it (issubclass, a function)
                    ref = self.request({"op": "keep", "global": obj._name}).get("ref")
                    return ref if type(ref) is int else None
                if obj._generation == generation:
                    return obj._ref
                return None
            name = getattr(type(obj), "__name__", None)
            if type(name) is str and self.sendable.get(name) is type(obj) and rebuildable(type(obj)) \
                    and self.defined.get(name) == "class":  # the solution rebuilds it as its own class
                return {"$instance": [name, encode(attributes(obj), keep)]}
            if callable(obj) and not reaches_out(obj):  # a key function, a patched helper: called back
                self.callbacks[len(self.callbacks) + 1] = obj
                return {"$callback": len(self.callbacks)}
            return None

        return encode(value, keep)

    def sync(self):
        """Hand the solution's process what the test changed around it since the run began (its
        environment, directory, argv, stdin, a builtin, a module attribute it monkeypatched), when
        that changed since the last request: the patch reaches the code it is meant for."""
        state = self.surroundings.now()
        if self.surroundings.same(state, self.surroundings.sent):
            return
        self.syncing = True
        try:
            message = self.surroundings.message(state, self.send_value)
            problems = self.request({"op": "env", **message}).get("value")
        finally:
            self.syncing = False
        self.surroundings.sent = state
        if problems:
            raise UnsupportedTest(str(problems[0])[:300])

    def call(self, target, args, kwargs):
        sent = [self.send_value(a) for a in args]
        sent_kw = {str(k): self.send_value(v) for k, v in kwargs.items()}
        reply = self.request({"op": "call", **target, "args": sent, "kwargs": sent_kw})
        for where, data in reply.get("mutated") or ():
            original = args[where] if type(where) is int and 0 <= where < len(args) else kwargs.get(where)
            copy_back(original, self.value({"value": data}))
        return self.value(reply, args, kwargs)


class TaskClasses:
    """The task's own classes by name. Two sets of them (see ``Candidate``): what a value *from* the
    solution may be rebuilt as — the set-up's and the prelude's, the code both processes ran before any
    test, never a class only the tests define (the solution never had it, so a value "of" it is one the
    solution made up: its own class of that name, with a tolerance or wildcard attribute the tests'
    ``__eq__`` would trust) — and what a value the tests send *to* the solution may travel as, which
    includes the tests' own classes (the solution rebuilds those as its own, or not at all)."""

    MODULES = (TESTS_MODULE, "solution", "test_solution")  # the tests' namespace, the prelude's, a pytest file

    def __init__(self, *spaces):
        self.spaces = list(spaces)

    def get(self, name, default=None):
        for space in self.spaces:
            space = space() if callable(space) else space
            value = space.get(name) if type(space) is dict else None
            if isinstance(value, type) and getattr(value, "__module__", None) in self.MODULES:
                return value
        return default


async def awaiting(remote):
    """A coroutine of ours standing in for one of the solution's: awaiting it (``asyncio.run``,
    ``await``, ``gather``) runs the solution's to completion in its own process and event loop."""
    return remote._ask("await")


# What the judge never runs for the solution, even when the tests hand it over: a way into the
# judge's files, processes, names or interpreter (the solution would read the tests through it).
_REACHING_BUILTINS = frozenset({"eval", "exec", "compile", "open", "__import__", "getattr", "setattr", "delattr",
                                "globals", "locals", "vars", "input", "breakpoint", "help", "exit", "quit", "dir"})
_REACHING_MODULES = ("os", "posix", "nt", "sys", "subprocess", "shutil", "io", "_io", "pathlib", "importlib",
                     "ctypes", "_ctypes", "socket", "_socket", "signal", "_signal", "gc", "inspect", "pickle",
                     "marshal", "builtins", "runpy", "code", "pty", "resource", "mmap", "tempfile", "glob")


def reaches_out(function):
    """Whether calling ``function`` could reach beyond the values it is given (see above)."""
    module = getattr(function, "__module__", None)
    if module is None and isinstance(getattr(function, "__self__", None), type(sys)):
        module = function.__self__.__name__
    if module == "builtins" or function in builtins.__dict__.values():
        return getattr(function, "__name__", "") in _REACHING_BUILTINS
    return type(module) is str and module.split(".")[0] in _REACHING_MODULES


def copy_back(original, new):
    """Make the test's object hold what the candidate's copy holds after the call."""
    t = type(original)
    if t is not type(new):
        return
    if t is list or t is bytearray:
        original[:] = new
    elif t is dict or t is set:
        original.clear()
        original.update(new)


def raise_remote(info):
    if type(info) is not dict:
        raise RemoteError({"type": "Exception"})
    info = {"type": str(info.get("type", "Exception"))[:100], "builtin": info.get("builtin") is True,
            "message": str(info.get("message", ""))[:300], "line": info.get("line"),
            "memory": info.get("memory") is True, "recursion": info.get("recursion") is True}
    kind = getattr(builtins, info["type"], None) if info["builtin"] else None
    if isinstance(kind, type) and issubclass(kind, Exception) and kind not in (StopIteration, StopAsyncIteration):
        try:
            exc = kind(info["message"]) if info["message"] else kind()
        except Exception:
            exc = RemoteError(info)
        exc.remote = info
        raise exc
    raise RemoteError(info)


class Remote:
    """A value that lives in the candidate's process: a function, a class, an instance, an
    iterator. Using it sends a request; comparing it is refused (UnsupportedValue)."""

    __slots__ = ("_candidate", "_generation", "_name", "_ref", "_type")

    def __init__(self, candidate, generation, ref=None, name=None, type_name="object"):
        object.__setattr__(self, "_candidate", candidate)
        object.__setattr__(self, "_generation", generation)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_type", type_name)

    def _target(self):
        candidate = object.__getattribute__(self, "_candidate")
        if self._name is not None:
            return candidate, {"global": self._name}  # never "name": getattr's own field is called that
        if self._generation != candidate.generation:
            raise CandidateGone("runtime_error", "a value from a solution process that has since been restarted")
        return candidate, {"ref": self._ref}

    def _ask(self, op, **fields):
        candidate, target = self._target()
        return candidate.value(candidate.request({"op": op, **target, **fields}))

    def __call__(self, *args, **kwargs):
        candidate, target = self._target()
        return candidate.call(target, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._ask("getattr", name=name)

    def __setattr__(self, name, value):
        candidate, target = self._target()
        candidate.request({"op": "setattr", **target, "name": name, "value": candidate.send_value(value)})

    def __getitem__(self, key):
        return self._ask("getitem", key=self._candidate.send_value(key))

    def __setitem__(self, key, value):
        candidate, target = self._target()
        candidate.request({"op": "setitem", **target, "key": candidate.send_value(key),
                           "value": candidate.send_value(value)})

    def __len__(self):
        n = self._ask("len")
        if type(n) is not int or n < 0:
            raise UnsupportedValue("len() of a value from the solution did not give a count")
        return n

    def __iter__(self):
        iterator = self._ask("iter")
        while True:
            try:
                yield iterator.__next__()
            except StopIteration:
                return

    def __next__(self):  # next(gen) on the solution's generator or iterator
        candidate, target = self._target()
        reply = candidate.request({"op": "next", **target})
        if reply.get("stop") is True:
            raise StopIteration
        return candidate.value(reply)

    def __contains__(self, item):
        """``x in obj``: the judge compares, one by one, the items the solution's object yields."""
        return any(value is item or value == item for value in self)

    def __instancecheck__(self, obj):  # isinstance(x, solution.Shape): the solution's class answers
        return self._check("isinstance", obj)

    def __subclasscheck__(self, klass):
        return self._check("issubclass", klass)

    def _check(self, op, obj):
        candidate, target = self._target()
        answer = candidate.value(candidate.request({"op": op, **target, "value": candidate.send_value(obj)}))
        if type(answer) is not bool:
            raise UnsupportedValue(f"{op}() with a class of the solution did not give a bool")
        return answer

    def __enter__(self):  # with solution.open_thing() as x: ...
        return self._ask("enter")

    def __exit__(self, kind, exc, tb):
        return self._exited("exit", exc)

    async def __aenter__(self):
        return self._ask("aenter")

    async def __aexit__(self, kind, exc, tb):
        return self._exited("aexit", exc)

    def _exited(self, op, exc):
        """The solution's ``__exit__`` runs (its clean-up is the tests' to see), told only the type
        of the test's exception; it never swallows one: a failed check in the block would pass."""
        if exc is not None and not isinstance(exc, Exception):  # a timeout, an interrupt: nothing more is asked
            return False
        error = None if exc is None else type(exc).__name__ if type(exc).__module__ == "builtins" else "Exception"
        if self._ask(op, error=error) is True and exc is not None:
            raise UnsupportedTest(f"a context manager of the solution ({self._type}) asked to swallow the "
                                  f"{type(exc).__name__} raised in its with-block; the judge never lets the "
                                  "solution decide that a failing block passed")
        return False

    def __await__(self):  # await on an awaitable of the solution's (its own event loop runs it)
        return self._ask("await")
        yield  # a generator: the request goes when the tests await

    def __aiter__(self):
        return self._ask("aiter")

    def __anext__(self):
        return self._anext()

    async def _anext(self):
        candidate, target = self._target()
        reply = candidate.request({"op": "anext", **target})
        if reply.get("stop") is True:
            raise StopAsyncIteration
        return candidate.value(reply)

    def __bool__(self):
        result = self._ask("bool")
        if type(result) is not bool:
            raise UnsupportedValue("bool() of a value from the solution")
        return result

    def __str__(self):
        return str(self._ask("str"))

    def __repr__(self):
        try:
            return str(self._ask("repr"))[:200]
        except Exception:  # not BaseException: a test's time running out must still end the test
            return f"<{self._type} from the solution>"

    def __eq__(self, other):  # even with another stand-in for the same object: the candidate numbers them
        raise UnsupportedValue(f"a value of type {self._type} from the solution cannot be compared "
                               "(only plain data can: numbers, strings, lists, tuples, dicts, sets…)")

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("remote", self._ref, self._name))

    def _refuse(self, *args):
        raise UnsupportedValue(f"a value of type {self._type} from the solution cannot be compared or "
                               "used in arithmetic (only plain data can)")

    __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __abs__ = _refuse
    __index__ = __int__ = __float__ = _refuse


_OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "is": lambda a, b: a is b,
        "is not": lambda a, b: a is not b, "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}


def compare(ops, values):
    """A rewritten ``assert`` comparison (chained as Python chains it); when false, an
    AssertionError that shows both sides."""
    for i, op in enumerate(ops):
        a, b = values[i], values[i + 1]
        if op in ("is", "is not") and type(a) is Remote and type(b) is Remote:
            raise UnsupportedValue("whether two objects of the solution are the same object cannot be checked "
                                   "(only plain data can be compared)")
        if not _OPS[op](a, b):
            raise AssertionError(f"{show(a)} {op} {show(b)} is false")
    return True


def safe_str(value):
    """``str(value)`` for a failure's reason, never raising: an exception's message may hold a value of
    the solution's, whose ``str`` is a request that can fail."""
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"


def show(value):
    if type(value) is Remote:
        return f"<{value._type} from the solution>"
    if type(value) is int and value.bit_length() > 4000:
        return f"<int of {value.bit_length()} bits>"
    try:
        text = repr(value)
    except BaseException:
        return f"<{type(value).__name__}>"
    return text if len(text) <= 120 else text[:119] + "…"


# Modules whose import does something (opens a browser, prints, starts a GUI): never imported
# because the solution's process named them.
_NO_IMPORT = frozenset({"antigravity", "this", "__hello__", "__phello__", "idlelib", "turtle", "turtledemo",
                        "tkinter", "webbrowser", "pydoc", "venv", "ensurepip", "site"})


def own_module(name):
    """The judge's own import of a module the solution's process says a name is bound to."""
    import importlib

    parts = name.split(".")
    if not all(part.isidentifier() for part in parts) or parts[0] in _NO_IMPORT:
        raise UnsupportedValue(f"the solution binds a name to module {name[:80]!r}, which the tests may not import")
    try:
        return importlib.import_module(name)
    except ImportError:
        raise UnsupportedValue(f"module {name[:80]!r} of the solution is not available to the tests") from None


# -- the run ----------------------------------------------------------------------------------


class Judge:
    def __init__(self, payload, out_fd):
        self.payload = payload
        self.nonce = payload["nonce"]
        self.out_fd = out_fd
        self.timeout_s = float(payload.get("timeout_s", 5.0))
        self.cap = int(payload.get("output_bytes", 1 << 20))
        self.entry_point = payload.get("entry_point")
        self.entry_points = [str(n) for n in payload.get("entry_points") or ()]
        self.candidate = Candidate(payload.get("setup") or "")
        self.ended = set()
        self.plan = []  # the tests' names, by number: the plan, then tests found while running
        self.units = []  # the units open now: True for a top-level one, False for one running inside it
        self.checks = 0  # checks run in the current unit
        self.instrumented = set()  # the test frameworks whose checks are counted (instrument_checks)
        self.started = 0.0
        self.begun = None
        signal.signal(signal.SIGALRM, self._alarm)

    # -- records and timers ---------------------------------------------------------------

    def record(self, obj):
        import json

        data = ("\n" + MARK + " " + self.nonce + " " + json.dumps(obj, default=str) + "\n").encode("utf-8", "replace")
        while data:
            data = data[os.write(self.out_fd, data):]

    def _alarm(self, signum, frame):
        raise Timeout()

    def arm(self, seconds):
        signal.setitimer(signal.ITIMER_REAL, seconds)

    def disarm(self):
        signal.setitimer(signal.ITIMER_REAL, 0)

    # -- one test -------------------------------------------------------------------------

    def begin(self, k):
        self.disarm()
        self.begun = k
        self.candidate.output = {"out": "", "err": "", "out_size": 0, "err_size": 0}
        self.started = time.monotonic()
        self.arm(self.timeout_s)

    def end(self, k, exc, value=None, has_value=False, instead=None):
        """Record test ``k``: failed by ``exc``, else passed, or ``instead`` (a status and a reason)
        when a pass means something else (``no_check``: a unit that ran no check; ``skipped``)."""
        self.disarm()
        elapsed = time.monotonic() - self.started
        status, reason = self.classify(exc)
        if status == "passed" and instead is not None:
            status, reason = instead
        result = {"i": k, "status": status, "reason": reason, "time_s": round(elapsed, 4),
                  "stdout": self.candidate.output["out"], "stderr": self.candidate.output["err"]}
        if has_value and status == "passed":
            try:
                result["value"] = encode(value)
                result["status"] = "returned"
            except WireError as err:
                result["status"], result["reason"] = err.status, str(err)
        if k not in self.ended:
            self.ended.add(k)
            self.record(result)
        if status != "passed":
            self.recover_after(exc)

    def recover_after(self, exc):
        """After a failed test: a fresh worker when this one timed out, died or broke the protocol."""
        if isinstance(exc, Timeout | CandidateGone | WireError) or self.candidate.channel is None:
            self.recover()

    def recover(self):
        """A fresh worker for the tests that follow (its load must not fail: it did once)."""
        self.arm(self.timeout_s * 2)
        try:
            self.candidate.restart()
        except BaseException:
            self.candidate.channel = None
        finally:
            self.disarm()

    def classify(self, exc):
        out = max(self.candidate.output["out_size"], self.candidate.output["err_size"])
        if out > self.cap:
            return "output_limit", f"printed more than {self.cap} bytes"
        if exc is None:
            return "passed", ""
        if isinstance(exc, UnsupportedTest):
            return "unsupported_test", str(exc)
        if isinstance(exc, Timeout):
            return "timeout", f"exceeded the {self.timeout_s:g}s time limit"
        if isinstance(exc, CandidateGone | WireError):
            return exc.status, str(exc)
        if isinstance(exc, UnsupportedValue):
            return "unsupported_value", str(exc)
        remote = getattr(exc, "remote", None) if not isinstance(exc, RemoteError) else exc.info
        if isinstance(remote, dict):
            where = f" (solution.py line {remote['line']})" if type(remote.get("line")) is int else ""
            if remote.get("memory"):
                return "memory_limit", "MemoryError" + where
            if isinstance(exc, AssertionError):
                return "wrong_answer", "the solution raised AssertionError" + where
            return "runtime_error", safe_str(exc)[:300] + where
        if isinstance(exc, MemoryError):
            return "memory_limit", "MemoryError while checking a value from the solution"
        if isinstance(exc, AssertionError):
            said = safe_str(exc)
            return "wrong_answer", said[:300] if said else "assertion failed"
        if isinstance(exc, SystemExit):
            return "runtime_error", f"the tests exited with status {safe_str(exc.code)[:100]}"
        if type(exc) is NameError and getattr(exc, "name", None):
            return "runtime_error", (f"the tests use {exc.name}, which neither the row's set-up or prelude nor the "
                                     "solution's entry points (" + ", ".join(self.entry_points or ["none"]) + ") "
                                     "provide: carry it in the row's prelude, or list it in entry_point")
        return "runtime_error", f"{type(exc).__name__}: {safe_str(exc)[:300]}"

    # -- units: what a test of an assert script is --------------------------------------------

    def unit_begin(self, k):
        """A top-level statement of the tests starts (see ``harness.prepare_script``). Inside
        another unit (``check(f)`` called by the tests themselves) it is part of that one."""
        if self.units:
            self.units.append(False)
            return
        self.units.append(True)
        self.checks = 0
        instrument_checks(self)
        self.begin(k)

    def unit_fail(self, k, exc):
        """Unit ``k`` raised: a failed test, wherever it stands (inside another unit, the failure
        is that unit's). The tests' own ``exit(0)`` ends the unit, not the tests."""
        if self.units and not self.units[-1]:
            raise exc
        self.disarm()
        if isinstance(exc, SystemExit) and (exc.code is None or exc.code is False or (type(exc.code) is int
                                                                                     and exc.code == 0)):
            return
        self.end(k, exc)

    def unit_close(self, k):
        """Unit ``k`` is over: if it did not fail, a passed test when it ran a check, else no test."""
        if self.units and not self.units[-1]:
            self.units.pop()
            return
        self.disarm()  # first: the unit's time is up when its statement is
        if self.units:
            self.units.pop()
        if k not in self.ended:
            self.end(k, None, instead=None if self.checks else ("no_check", "ran no check"))

    def ran(self, value=True):
        """A check ran (an ``assert``, a ``unittest`` assertion method); ``value`` is its condition."""
        self.checks += 1
        return value

    def compare(self, ops, values):
        self.checks += 1
        return compare(ops, values)

    def outside(self, call):
        """Run part of the tests that is not itself a unit (a statement, ``check(candidate)``): a
        failure that escapes it anyway fails the unit that was open, or is a test of its own."""
        try:
            call()
        except BaseException as exc:
            self.disarm()
            if self.current is not None and self.current not in self.ended:
                self.end(self.current, exc)
            else:
                self.end(self.add_test("the test code outside a test"), exc)
        finally:
            self.units.clear()

    @property
    def current(self):
        return self.begun if self.units else None

    def add_test(self, name):
        """A test found while the tests run (a ``unittest`` test method): planned before it runs, so a
        run that dies inside it still fails it."""
        self.plan.append(name)
        self.record({"more": [name]})
        return len(self.plan) - 1

    def fail_all(self, count, status, reason):
        for k in range(count):
            if k not in self.ended:
                self.ended.add(k)
                self.record({"i": k, "status": status, "reason": reason, "stdout": "", "stderr": ""})

    def finish(self):
        self.record({"done": True})
        sys.stdout.flush()
        os._exit(0)

    # -- loading the solution ----------------------------------------------------------------

    def load(self, count):
        """Start the candidate and load the solution; on failure every test fails and we stop."""
        self.begin(-1)
        try:
            reply = self.candidate.start()
        except BaseException as exc:
            self.disarm()
            status, reason = self.classify(exc)
            self.fail_all(count, status, "while defining the solution: " + reason)
            self.finish()
        self.disarm()
        if "compile_error" in reply:
            self.fail_all(count, "compile_error", str(reply["compile_error"])[:300])
            self.finish()
        names = reply.get("names")
        if type(names) is not dict:
            self.fail_all(count, "runtime_error", "the solution's process broke the protocol")
            self.finish()
        self.candidate.defined = {str(k): str(v) for k, v in names.items()}
        return self.candidate.defined

    def stand_in(self, name, kind):
        """What a test sees for a name the solution defines."""
        if kind.startswith("module:"):
            return own_module(kind[len("module:"):])
        if kind == "value":
            return self.candidate.value(self.candidate.request({"op": "get", "global": name}))
        return Remote(self.candidate, 0, name=name, type_name=kind)

    # -- the forms -------------------------------------------------------------------------------

    def run_script(self):
        """The whole test program, unit by unit (see ``harness.prepare_script``), as ``python tests.py``
        runs it; then ``check(candidate)``; then every ``unittest.TestCase`` the tests define, each of its
        test methods a test (as ``unittest.main()`` would run them: the harness is the runner)."""
        p = self.payload
        self.plan = list(p["names"])
        count = len(self.plan)
        self.record({"plan": self.plan})
        statements = [compile(source, "<tests>", "exec", dont_inherit=True) for source in p["statements"]]
        ns = {"__name__": TESTS_MODULE, "__builtins__": builtins}
        # Before the tests run (``from unittest import main`` binds ours); any other use is found per unit.
        instrument_checks(self, load=p.get("frameworks") or ())
        exec(compile(p.get("setup") or "", "<setup>", "exec", dont_inherit=True), ns)
        if p.get("prelude"):
            exec(compile(p["prelude"], "<prompt>", "exec", dont_inherit=True), ns)
        # What the set-up and prelude defined, now: the tests' own classes, defined later in ns, are not.
        self.candidate.classes = TaskClasses({k: v for k, v in ns.items() if isinstance(v, type)})
        self.candidate.sendable = TaskClasses(ns)  # live: the classes the tests define as they run count
        for name in p.get("modules") or ():  # used unimported: our own import, never the solution's
            with contextlib.suppress(UnsupportedValue):
                ns[name] = own_module(name)
        defined = self.load(count)
        # The solution's entry points (chosen on the host, see code/names.py) and nothing else:
        # every other name the tests use is the set-up's, the prelude's, a builtin, or missing.
        for name in self.entry_points:
            if name not in defined or name in RESERVED:
                continue
            try:
                ns[name] = self.stand_in(name, defined[name])
            except BaseException as exc:
                status, reason = self.classify(exc)
                self.fail_all(count, status, f"reading {name} from the solution: {reason}")
                self.finish()
        if self.entry_point and self.entry_point in ns:
            ns["candidate"] = ns[self.entry_point]
        ns.update(__h_cmp=self.compare, __h_ran=self.ran, __h_begin=self.unit_begin, __h_fail=self.unit_fail,
                  __h_close=self.unit_close)
        for statement in statements:
            self.outside(lambda statement=statement: exec(statement, ns))
        if p["check_mode"]:
            if self.entry_point not in defined:
                self.fail_all(count, "runtime_error", f"the solution does not define {self.entry_point}")
                self.finish()
            self.outside(lambda: ns["check"](ns[self.entry_point]))
        self.outside(lambda: run_test_cases(self, ns))
        self.fail_all(len(self.plan), "runtime_error", "the test did not run")
        self.finish()

    def run_call(self):
        p = self.payload
        count = len(p["names"])
        self.record({"plan": p["names"]})
        defined = self.load(count)
        if defined.get(self.entry_point) not in ("callable", "class"):
            self.fail_all(count, "runtime_error", f"the solution does not define a function {self.entry_point}")
            self.finish()
        function = Remote(self.candidate, 0, name=self.entry_point, type_name="function")
        for k, (args, kwargs) in enumerate(p["cases"]):
            self.begin(k)
            try:
                value = function(*decode(args), **decode(kwargs))
            except BaseException as exc:
                self.end(k, exc)
            else:
                self.end(k, None, value, has_value=True)
        self.fail_all(count, "runtime_error", "the test did not run")
        self.finish()

    def run_pytest(self):
        run_pytest(self)

    def run(self):
        form = self.payload["form"]
        try:
            {"script": self.run_script, "call": self.run_call, "pytest": self.run_pytest}[form]()
        except BaseException as exc:  # a fault of the judge itself, not of the candidate
            self.disarm()
            try:
                self.record({"harness_error": f"{type(exc).__name__}: {str(exc)[:300]}"})
            finally:
                os._exit(3)


def instrument_checks(judge, load=()):
    """Once the tests use ``unittest`` or ``pytest`` (or, for those in ``load``, before they run): their
    checks count as checks when called — every assertion method of ``unittest.TestCase`` (in a test, or
    a ``TestCase()``'s at top level), ``pytest.raises`` and ``pytest.warns`` — and ``unittest.main()``
    runs nothing: the harness runs the tests' TestCases itself, each test method a test of its own
    (:func:`run_test_cases`)."""
    import importlib

    for name in ("unittest", "pytest"):
        module = sys.modules.get(name)
        if name in judge.instrumented or (module is None and name not in load):
            continue
        judge.instrumented.add(name)
        if module is None:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
        if name == "unittest":
            for attr, value in list(vars(module.TestCase).items()):
                if attr.startswith(("assert", "fail")) and type(value) is type(instrument_checks):
                    setattr(module.TestCase, attr, counted_check(judge, value))
            module.main = lambda *args, **kwargs: None
        else:
            for attr in ("raises", "warns"):
                setattr(module, attr, counted_check(judge, getattr(module, attr)))


def counted_check(judge, function):
    def check(*args, **kwargs):
        judge.checks += 1
        return function(*args, **kwargs)

    check.__name__ = function.__name__
    return check


def run_test_cases(judge, ns):
    """Run every ``unittest.TestCase`` the tests define (in name order, as ``unittest.main()`` loads
    them), each test method its own test with its own time limit, its outcome as unittest gives it:
    a failure, an error, an unexpected success or a skip the test did not declare (``self.skipTest``
    at run time) fails; a declared skip or expected failure (the decorators) does not count."""
    module = sys.modules.get("unittest")
    if module is None:
        return
    classes = []
    for name in sorted(ns):
        value = ns[name]
        if isinstance(value, type) and issubclass(value, module.TestCase) and value.__module__ == TESTS_MODULE \
                and value not in classes:
            classes.append(value)
    if not classes:
        return
    instrument_checks(judge)
    loader = module.TestLoader()
    suite = module.TestSuite([loader.loadTestsFromTestCase(klass) for klass in classes])

    class Result(module.TestResult):
        k = None

        def startTest(self, test):
            super().startTest(test)
            self.k = judge.add_test(f"{type(test).__name__}.{getattr(test, '_testMethodName', test)}"[:160])
            self.failure, self.instead, self.succeeded = None, None, False
            judge.begin(self.k)

        def stopTest(self, test):
            judge.disarm()
            if self.failure is None and self.instead is None and not self.succeeded:
                self.instead = ("runtime_error", "the test did not finish")
            judge.end(self.k, self.failure, instead=self.instead)
            self.k = None
            super().stopTest(test)
            judge.arm(judge.timeout_s)  # class and module fixtures between tests

        def note(self, test, exc):
            if self.k is None:  # a class or module fixture failed: a test of its own
                judge.end(judge.add_test(str(test)[:160]), exc)
            elif self.failure is None:
                self.failure = exc

        def addSuccess(self, test):
            self.succeeded = True

        def addFailure(self, test, err):
            self.note(test, err[1])

        def addError(self, test, err):
            self.note(test, err[1])

        def addSubTest(self, test, subtest, err):
            if err is not None:
                self.note(test, err[1])

        def addSkip(self, test, reason):
            method = getattr(test, getattr(test, "_testMethodName", ""), None)
            if self.k is not None and (getattr(type(test), "__unittest_skip__", False)
                                       or getattr(method, "__unittest_skip__", False)):
                self.instead = ("skipped", "skipped by the tests: " + str(reason)[:200])
            else:
                self.note(test, AssertionError("skipped at run time, which the tests do not declare: "
                                               + str(reason)[:200]))

        def addExpectedFailure(self, test, err):
            self.instead = ("skipped", "an expected failure (unittest.expectedFailure)")

        def addUnexpectedSuccess(self, test):
            self.note(test, AssertionError("an unexpected success: marked expectedFailure, the test passed"))

    result = Result()
    judge.arm(judge.timeout_s)
    try:
        suite.run(result)
    finally:
        judge.disarm()


def run_pytest(judge):
    """pytest on the test file in the judge's own directory; ``solution`` is a module of
    stand-ins for the solution's names (``from solution import *`` brings no pytest hooks,
    marks or test functions: names pytest would give meaning to are never exported)."""
    import types

    p = judge.payload
    try:
        import pytest
    except ImportError:
        judge.record({"sandbox_error": "pytest is not installed in the sandbox"})
        judge.finish()
    test_path = os.path.join(os.getcwd(), "test_solution.py")
    with open(test_path, "w", encoding="utf-8") as handle:
        handle.write(p["tests"])
    ini_path = os.path.join(os.getcwd(), "pytest.ini")  # pinned: no ini file above us is ever read
    with open(ini_path, "w", encoding="utf-8") as handle:
        handle.write("[pytest]\n")
    basetemp = shared_basetemp()
    judge.record({"ready": True})
    first = ["collection"]
    judge.candidate.forward = True  # what the solution prints is the tests' to capture (capsys)
    judge.candidate.surroundings = Surroundings(getattr(pytest, "MonkeyPatch", None))  # patches reach the solution
    try:
        defined = judge.load(1)
    except SystemExit:
        raise
    static = set(p.get("static") or ())

    def exported(name):
        return not name.startswith("_") and name not in RESERVED and not name.lower().startswith(
            ("test", "pytest", "setup", "teardown"))

    class SolutionModule(types.ModuleType):
        def __getattr__(self, name):
            kind = defined.get(name)
            if kind is None or name in RESERVED or (name.startswith("__") and name.endswith("__")):
                raise AttributeError(name)
            value = judge.stand_in(name, kind)
            types.ModuleType.__setattr__(self, name, value)
            return value

        def __setattr__(self, name, value):  # monkeypatch.setattr(solution, ...): the solution's name changes
            if not (name.startswith("__") and name.endswith("__")):
                original = type(value) is Remote and value._name == name and value._ref is None
                message = {"op": "setglobal", "global": name}
                judge.candidate.request({**message, "restore": True} if original else
                                        {**message, "value": judge.candidate.send_value(value)})
            types.ModuleType.__setattr__(self, name, value)

        def __delattr__(self, name):  # monkeypatch's undo of a name the solution did not have
            if not (name.startswith("__") and name.endswith("__")):
                judge.candidate.request({"op": "setglobal", "global": name, "restore": True})
            types.ModuleType.__delattr__(self, name)

    module = SolutionModule("solution")
    types.ModuleType.__setattr__(module, "__file__", "solution.py")
    if p.get("prelude"):  # the row's trusted code: the judge's own definitions, exported like the entry points
        exec(compile(p["prelude"], "<prelude>", "exec", dont_inherit=True), module.__dict__)
    for name in p.get("modules") or ():  # used unimported (the solution's import): our own import
        with contextlib.suppress(UnsupportedValue):
            types.ModuleType.__setattr__(module, name, own_module(name))
    trusted = [n for n in module.__dict__ if exported(n) and n not in ("__file__", "__all__")]
    judge.candidate.classes = TaskClasses(module.__dict__)
    judge.candidate.sendable = TaskClasses(module.__dict__, lambda: getattr(sys.modules.get("test_solution"),
                                                                            "__dict__", None))
    module.__all__ = sorted({*trusted, *(n for n in p.get("exported") or () if n in defined and exported(n))})
    sys.modules["solution"] = module
    results, order, collect_errors = {}, [], []
    outcome_of = pytest_outcome(pytest, judge)

    def finish_test(nodeid, entry):
        k = order.index(nodeid) if nodeid in order else -2
        if k in judge.ended:
            return
        exc, (status, reason) = outcome_of(entry)
        judge.ended.add(k)
        judge.record({"i": k, "name": nodeid, "status": status, "reason": reason,
                      "stdout": judge.candidate.output["out"], "stderr": judge.candidate.output["err"],
                      "time_s": round(time.monotonic() - judge.started, 4)})
        if status not in ("passed", "skipped"):
            judge.recover_after(exc)

    test_file = os.path.realpath(test_path)

    def in_test_file(item):
        """Whether a collected test's function is one the test file defines (a test method a
        TestCase or a Test* class of the file inherits, a parametrized or decorated one among them)."""
        import inspect

        function = getattr(item, "obj", None)
        function = getattr(function, "__func__", function)
        try:
            function = inspect.unwrap(function)
            return os.path.realpath(function.__code__.co_filename) == test_file
        except Exception:
            return False

    class Plugin:
        def pytest_collection_finish(self, session):
            names = [item.nodeid for item in session.items]
            extra = [item.nodeid for item in session.items if not in_test_file(item)]
            if extra:
                judge.record({"plan": names})
                judge.fail_all(len(names), "wrong_answer", "tests the test file does not define: " + ", ".join(extra))
                judge.finish()
            if names:
                order.extend(names)
                judge.record({"plan": names})

        def pytest_collectreport(self, report):
            if report.failed and not collect_errors:
                text = str(report.longrepr).strip().splitlines()
                collect_errors.append(text[-1][:300] if text else "collection failed")

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            judge.candidate.output = {"out": "", "err": "", "out_size": 0, "err_size": 0}
            judge.started = time.monotonic()
            judge.candidate.forwarding = True
            judge.arm(judge.timeout_s)
            yield
            judge.disarm()
            judge.candidate.forwarding = False

        @pytest.hookimpl(hookwrapper=True)
        def pytest_fixture_setup(self, fixturedef, request):
            outcome = yield
            if basetemp and fixturedef.argname in ("tmp_path", "tmpdir"):
                with contextlib.suppress(Exception):
                    open_to_solution(str(outcome.get_result()), basetemp)

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            yield  # after every other implementation (unittest's sets the exception of a TestCase)
            entry = results.setdefault(item.nodeid, {"item": item, "exc": {}, "reports": []})
            if call.excinfo is not None:
                entry["exc"][call.when] = call.excinfo.value

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_teardown(self, item, nextitem):
            yield
            judge.disarm()  # the test's time is up with its teardown, before pytest reports it

        def pytest_runtest_logreport(self, report):
            entry = results.get(report.nodeid)
            if entry is None:
                return
            entry["reports"].append(report)
            if report.when == "teardown":
                finish_test(report.nodeid, entry)

    judge.arm(judge.timeout_s * 3)
    try:
        pytest.main([test_path, "-q", "-p", "no:cacheprovider", "--rootdir", os.getcwd(), "-c", ini_path,
                     "--noconftest", "--confcutdir", os.getcwd(), "-o", "addopts=",
                     "-o", "python_files=test_solution.py", *(["--basetemp", basetemp] if basetemp else [])],
                    plugins=[Plugin()])
        judge.disarm()
    except BaseException as exc:
        judge.disarm()
        judge.record({"pytest_error": "{}: {}".format(*judge.classify(exc))})
    collected = {node.split("[")[0].split("::")[-1] for node in order}
    missing = sorted(static - collected)
    if not order:
        judge.record({"plan": first})
        judge.fail_all(1, "runtime_error", "collection failed: " + (collect_errors[0] if collect_errors
                                                                    else "no test was collected"))
    elif missing:
        judge.fail_all(len(order), "wrong_answer", "tests " + ", ".join(missing[:5]) + " were not collected")
    judge.finish()


def pytest_outcome(pytest, judge):
    """pytest's own outcome of a test, read from its reports (setup, call, teardown): a failed
    report in any phase fails the test (a strict XPASS is one); a test that passed its call (a
    non-strict XPASS too) passed; a skip counts for nothing when the test file declared it (a
    ``skip``/``skipif`` mark, the marks pytest adds itself, an ``xfail`` mark whose condition
    held), else it fails: a skip decided at run time (``pytest.skip()`` in a test or fixture) may
    depend on the solution. Returns the failure's exception (or None) and (status, reason)."""
    def unittest_mark(item, name):  # a TestCase's own decorators (unittest.skip, expectedFailure)
        return any(getattr(holder, name, False) for holder in (getattr(item, "obj", None), getattr(item, "cls", None)))

    def declared_xfail(item):
        if unittest_mark(item, "__unittest_expecting_failure__"):
            return True
        # Whether an xfail mark's condition held: pytest's skipping plugin keeps its evaluation.
        xfailed_key = getattr(sys.modules.get("_pytest.skipping"), "xfailed_key", None)
        if xfailed_key is not None:
            return bool(item.stash.get(xfailed_key, None))
        return item.get_closest_marker("xfail") is not None

    def declared_skip(item, report, exc):
        # A mark's skip (pytest raises it in setup, at the test's own location), or unittest's decorator.
        return (report.when == "setup" and getattr(exc, "_use_item_location", False)) or unittest_mark(
            item, "__unittest_skip__")

    def outcome(entry):
        item, reports, raised = entry["item"], entry["reports"], entry["exc"]
        failed = next((r for r in reports if r.failed), None)
        if failed is not None:
            exc = raised.get(failed.when)
            where = "" if failed.when == "call" else f"error in {failed.when}: "
            if exc is None or isinstance(exc, pytest.fail.Exception):  # pytest.fail(), a strict XPASS
                text = str(exc) if exc is not None else (str(failed.longrepr).strip().splitlines() or [""])[-1]
                return exc, ("wrong_answer", (where + text)[:300])
            status, reason = judge.classify(exc)
            if status == "passed":  # a failed report whose exception we would not call a failure
                status, reason = "runtime_error", f"{type(exc).__name__}: {str(exc)[:300]}"
            return exc, (status, where + reason)
        skipped = next((r for r in reports if r.skipped), None)
        if skipped is not None:
            exc = raised.get(skipped.when)
            if hasattr(skipped, "wasxfail"):
                if declared_xfail(item):
                    return None, ("skipped", "an expected failure (xfail) " + str(skipped.wasxfail)[:200])
                return exc, ("wrong_answer", "xfail at run time, which the test file does not declare")
            if declared_skip(item, skipped, exc):
                return None, ("skipped", "skipped by the test file")
            said = safe_str(getattr(exc, "msg", "") or "")[:200]
            return exc, ("wrong_answer", "the test was skipped at run time" + (f": {said}" if said else ""))
        call = next((r for r in reports if r.when == "call"), None)
        if call is not None and call.passed:
            return None, judge.classify(None)
        return None, ("runtime_error", "the test did not run")

    return outcome


class Surroundings:
    """What a pytest test may change around the code it calls — environment variables, the working
    directory, ``sys.argv``, ``sys.stdin``, a builtin (``input``), an attribute of a module it
    patched with ``monkeypatch`` — in a process the solution does not share. The state is the
    difference from how the run began; before a request the judge sends it when it changed
    (``Candidate.sync``), and the candidate applies it over its own state, undoing what no longer
    applies. Values cross as plain data, functions as the judge's (a patched ``input`` runs here)."""

    def __init__(self, monkeypatch=None):
        self.environ = dict(os.environ)
        self.cwd = os.getcwd()
        self.argv = tuple(sys.argv)
        self.builtins = dict(vars(builtins))
        self.stdin = sys.stdin
        self.patched = {}  # (module name, attribute) -> (module, the value before the first patch)
        self.sent = self.baseline()
        if monkeypatch is not None:
            self.watch(monkeypatch)

    @staticmethod
    def baseline():
        return {}

    def now(self):
        state = {}
        for key, value in os.environ.items():
            if self.environ.get(key) != value and not key.startswith("PYTEST_"):
                state["environ", key] = value
        for key in self.environ:
            if key not in os.environ and not key.startswith("PYTEST_"):
                state["environ", key] = None
        if os.getcwd() != self.cwd:
            state["cwd",] = os.getcwd()
        if tuple(sys.argv) != self.argv:
            state["argv",] = tuple(sys.argv)
        for name, value in vars(builtins).items():
            if self.builtins.get(name, _MISSING) is not value and not name.startswith("_"):
                state["builtins", name] = value
        stdin = sys.stdin
        if stdin is not self.stdin and stdin is not sys.__stdin__ and type(stdin).__module__ != "_pytest.capture":
            state["stdin",] = stdin
        for (module_name, name), (module, original) in self.patched.items():
            value = getattr(module, name, _MISSING)
            if value is not original and value is not _MISSING:
                state["module", module_name, name] = value
        return state

    @staticmethod
    def same(a, b):
        return a.keys() == b.keys() and all(a[k] is b[k] or (type(a[k]) in (str, tuple) and a[k] == b[k]) for k in a)

    def message(self, state, send):
        """The state as a request's fields; a patch that cannot cross is an unsupported test."""

        def crossing(what, value):
            if isinstance(value, type):
                raise UnsupportedTest(f"the test patched {what} with a class ({value.__name__}); only plain data and "
                                      "functions reach the solution's process")
            try:
                return send(value)
            except WireError:
                raise UnsupportedTest(f"the test patched {what} with a {type(value).__name__}, which cannot reach the "
                                      "solution's process (only plain data and functions can)") from None

        message = {"environ": {}, "cwd": None, "argv": None, "builtins": {}, "stdin": None, "modules": []}
        for key, value in state.items():
            if key[0] == "environ":
                message["environ"][key[1]] = value
            elif key[0] in ("cwd", "argv"):
                message[key[0]] = value if key[0] == "cwd" else list(value)
            elif key[0] == "builtins":
                message["builtins"][key[1]] = crossing(f"builtins.{key[1]}", value)
            elif key[0] == "stdin":
                message["stdin"] = send(self.reads(value))
            else:
                message["modules"].append([key[1], key[2], crossing(f"{key[1]}.{key[2]}", value)])
        if message["argv"] is not None:
            message["argv"] = crossing("sys.argv", message["argv"])
        return message

    @staticmethod
    def reads(stream):
        """The test's stdin, as functions the solution's ``sys.stdin`` calls back (reads are shared)."""
        return {"read": lambda size=-1: stream.read(size), "readline": lambda size=-1: stream.readline(size),
                "readlines": lambda hint=-1: stream.readlines(hint)}

    def watch(self, monkeypatch):
        """``monkeypatch.setattr(module, name, value)`` (or ``"module.name"``) on a module other than
        ``solution`` (which forwards itself), ``builtins`` and ``sys``'s streams and argv (compared
        above) is watched from then on. ``monkeypatch``: pytest's MonkeyPatch class."""
        real, surroundings = monkeypatch.setattr, self

        def setattr(patcher, *args, **kwargs):
            result = real(patcher, *args, **kwargs)
            with contextlib.suppress(Exception):
                target, name, original = patcher._setattr[-1]
                skip = (("sys", "stdin"), ("sys", "stdout"), ("sys", "stderr"), ("sys", "argv"))
                if type(target) is type(sys) and target.__name__ != "builtins" and (target.__name__, name) not in skip:
                    missing = type(original).__name__ == "Notset"  # pytest's mark of a name the module lacked
                    before = _MISSING if missing else original
                    surroundings.patched.setdefault((target.__name__, name), (target, before))
            return result

        monkeypatch.setattr = setattr


_MISSING = object()


def shared_basetemp():
    """pytest's base temporary directory inside the job's shared directory, which the solution
    sees at the same path (so ``tmp_path`` is one it can read and write), or None. Made before
    the solution runs, under a name it cannot guess, in a directory it cannot list."""
    shared = os.environ.get("REWARDSMITH_SHARED_DIR")
    if not shared or not os.path.isdir(shared):
        return None
    private = os.path.join(shared, "pytest-" + os.urandom(12).hex())  # never the nonce: the solution sees it
    try:
        os.mkdir(private, 0o711)
        os.chmod(private, 0o711)
    except OSError:
        return None
    return os.path.join(private, "basetemp")


def open_to_solution(path, basetemp):
    """A test's ``tmp_path`` (pytest makes it 0700): the solution may read and write in it, and
    reach it through its parents, which it still cannot list."""
    os.chmod(path, 0o777)
    parent = os.path.dirname(path)
    while parent.startswith(basetemp) and len(parent) >= len(basetemp):
        os.chmod(parent, 0o711)
        parent = os.path.dirname(parent)


def main():
    import json

    try:  # not dumpable: even a candidate running as our user cannot ptrace us or read /proc/<pid>/mem
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass
    payload = json.loads(sys.stdin.buffer.read())
    sys.set_int_max_str_digits(0)
    out_fd = os.dup(1)
    os.set_inheritable(out_fd, False)
    Judge(payload, out_fd).run()


if __name__ == "__main__":
    main()
