"""Issue 35, section 2: the wire carries data, and the judge decides equality from the task's types.

A value that crosses from the candidate to the judge is plain data: a rebuilt enum, namedtuple or
task-class instance holds no function and no reference to a candidate object, its member table or
attribute dict holds no dunder or private name and shadows nothing its class defines, and an enum
or namedtuple is rebuilt as the task's own class or as plain structure, never with a method the
candidate chose. Equality is decided by the expected value's type, inside containers too; two
stand-ins for candidate objects are never equal. The classes a job rebuilds are that job's: a row
that floods them fails alone.

The attacks come first: each is a completion that returned a wrong answer and was paid in full
before this section (the enum one from plain solution code, in every assert form). Each is
followed, in the same batch, by an honest job that must still score 1.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import json

import pytest
from code_cases import BACKENDS, Case, check_case, module_tests, run_cases

from rewardsmith.verifiers.code.sandboxed.wire import (
    MAX_CLASSES,
    Classes,
    WireError,
    decode,
    encode,
    instance_of,
)
from rewardsmith.verifiers.code.tests import from_dataset, values_equal

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
SPEC = {"type": "code", "timeout_s": 3, "memory_mb": 512}
CASES: list[Case] = []


def add(case_id: str, completion: str, fields: dict, expect: float, **more) -> None:
    CASES.append(Case(case_id, completion, fields, expect, **more))


# -- the problem most attacks target, in every form that runs in the judge ---------------------------

ADD_HONEST = "def add(a, b):\n    return a + b\n"
ADD_FORMS = {
    "mbpp": {"tests": ["assert add(1, 2) == 3", "assert add(20, 22) == 42"]},
    "humaneval": {"tests": "def check(candidate):\n    assert candidate(1, 2) == 3\n"
                           "    assert candidate(20, 22) == 42\n", "entry_point": "add"},
    "pytest": {"tests": None, "pytest": "from solution import add\n\n\ndef test_small():\n"
                                        "    assert add(1, 2) == 3\n\n\ndef test_larger():\n"
                                        "    assert add(20, 22) == 42\n"},
    "call": {"tests": [{"args": [1, 2], "expected": 3}, {"args": [20, 22], "expected": 42}], "entry_point": "add"},
}

# Plain solution code: an enum whose member table carries '__eq__' with a function as its value. The
# judge used to rebuild the class with Enum(name, members), which makes that entry a method: the
# candidate's function then decided every comparison with the returned member.
ENUM_MEMBER_MAP = """
import enum


class Answer(enum.Enum):
    A = 1


def _always(*args):
    return True


class _Method:
    _value_ = staticmethod(_always)


Answer._member_map_["__eq__"] = _Method()


def add(a, b):
    return Answer.A
"""
# The same through a metaclass whose __members__ lists '__eq__' and '__ne__'.
ENUM_METACLASS = """
import enum


def _always(*args):
    return True


def _never(*args):
    return False


class _Method:
    def __init__(self, function):
        self._value_ = function


class Listing(enum.EnumMeta):
    @property
    def __members__(cls):
        return {"A": cls._member_map_["A"], "__eq__": _Method(_always), "__ne__": _Method(_never)}


class Answer(enum.Enum, metaclass=Listing):
    A = 1


def add(a, b):
    return Answer.A
"""
# A sunder name and a private name in the member table, with plain values: refused as well.
ENUM_SUNDER = """
import enum


class Answer(enum.IntEnum):
    A = 3


Answer._member_map_["_missing_"] = Answer.A
Answer._member_map_["_private"] = Answer.A


def add(a, b):
    return Answer.A
"""
# A forged namedtuple whose values are functions (the candidate rewrites its side of the wire).
FORGED_NAMEDTUPLE = """
import sys

_main = sys.modules["__main__"]


def _always(*args):
    return True


