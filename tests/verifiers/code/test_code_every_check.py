"""Issue 35, section 3: every check in the tests counts, the way the test runner itself counts it.

A test is a check that runs. A failing check anywhere in the test program (an ``assert``, a
``unittest`` assertion method, a raised error; inside or outside anything that looks like a test)
fails the row; a statement that merely *contains* asserts is not a passing test; pytest's outcome
is read from its reports for every outcome it knows; the stdout ``float`` checker compares integer
tokens exactly; a custom checker that chokes on the candidate's output scores 0 (only one that
fails on the expected output is ``invalid_input``).

The cases are data (:class:`Case`): a test program, a wrong solution that must score 0 with
``status=ok`` (``FAIL``) or an honest one that must score 1 (``PASS``), or a row whose checker is
broken (``INVALID``). Every case of a backend runs in ONE ``verify_batch`` on Docker, on the local
backend with bubblewrap and on its opted-in fallback without; each case is its own test item.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

import pytest
from conftest import require_docker

import rewardsmith.verifiers.code  # noqa: F401 - registers "code"
from rewardsmith.sandbox.job import ExecResult
from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.code.harness import prepare_script
from rewardsmith.verifiers.code.tests import check_output

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SPEC = {"type": "code", "timeout_s": 1.5, "memory_mb": 512}
FAIL, PASS, INVALID = "fail", "pass", "invalid_input"

# The problem: f(x) = 2 * x. WRONG is right on 1 (f(1) == 2) and wrong on everything else.
RIGHT = "def f(x):\n    return 2 * x\n"
WRONG = "def f(x):\n    return x + 1\n"


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@dataclass(frozen=True)
class Case:
    id: str
    klass: str
    completion: str
    fields: dict[str, Any]
    expect: str


CASES: list[Case] = []


def case(cid: str, klass: str, completion: str, fields: dict[str, Any], expect: str) -> None:
    assert all(c.id != cid for c in CASES), cid
    assert "local" not in cid and "docker" not in cid, "case ids must not match the backend ids (-k local)"
    CASES.append(Case(cid, klass, code(completion), fields, expect))


def both(cid: str, klass: str, fields: dict[str, Any]) -> None:
    """The same tests twice: the wrong solution scores 0, the honest one 1."""
    case(f"{cid}-wrong", klass, WRONG, fields, FAIL)
    case(f"{cid}-honest", klass, RIGHT, fields, PASS)


def script(text: str, **more: Any) -> dict[str, Any]:
    return {"tests": code(text), **more}


def pytest_file(text: str) -> dict[str, Any]:
    return {"tests": None, "pytest": code(text)}


# ============================================================================================
# Class "uncounted": checks in statements a harness that counts asserts by where they stand in
# the source would not count. Each: the wrong solution passes f(1) and fails the later check.
# ============================================================================================

both("if-raise-after-the-asserts", "uncounted",
     {"tests": ["assert f(1) == 2", "if f(2) != 4: raise ValueError('f(2)')"]})
both("helper-called-outside-any-assert", "uncounted", script("""
    def same(a, b):
        assert a == b, (a, b)

    same(f(1), 2)
    same(f(3), 6)
    """))
both("main-guarded-checks", "uncounted", script("""
    assert f(1) == 2

    if __name__ == "__main__":
        assert f(5) == 10
    """))
both("module-code-between-asserts", "uncounted", script("""
    assert f(1) == 2
    values = [f(x) for x in range(4)]
    total = sum(values)
    if total != 12:
        raise AssertionError(f"sum was {total}")
    assert values[0] == 0
    """))
both("check-after-an-early-exit", "uncounted", script("""
    import sys

    assert f(1) == 2
    if f(1) == 2:
        sys.exit(0)
    assert f(7) == 14
    """))
both("check-in-a-loop-helper-at-the-end", "uncounted", script("""
    def verify(pairs):
        for x, y in pairs:
            if f(x) != y:
                raise AssertionError((x, y))

    assert f(1) == 2
    verify([(2, 4), (3, 6)])
    """))
both("raised-error-not-assertion", "uncounted", script("""
    assert f(1) == 2
    {2: "ok", 4: "ok"}[f(2)] if f(2) == 4 else int("not a number")
    """))
both("future-import-and-annotations", "uncounted", script("""
    from __future__ import annotations

    def same(a: int, b: int) -> None:
        assert a == b

    same(f(1), 2)
    same(f(6), 12)
    """))
both("check-raises-from-helper-in-humaneval", "uncounted", {"tests": code("""
    def check(candidate):
        def inner():
            assert candidate(2) == 4
        assert candidate(1) == 2
        inner()
    """), "entry_point": "f"})
both("humaneval-module-level-check", "uncounted", {"tests": code("""
    assert f(3) == 6

    def check(candidate):
        assert candidate(1) == 2
    """), "entry_point": "f"})
both("humaneval-calls-check-itself", "uncounted", {"tests": code("""
    def check(candidate):
        assert candidate(1) == 2
        assert candidate(4) == 8

    check(f)
    """), "entry_point": "f"})

# ============================================================================================
# Class "vacuous": statements that merely contain asserts run no check; they are no test, and a
# program in which no check ran scores 0 whatever the solution (both solutions must score 0).
# ============================================================================================

NO_CHECK_RAN: set[str] = set()  # cases whose feedback must say that no check ran
for name, text in {
    "helper-never-called": "def t():\n    assert f(2) == 4\n",
    "class-body-method-never-called": "class Checks:\n    def run(self):\n        assert f(2) == 4\n",
    "assert-in-an-if-that-never-runs": "if False:\n    assert f(2) == 4\n",
    "pytest-style-functions-in-a-script": "def test_one():\n    assert f(1) == 2\n\n\ndef test_two():\n"
                                          "    assert f(2) == 4\n",
}.items():
    case(f"{name}-wrong", "vacuous", WRONG, {"tests": text}, FAIL)
    case(f"{name}-honest", "vacuous", RIGHT, {"tests": text}, FAIL)
    NO_CHECK_RAN.update({f"{name}-wrong", f"{name}-honest"})
# A loop over what the solution returns: no element, no check.
case("loop-over-empty-result-alone", "vacuous", "def f(x):\n    return []\n",
     {"tests": "for item in f(3):\n    assert item > 0\n"}, FAIL)
NO_CHECK_RAN.add("loop-over-empty-result-alone")
# Honest look-alikes: the helper is called, the loop runs.
both("helper-called", "vacuous", script("""
    def t(x, y):
        assert f(x) == y

    t(1, 2)
    t(2, 4)
    """))
both("loop-of-checks", "vacuous", script("""
    for x in range(5):
        assert f(x) == 2 * x, x
    """))

# ============================================================================================
# Class "unittest": a TestCase in the test text runs, each test method a test, with unittest's
# outcomes; its assertion methods count as checks anywhere.
# ============================================================================================

both("testcase-without-main", "unittest", script("""
    import unittest

    assert f(1) == 2


    class Checks(unittest.TestCase):
        def test_two(self):
            self.assertEqual(f(2), 4)
    """))
both("testcase-with-main", "unittest", script("""
    import unittest


    class TestF(unittest.TestCase):
        def test_one(self):
            self.assertEqual(f(1), 2)

        def test_more(self):
            for x in range(4):
                self.assertEqual(f(x), 2 * x)


    if __name__ == "__main__":
        unittest.main()
    """))
both("testcase-main-bound-by-from-import", "unittest", script("""
    from unittest import TestCase, main


    class Check(TestCase):
        def test_it(self):
            self.assertTrue(f(3) == 6)


    main(exit=False)
    """))
both("subtests", "unittest", script("""
    import unittest


    class Cases(unittest.TestCase):
        def test_each(self):
            for x in (1, 2, 3):
                with self.subTest(x=x):
                    self.assertEqual(f(x), 2 * x)
    """))
both("setup-class-checks", "unittest", script("""
    import unittest


    class Cases(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            if f(10) != 20:
                raise ValueError("f(10)")

        def test_one(self):
            self.assertEqual(f(1), 2)
    """))
both("assertion-method-outside-a-testcase", "unittest", script("""
    import unittest

    check = unittest.TestCase()
    check.assertEqual(f(1), 2)
    check.assertAlmostEqual(f(2.5), 5.0)
    """))
case("runtime-skiptest-fails", "unittest", WRONG, script("""
    import unittest


    class Cases(unittest.TestCase):
        def test_one(self):
            self.assertEqual(f(1), 2)

        def test_two(self):
            if f(2) != 4:
                self.skipTest("cannot tell")
            self.assertEqual(f(2), 4)
    """), FAIL)
case("unexpected-success-fails", "unittest", RIGHT, script("""
    import unittest


    class Cases(unittest.TestCase):
        def test_one(self):
            self.assertEqual(f(1), 2)

        @unittest.expectedFailure
        def test_not_three(self):
            self.assertEqual(f(2), 4)
    """), FAIL)
case("declared-skip-and-expected-failure-do-not-count", "unittest", RIGHT, script("""
    import unittest


    class Cases(unittest.TestCase):
        def test_one(self):
            self.assertEqual(f(1), 2)

        @unittest.skip("later")
        def test_later(self):
            self.fail("never runs")

        @unittest.expectedFailure
        def test_known_bug(self):
            self.assertEqual(f(2), 5)
    """), PASS)

# pytest's checks in a script count too (``raises``, however it is imported).
RAISES = "def f(x):\n    if x < 0:\n        raise ValueError(x)\n    return 2 * x\n"
for name, text in {"raises-only": "import pytest\n\nwith pytest.raises(ValueError):\n    f(-1)\n",
                   "raises-imported-by-name": "from pytest import raises\n\nwith raises(ValueError):\n    f(-3)\n"
                                              "raises(ValueError, f, -2)\n"}.items():
    case(f"{name}-wrong", "unittest", RIGHT, {"tests": text}, FAIL)
    case(f"{name}-honest", "unittest", RAISES, {"tests": text}, PASS)

# ============================================================================================
# Class "pytest": pytest's own outcome, from its reports, for every outcome it knows.
# ============================================================================================

HEAD = "import pytest\nfrom solution import f\n\n\n"
both("setup-error", "pytest", pytest_file(HEAD + """
@pytest.fixture
def two():
    assert f(2) == 4
    return f(1)


def test_one(two):
    assert two == 2
"""))
both("teardown-error", "pytest", pytest_file(HEAD + """
@pytest.fixture
def value():
    yield f(1)
    assert f(3) == 6


def test_one(value):
    assert value == 2
"""))
both("strict-xpass-fails", "pytest", pytest_file(HEAD + """
def test_one():
    assert f(1) == 2


@pytest.mark.xfail(strict=True, reason="f(2) is 4, never 3")
def test_not_three():
    assert f(2) == 3
"""))
both("runtime-skip-fails", "pytest", pytest_file(HEAD + """
def test_one():
    assert f(1) == 2


def test_two():
    if f(2) != 4:
        pytest.skip("odd value")
    assert f(2) == 4
"""))
both("runtime-xfail-fails", "pytest", pytest_file(HEAD + """
def test_one():
    assert f(1) == 2


def test_two():
    if f(2) != 4:
        pytest.xfail("odd value")
"""))
# An xfail mark whose condition is false declares nothing: an xfail at run time still fails.
both("false-xfail-mark-then-runtime-xfail", "pytest", pytest_file(HEAD + """
def test_one():
    assert f(1) == 2


@pytest.mark.xfail(False, reason="never")
def test_two():
    if f(2) != 4:
        pytest.xfail("odd value")
"""))
both("testcase-of-any-name", "pytest", pytest_file("""
import unittest

from solution import f


class Checks(unittest.TestCase):
    def test_one(self):
        self.assertEqual(f(1), 2)

    def test_two(self):
        self.assertEqual(f(2), 4)
"""))
both("module-level-check", "pytest", pytest_file(HEAD + """
assert f(5) == 10


def test_one():
    assert f(1) == 2
"""))
both("parametrize-and-fixtures", "pytest", pytest_file(HEAD + """
@pytest.fixture(params=[3, 4])
def x(request):
    return request.param


@pytest.mark.parametrize(("a", "b"), [(1, 2), (2, 4)])
def test_pairs(a, b):
    assert f(a) == b


def test_fixture(x):
    assert f(x) == 2 * x
"""))
both("declared-skip-xfail-and-class", "pytest", pytest_file(HEAD + """
class TestF:
    def test_one(self):
        assert f(1) == 2

    @pytest.mark.skip(reason="later")
    def test_later(self):
        assert False

    @pytest.mark.skipif(True, reason="not here")
    def test_not_here(self):
        assert False

    @pytest.mark.xfail(reason="a known bug of the tests")
    def test_known(self):
        assert f(2) == 5

    def test_two(self):
        assert f(2) == 4
"""))
both("base-class-not-collected", "pytest", pytest_file(HEAD + """
class TestBase:
    __test__ = False
    inputs = ()

    def test_each(self):
        for x in self.inputs:
            assert f(x) == 2 * x


class TestSmall(TestBase):
    __test__ = True
    inputs = (1, 2)


class TestLarge(TestBase):
    __test__ = True
    inputs = (10, 20)
"""))
case("non-strict-xpass-passes", "pytest", RIGHT, pytest_file(HEAD + """
def test_one():
    assert f(1) == 2


@pytest.mark.xfail(reason="flaky elsewhere")
def test_maybe():
    assert f(2) == 4
"""), PASS)
case("unittest-skip-decorator-in-pytest", "pytest", RIGHT, pytest_file("""
import unittest

from solution import f


class Cases(unittest.TestCase):
    def test_one(self):
        self.assertEqual(f(1), 2)

    @unittest.skip("later")
    def test_later(self):
        self.fail("never")

    @unittest.expectedFailure
    def test_known(self):
        self.assertEqual(f(2), 5)
"""), PASS)
case("unittest-skiptest-at-run-time-in-pytest", "pytest", WRONG, pytest_file("""
import unittest

from solution import f


class Cases(unittest.TestCase):
    def test_one(self):
        self.assertEqual(f(1), 2)

    def test_two(self):
        if f(2) != 4:
            self.skipTest("odd")
"""), FAIL)

# ============================================================================================
# Class "float": the stdout float checker compares integer tokens exactly.
# ============================================================================================

BIG = 12345678901234567  # odd, past 2 ** 53: float(BIG) == 1.2345678901234568e16, its low digit lost
FLOAT = {"checker": "float"}
BIG_CASE = [{"input": f"{BIG - 1} 1\n", "output": f"{BIG}\n"}]
case("float-of-an-exact-integer", "float", "a, b = map(int, input().split())\nprint(float(a + b))\n",
     {"tests": {"cases": BIG_CASE, **FLOAT}}, FAIL)
case("float-division-of-an-exact-integer", "float", "a, b = map(int, input().split())\nprint((a + b) / 1)\n",
     {"tests": {"cases": BIG_CASE, **FLOAT}}, FAIL)
case("integer-off-by-a-little", "float", "print(int(input()) * 2 + 0.0000001)\n",
     {"tests": {"cases": [{"input": "6\n", "output": "12\n"}], **FLOAT}}, FAIL)
case("integer-printed-with-underscores", "float", "print(f'{int(input()) * 1000:_}')\n",
     {"tests": {"cases": [{"input": "5\n", "output": "5000\n"}], **FLOAT}}, FAIL)
case("exact-integer-answer", "float", "a, b = map(int, input().split())\nprint(a + b)\n",
     {"tests": {"cases": BIG_CASE, **FLOAT}}, PASS)
case("integer-printed-as-exact-float", "float", "print(float(int(input()) * 2))\n",
     {"tests": {"cases": [{"input": "6\n", "output": "12\n"}], **FLOAT}}, PASS)
case("non-integer-within-tolerance", "float", "a, b = map(int, input().split())\nprint(a / b, a * b)\n",
     {"tests": {"cases": [{"input": "1 3\n", "output": "0.333333 3\n"}], **FLOAT}}, PASS)

# ============================================================================================
# Class "checker": a custom checker that chokes on the candidate's output scores 0; one that
# fails on the expected output is the row's fault (invalid_input).
# ============================================================================================

# Accepts the expected number; on any output that is not a number it chokes in some way.
CHOKES = code("""
    import sys

    expected, actual = (open(p).read().strip() for p in sys.argv[2:4])
    if actual == "loop":
        while True:
            pass
    if actual == "memory":
        hog = []
        while True:
            hog.append(bytearray(1 << 24))
    if actual == "print":
        while True:
            print("x" * 65536)
    sys.exit(0 if int(actual) == int(expected) else 1)
    """)
ONE = [{"input": "", "output": "7\n"}]
for what in ("loop", "memory", "print", "garbage"):
    case(f"checker-chokes-on-{what}", "checker", f"print({what!r})\n", {"tests": {"cases": ONE, "checker": CHOKES}},
         FAIL)
case("checker-accepts-the-right-output", "checker", "print(3 + 4)\n", {"tests": {"cases": ONE, "checker": CHOKES}},
     PASS)
PERMUTATION = code("""
    import sys

    expected, actual = (open(p).read().split() for p in sys.argv[2:4])
    sys.exit(0 if sorted(expected) == sorted(actual) else 1)
    """)
case("checker-accepts-a-permutation", "checker", "print(*reversed(input().split()))\n",
     {"tests": {"cases": [{"input": "1 2 3\n", "output": "1 2 3\n"}], "checker": PERMUTATION}}, PASS)
case("permutation-checker-rejects-a-wrong-one", "checker", "print(*input().split()[1:])\n",
     {"tests": {"cases": [{"input": "1 2 3\n", "output": "1 2 3\n"}], "checker": PERMUTATION}}, FAIL)
INVERTED = "import sys\nexpected, actual = (open(p).read() for p in sys.argv[2:4])\nsys.exit(int(expected == actual))\n"
case("inverted-checker-is-invalid", "checker", "print(8)\n", {"tests": {"cases": ONE, "checker": INVERTED}}, INVALID)
case("checker-that-hangs-on-expected-is-invalid", "checker", "print(7)\n",
     {"tests": {"cases": ONE, "checker": "while True:\n    pass\n"}}, INVALID)
case("checker-that-crashes-on-expected-is-invalid", "checker", "print(7)\n",
     {"tests": {"cases": ONE, "checker": "raise SystemExit(f'{1 / 0}')\n"}}, INVALID)

CASE_BY_ID = {c.id: c for c in CASES}

# ============================================================================================
# Running them: one batch per backend.
# ============================================================================================

# Docker, the local backend with bubblewrap, and its opted-in fallback without bubblewrap.
BACKENDS = [pytest.param("local", id="local"), pytest.param("local-plain", id="local-plain"),
            pytest.param("docker", id="docker", marks=pytest.mark.docker)]


@pytest.fixture(scope="module")
def verdicts(request) -> dict[str, Any]:
    from rewardsmith.sandbox.local import LocalBackend

    samples = [Sample(prompt="", completion=c.completion, fields=c.fields) for c in CASES]
    if request.param == "local-plain":
        verifier = build({**SPEC, "backend": "local"})
        with LocalBackend(use_bwrap=False, allow_unsafe=True) as backend:
            verifier._backend_override = backend
            out = verifier.verify_batch(samples)
    else:
        if request.param == "docker":
            require_docker()
        out = build({**SPEC, "backend": request.param}).verify_batch(samples)
    return dict(zip((c.id for c in CASES), out, strict=True))


def describe(verdict) -> str:
    tests = [(t.get("name", "")[:40], t.get("status")) for t in (verdict.details or {}).get("tests", [])]
    return f"status={verdict.status} score={verdict.score} tests={tests} feedback={verdict.feedback[:300]!r}"


@pytest.mark.parametrize("verdicts", BACKENDS, indirect=True)
@pytest.mark.parametrize("case_id", list(CASE_BY_ID))
def test_case(verdicts: dict[str, Any], case_id: str) -> None:
    c, verdict = CASE_BY_ID[case_id], verdicts[case_id]
    if c.expect == INVALID:
        assert (verdict.status, verdict.score) == ("invalid_input", 0.0), describe(verdict)
        assert "expected output" in verdict.feedback
        return
    statuses = [t.get("status") for t in (verdict.details or {}).get("tests", [])]
    assert "sandbox_error" not in statuses, describe(verdict)
    want = (1.0, True) if c.expect == PASS else (0.0, False)
    assert (verdict.status, verdict.score, verdict.correct) == ("ok", *want), f"{case_id}: {describe(verdict)}"
    if case_id in NO_CHECK_RAN:
        assert verdict.feedback.startswith("no check ran"), describe(verdict)


def test_every_class_has_cases_of_both_polarities() -> None:
    for klass in ("uncounted", "vacuous", "unittest", "pytest", "float", "checker"):
        of = [c for c in CASES if c.klass == klass]
        assert len([c for c in of if c.expect == PASS]) >= 2, klass
        assert len([c for c in of if c.expect != PASS]) >= 3, klass


# -- without a sandbox ---------------------------------------------------------------------------


def test_a_failing_statement_is_a_test_of_its_own_under_fraction() -> None:
    """Where a test stands does not decide whether it counts: the plan has one unit per statement."""
    prepared = prepare_script("assert f(1) == 2\nif f(2) != 4:\n    raise ValueError\n", None)
    assert prepared["names"] == ["assert f(1) == 2", "if f(2) != 4: raise ValueError"]


@pytest.mark.parametrize(("expected", "printed", "equal"), [
    (str(BIG), "1.2345678901234568e16", False),
    (str(BIG), "12345678901234568", False),
    (str(BIG), f"{BIG}.0", True),
    (str(BIG), f"{BIG}", True),
    ("12", "12.000000001", False),
    ("12", "1.2e1", True),
    ("-7", "-7.00", True),
    ("1000", "1_000", False),
    ("255", "0xff", False),
    ("0", "-0", True),
    ("0", "1e-300", False),
    ("2.5", "2.5000001", True),
    ("2.5", "2.5_000001", False),
    ("inf", "Infinity", False),
    ("3 0.5", "3.0000001 0.5", False),
])
def test_the_float_checker_compares_integer_tokens_exactly(expected: str, printed: str, equal: bool) -> None:
    assert check_output("float", expected, printed) is equal


class _SandboxDown:
    """A backend whose checker jobs fail as the sandbox (an outage), while the solution's run works."""

    def __init__(self) -> None:
        from rewardsmith.sandbox.backend import get_backend

        self.inner = get_backend("local")

    def run_batch(self, jobs):
        return [ExecResult("error", error="the runner died") if "checker.py" in job.files else result
                for job, result in zip(jobs, self.inner.run_batch(jobs), strict=True)]


def test_only_a_sandbox_outage_under_a_checker_is_an_error() -> None:
    verifier = build({**SPEC, "backend": "local"})
    verifier._backend_override = _SandboxDown()
    verdict = verifier.verify(Sample(prompt="", completion="print(7)\n",
                                     fields={"tests": {"cases": ONE, "checker": CHOKES}}))
    assert verdict.status == "error" and verdict.score == 0.0, describe(verdict)
