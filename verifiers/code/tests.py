"""Pure helpers of the ``code`` verifier: find the code, normalise the tests, compare results.

Everything here runs on the host and never executes candidate code. Datasets store
tests in many shapes (HumanEval ``check`` scripts, MBPP ``test_list``, function-call
cases, stdin/stdout cases, pytest files, JSON strings of any of these); they are all
turned into one :class:`TestSuite` so the verifier has a single path per form.
"""

from __future__ import annotations

import ast
import cmath
import collections
import decimal
import enum
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from rewardsmith.sandbox.errors import RewardsmithError
from rewardsmith.verifiers.code.sandboxed.wire import TAGS, Classes, decode

Form = Literal["script", "call", "stdio", "pytest"]
CHECKERS = ("exact", "whitespace", "float", "tokens_ci")

LANGUAGE_TAGS = {
    "python": ("python", "python3", "py", "py3"),
    "cpp": ("cpp", "c++", "cc", "cxx", "hpp"),
}

_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.M | re.S)


class TestsError(RewardsmithError, ValueError):
    """The sample's tests are missing or cannot be understood (an ``invalid_input`` row)."""


@dataclass
class TestSuite:
    """One sample's tests in a single shape.

    ``script``: ``code`` is test source (asserts, or a ``check(candidate)`` function run on
    ``entry_point``); ``call``: ``cases`` of ``{"args", "kwargs", "expected"}`` on
    ``entry_point``; ``stdio``: ``cases`` of ``{"input", "output"}``; ``pytest``: ``code`` is
    a pytest file importing the candidate from ``solution.py``.
    """

    form: Form
    code: str = ""
    cases: list[dict[str, Any]] = field(default_factory=list)
    entry_point: str | None = None
    setup: str = ""
    checker: str | None = None

    def wire(self) -> dict[str, Any]:
        """What the sandbox harness needs: never the expected values of call or stdio cases."""
        cases = [{"args": c.get("args", []), "kwargs": c.get("kwargs", {})} for c in self.cases]
        return {"form": self.form, "code": self.code, "cases": cases, "entry_point": self.entry_point,
                "setup": self.setup}


# -- the candidate's code -----------------------------------------------------------


def extract_code(text: str, language: str = "python") -> str:
    """The last fenced block tagged with ``language`` (or untagged), else the whole text.

    An unterminated last fence (a generation cut off by the length limit) still counts,
    from its opening line to the end.
    """
    tags = LANGUAGE_TAGS.get(language, (language,))
    found = None
    for match in _FENCE.finditer(text):
        tag = match.group(1).lower()
        if tag in tags or tag == "":
            found = match.group(2)
    return text if found is None else found