def _forged(self, value):
    return {"$namedtuple": ["Pair", ["eq", "ne"], [{"$ref": self.keep(_always)}, {"$ref": self.keep(_always)}]]}


_main.Worker.value = _forged


def add(a, b):
    return 0
"""
for form, fields in ADD_FORMS.items():
    add(f"enum-member-map-{form}", ENUM_MEMBER_MAP, fields, 0.0, honest=ADD_HONEST)
    add(f"enum-metaclass-{form}", ENUM_METACLASS, fields, 0.0, honest=ADD_HONEST)
add("enum-sunder-mbpp", ENUM_SUNDER, ADD_FORMS["mbpp"], 0.0, honest=ADD_HONEST)
add("enum-sunder-pytest", ENUM_SUNDER, ADD_FORMS["pytest"], 0.0, honest=ADD_HONEST)
add("forged-namedtuple-mbpp", FORGED_NAMEDTUPLE, ADD_FORMS["mbpp"], 0.0, honest=ADD_HONEST)

# Honest look-alikes: enums and namedtuples of the solution's own, compared by value or by member.
add("honest-intenum", "import enum\n\n\nclass N(enum.IntEnum):\n    THREE = 3\n    BIG = 42\n\n\n"
                      "def add(a, b):\n    return N(a + b)\n", ADD_FORMS["mbpp"], 1.0)
add("honest-namedtuple-total", "from collections import namedtuple\n\nTotal = namedtuple('Total', 'value')\n\n\n"
                               "def add(a, b):\n    return Total(a + b)[0]\n", ADD_FORMS["pytest"], 1.0)
COLOR = "import enum\n\n\nclass Color(enum.Enum):\n    RED = 1\n    GREEN = 2\n\n\ndef pick(n):\n    return {}\n"
COLOR_TESTS = {"tests": ["assert pick(1) == Color.RED", "assert pick(2) is Color.GREEN", "assert pick(1).name == 'RED'",
                         "assert pick(2) != Color.RED"]}
add("honest-own-enum-members", COLOR.format("Color(n)"), COLOR_TESTS, 1.0)
add("wrong-own-enum-members", COLOR.format("Color.RED"), COLOR_TESTS, 0.0, honest=COLOR.format("Color(n)"))
PAIR_TESTS = {"tests": ["assert split(7) == Pair(3, 4)", "assert split(7).low == 3", "assert split(8) == (4, 4)"]}
PAIR = "from collections import namedtuple\n\nPair = namedtuple('Pair', 'low high')\n\n\ndef split(n):\n    return {}\n"
add("honest-own-namedtuple", PAIR.format("Pair(n // 2, n - n // 2)"), PAIR_TESTS, 1.0)
add("wrong-own-namedtuple", PAIR.format("Pair(n - n // 2, n // 2)"), PAIR_TESTS, 0.0,
    honest=PAIR.format("Pair(n // 2, n - n // 2)"))
COUNTS = ("from collections import defaultdict\n\n\ndef counts(s):\n    d = defaultdict(lambda: {})\n    for c in s:\n"
          "        d[c] += 1\n    return d\n")
COUNTS_TESTS = {"tests": ["assert counts('aab') == {'a': 2, 'b': 1}", "assert counts('aab')['z'] == 0",
                          "d = counts('x')", "d['y'] += 5", "assert d == {'x': 1, 'y': 5}"]}
add("honest-defaultdict-own-factory", COUNTS.format("0"), COUNTS_TESTS, 1.0)
add("wrong-defaultdict-own-factory", COUNTS.format("1"), COUNTS_TESTS, 0.0, honest=COUNTS.format("0"))

# -- a task's own class (the row's prelude): rebuilt from data, never with the candidate's methods ------

POINT = """
class Point:
    tolerance = 1e-9

    def __init__(self, x, y):
        self.x, self.y = x, y

    def same(self, other):
        return isinstance(other, Point) and abs(self.x - other.x) <= self.tolerance \\
            and abs(self.y - other.y) <= self.tolerance

    def __eq__(self, other):
        return self.same(other)
