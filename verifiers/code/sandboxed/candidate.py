"""The candidate's side of a judged run: load the solution, answer the judge's requests.

Runs in the sandbox as ``python3 -I -c <wire.py source + this source>``, as the
candidate's user, with the judge's socket on file descriptor 3. Nothing here is trusted:
the candidate's code runs in this process and may rewrite any of it. That is fine by
design: all this side can do is send plain data (see ``wire.py``), and the judge
decides what the data means.

Two processes: this one (the *keeper*) never runs candidate code; it forks a *worker*
per request of the judge, hands the judge the worker's own socket (``send_fds``), and
kills it on request (after a timeout, the judge asks for a fresh worker and the tests go
on). The worker loads ``solution.py`` and serves calls, attribute reads, iteration…
on its objects, keeping the ones that are not plain data in a table the judge refers to
by number.
"""

import builtins
import contextlib
import os
import signal
import socket
import sys

from .wire import Channel, Classes, WireError, attributes, decode, encode  # sandbox: inlined

EXCERPT = 400


def keeper():
    control = Channel(socket.socket(fileno=3))
    worker = None
    while True:
        try:
            message = control.receive()
        except (EOFError, OSError, WireError):
            os._exit(0)
        op = message.get("op")
        if op == "spawn":
            _stop(worker)
            ours, theirs = socket.socketpair()
            worker = os.fork()
            if worker == 0:
                control.sock.close()
                theirs.close()
                serve(ours)
                os._exit(0)
            ours.close()
            data = b'{"pid":%d}' % worker
            socket.send_fds(control.sock, [len(data).to_bytes(4, "big") + data], [theirs.fileno()])
            theirs.close()
        elif op == "kill":
            control.send({"exit": _stop(worker)})
            worker = None
        elif op == "status":
            control.send({"exit": _status(worker, block=bool(message.get("wait")))})


def _stop(pid):
    """Kill a worker and everything in its session; how it ended."""
    if pid is None:
        return None
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(OSError):
            target()
    return _status(pid, block=True)


def _status(pid, block):
    if pid is None:
        return None
    try:
        done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return "gone"
    if not done:
        return None
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.WEXITSTATUS(status)}"


# -- the worker -----------------------------------------------------------------------------


