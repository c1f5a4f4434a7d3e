"""Issue 24, items 6 and 10: values keep the order and type that their tests look at.

An ``OrderedDict`` crosses with its order (a wrong order fails ``== OrderedDict(...)``), a
``defaultdict`` with its factory, a namedtuple with its fields, an enum member with its
class (``.name``, ``is``), and an instance of one of the task's own classes (a prelude's
``Point`` dataclass, ``Color`` enum, namedtuple) is rebuilt as that class, so ``isinstance``
and the task's ``__eq__`` hold. A value that cannot be rebuilt faithfully fails its test; it
never passes and never errs. Honest solutions that read a class attribute of the solution's
class by name (``Shape.area(3)``, ``Color.RED``, ``Counter2.make()``) pass.

Every case runs on both backends and, where the form allows it, as an assert script, a
``check(candidate)`` function, a pytest file and function-call cases.
"""

from __future__ import annotations

import collections
import enum

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.code import CodeVerifier
from rewardsmith.verifiers.code.sandboxed.wire import Classes, decode, encode


@pytest.fixture
def backend(code_backend):
    return code_backend


def verify_all(backend, samples: list[Sample]) -> list:
    verifier: CodeVerifier = build({"type": "code", "timeout_s": 3})
    verifier._backend_override = backend  # the documented test-only hook
    return verifier.verify_batch(samples)


def forms(asserts: list[str], entry: str | list[str], prelude: str = "", setup: str = "") -> list[dict]:
    """The same asserts as an MBPP-style script, a check(candidate) function (on the first entry
    point; the row declares them all) and a pytest file."""
    first = entry if isinstance(entry, str) else entry[0]
    check = "def check(candidate):\n" + "".join(f"    {a.replace(first + '(', 'candidate(')}\n" for a in asserts)
    pytest_file = (setup + "\nfrom solution import *\n\n\ndef test_it():\n" + "".join(f"    {a}\n" for a in asserts))
    base = {"prelude": prelude} if prelude else {}
    script_setup = {"test_setup": setup} if setup else {}
    return [{**base, **script_setup, "tests": asserts},
            {**base, **script_setup, "tests": check, "entry_point": entry},
            {**base, "tests": {"pytest": pytest_file}}]


def run_forms(backend, honest: str, wrongs: list[str], asserts: list[str], entry: str | list[str], **kw) -> None:
    samples, labels = [], []
    for fields in forms(asserts, entry, **kw):
        for label, code in [("honest", honest), *((f"wrong {i}", w) for i, w in enumerate(wrongs))]:
            samples.append(Sample(prompt="Solve it.", completion=f"```python\n{code}```", fields=fields))
            labels.append((label, "pytest" if isinstance(fields["tests"], dict) else
                           "check" if "entry_point" in fields else "script"))
    for (label, form), verdict in zip(labels, verify_all(backend, samples), strict=True):
        assert verdict.status == "ok", (label, form, verdict.feedback)
        assert verdict.score == (1.0 if label == "honest" else 0.0), (label, form, verdict.feedback)


# -- the codec, without a sandbox -----------------------------------------------------------


def test_ordered_dict_keeps_its_order():
    value = decode(encode(collections.OrderedDict([("b", 2), ("a", 1)])))
    assert type(value) is collections.OrderedDict and list(value) == ["b", "a"]
    assert value != collections.OrderedDict([("a", 1), ("b", 2)])


def test_defaultdict_keeps_its_factory_and_namedtuple_its_fields():
    d = decode(encode(collections.defaultdict(list, {"a": [1]})))
    d["b"].append(2)
    assert d == {"a": [1], "b": [2]}
    point_type = collections.namedtuple("Point", "x y")
    p = decode(encode(point_type(1, 2)))
    assert (p.x, p.y) == (1, 2) and p == (1, 2)
    assert type(decode(encode(point_type(1, 2)), classes={"Point": point_type})) is point_type


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Shade(enum.Enum):
    DARK = "d"
    LIGHT = "l"