@lru_cache(maxsize=1024)
def _parses(source: str) -> bool:
    """Whether a prompt is a program to complete: it parses and defines or imports something
    (a one-word chat prompt such as ``Hello`` parses too, as a bare expression, but is no code)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom)
               for node in tree.body)


def _ends_in_header(prompt: str, entry_point: str) -> bool:
    """Whether the prompt's last line opens the entry point's function (``def add(a, b):``)."""
    last = prompt.rstrip().rsplit("\n", 1)[-1].strip()
    return re.match(rf"(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", last) is not None and last.endswith(":")


def defines(code: str, name: str) -> bool:
    """Whether ``code`` defines ``name`` at the start of a line (def, async def, class or assignment).

    A regular expression rather than a parse: a candidate that does not parse must still
    get its prompt prepended (or not) the same way, and get its compile error.
    """
    pattern = rf"^(?:async[ \t]+)?(?:def|class)[ \t]+{re.escape(name)}\b|^{re.escape(name)}[ \t]*="
    return re.search(pattern, code, re.M) is not None


def assemble_code(code: str, prompt: str, entry_point: str | None, prepend: bool | str) -> tuple[str, str]:
    """The program to run and the trusted prelude (the prompt, when it is Python) for the tests.

    ``prepend="auto"`` acts only when the prompt is valid Python on its own (a HumanEval
    prompt: imports, helpers, a signature with its docstring). A completion that does not
    define ``entry_point`` is then the body of the prompt's function, so the prompt goes
    first; one that does define it still gets the prompt in front, so the imports and helper
    functions the prompt declares (``from typing import List``, ``encode_cyclic``) exist, as
    they would in the file the model was asked to complete.
    """
    if prepend is False or not prompt:
        return code, ""
    prompt_ok = _parses(prompt)
    if not prompt_ok and entry_point and _ends_in_header(prompt, entry_point):
        # A signature with no docstring ("def add(a, b):") does not parse on its own, yet it is a program
        # to complete: with a placeholder body it is the prelude (the entry point is the solution's).
        stub = prompt.rstrip("\n") + "\n    pass\n"
        if _parses(stub):
            if prepend is True or not defines(code, entry_point):
                return prompt + code, stub
            return stub + "\n\n" + code, stub
    if prepend is True:
        return prompt + code, prompt if prompt_ok else ""
    if not prompt_ok or not entry_point:  # a chat-style prompt in words is never code to run
        return code, ""
    if not defines(code, entry_point):
        return prompt + code, prompt
    return prompt.rstrip("\n") + "\n\n" + code, prompt


def with_prelude(code: str, prelude: str, entry_point: str | None) -> str:
    """The program to run when the row carries trusted code (its ``prelude``): the prelude
    first, so its imports and helpers exist for the solution as in the file the model was
    asked to complete; a completion that does not define ``entry_point`` continues it (a body)."""
    if entry_point and not defines(code, entry_point):
        return prelude + code
    return prelude.rstrip("\n") + "\n\n" + code


# -- the tests --------------------------------------------------------------------


def normalize_tests(
    tests: Any,
    *,
    entry_point: str | None = None,
    setup: str | Sequence[str] | None = None,
    pytest_source: str | None = None,
    checker: str | None = None,
) -> TestSuite:
    """Turn a dataset's ``tests`` value (any supported shape, or a JSON string of one) into a suite.

    Raises :class:`TestsError` with a reason when the tests are missing or malformed.
    """
    setup_code = _as_code(setup)
    if tests is None or (isinstance(tests, str) and not tests.strip()):
        if pytest_source:
            return TestSuite("pytest", code=pytest_source, setup=setup_code)
        raise TestsError("sample has no tests")
    if isinstance(tests, str | bytes):
        tests = _maybe_json(tests.decode() if isinstance(tests, bytes) else tests)
    if isinstance(tests, str):
        return _script(tests, entry_point, setup_code)
    if isinstance(tests, Mapping):
        return _from_mapping(tests, entry_point, setup_code, checker)
    if isinstance(tests, Sequence):
        return _from_list(list(tests), entry_point, setup_code, checker)
    raise TestsError(f"tests must be a string, a list or a mapping, got {type(tests).__name__}")


def _maybe_json(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in ("[", "{", '"'):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            if stripped[:1] in ("{", '"'):
                raise TestsError("tests look like JSON but do not parse") from None
            # "[...]" can be Python too: an assert script starting with a list is unusual but legal.
    return text


def _as_code(value: str | Sequence[str] | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return "\n".join(str(line) for line in value)


def _script(code: str, entry_point: str | None, setup: str) -> TestSuite:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise TestsError(f"test code does not parse: {exc.msg} (line {exc.lineno})") from None
    defines_check = any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)
    if defines_check and not entry_point:
        raise TestsError("test code defines check(candidate) but the sample has no entry_point")
    if not (defines_check or any(_may_check(n) for n in ast.walk(tree))):
        raise TestsError("test code has no assert, no unittest assertion or TestCase, no pytest.raises and no "
                         "check(candidate) function")
    return TestSuite("script", code=code, entry_point=entry_point, setup=setup)


def _may_check(node: ast.AST) -> bool:
    """Whether a node could be a check (an ``assert``, a call of an ``assert*`` method or of
    ``pytest.raises``/``warns``, a ``TestCase`` class). Only tells tests from text that holds none
    (an ``invalid_input`` row): what counts as a test is decided by what runs, in the judge."""
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Call):
        callee = getattr(node.func, "attr", None) or getattr(node.func, "id", "")
        return callee.startswith("assert") or callee in ("raises", "warns")
    if isinstance(node, ast.ClassDef):
        return any((b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "")).endswith("TestCase")
                   for b in node.bases)
    return False


def _from_list(items: list[Any], entry_point: str | None, setup: str, checker: str | None) -> TestSuite:
    if not items:
        raise TestsError("tests are an empty list")
    if all(isinstance(item, str) for item in items):
        return _script("\n".join(items), entry_point, setup)
    if not all(isinstance(item, Mapping) for item in items):
        raise TestsError("a list of tests must hold only strings (asserts) or only objects (cases)")
    if all("output" in item or "stdout" in item for item in items):
        return TestSuite("stdio", cases=[_stdio_case(item) for item in items], setup=setup, checker=checker)
    if all("expected" in item for item in items):
        if not entry_point:
            raise TestsError("function-call cases need an entry_point naming the function to call")
        return TestSuite("call", cases=[_call_case(item) for item in items], entry_point=entry_point, setup=setup)
    keys = sorted({key for item in items for key in item})
    raise TestsError(f"cannot tell the test form from case keys {keys}; "
                     "expected input/output (stdin/stdout) or args/kwargs/expected (function call)")


def _from_mapping(tests: Mapping[str, Any], entry_point: str | None, setup: str, checker: str | None) -> TestSuite:
    entry_point = tests.get("entry_point", entry_point)
    setup = _as_code(tests.get("setup", tests.get("test_imports"))) or setup
    checker = tests.get("checker", checker)
    if "pytest" in tests:
        if not isinstance(tests["pytest"], str) or not tests["pytest"].strip():
            raise TestsError("'pytest' must hold the source of a test file")
        return TestSuite("pytest", code=tests["pytest"], setup=setup)
    if "inputs" in tests and "outputs" in tests:  # APPS / TACO stdin-stdout layout
        inputs, outputs = tests["inputs"], tests["outputs"]
        if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
            raise TestsError("'inputs' and 'outputs' must be lists of the same length")
        cases = [{"input": i, "output": o} for i, o in zip(inputs, outputs, strict=True)]
        return _from_list(cases, entry_point, setup, checker)
    for key in ("cases", "tests", "test_list"):
        if key in tests:
            suite = normalize_tests(tests[key], entry_point=entry_point, setup=setup, checker=checker)
            suite.checker = suite.checker or checker
            return suite
    for key in ("test", "code", "script"):
        if isinstance(tests.get(key), str):
            return _script(tests[key], entry_point, setup)
    raise TestsError(f"cannot find tests in a mapping with keys {sorted(tests)}")


def _text(value: Any) -> str:
    if isinstance(value, list):  # some datasets store lines
        return "\n".join(map(str, value))
    return "" if value is None else str(value)


def _stdio_case(item: Mapping[str, Any]) -> dict[str, Any]:
    expected = item.get("output", item.get("stdout"))
    return {"input": _text(item.get("input", item.get("stdin"))), "output": _text(expected)}


def _call_case(item: Mapping[str, Any]) -> dict[str, Any]:
    args = item.get("args", [])
    kwargs = item.get("kwargs", {}) or {}
    if not isinstance(args, list | tuple):
        args = [args]
    if not isinstance(kwargs, Mapping):
        raise TestsError("a function-call case's 'kwargs' must be an object")
    return {"args": list(args), "kwargs": dict(kwargs), "expected": item["expected"]}


# -- comparing results on the host -----------------------------------------------


def from_dataset(value: Any, cache: Classes | None = None) -> Any:
    """A dataset's JSON value (args, expected) as Python values; values JSON cannot hold may be
    tagged the way the judge tags them (``{"$int": "0x…"}``, ``{"$tuple": [...]}``, ``{"$set": [...]}``).
    ``cache``: the row's rebuilt classes, so that a tagged enum or namedtuple is the same class as
    the one the row's returned value is rebuilt as."""
    return decode(_to_wire(value), cache=cache)