class Worker:
    def __init__(self, sock):
        self.channel = Channel(sock)
        self.objects = {}
        self.namespace = None
        self.capture = []
        self.forward = False  # whether the judge wants all of our output (pytest's capsys)
        self.originals = {}
        self.cache = Classes()  # the namedtuple and enum classes the judge's values were rebuilt as
        self.events = None  # our event loop: the judge's awaits run the solution's coroutines here
        self.patches = []  # what the tests' patches changed here (undo, original) in order (see surroundings)
        tmp = os.environ.get("TMPDIR") or "."
        for stream in (1, 2):
            path = os.path.join(tmp, f".capture-{os.getpid()}-{stream}")
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
            os.unlink(path)
            os.dup2(fd, stream)
            os.close(fd)
            self.capture.append(stream)

    def keep(self, value):
        ref = len(self.objects) + 1
        self.objects[ref] = value
        return ref

    def resolve(self, ref, _type_name):
        if ref not in self.objects:
            raise WireError("unsupported_value", "an unknown reference")
        return self.objects[ref]

    def value(self, value):
        return encode(value, self.keep)

    def decode(self, data):
        """A value from the judge: its functions become :class:`Callback` stand-ins, an instance
        of a task's class one of ours (by name)."""
        return decode(data, self.resolve, self.classes(), lambda n: Callback(self, n), cache=self.cache,
                      from_judge=True)

    def loop(self):
        while True:
            try:
                message = self.channel.receive()
            except (EOFError, OSError, WireError):
                return
            self.respond(message, nested=False)

    def respond(self, message, nested):
        """Handle one request of the judge and send the reply. A request made while we wait on
        a callback (``nested``) leaves the captured output to the request around it."""
        if not nested:
            for fd in self.capture:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
        try:
            reply = self.handle(message)
        except WireError as exc:  # a value that cannot be sent (too big, too deep, not plain data)
            reply = {"wire_error": [exc.status, str(exc)]}
        except BaseException as exc:  # the candidate's exception, described for the judge
            reply = {"raised": describe(exc)}
        self.flush()
        for key, fd in (("out", 1), ("err", 2)):
            size, text = (0, "") if nested else excerpt(fd)
            reply[key], reply[key + "_size"] = text, size
            if self.forward and size and not nested:
                reply[key + "_full"] = whole(fd)
        try:
            self.channel.send(reply)
        except WireError as exc:
            self.channel.send({"wire_error": [exc.status, str(exc)]})

    def callback(self, n, args, kwargs):
        """Call the judge's function number ``n`` (a key function, a monkeypatched helper) and
        serve the judge's requests until its answer comes."""
        self.channel.send({"callback": n, "args": [self.value(a) for a in args],
                           "kwargs": {str(k): self.value(v) for k, v in kwargs.items()}})
        while True:
            message = self.channel.receive()
            if "op" in message:
                self.respond(message, nested=True)
            elif "returned" in message:
                return self.decode(message["returned"])
            else:
                info = message.get("raised") if type(message.get("raised")) is dict else {}
                kind = getattr(builtins, str(info.get("type")), None)
                if isinstance(kind, type) and issubclass(kind, Exception):
                    raise kind(str(info.get("message", "")))
                raise RuntimeError(f"{info.get('type', 'Exception')}: {info.get('message', '')}")

    def flush(self):
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            with contextlib.suppress(BaseException):
                stream.flush()

    def handle(self, message):
        op = message.get("op")
        if op == "load":
            return self.load(message)
        if op == "get":
            return {"value": self.value(self.namespace[message["global"]])}
        if op == "setglobal":  # monkeypatch.setattr(solution, name, value) and its undo
            name = str(message["global"])
            self.originals.setdefault(name, self.namespace.get(name, _UNSET))
            if message.get("restore"):
                original = self.originals.pop(name)
                if original is _UNSET:
                    self.namespace.pop(name, None)
                else:
                    self.namespace[name] = original
            else:
                self.namespace[name] = self.decode(message["value"])
            return {"value": None}
        if op == "keep":  # a name of ours handed back to us by the tests (issubclass(B, A), a function)
            return {"ref": self.keep(self.namespace[str(message["global"])])}
        if op == "env":
            return {"value": self.surroundings(message)}
        target = self.target(message)
        if op == "call":
            args = [self.decode(a) for a in message.get("args", [])]
            kwargs = {k: self.decode(v) for k, v in message.get("kwargs", {}).items()}
            result = target(*args, **kwargs)
            reply = {"value": self.returned(result, args, kwargs)}
            mutated = []
            for where, sent, now in [*zip(range(len(args)), message.get("args", []), args, strict=False),
                                     *((k, message["kwargs"][k], kwargs[k]) for k in kwargs)]:
                if type(now) in (list, dict, set, bytearray):
                    after = self.value(now)
                    if after != sent:
                        mutated.append([where, after])
            if mutated:
                reply["mutated"] = mutated
            return reply
        if op == "state":  # the attributes of an instance of a task's class, for the judge to rebuild it
            return {"value": self.value(attributes(target))}
        if op == "getattr":
            return {"value": self.value(getattr(target, message["name"]))}
        if op == "setattr":
            setattr(target, message["name"], self.decode(message["value"]))
            return {"value": None}
        if op == "getitem":
            return {"value": self.value(target[self.decode(message["key"])])}
        if op == "setitem":
            target[self.decode(message["key"])] = self.decode(message["value"])
            return {"value": None}
        if op == "len":
            return {"value": self.value(len(target))}
        if op == "iter":
            return {"value": {"$ref": self.keep(iter(target)), "$type": "iterator"}}
        if op == "next":
            try:
                return {"value": self.value(next(target))}
            except StopIteration:
                return {"stop": True}
        if op in ("isinstance", "issubclass"):
            value = self.decode(message["value"])
            return {"value": bool(isinstance(value, target) if op == "isinstance" else issubclass(value, target))}
        if op == "enter":
            return {"value": self.value(type(target).__enter__(target))}
        if op == "exit":
            error = exception(message.get("error"))
            return {"value": bool(type(target).__exit__(target, type(error) if error else None, error, None))}
        if op == "await":
            return {"value": self.value(self.run_async(target))}
        if op == "aenter":
            return {"value": self.value(self.run_async(type(target).__aenter__(target)))}
        if op == "aexit":
            error = exception(message.get("error"))
            return {"value": bool(self.run_async(type(target).__aexit__(target, type(error) if error else None,
                                                                          error, None)))}
        if op == "aiter":
            return {"value": {"$ref": self.keep(aiter(target)), "$type": "async_iterator"}}
        if op == "anext":
            try:
                return {"value": self.value(self.run_async(anext(target)))}
            except StopAsyncIteration:
                return {"stop": True}
        if op in ("str", "repr", "bool"):
            result = {"str": str, "repr": repr, "bool": bool}[op](target)
            if type(result) is not (bool if op == "bool" else str):
                raise TypeError(op + " returned a non-" + ("bool" if op == "bool" else "str"))
            return {"value": result if op == "bool" else result[:100_000]}
        raise WireError("unsupported_value", "unknown request")

    def run_async(self, awaitable):
        """Await ``awaitable`` to the end in our own event loop (kept: an async generator lives across steps)."""
        import asyncio

        if self.events is None:
            self.events = asyncio.new_event_loop()

        async def wait():
            return await awaitable

        return self.events.run_until_complete(wait())

    def surroundings(self, message):
        """Make what the tests changed around them (their environment, directory, argv, stdin, a
        builtin, a module's attribute: the judge's ``Surroundings``) hold here too, over how this
        process began; what no longer applies is undone first. Returns what could not be done."""
        import importlib

        for undo, original in reversed(self.patches):
            with contextlib.suppress(BaseException):
                undo(original)
        self.patches = []

        def patch(undo, original, do):
            do()
            self.patches.append((undo, original))

        problems = []
        for key, value in (message.get("environ") or {}).items():
            key = str(key)
            patch(lambda old, key=key: os.environ.pop(key, None) if old is None else os.environ.__setitem__(key, old),
                  os.environ.get(key), lambda key=key, value=value: os.environ.pop(key, None) if value is None
                  else os.environ.__setitem__(key, str(value)))
        if message.get("cwd") is not None:
            try:
                patch(os.chdir, os.getcwd(), lambda: os.chdir(str(message["cwd"])))
            except OSError as exc:
                problems.append(f"the test changed directory to {str(message['cwd'])[:120]}, which the solution's "
                                f"process cannot enter ({type(exc).__name__})")
        if message.get("argv") is not None:
            patch(lambda old: setattr(sys, "argv", old), sys.argv, lambda: setattr(sys, "argv", [
                str(a) for a in self.decode(message["argv"])]))
        targets = [(builtins, name, value) for name, value in (message.get("builtins") or {}).items()]
        for module_name, name, value in message.get("modules") or ():
            try:
                targets.append((importlib.import_module(str(module_name)), name, value))
            except BaseException as exc:
                problems.append(f"the test patched {str(module_name)[:80]}, which the solution's process cannot "
                                f"import ({type(exc).__name__})")
        for module, name, value in targets:
            name = str(name)
            patch(lambda old, module=module, name=name: delattr(module, name) if old is _UNSET
                  else setattr(module, name, old), getattr(module, name, _UNSET),
                  lambda module=module, name=name, value=value: setattr(module, name, self.decode(value)))
        if message.get("stdin") is not None:
            patch(lambda old: setattr(sys, "stdin", old), sys.stdin,
                  lambda: setattr(sys, "stdin", Stdin(self.decode(message["stdin"]))))
        return problems

    def classes(self):
        """The solution's classes by name: the judge sends an instance of a task's class (a
        prelude's ``Point``) by its attributes, to be rebuilt as ours."""
        return {k: v for k, v in (self.namespace or {}).items() if type(k) is str and isinstance(v, type)}

    def target(self, message):
        if "ref" in message:
            return self.resolve(message["ref"], "")
        return self.namespace[message["global"]]

    def returned(self, result, args, kwargs):
        for i, arg in enumerate(args):  # the same object handed back: the judge gets its own back
            if result is arg and type(arg) in (list, dict, set, bytearray):
                return {"$arg": i}
        for key, arg in kwargs.items():
            if result is arg and type(arg) in (list, dict, set, bytearray):
                return {"$kwarg": key}
        return self.value(result)

    def load(self, message):
        import types

        self.forward = message.get("forward") is True

        module = types.ModuleType("solution")
        module.__file__ = os.path.abspath("solution.py")
        sys.modules["solution"] = module
        namespace = module.__dict__
        exec(compile(message.get("setup") or "", "<setup>", "exec"), namespace)
        with open("solution.py", "rb") as handle:
            source = handle.read()
        try:
            code = compile(source, "solution.py", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as exc:
            line = getattr(exc, "lineno", None)
            text = f"{type(exc).__name__}: {getattr(exc, 'msg', None) or exc}"
            return {"compile_error": text + (f" (line {line})" if line else "")}
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        self.namespace = namespace
        exec(code, namespace)
        return {"names": {name: kind(value) for name, value in list(namespace.items())
                          if type(name) is str and not name.startswith("__")}}


def kind(value):
    import types

    if isinstance(value, types.ModuleType):
        name = getattr(value, "__name__", "")
        return "module:" + (name if type(name) is str else "")
    if isinstance(value, type):
        return "class"
    if callable(value):
        return "callable"
    try:
        encode(value)
        return "value"
    except BaseException:
        return "object"


def describe(exc):
    """What the judge may know of an exception: its type's name, whether it is a builtin
    type, its message (only for builtin types, whose ``__str__`` is not the candidate's),
    and the solution.py line it came from."""
    t = type(exc)
    builtin = getattr(t, "__module__", None) == "builtins"
    text = ""
    if builtin:
        try:
            text = BaseException.__str__(exc)[:300]
        except BaseException:
            text = ""
    line, tb = None, getattr(exc, "__traceback__", None)
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "solution.py":
            line = tb.tb_lineno
        tb = tb.tb_next
    name = getattr(t, "__name__", "Exception")
    return {"type": name if type(name) is str else "Exception", "builtin": builtin, "message": text, "line": line,
            "memory": isinstance(exc, MemoryError), "recursion": isinstance(exc, RecursionError)}


def exception(name):
    """An exception of the builtin type the judge names (the test's, raised in a with-block), or None."""
    if name is None:
        return None
    kind = getattr(builtins, str(name), None)
    if isinstance(kind, type) and issubclass(kind, BaseException):
        with contextlib.suppress(BaseException):
            return kind()
    return Exception()


class Stdin:
    """``sys.stdin`` as the tests replaced it (a ``StringIO`` of theirs): each read asks their stream,
    so what the solution consumes is consumed there too. ``input()`` reads it through ``readline``."""

    encoding, errors, closed = "utf-8", "strict", False

    def __init__(self, reads):
        self._reads = reads

    def read(self, size=-1):
        return self._reads["read"](size)

    def readline(self, size=-1):
        return self._reads["readline"](size)

    def readlines(self, hint=-1):
        return self._reads["readlines"](hint)

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def isatty(self):
        return False

    def readable(self):
        return True

    def fileno(self):
        import io

        raise io.UnsupportedOperation("the tests' stdin has no file descriptor")


class Callback:
    """One of the judge's functions (a key function, a patched helper): calling it asks the judge."""

    def __init__(self, worker, n):
        self._worker, self._n = worker, n

    def __call__(self, *args, **kwargs):
        return self._worker.callback(self._n, args, kwargs)


_UNSET = object()
FORWARD = 1 << 20  # output handed to the judge whole (pytest's capsys), at most


def whole(fd):
    try:
        return os.pread(fd, FORWARD, 0).decode("utf-8", "replace")
    except OSError:
        return ""


def excerpt(fd):
    try:
        size = os.fstat(fd).st_size
        head = os.pread(fd, EXCERPT, 0).decode("utf-8", "replace")
    except OSError:
        return 0, ""
    return size, head + ("…" if size > EXCERPT else "")


def serve(sock):
    os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.set_int_max_str_digits(0)
    Worker(sock).loop()


if __name__ == "__main__":
    keeper()