"""
MID_HONEST = "def midpoint(a, b):\n    return Point((a.x + b.x) / 2, (a.y + b.y) / 2)\n"
MID_FORMS = {
    "mbpp": {"tests": ["assert midpoint(Point(0, 0), Point(2, 4)) == Point(1, 2)",
                       "assert midpoint(Point(1, 1), Point(3, 3)) == Point(2, 2)"], "prelude": POINT},
    "humaneval": {"tests": "def check(candidate):\n    assert candidate(Point(0, 0), Point(2, 4)) == Point(1, 2)\n"
                           "    assert candidate(Point(1, 1), Point(3, 3)) == Point(2, 2)\n",
                  "entry_point": "midpoint", "prelude": POINT},
    "pytest": {"tests": None, "prelude": POINT,
               "pytest": "from solution import Point, midpoint\n\n\ndef test_mid():\n"
                         "    assert midpoint(Point(0, 0), Point(2, 4)) == Point(1, 2)\n"
                         "    assert isinstance(midpoint(Point(0, 0), Point(1, 1)), Point)\n"},
}
# The instance carries an attribute named like the task's method: the task's __eq__ would call it.
SHADOW_METHOD = "def _always(*args):\n    return True\n\n\ndef midpoint(a, b):\n    p = Point(0, 0)\n" \
                "    p.same = _always\n    return p\n"
# ... or like the task's class-level setting, as plain data: the task's __eq__ would read it.
SHADOW_SETTING = "def midpoint(a, b):\n    p = Point(0, 0)\n    p.tolerance = 1e9\n    return p\n"
# The candidate rewrites its side of the wire to send an instance of the task's class by its
# attributes, one of them a function of its own.
FORGED_INSTANCE = """
import sys

_main = sys.modules["__main__"]
_real = _main.Worker.value


def _always(*args):
    return True


def _forged(self, value):
    if type(value) is Point:
        return {"$instance": ["Point", {"$dict": [["x", 0], ["y", 0], ["same", {"$ref": self.keep(_always)}]]}]}
    return _real(self, value)


_main.Worker.value = _forged


def midpoint(a, b):
    return Point(0, 0)
"""
# ... or answers the judge's request for the instance's attributes with a dunder and a private name.
FORGED_STATE = """
import sys

_main = sys.modules["__main__"]
_real = _main.attributes


def _always(*args):
    return True


def _forged(obj):
    table = _real(obj)
    table["__eq__"] = _always
    table["_Point__hidden"] = _always
    return table


_main.attributes = _forged


def midpoint(a, b):
    return Point(0, 0)
"""
for form, fields in MID_FORMS.items():
    for name, attack in (("shadow-method", SHADOW_METHOD), ("shadow-setting", SHADOW_SETTING),
                         ("forged-instance", FORGED_INSTANCE)):
        add(f"{name}-{form}", attack, fields, 0.0, honest=MID_HONEST)
    add(f"honest-task-class-{form}", MID_HONEST, fields, 1.0)
add("forged-state-mbpp", FORGED_STATE, MID_FORMS["mbpp"], 0.0, honest=MID_HONEST)
# An honest instance with a private attribute of its own stays in the solution's process: its
# methods still answer, comparing it is unsupported (a plain fail would hide why).
add("honest-task-class-private-attribute-methods",
    "def midpoint(a, b):\n    p = Point((a.x + b.x) / 2, (a.y + b.y) / 2)\n    p._note = 'mid'\n    return p\n",
    {"tests": ["p = midpoint(Point(0, 0), Point(2, 4))", "assert p.same(Point(1, 2))", "assert p.x == 1"],
     "prelude": POINT}, 1.0)

# -- two stand-ins for candidate objects are never equal because they name the same thing --------------

TREE = """
class Node:
    def __init__(self, value, left=None, right=None):
        self.value, self.left, self.right = value, left, right