def test_enum_members_keep_their_class():
    job = Classes()  # one job's values share their rebuilt classes; another job's do not
    high = decode(encode(Level.HIGH), cache=job)
    assert high.name == "HIGH" and high == 2 and decode(encode(Level.HIGH), cache=job) is high
    assert decode(encode(Level.HIGH), cache=Classes()) is not high
    assert decode(encode(Shade.DARK), classes={"Shade": Shade}) is Shade.DARK
    rebuilt = decode(encode(Shade.DARK))
    assert rebuilt.name == "DARK" and rebuilt is not Shade.DARK and rebuilt != "d"


# -- through the sandbox -------------------------------------------------------------------

OD_SETUP = "from collections import OrderedDict"


@pytest.mark.slow
def test_ordered_dict_order_is_compared(backend):
    asserts = ["assert ranks('ba') == OrderedDict([('b', 0), ('a', 1)])"]
    honest = ("from collections import OrderedDict\n\n\ndef ranks(s):\n"
              "    return OrderedDict((c, i) for i, c in enumerate(s))\n")
    wrong = ("from collections import OrderedDict\n\n\ndef ranks(s):\n"
             "    return OrderedDict(sorted((c, i) for i, c in enumerate(s)))\n")
    plain = "def ranks(s):\n    return {'a': 1, 'b': 0}\n"
    run_forms(backend, honest, [wrong], asserts, "ranks", setup=OD_SETUP)
    # A plain dict equals an OrderedDict in Python (order ignored): the right pairs pass, as in Python.
    run_forms(backend, plain, [], asserts, "ranks", setup=OD_SETUP)
    # Call form: an expected OrderedDict (tagged) is compared in order.
    cases = [{"args": ["ba"], "expected": {"$odict": [["b", 0], ["a", 1]]}}]
    good, bad = verify_all(backend, [Sample(completion=honest, fields={"tests": cases, "entry_point": "ranks"}),
                                     Sample(completion=wrong, fields={"tests": cases, "entry_point": "ranks"})])
    assert (good.score, bad.score) == (1.0, 0.0), (good.feedback, bad.feedback)


@pytest.mark.slow
def test_defaultdict_default_and_namedtuple_fields(backend):
    asserts = ["assert tally('aab')['z'] == 0", "assert tally('aab')['a'] == 2"]
    honest = "from collections import defaultdict\n\n\ndef tally(s):\n    d = defaultdict(int)\n    for c in s:\n" \
             "        d[c] += 1\n    return d\n"
    lam = "from collections import defaultdict\n\n\ndef tally(s):\n    d = defaultdict(lambda: 0)\n    for c in s:\n" \
          "        d[c] += 1\n    return d\n"
    plain = "def tally(s):\n    return {'a': 2, 'b': 1}\n"
    run_forms(backend, honest, [plain], asserts, "tally")
    run_forms(backend, lam, [], asserts, "tally")
    asserts = ["assert span([3, 1, 2]).low == 1", "assert span([3, 1, 2]).high == 3", "assert span([5]) == (5, 5)"]
    honest = "from collections import namedtuple\nSpan = namedtuple('Span', 'low high')\n\n\ndef span(xs):\n" \
             "    return Span(min(xs), max(xs))\n"
    bare = "def span(xs):\n    return (min(xs), max(xs))\n"
    swapped = "from collections import namedtuple\nSpan = namedtuple('Span', 'high low')\n\n\ndef span(xs):\n" \
              "    return Span(min(xs), max(xs))\n"
    run_forms(backend, honest, [bare, swapped], asserts, "span")


