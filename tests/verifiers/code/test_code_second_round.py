"""What a second, fresh red team (one that had read no test) got paid or forced, closed by design, on both
backends: the expected value decides tolerance (none around infinity), what a reader takes for a digit,
a space or a letter's case decides the stdout checkers (ASCII's), a value from the solution is rebuilt
only as a class the solution's process also ran (the set-up's or the prelude's, never one only the tests
define), and what a record holds never makes the host fail. Each attack is followed by an honest job."""

from __future__ import annotations

from code_cases import Case, module_tests

SPEC = {"type": "code", "timeout_s": 3, "memory_mb": 512}
HONEST_F = ("def f(x):\n    return x + 1\n", {"tests": [{"args": [1], "expected": 2}], "entry_point": "f"})


def call(case_id: str, completion: str, cases: list[dict], expect: float = 0.0, **more) -> Case:
    return Case(case_id, completion, {"tests": cases, "entry_point": "f"}, expect, follow=HONEST_F, **more)


def stdio(case_id: str, printed: str, expected: str, checker: str, expect: float = 0.0) -> Case:
    return Case(case_id, f"print({printed!r})\n", {"tests": {"cases": [{"input": "", "output": expected}],
                                                              "checker": checker}}, expect, follow=HONEST_F)


INF = {"$float": "inf"}
APPROX = """
class Approx:
    def __init__(self, v, tol=1e-9):
        self.v, self.tol = v, tol

    def __eq__(self, other):
        other = other.v if isinstance(other, Approx) else other
        return abs(self.v - other) <= self.tol
"""
CLOSE = """
class Close:
    def __init__(self, value, eps=1e-9):
        self.value, self.eps = value, eps

    def __eq__(self, other):
        return abs(self.value - getattr(other, "value", other)) <= self.eps
"""
POINT = "from dataclasses import dataclass\n\n\n@dataclass\nclass Point:\n    x: float\n    y: float\n"
WILDCARD = "class Anything:\n    def __eq__(self, other):\n        return True\n\n\nANY = Anything()\n"

CASES = [
    # No tolerance around infinity: only infinity answers it.
    call("inf-expected-zero-returned", "def f(x):\n    return 0.0\n", [{"args": [1], "expected": INF}]),
    call("inf-expected-other-inf-returned", "def f(x):\n    return float('-inf')\n", [{"args": [1], "expected": INF}]),
    call("complex-inf-expected", "def f(x):\n    return 42\n",
         [{"args": [1], "expected": {"$complex": [INF, 0.0]}}]),
    call("inf-expected-inf-returned", "def f(x):\n    return float('inf')\n", [{"args": [1], "expected": INF}], 1.0),
    stdio("stdout-inf-expected-zero", "0", "inf\n", "float"),
    stdio("stdout-huge-expected-small", "-5", "1e999\n", "float"),
    stdio("stdout-inf-expected-inf", "inf", "inf\n", "float", 1.0),
    # What a reader takes for digits, spaces and case: ASCII's.
    stdio("stdout-arabic-and-fullwidth-digits", "\u0663 \uff14\uff12", "3 42\n", "float"),
    stdio("stdout-em-space-and-separator-control", "1\u20032\x1c3", "1 2 3\n", "whitespace"),
    stdio("stdout-case-fold-look-alikes", "Ye\u017f \u212aO o\ufb00", "YES KO OFF\n", "tokens_ci"),
    stdio("stdout-ascii-case-is-case", "yes ko off", "YES KO OFF\n", "tokens_ci", 1.0),
    stdio("stdout-tabs-and-newlines-are-spaces", "1\t2\n3", "1 2 3\n", "whitespace", 1.0),
    # A value from the solution is never rebuilt as a class only the tests define.
    Case("tests-tolerance-class-spoofed", """
        class Approx:
            pass


        def f(x):
            made = Approx()
            made.v, made.tol = 0.0, 1e300
            return made
        """, {"tests": APPROX + "\nassert f(1) == Approx(2.5)\nassert f(2) == Approx(7.25)\n", "entry_point": "f"},
         0.0, honest="def f(x):\n    return {1: 2.5, 2: 7.25}[x]\n"),
    Case("tests-wildcard-class-spoofed", "class Anything:\n    pass\n\n\ndef f(x):\n    return Anything()\n",
         {"tests": WILDCARD + "assert f(1) == {'id': ANY, 'v': 2}\n", "entry_point": "f"}, 0.0,
         honest="def f(x):\n    return {'id': 7, 'v': x + 1}\n"),
    Case("tests-class-spoofed-in-a-list", """
        class Close:
            pass


        def roots(a, b, c):
            made = Close()
            made.value, made.eps = 0.0, 1e300
            return [made, made]
        """, {"tests": CLOSE + "\n\ndef check(candidate):\n    assert candidate(1, -3, 2) == [Close(1.0), "
                           "Close(2.0)]\n", "entry_point": "roots"}, 0.0,
         honest="def roots(a, b, c):\n    d = (b * b - 4 * a * c) ** 0.5\n"
                "    return [(-b - d) / (2 * a), (-b + d) / (2 * a)]\n"),
    Case("pytest-tolerance-class-spoofed", """
        class Approx:
            pass


        def area(r):
            made = Approx()
            made.v, made.tol = 0.0, float("inf")
            return made
        """, {"tests": None, "pytest": "from solution import area\n" + APPROX
              + "\n\ndef test_area():\n    assert area(1) == Approx(3.14159265, 1e-6)\n"}, 0.0,
         honest="def area(r):\n    return 3.14159265 * r * r\n"),
    Case("prelude-class-is-still-the-tasks", """
        def mid(a, b):
            return Point((a.x + b.x) / 2, (a.y + b.y) / 2)
        """, {"tests": "assert mid(Point(0, 0), Point(2, 4)) == Point(1, 2)\n", "entry_point": "mid",
              "prelude": POINT},
         1.0),
    # What a record holds is read as the answer's doing, never as the host failing.
    call("a-range-with-a-5001-digit-stop", """
        import sys

        worker = sys.modules["__main__"].Worker
        worker.returned = lambda self, request, args, kwargs: {"$range": [0, {"$int": hex(10 ** 5000)}, 1]}


        def f(x):
            return 0
        """, [{"args": [1], "expected": 5}]),
    call("rebuilt-classes-fill-the-cap-before-an-expected-one", """
        import collections


        def f(x):
            if x == 1:
                return [collections.namedtuple(f"N{i}", "a")(i) for i in range(1000)]
            return 0
        """, [{"args": [1], "expected": 1}, {"args": [2], "expected": {"$namedtuple": ["P", ["x", "y"], [1, 2]]}}]),
    # A signature with no docstring is a program to complete (a body-only completion runs under it).
    # (The comment line keeps the body's indent through the cases' dedent.)
    Case("prompt-without-docstring", "    return a + b\n\n# the body ends\n",
         {"tests": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}, 1.0,
         prompt="def add(a, b):\n"),
]
outcome, test_case = module_tests(CASES, SPEC)  # one batch per backend; one test per case and backend