def build(values):
    root = None
    for v in values:
        root = _insert(root, v)
    return root


def _insert(node, v):
    if node is None:
        return Node(v)
    if v < node.value:
        node.left = _insert(node.left, v)
    else:
        node.right = _insert(node.right, v)
    return node


def find(root, v):
    {}
"""
FIND_HONEST = TREE.format("while root is not None and root.value != v:\n        root = root.left if v < root.value "
                          "else root.right\n    return root")
# Every object the candidate keeps gets reference number 1, so the judge's stand-ins for two
# different nodes look like the same object.
ONE_REF = """
import sys

_main = sys.modules["__main__"]


def _one_ref(self, value):
    self.objects[1] = value
    return 1


_main.Worker.keep = _one_ref
""" + TREE.format("return Node(-1)")
IDENTITY_TESTS = {"tests": ["root = build([2, 1, 3])", "assert find(root, 1) == root.left"]}
VALUE_TESTS = {"tests": ["root = build([2, 1, 3])", "assert find(root, 1).value == root.left.value",
                         "assert find(root, 3).value == 3"]}
add("one-ref-equal-stand-ins", ONE_REF, IDENTITY_TESTS, 0.0, follow=(FIND_HONEST, VALUE_TESTS),
    statuses=("unsupported_value",))
add("honest-stand-ins-compared-by-value", FIND_HONEST, VALUE_TESTS, 1.0)
add("honest-stand-ins-compared-is-unsupported", FIND_HONEST, IDENTITY_TESTS, 0.0, statuses=("unsupported_value",),
    follow=(FIND_HONEST, VALUE_TESTS))

# -- equality from the expected type, inside containers (function-call cases, compared on the host) -----


def call(case_id: str, returns: str, expected: object, expect: float, honest: str = "") -> None:
    fields = {"tests": [{"args": [], "expected": expected}], "entry_point": "f"}
    add(case_id, f"def f():\n    return {returns}\n", fields, expect,
        honest=f"def f():\n    return {honest}\n" if honest else "")


call("bool-in-set", "{True, 2}", {"$set": [1, 2]}, 0.0, honest="{1, 2}")
call("bool-in-nested-set", "[{True}, {2}]", [{"$set": [1]}, {"$set": [2]}], 0.0, honest="[{1}, {2}]")
call("bool-in-frozenset-in-tuple", "(frozenset({True, 1.5}),)", [{"$frozenset": [1, 1.5]}], 0.0,
     honest="(frozenset({1, 1.5}),)")
call("str-key-for-int-key", "{'1': 'a'}", {"$dict": [[1, "a"]]}, 0.0, honest="{1: 'a'}")
call("bool-key-for-int-key", "{True: 'a'}", {"$dict": [[1, "a"]]}, 0.0, honest="{1: 'a'}")
call("bool-in-counter", "__import__('collections').Counter({'a': True})", {"a": 1}, 0.0,
     honest="__import__('collections').Counter({'a': 1})")
NT = "__import__('collections').namedtuple('Point', 'x y')"
call("bool-in-namedtuple", f"{NT}(True, 2)", {"$namedtuple": ["Point", ["x", "y"], [1, 2]]}, 0.0, honest=f"{NT}(1, 2)")
ENUM = "__import__('enum').Enum('Color', [('RED', 1), ('GREEN', 2)])"
call("other-member", f"{ENUM}.GREEN", {"$enum": ["Color", "", "RED", [["RED", 1], ["GREEN", 2]]]}, 0.0,
     honest=f"{ENUM}.RED")
call("same-name-other-members", "__import__('enum').Enum('Color', [('RED', 1)]).RED",
     {"$enum": ["Color", "", "RED", [["RED", 1], ["GREEN", 2]]]}, 0.0, honest=f"{ENUM}.RED")
call("honest-json-keys", "{1: [1.0, 2], 'b': (3,)}", {"1": [1, 2], "b": [3]}, 1.0)

# -- the classes a job rebuilds are that job's ---------------------------------------------------------

MANY = ("from collections import namedtuple\n\n\ndef f():\n"
        "    return [namedtuple(f'{}{{i}}', 'v')(i) for i in range({})]\n")
MANY_ENUMS = "import enum\n\n\ndef f():\n    return [enum.Enum(f'E{{i}}', [('A', i)]).A for i in range({})]\n"
SUM_TUPLE = ("from collections import namedtuple\n\nTotal = namedtuple('Total', 'value')\n\n\ndef f():\n"
             "    return Total(3)\n", {"tests": [{"args": [], "expected": [3]}], "entry_point": "f"})


def many(case_id: str, template: str, prefix: str, count: int, expect: float) -> None:
    expected = [[i] for i in range(count)] if template is MANY else list(range(count))
    completion = template.format(prefix, count) if template is MANY else template.format(count)
    add(case_id, completion, {"tests": [{"args": [], "expected": expected}], "entry_point": "f"}, expect,
        follow=SUM_TUPLE)


# Three rows of 600 rebuilt classes each: every one is within a job's cap, so each must pass, and
# the honest row after each must too (the host's cache used to be one per process: the second
# row of 600 broke it for the rest of the run).
many("classes-600-a", MANY, "P", 600, 1.0)
many("classes-600-b", MANY, "Q", 600, 1.0)
many("classes-600-c", MANY, "R", 600, 1.0)
# A row over the cap fails alone.
many("classes-flood", MANY, "S", MAX_CLASSES + 200, 0.0)
many("enum-classes-flood", MANY_ENUMS, "", MAX_CLASSES + 200, 0.0)
CASE_BY_ID = {case.id: case for case in CASES}
outcome, test_case = module_tests(CASES, SPEC)  # one batch per backend; one test per case and backend


@pytest.mark.parametrize("outcome", BACKENDS, indirect=True)
def test_a_flooded_row_leaves_later_batches_alone(outcome, request) -> None:
    """After every case above ran in this process (the same verifier): 600 more classes still pass."""
    again = [Case("again", CASE_BY_ID["classes-600-a"].completion.replace("P{i}", "T{i}"),
                  CASE_BY_ID["classes-600-a"].fields, 1.0, follow=SUM_TUPLE)]
    check_case(run_cases(request.node.callspec.params["outcome"], again, SPEC), again[0])


def test_every_class_has_several_cases_of_both_polarities() -> None:
    groups = {"enum": "enum-", "task class": ("shadow-", "forged-instance", "forged-state", "honest-task-class"),
              "typed equality": ("bool-", "str-key", "other-member", "same-name", "honest-json"),
              "classes per job": "classes-"}
    for name, prefixes in groups.items():
        chosen = [c for c in CASES if c.id.startswith(prefixes)]
        assert len(chosen) >= 4, name
    assert sum(c.expect == 1.0 for c in CASES) >= 10 and sum(c.expect == 0.0 for c in CASES) >= 30


# -- the wire itself (no sandbox) ------------------------------------------------------------------


def judge_decode(data, classes=None, cache=None):
    """What the judge (or the host) builds from data the candidate sent."""
    return decode(json.loads(json.dumps(data)), classes=classes, cache=cache)


@pytest.mark.parametrize("members", [
    [["A", 1], ["__eq__", 5]],
    [["A", 1], ["_missing_", 2]],
    [["A", 1], ["_generate_next_value_", 2]],
    [["A", 1], ["_private", 2]],
    [["A", 1], ["not an identifier", 2]],
    [["A", 1], ["A", 2]],
    [["A", {"$ref": 1}]],
    [["A", 1], ["numerator", 3], ["denominator", 4]],  # Fraction.__eq__ reads them off an int
])
def test_an_enum_is_rebuilt_only_from_public_names_and_plain_values(members) -> None:
    with pytest.raises(WireError) as refused:
        decode({"$enum": ["Answer", "int", "A", members]}, resolve=lambda ref, name: print)
    assert refused.value.status == "unsupported_value"


def test_a_rebuilt_enum_has_the_enum_machinery_only() -> None:
    member = judge_decode(encode(enum.Enum("Answer", [("A", 1), ("B", 2)]).A))
    kind = type(member)
    assert isinstance(member, enum.Enum) and member.name == "A" and member != 1 and member == kind.A
    assert set(kind.__members__) == {"A", "B"} and "__eq__" not in vars(kind) and "__ne__" not in vars(kind)


@pytest.mark.parametrize("data", [
    {"$namedtuple": ["Pair", ["eq"], [{"$ref": 1}]]},
    {"$namedtuple": ["Pair", ["_make"], [1]]},
    {"$namedtuple": ["Pair", ["__eq__"], [1]]},
    {"$defaultdict": [{"$default": {"$ref": 1}}, []]},
    {"$defaultdict": [{"$ref": 1}, []]},
    {"$instance": ["Point", {"$dict": [["x", 1]]}]},  # only the judge sends instances by their attributes
    {"$callback": 1},
])
def test_a_rebuilt_value_holds_no_function_and_no_candidate_object(data) -> None:
    class Point:
        pass

    with pytest.raises(WireError):
        decode(data, resolve=lambda ref, name: print, classes={"Point": Point})


def test_a_defaultdict_crosses_with_the_value_its_factory_makes() -> None:
    counts = collections.defaultdict(lambda: [0])
    counts["a"].append(1)
    back = judge_decode(encode(counts))
    assert back == {"a": [0, 1]} and type(back) is collections.defaultdict
    assert back["new"] == [0] and back["other"] is not back["new"]  # each missing key gets its own copy
    assert back.default_factory.__module__ == decode.__module__  # the wire's own function, not the sender's


def test_a_namedtuple_or_enum_holding_an_object_crosses_whole_as_a_reference() -> None:
    Pair = collections.namedtuple("Pair", "node n")
    kept: list = []
    data = encode(Pair(object(), 1), keep=lambda v: kept.append(v) or len(kept))
    assert data["$ref"] == len(kept) and type(kept[-1]) is Pair


@dataclasses.dataclass
class Box:
    width: int
    _depth: int = 0  # declared by the task: allowed though private

    def area(self):
        return self.width * self._depth


class Plain:
    scale = 1

    def area(self):
        return 0


@pytest.mark.parametrize(("klass", "table", "ok"), [
    (Box, {"width": 2, "_depth": 3}, True),
    (Box, {"width": 2, "area": 5}, False),  # shadows a method
    (Box, {"width": 2, "__class__": 5}, False),
    (Plain, {"x": 1, "y": [2]}, True),
    (Plain, {"scale": 100}, False),  # shadows a class-level setting
    (Plain, {"_x": 1}, False),  # private and undeclared
    (Plain, {"__dict__": {}}, False),
    (Plain, {"not an identifier": 1}, False),
])
def test_an_instance_is_rebuilt_only_from_declared_or_public_plain_attributes(klass, table, ok) -> None:
    if ok:
        obj = instance_of(klass, table)
        assert type(obj) is klass and all(getattr(obj, k) == v for k, v in table.items())
    else:
        with pytest.raises(WireError):
            instance_of(klass, table)


@pytest.mark.parametrize("table", [
    {"$dict": [["x", {"$ref": 1}]]},
    {"$dict": [["x", [1, {"$dict": [["y", {"$ref": 1}]]}]]]},
    {"$dict": [["x", {"$callback": 1}]]},
])
def test_an_attribute_table_decodes_as_plain_data_only(table) -> None:
    with pytest.raises(WireError):  # a reference there is never a stand-in, a function never crosses
        decode(table, resolve=lambda ref, name: print, plain=True)


def test_a_reference_inside_a_rebuilt_value_is_only_the_tasks_own_object() -> None:
    table = {"$dict": [["x", [1, {"$ref": 7, "$type": "Plain"}]]]}
    rebuilt = decode(table, plain=True, inside=lambda ref, name: Plain() if name == "Plain" else None)
    assert type(rebuilt["x"][1]) is Plain
    with pytest.raises(WireError):
        decode(table, plain=True, inside=lambda ref, name: None)


def test_each_job_has_its_own_classes() -> None:
    flooded = Classes()
    nt = [encode(collections.namedtuple(f"N{i}", "v")(i)) for i in range(MAX_CLASSES + 1)]
    for data in nt[:MAX_CLASSES]:
        judge_decode(data, cache=flooded)
    with pytest.raises(WireError):
        judge_decode(nt[MAX_CLASSES], cache=flooded)
    assert judge_decode(nt[MAX_CLASSES], cache=Classes()) == (MAX_CLASSES,)  # another job starts empty
    assert judge_decode(nt[0]) == (0,)  # and so does a decode that names no job
    same = Classes()
    assert type(judge_decode(nt[1], cache=same)) is type(judge_decode(nt[1], cache=same))


@pytest.mark.parametrize(("actual", "expected"), [
    ({True, 2}, {1, 2}),
    ([{True}], [{1}]),
    (frozenset({1.5, True}), frozenset({1.5, 1})),
    ({"1": "a"}, {1: "a"}),
    ({True: "a"}, {1: "a"}),
    ({1: "a", "1": "b"}, {"1": "a", "2": "b"}),
    ((True, 2), (1, 2)),
    ({"a": [False]}, {"a": [0]}),
    (1, True),
    (collections.Counter({"a": True}), {"a": 1}),
    (collections.deque([True]), collections.deque([1])),
])
def test_equality_is_decided_by_the_expected_type_inside_containers(actual, expected) -> None:
    assert values_equal(actual, expected) is False


@pytest.mark.parametrize(("actual", "expected"), [
    ({1, 2}, {1, 2}),
    ({1.0, 2}, {1, 2}),  # an int is answered by a float that is exactly it, in a set too
    ({1: "a"}, {"1": "a"}),  # a JSON object's keys are strings
    ({(1, 2): [1]}, {(1, 2): [1.0]}),
    ([True, 0], [True, 0]),
    (collections.OrderedDict(a=1), collections.OrderedDict(a=1)),
    (collections.deque([1, 2]), [1, 2]),
])
def test_equal_values_stay_equal(actual, expected) -> None:
    assert values_equal(actual, expected) is True


def test_tagged_namedtuples_and_enums_compare_within_one_row() -> None:
    row = Classes()
    expected = from_dataset({"$namedtuple": ["Point", ["x", "y"], [1, 2]]}, cache=row)
    Point = collections.namedtuple("Point", "x y")
    assert values_equal(judge_decode(encode(Point(1, 2)), cache=row), expected)
    assert not values_equal(judge_decode(encode(Point(True, 2)), cache=row), expected)
    assert not values_equal((1, 2), expected)  # the expected type is a namedtuple
    color = from_dataset({"$enum": ["Color", "", "RED", [["RED", 1], ["GREEN", 2]]]}, cache=row)
    Color = enum.Enum("Color", [("RED", 1), ("GREEN", 2)])
    assert values_equal(judge_decode(encode(Color.RED), cache=row), color)
    assert not values_equal(judge_decode(encode(Color.GREEN), cache=row), color)


def test_builtin_classes_cross_by_name_as_the_receivers_own() -> None:
    assert judge_decode(encode([int, KeyError, (str,)])) == [int, KeyError, (str,)]
    for data in ({"$builtin": "print"}, {"$builtin": "__import__"}, {"$builtin": "Nope"}, {"$builtin": ["int"]}):
        with pytest.raises(WireError):
            decode(data)