@pytest.mark.slow
def test_task_classes_enums_and_isinstance(backend):
    prelude = ("from dataclasses import dataclass\nfrom enum import Enum, IntEnum\nfrom collections import namedtuple\n"
               "Pair = namedtuple('Pair', 'a b')\n\n\n@dataclass\nclass Point:\n    x: int\n    y: int\n\n\n"
               "class Color(Enum):\n    RED = 1\n    GREEN = 2\n\n\nclass Level(IntEnum):\n    LOW = 1\n    HIGH = 2\n")
    asserts = ["assert isinstance(mid(Point(0, 0), Point(2, 4)), Point)",
               "assert mid(Point(0, 0), Point(2, 4)) == Point(1, 2)",
               "assert warm(5) == Color.RED and warm(5) is Color.RED",
               "assert warm(-5) == Color.GREEN",
               "assert grade(9).name == 'HIGH' and grade(9) == Level.HIGH",
               "assert isinstance(pair(1), Pair) and pair(1).b == 2"]
    honest = ("def mid(p, q):\n    return Point((p.x + q.x) // 2, (p.y + q.y) // 2)\n\n\n"
              "def warm(t):\n    return Color.RED if t > 0 else Color.GREEN\n\n\n"
              "def grade(n):\n    return Level.HIGH if n > 5 else Level.LOW\n\n\n"
              "def pair(a):\n    return Pair(a, a + 1)\n")
    wrongs = [
        honest.replace("// 2, (p.y", "// 3, (p.y"),  # a wrong Point
        honest.replace("return Color.RED if", "return 1 if"),  # the value, not the member
        honest.replace("return Level.HIGH if n > 5 else Level.LOW", "return 2"),  # no .name
        honest.replace("return Pair(a, a + 1)", "return (a, a + 1)"),  # not the task's Pair
        # The solution's own look-alikes: an always-equal Point, a Color of its own
        honest + "\n\nclass Point:\n    def __init__(self, x, y):\n        self.x, self.y = 0, 0\n\n"
                 "    def __eq__(self, other):\n        return True\n",
        honest + "\n\nclass Color(Enum):\n    RED = 1\n    GREEN = 1\n",
    ]
    run_forms(backend, honest, wrongs, asserts, ["mid", "warm", "grade", "pair"], prelude=prelude)


@pytest.mark.slow
def test_values_that_cannot_be_rebuilt_fail_without_error(backend):
    asserts = ["assert make() == Point(1, 2)"]
    prelude = "from dataclasses import dataclass\n\n\n@dataclass\nclass Point:\n    x: int\n    y: int\n"
    hostile = [
        # a Point whose attribute table cannot be read
        "class Point:\n    @property\n    def __dict__(self):\n        raise RuntimeError('no')\n\n\n"
        "def make():\n    return Point()\n",
        # a Point that holds itself, many levels deep
        "class Point:\n    pass\n\n\ndef make():\n    p = Point()\n    p.x = p\n    p.y = 2\n    return p\n",
        # thousands of distinct enum classes
        "import enum\n\n\ndef make():\n    return [enum.Enum(f'E{i}', ['A'])['A'] for i in range(3000)]\n",
        # an enum whose member name is not its own
        "import enum\n\n\nclass Point(enum.Enum):\n    A = 1\n\n\ndef make():\n    return Point.A\n",
    ]
    honest = "def make():\n    return Point(1, 2)\n"
    run_forms(backend, honest, hostile, asserts, "make", prelude=prelude)


@pytest.mark.slow
def test_class_attributes_of_the_solutions_classes(backend):
    asserts = ["assert abs(Shape.area(3) - 28.274333882308138) < 1e-9", "assert Shape.SIDES == 0",
               "assert Color.RED.value == 1 and Color.RED.name == 'RED'", "assert Color.RED == Color.RED",
               "assert Color.RED != Color.BLUE", "assert Counter2.make().count == 0",
               "c = Counter2.make()\nc.bump()\nc.bump()\nassert c.count == 2"]
    honest = ("import enum\nimport math\n\n\nclass Shape:\n    SIDES = 0\n\n    @staticmethod\n    def area(r):\n"
              "        return math.pi * r * r\n\n\nclass Color(enum.Enum):\n    RED = 1\n    BLUE = 2\n\n\n"
              "class Counter2:\n    def __init__(self):\n        self.count = 0\n\n    @classmethod\n"
              "    def make(cls):\n        return cls()\n\n    def bump(self):\n        self.count += 1\n")
    wrong = honest.replace("self.count += 1", "self.count += 2")
    samples = [Sample(completion=code, fields={"tests": asserts}) for code in (honest, wrong)]
    pytest_file = "from solution import *\n\n\n" + "".join(
        f"def test_{i}():\n" + "".join(f"    {line}\n" for line in a.splitlines()) + "\n\n"
        for i, a in enumerate(asserts))
    samples += [Sample(completion=code, fields={"tests": {"pytest": pytest_file}}) for code in (honest, wrong)]
    good, bad, good_py, bad_py = verify_all(backend, samples)
    assert good.score == 1.0 and good_py.score == 1.0, (good.feedback, good_py.feedback)
    assert bad.score == 0.0 and bad_py.score == 0.0 and bad.status == bad_py.status == "ok"
