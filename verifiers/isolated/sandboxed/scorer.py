"""The sandboxed scorer: one job scores a list of answers with a third-party scorer, each answer in a
process of its own.

Reads one JSON request on stdin::

    {"factory": "reasoning_gym" | "package.module:function", "site": "/opt/...", "guard": true, "timeout_s": 10,
     "memory_mb": 512, "items": [{"key": [name, config], "answer": "...", "entry": {...},
                                  "tuples": ["metadata.input"], "marker": "path"}, ...]}

The parent imports the scorer's package and builds each distinct scorer (``factory(name, config)``
returns ``score(answer, entry) -> float``) before it reads any answer, and never evaluates an answer
itself: each answer is scored in a child forked from it, which drops its standard streams, takes a
memory limit, puts the evaluation boundary in place (:mod:`.guard`, unless ``guard`` is false: the
survey measures the scorers as they are), scores, and sends back one JSON result on a pipe of its
own. Whatever the answer does in its child (patch a class, a cached function, a module global)
dies with the child, so no answer reaches another's verdict. The parent is non-dumpable, so a
child cannot read or trace it.

Writes one JSON line per event on stdout: ``{"ready": ..., "version": ...}`` once the package is
imported (or ``{"missing": reason}``), ``{"start": i}`` before item ``i`` is scored, then
``{"i": i, "kind": kind, "value": value}`` with kind ``score`` (a float), ``raised`` (the scorer
raised on the answer but reads the row's gold), ``bad_row`` (the scorer cannot be built, or raises
on the gold too), ``timeout`` or ``crash`` (the child ran past ``timeout_s``, or died: out of
memory, killed). An item carrying ``marker`` (a path) also reports ``"marker": true`` when a file
exists there after its child ran: the survey's test of whether a scorer evaluates text.

Standard library only, plus the scorer's own package: shipped into the sandbox as source.
"""


import contextlib
import ctypes
import gc
import json
import os
import resource
import select
import signal
import sys
import time

from .guard import install  # sandbox: inlined

PR_SET_DUMPABLE = 4
_RESULT_BYTES = 1 << 16  # a child's result is one short JSON object


def reasoning_gym_factory(name: str, config: dict | None):
    """reasoning-gym's scorer of dataset ``name`` under the generator options ``config``."""
    import reasoning_gym
    from reasoning_gym.factory import DATASETS

    if name not in DATASETS:
        raise LookupError(f"unknown reasoning-gym dataset {name!r}")
    if config:
        return reasoning_gym.create_dataset(name, **config).score_answer
    return reasoning_gym.get_score_answer_fn(name)


FACTORIES = {"reasoning_gym": (reasoning_gym_factory, "reasoning_gym")}


def load_factory(spec: str):
    """(factory, version) for a built-in name or a ``package.module:function`` path."""
    if spec in FACTORIES:
        factory, package = FACTORIES[spec]
    else:
        module, _, attribute = spec.partition(":")
        package = module
        factory = getattr(__import__(module, fromlist=[attribute]), attribute)
    top = __import__(package.split(".")[0])
    return factory, str(getattr(top, "__version__", "?"))


def with_tuples(entry: dict, paths: list) -> dict:
    """``entry`` with the lists at ``paths`` (dotted) turned back into tuples: JSON carried them as lists,
    and some scorers compare them with tuples by ``==``."""
    for path in paths:
        *parents, last = str(path).split(".")
        node = entry
        for key in parents:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and last in node:
            node[last] = _tupled(node[last])
    return entry


def _tupled(value):
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def gold_text(answer) -> str:
    return answer if isinstance(answer, str) else "" if answer is None else str(answer)