def _to_wire(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_to_wire(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in TAGS:
            ((tag, inner),) = value.items()
            return {tag: _to_wire(inner)}
        return {"$dict": [[_to_wire(k), _to_wire(v)] for k, v in value.items()]}
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 1 << 53:
        return {"$int": hex(value)}
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": repr(value)}
    return value


def values_equal(actual: Any, expected: Any, rel_tol: float = 1e-6, abs_tol: float | None = None) -> bool:
    """Deep equality for a returned value against a dataset's expected one, decided by the expected
    value's type at every level (inside lists, sets, dict keys and values too), strict where a
    lenient answer could be gamed: an int is only equal to the same number (no tolerance; a float
    only when it is exactly that number); tolerance applies only when the expected value is a float;
    a set is only equal to a set; ``True`` is not ``1`` (nor ``1`` ``True``); tuples equal lists
    (JSON has no tuples); a JSON object's string keys may be the text of the returned keys; a tagged
    namedtuple or enum member is only equal to one of the same class (the row's, see ``from_dataset``).

    A returned value that cannot be compared (``10 ** 4000`` against a float overflows; a huge-int
    dict key cannot be written as a string) is not equal: a failed test, never an error the
    candidate could cause on purpose.
    """
    try:
        return _values_equal(actual, expected, rel_tol, abs_tol)
    except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError):
        return False


def _values_equal(actual: Any, expected: Any, rel_tol: float, abs_tol: float | None) -> bool:
    te = type(expected)
    if te is not tuple and issubclass(te, tuple):  # a tagged namedtuple: that class, field by field
        return type(actual) is te and _sequences_equal(actual, expected, rel_tol, abs_tol)
    if isinstance(expected, enum.Enum):  # a tagged enum member: that very member
        return actual is expected
    actual = _plain(actual)
    ta = type(actual)
    if te is bool or ta is bool:
        return te is ta and actual == expected
    if te is int:
        return ta in (int, float) and actual == expected
    if te is float:
        if ta not in (int, float):
            return False
        if math.isnan(expected) or (ta is float and math.isnan(actual)):
            return ta is float and math.isnan(actual) and math.isnan(expected)
        return close(actual, expected, rel_tol, abs_tol)
    if te is complex:
        return ta in (int, float, complex) and close(complex(actual), expected, rel_tol, abs_tol)
    if te in (set, frozenset) or ta in (set, frozenset):
        return te in (set, frozenset) and ta in (set, frozenset) and _sets_equal(actual, expected, rel_tol, abs_tol)
    if te in (list, tuple, collections.deque):
        if ta is collections.deque and te is not collections.deque:
            actual, ta = list(actual), list
        sequences = (collections.deque,) if te is collections.deque else (list, tuple)
        return ta in sequences and _sequences_equal(actual, expected, rel_tol, abs_tol)
    if te is collections.OrderedDict:  # its order is part of its equality
        return isinstance(actual, dict) and list(actual) == list(expected) and _dicts_equal(
            actual, expected, rel_tol, abs_tol)
    if issubclass(te, dict):  # a Counter, OrderedDict or defaultdict returned for a JSON object compares as a dict
        return isinstance(actual, dict) and _dicts_equal(actual, expected, rel_tol, abs_tol)
    return ta is te and actual == expected


def _sequences_equal(actual: Any, expected: Any, rel_tol: float, abs_tol: float | None) -> bool:
    return len(actual) == len(expected) and all(
        _values_equal(a, e, rel_tol, abs_tol) for a, e in zip(actual, expected, strict=True))


def _sets_equal(actual: Any, expected: Any, rel_tol: float, abs_tol: float | None) -> bool:
    """Each expected element is matched by the one returned element Python calls equal to it (a
    set holds at most one), compared again by the expected type: ``{True}`` does not answer ``{1}``."""
    if len(actual) != len(expected):
        return False
    index = {a: a for a in actual}
    used = set()
    for e in expected:
        a = index.get(e, _MISSING)
        if a is _MISSING or id(a) in used or not _values_equal(a, e, rel_tol, abs_tol):
            return False
        used.add(id(a))
    return True


def _dicts_equal(actual: dict, expected: dict, rel_tol: float, abs_tol: float | None) -> bool:
    """Keys as :func:`_sets_equal` matches elements, except that an expected string key (a JSON
    object's) may also be the JSON text of a returned key (``{1: "a"}`` answers ``{"1": "a"}``)."""
    if len(actual) != len(expected):
        return False
    index = {k: k for k in actual}
    texts = None
    used = set()
    for key, value in expected.items():
        a = index.get(key, _MISSING)
        if a is not _MISSING and not _values_equal(a, key, rel_tol, abs_tol):
            a = _MISSING
        if a is _MISSING and type(key) is str:
            if texts is None:
                texts = {_key(k): k for k in actual if type(k) is not str}
            a = texts.get(key, _MISSING)
        if a is _MISSING or id(a) in used or not _values_equal(actual[a], value, rel_tol, abs_tol):
            return False
        used.add(id(a))
    return True


def _plain(value: Any) -> Any:
    """A namedtuple as its tuple, an int or str enum member as its value: a dataset's expected
    values are JSON, and a value of those kinds meant the same before it was rebuilt."""
    t = type(value)
    if t in (int, float, str, tuple, list, dict, bool) or value is None:
        return value
    if isinstance(value, tuple) and hasattr(t, "_fields"):
        return tuple(value)
    if isinstance(value, enum.Enum) and isinstance(value, int | str):
        inner = value._value_
        return inner if type(inner) in (int, str) else value
    return value


_MISSING = object()
ZERO_FLOOR = 1e-9  # how far from an expected 0 a value may be when no absolute tolerance is set


def close(actual: complex, expected: complex, rel_tol: float, abs_tol: float | None = None) -> bool:
    """Within ``rel_tol`` of the expected value. With no ``abs_tol`` set, an absolute floor applies only
    where the expected value is 0 (there a relative tolerance means exact), so ``return 0.0`` does not
    pass an expected ``1e-12``; a spec or row that sets ``abs_tol`` (the "absolute or relative error"
    of a problem statement) gets ``max(rel_tol·|expected|, abs_tol)`` everywhere."""
    if actual == expected:
        return True
    if not cmath.isfinite(expected):  # a tolerance around infinity would take any number: exactly it only
        return False
    bound = rel_tol * abs(expected)
    if abs_tol is not None:
        bound = max(bound, abs_tol)
    elif expected == 0:
        bound = ZERO_FLOOR
    return abs(actual - expected) <= bound


def _key(key: Any) -> str:
    # JSON object keys are strings: {1: "a"} from the candidate equals {"1": "a"} from the dataset.
    return key if isinstance(key, str) else json.dumps(key, default=repr)


# -- stdin/stdout checkers --------------------------------------------------------


def _normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check_exact(expected: str, actual: str) -> bool:
    """Identical text, up to line endings (CRLF vs LF) and trailing newlines."""
    return _normalize_newlines(expected).rstrip("\n") == _normalize_newlines(actual).rstrip("\n")


# What a reader (and a judge's terminal) takes as spacing and as case: ASCII's. Python's own split()
# and casefold() also take U+2003 or U+001C as spacing and the Kelvin sign as K, so ``1\u20032`` would
# be the tokens 1 and 2, and ``ſ`` an s.
_SPACE = re.compile(r"[ \t\n\r\f\v]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def tokens(text: str) -> list[str]:
    """The ASCII-whitespace-separated tokens of ``text``."""
    return [t for t in _SPACE.split(text) if t]


def check_whitespace(expected: str, actual: str) -> bool:
    """The same whitespace-separated tokens: spacing, blank lines and line breaks do not matter."""
    return tokens(expected) == tokens(actual)


def check_tokens_ci(expected: str, actual: str) -> bool:
    """The same tokens, ignoring ASCII case (``YES`` = ``yes``; ``KO`` with a Kelvin sign is not ``KO``)."""
    return [t.translate(_ASCII_LOWER) for t in tokens(expected)] == [t.translate(_ASCII_LOWER) for t in tokens(actual)]


def check_float(expected: str, actual: str, rel_tol: float = 1e-6, abs_tol: float | None = None) -> bool:
    """Token-wise: an expected integer exactly, an expected non-integer number within tolerance, other
    tokens equal. The expected token decides: ``12345678901234567`` is answered only by a number that is
    exactly it (``12345678901234567.0`` is; ``1.2345678901234568e16``, a float that lost its low digits,
    is not). Tolerance is relative to the expected number (see :func:`close`: ``0`` does not answer
    ``0.0000001``), plus the rounding of its own printing, capped: half a unit of its last printed digit,
    but never more than ``rel_tol`` of ``max(1, |expected|)``, so ``0.333333`` takes ``0.3333333333`` while
    ``3.5`` does not take ``3.54``. A number in the output is a plain decimal (``1e-3``, ``.5``), never
    ``1_000``, ``0x1f`` or ``Infinity`` unless the expected token is that very text."""
    want, got = tokens(expected), tokens(actual)
    if len(want) != len(got):
        return False
    for w, g in zip(want, got, strict=True):
        if w == g:
            continue
        if not _DECIMAL.match(g):
            return False
        if _INTEGER.match(w):
            if not _exactly(g, w):
                return False
            continue
        try:
            a, b = float(w), float(g)
        except ValueError:
            return False
        rounding = min(_printed_precision(w), rel_tol * max(1.0, abs(a)))
        floor = max(abs_tol or 0.0, rounding)
        if math.isnan(a) or math.isnan(b) or not close(b, a, rel_tol, floor if floor > 0 else abs_tol):
            return False
    return True


_INTEGER = re.compile(r"[-+]?[0-9]+\Z")  # ASCII digits: int() and float() also read ٣ and ４
_DECIMAL = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")  # linear: one way to match


def _exactly(token: str, integer: str) -> bool:
    """Whether a decimal token is exactly the integer (decimal arithmetic: no float rounding)."""
    try:
        return decimal.Decimal(token) == decimal.Decimal(integer)
    except (decimal.InvalidOperation, ValueError):
        return False


_PRINTED = re.compile(r"^[-+]?\d*\.(\d+)(?:[eE]([-+]?\d+))?$|^[-+]?\d+[eE]([-+]?\d+)$")


def _printed_precision(token: str) -> float:
    """Half a unit in the last digit an expected number was printed with; 0 for an integer token."""
    match = _PRINTED.match(token)
    if not match:
        return 0.0
    decimals = len(match.group(1) or "")
    exponent = int(match.group(2) or match.group(3) or 0)
    if abs(exponent - decimals) > 300:
        return 0.0
    return 0.5 * 10.0 ** (exponent - decimals)


def check_output(checker: str, expected: str, actual: str, rel_tol: float = 1e-6, abs_tol: float | None = None) -> bool:
    """Apply a named checker (``exact``, ``whitespace``, ``float``, ``tokens_ci``)."""
    if checker == "exact":
        return check_exact(expected, actual)
    if checker == "whitespace":
        return check_whitespace(expected, actual)
    if checker == "tokens_ci":
        return check_tokens_ci(expected, actual)
    if checker == "float":
        return check_float(expected, actual, rel_tol, abs_tol)
    raise ValueError(f"unknown checker {checker!r}; choose one of {', '.join(CHECKERS)} or give checker source")