def emit(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _address_space() -> int:
    """This process's virtual size in bytes (a child's memory limit goes on top of it)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def run_child(score, answer: str, entry: dict, guard: bool, memory_bytes: int, out: int) -> None:
    """In the forked child: score, write the result to ``out``, exit. Never returns."""
    code = 0
    try:
        os.setpgid(0, 0)  # its own group: the parent kills whatever it starts
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if guard:
            install()
        try:
            result = {"kind": "score", "value": float(score(answer, entry))}
        except BaseException as exc:  # the answer's doing (the gold is tried apart)
            result = {"kind": "raised", "value": f"{type(exc).__name__}: {str(exc)[:200]}"}
        data = json.dumps(result).encode("utf-8")[:_RESULT_BYTES]
        os.write(out, data)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def score_in_child(score, answer: str, entry: dict, guard: bool, timeout_s: float, memory_bytes: int) -> dict:
    """Fork, score ``answer`` in the child, and read its result within ``timeout_s``."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        run_child(score, answer, entry, guard, memory_bytes, write_end)
    os.close(write_end)
    chunks, deadline, timed_out = [], time.monotonic() + timeout_s, False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_end], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"kind": "timeout", "value": f"the scorer took longer than {timeout_s:g}s"}
    result = _result(b"".join(chunks))
    if result is None:
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit code {os.WEXITSTATUS(status)}"
        return {"kind": "crash", "value": f"the scoring process died ({how}; out of memory?)"}
    return result


def _result(data: bytes):
    """The child's result if it is one (a float score or a short reason), else None: the child ran an
    answer's scoring, so what it sends is read as data of one closed shape."""
    try:
        message = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or set(message) != {"kind", "value"}:
        return None
    kind, value = message["kind"], message["value"]
    if kind == "score" and type(value) in (int, float):
        return {"kind": kind, "value": float(value)}
    if kind == "raised" and type(value) is str:
        return {"kind": kind, "value": value[:300]}
    return None


def main() -> None:
    request = json.loads(sys.stdin.read())
    site = request.get("site")
    if isinstance(site, str) and os.path.isdir(site):  # the scorers installed for the sandbox
        sys.path.append(site)
    try:
        factory, version = load_factory(request["factory"])
    except Exception as exc:
        emit({"missing": f"{type(exc).__name__}: {exc}"})
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    items = request["items"]
    guard, timeout_s = bool(request.get("guard", True)), float(request["timeout_s"])
    scorers: dict[str, object] = {}
    for item in items:  # every scorer is built before any answer is read
        key = json.dumps(item["key"], sort_keys=True)
        if key not in scorers:
            name, config = item["key"]
            try:
                scorers[key] = factory(name, config)
            except Exception as exc:
                scorers[key] = f"cannot build the scorer of {name!r}: {type(exc).__name__}: {str(exc)[:200]}"
    memory_bytes = _address_space() + int(request["memory_mb"]) * (1 << 20)
    gc.freeze()  # the children share these pages: a collection there would copy them all
    golds: dict[str, dict] = {}  # a row's gold, scored once: was the scorer's raising the answer's doing?
    emit({"ready": True, "version": version})
    for i, item in enumerate(items):
        emit({"start": i})
        score = scorers[json.dumps(item["key"], sort_keys=True)]
        marker = item.get("marker")
        if isinstance(score, str):
            emit({"i": i, "kind": "bad_row", "value": score})
            continue
        entry = with_tuples(item["entry"], item.get("tuples") or [])
        result = score_in_child(score, item["answer"], entry, guard, timeout_s, memory_bytes)
        if result.get("kind") == "raised":  # whose fault: does the scorer read this row at all?
            # Once per row in a job (a GRPO group repeats its row): the gold runs in a fresh child from
            # the same parent each time, so the answer is the same.
            row = json.dumps([item["key"], item["entry"], item.get("tuples")], sort_keys=True)
            if row not in golds:
                golds[row] = score_in_child(score, gold_text(entry.get("answer")), entry, guard, timeout_s,
                                            memory_bytes)
            gold = golds[row]
            if gold.get("kind") != "score":
                result = {"kind": "bad_row", "value": f"the scorer cannot read this row: {gold.get('value')}"}
        if marker:
            result["marker"] = os.path.lexists(marker)
        emit({"i": i, **result})
    emit({"done": True})


if __name__ == "__main__":
    main()
