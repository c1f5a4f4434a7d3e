"""Issue 24, items 4 and 5: a test's names belong to the tests, never to the solution.

The tests take from the solution only its entry points (declared by the row, defined by the
row's reference solution, or, failing both, the names the tests use that nothing trusted
provides and that are not standard-library names); helpers come from the row's trusted
prelude or set-up. ``from solution import *`` in a pytest file exports only the entry points
and the prelude, never a builtin or a name the test module binds.

Every attack runs on both backends in script (check and assert) form, pytest form and,
where it applies, call form, and is followed by an honest solution that must pass and a
wrong one that must fail.
"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.code import CodeVerifier
from rewardsmith.verifiers.code.names import entry_points, exported

CHAT = [{"role": "user", "content": "Write the function described below."}]


@pytest.fixture
def backend(code_backend):
    return code_backend


def verify_all(backend, samples: list[Sample]) -> list:
    verifier: CodeVerifier = build({"type": "code", "timeout_s": 3})
    verifier._backend_override = backend  # the documented test-only hook
    return verifier.verify_batch(samples)


def row(completion: str, prompt=CHAT, **fields) -> Sample:
    return Sample(prompt=prompt, completion=f"```python\n{completion}```", fields=fields)


# -- which names are entry points (pure, host side) --------------------------------------


@pytest.mark.parametrize(("tests", "trusted", "declared", "reference", "expected"), [
    ("assert add(1, 2) == 3", (), (), None, ("add",)),
    ("assert Counter(f('ab')) == Counter('ab')", (), (), None, ("f",)),
    ("assert isclose(area(1), 3.14159, rel_tol=1e-3)", (), (), None, ("area",)),
    ("assert poly([1], decode(x)) == 0", ("def poly(xs, x):\n    return 0\n",), (), None, ("decode", "x")),
    ("assert count(3) == 3", (), (), "def count(n):\n    return n\n", ("count",)),
    ("assert sum(10, 15) == 6", (), (), "def sum(a, b):\n    return 6\n", ("sum",)),
    ("assert helper(f(1)) == 2", (), ("f",), None, ("f",)),
    ("assert enc(dec('a')) == 'a'", (), ("enc", "dec"), None, ("enc", "dec")),
    ("def check(candidate):\n    assert candidate(1) == 2\n", (), ("f",), None, ("f",)),
    ("for i in range(3):\n    assert g(i) == i\n", (), (), None, ("g",)),
    ("import math\nassert math.isclose(f(1), 1.0)", (), (), None, ("f",)),
])
def test_entry_points(tests, trusted, declared, reference, expected):
    assert entry_points(tests, trusted, declared, reference) == expected


def test_star_import_exports_no_builtin_and_no_name_the_test_binds():
    tests = "from math import isclose\nfrom solution import *\n\ndef test_a():\n    assert isclose(f(1), 1.0)\n"
    assert exported(("f", "isclose", "sorted", "len"), tests) == ("f",)


# -- helpers borrowed from the solution (item 4) ------------------------------------------

POLY = '''import math


def poly(xs: list, x: float):
    """Evaluates the polynomial with coefficients xs at x."""
    return sum(coeff * math.pow(x, i) for i, coeff in enumerate(xs))


def find_zero(xs: list):
    """A zero of the polynomial xs (even length, largest coefficient non-zero)."""
'''
POLY_TESTS = """def check(candidate):
    for xs in ([1, 2], [-6, 11, -6, 1], [2, -3, 0, 1]):
        solution = candidate(xs)
        assert math.fabs(poly(xs, solution)) < 1e-4
"""
POLY_HONEST = """def find_zero(xs):
    lo, hi = -1.0, 1.0
    while poly(xs, lo) * poly(xs, hi) > 0:
        lo *= 2.0
        hi *= 2.0
    while hi - lo > 1e-10:
        mid = (lo + hi) / 2.0
        if poly(xs, mid) * poly(xs, lo) > 0:
            lo = mid
        else:
            hi = mid
    return lo
"""
CYCLIC = '''def encode_cyclic(s: str):
    """Cycles groups of three characters."""
    groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]
    groups = [(group[1:] + group[0]) if len(group) == 3 else group for group in groups]
    return "".join(groups)


def decode_cyclic(s: str):
    """Takes a string encoded with encode_cyclic and returns the decoded string."""
'''
CYCLIC_TESTS = """def check(candidate):
    for text in ("abcdefg", "hello world", "xy", "abcabcabc"):
        assert candidate(encode_cyclic(text)) == text
"""
CYCLIC_HONEST = "def decode_cyclic(s):\n    return encode_cyclic(encode_cyclic(s))\n"
BORROWED = [
    # (prelude, tests, entry point, honest, cheats that redefine the helper)
    (POLY, POLY_TESTS, "find_zero", POLY_HONEST, [
        "def poly(xs, x):\n    return 0.0\n\n\ndef find_zero(xs):\n    return 0.0\n",
        "import math\nmath.fabs = lambda x: 0.0\n\n\ndef find_zero(xs):\n    return 0.0\n",
        "def find_zero(xs):\n    global poly\n    poly = lambda xs, x: 0.0\n    return 0.0\n"]),
    (CYCLIC, CYCLIC_TESTS, "decode_cyclic", CYCLIC_HONEST, [
        "def encode_cyclic(s):\n    return s\n\n\ndef decode_cyclic(s):\n    return s\n",
        "encode_cyclic = str\n\n\ndef decode_cyclic(s):\n    return s\n"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", range(len(BORROWED)))
def test_helpers_come_from_the_row_prelude_under_a_chat_prompt(backend, case):
    prelude, tests, entry, honest, cheats = BORROWED[case]
    wrong = f"def {entry}(*args):\n    return None\n"
    samples = [row(code, tests=tests, entry_point=entry, prelude=prelude) for code in [*cheats, honest, wrong]]
    # The same with the task's own Python prompt as the prompt (the prompt is the prelude).
    samples += [row(code, prompt=prelude, tests=tests, entry_point=entry) for code in [*cheats, honest, wrong]]
    verdicts = verify_all(backend, samples)
    n = len(cheats) + 2
    for chunk in (verdicts[:n], verdicts[n:]):
        *attacks, good, bad = chunk
        for verdict in attacks:
            assert verdict.status == "ok" and verdict.score == 0.0, verdict.feedback
        assert good.status == "ok" and good.score == 1.0, good.feedback
        assert bad.status == "ok" and bad.score == 0.0


MOST_COMMON = "def most_common(s):\n    return max(sorted(set(s)), key=s.count)\n"
FAKE_COUNTER = "def Counter(*args, **kwargs):\n    return 1\n\n\ndef most_common(s):\n    return 'z'\n"
COUNTER_TESTS = ["assert Counter(most_common('abca')) == Counter('a')",
                 "assert Counter(most_common('bbc')) == Counter('b')"]


@pytest.mark.slow
def test_a_stdlib_name_the_tests_forgot_to_import_is_never_the_solutions(backend):
    honest_pytest = ("from solution import *\n\n\ndef test_a():\n"
                     "    assert Counter(most_common('abca')) == Counter('a')\n")
    fake, honest, fake_py, honest_py, fixed_fake, fixed_honest, fake_check = verify_all(backend, [
        row(FAKE_COUNTER, tests=COUNTER_TESTS),
        row(MOST_COMMON, tests=COUNTER_TESTS),
        row(FAKE_COUNTER, tests={"pytest": honest_pytest}),
        row(MOST_COMMON, tests={"pytest": honest_pytest}),
        row(FAKE_COUNTER, tests=COUNTER_TESTS, test_imports=["from collections import Counter"]),
        row(MOST_COMMON, tests=COUNTER_TESTS, test_imports=["from collections import Counter"]),
        row(FAKE_COUNTER, tests="def check(candidate):\n    assert Counter(candidate('ab')) == Counter('a')\n",
            entry_point="most_common"),
    ])
    for verdict in (fake, honest, fake_py, honest_py):  # the row is broken: nobody is paid, and it says why
        assert verdict.status == "ok" and verdict.score == 0.0
        assert "the tests use Counter" in verdict.feedback and "prelude" in verdict.feedback
    assert fixed_fake.score == 0.0 and fixed_honest.score == 1.0, fixed_honest.feedback
    assert fake_check.score == 0.0


@pytest.mark.slow
def test_a_name_neither_prelude_nor_entry_point_provides_fails_by_name(backend):
    tests = "def check(candidate):\n    assert helper(candidate(2)) == 5\n"
    missing, carried, declared, wrong = verify_all(backend, [
        row("def helper(x):\n    return x + 1\n\n\ndef f(x):\n    return x * 2\n", tests=tests, entry_point="f"),
        row("def f(x):\n    return x * 2\n", tests=tests, entry_point="f",
            prelude="def helper(x):\n    return x + 1\n"),
        row("def helper(x):\n    return x + 1\n\n\ndef f(x):\n    return x * 2\n",
            tests="assert helper(f(2)) == 5\nassert f(3) == 6\n", entry_point=["f", "helper"]),
        row("def f(x):\n    return x\n", tests=tests, entry_point="f", prelude="def helper(x):\n    return x + 1\n"),
    ])
    assert missing.score == 0.0 and "the tests use helper" in missing.feedback
    assert "entry_point" in missing.feedback
    assert carried.score == 1.0, carried.feedback
    assert declared.score == 1.0, declared.feedback
    assert wrong.score == 0.0


@pytest.mark.slow
def test_a_reference_solution_names_the_entry_points(backend):
    # MBPP's row carries its reference in ``code``: a task may name its function after a builtin.
    tests = ["assert sum(10, 15) == 6", "assert sum(100, 150) == 93"]
    reference = ("def sum(a, b):\n    total = 0\n    for i in range(1, min(a, b)):\n"
                 "        if a % i == 0 and b % i == 0:\n            total += i\n    return total\n")
    honest, wrong, cheat = verify_all(backend, [
        row(reference, tests=tests, code=reference),
        row("def sum(a, b):\n    return 6\n", tests=tests, code=reference),
        row("def helper():\n    pass\n\n\ndef sum(a, b):\n    return 0\n", tests=tests, code=reference),
    ])
    assert honest.score == 1.0, honest.feedback
    assert wrong.score == 0.0 and cheat.score == 0.0


# -- pytest star-imports (item 5) -----------------------------------------------------------

STAR = [
    # (test file, a cheat that defines the names the tests compare with)
    ("from solution import *\n\n\ndef test_sorted():\n    assert sorted(evens([4, 1, 2])) == [2, 4]\n",
     "def sorted(x, *a, **k):\n    return [2, 4]\n\n\ndef evens(x):\n    return []\n"),
    ("from math import isclose\nfrom solution import *\n\n\ndef test_close():\n    assert isclose(area(1), 3.14159, "
     "rel_tol=1e-4)\n    assert isclose(area(2), 12.56637, rel_tol=1e-4)\n",
     "def isclose(*args, **kwargs):\n    return True\n\n\ndef area(r):\n    return 0.0\n"),
    ("from collections import Counter\nfrom solution import *\n\n\ndef test_count():\n"
     "    assert Counter(letters('aab')) == Counter({'a': 2, 'b': 1})\n    assert len(letters('aab')) == 3\n",
     "def Counter(*args, **kwargs):\n    return 0\n\n\ndef len(x):\n    return 3\n\n\n"
     "def letters(s):\n    return 'zzz'\n"),
]
STAR_HONEST = [
    "def evens(x):\n    return [v for v in x if v % 2 == 0]\n",
    "import math\n\n\ndef area(r):\n    return math.pi * r * r\n",
    "def letters(s):\n    return list(s)\n",
]


@pytest.mark.slow
@pytest.mark.parametrize("case", range(len(STAR)))
def test_star_import_never_replaces_builtins_or_the_tests_imports(backend, case):
    tests, cheat = STAR[case]
    entry = {0: "evens", 1: "area", 2: "letters"}[case]
    wrong = f"def {entry}(*args):\n    return None\n"
    inferred, declared_cheat, honest, wrong_v = verify_all(backend, [
        row(cheat, tests={"pytest": tests}),
        row(cheat, tests={"pytest": tests}, entry_point=[entry, "sorted", "isclose", "Counter", "len"]),
        row(STAR_HONEST[case], tests={"pytest": tests}),
        row(wrong, tests={"pytest": tests}),
    ])
    assert inferred.status == "ok" and inferred.score == 0.0, inferred.feedback
    assert declared_cheat.status == "ok" and declared_cheat.score == 0.0, declared_cheat.feedback
    assert honest.status == "ok" and honest.score == 1.0, honest.feedback
    assert wrong_v.score == 0.0


@pytest.mark.slow
def test_pytest_sees_the_prelude_and_explicit_imports(backend):
    prelude = "def double(x):\n    return 2 * x\n"
    tests = ("from solution import *\nimport solution\n\n\ndef test_a():\n    assert quad(3) == double(double(3))\n"
             "    assert solution.LIMIT == 10\n")
    honest, cheat, wrong = verify_all(backend, [
        row("LIMIT = 10\n\n\ndef quad(x):\n    return double(double(x))\n", tests={"pytest": tests}, prelude=prelude),
        row("LIMIT = 10\n\n\ndef double(x):\n    return 0\n\n\ndef quad(x):\n    return 0\n", tests={"pytest": tests},
            prelude=prelude),
        row("LIMIT = 10\n\n\ndef quad(x):\n    return x\n", tests={"pytest": tests}, prelude=prelude),
    ])
    assert honest.score == 1.0, honest.feedback
    assert cheat.score == 0.0 and wrong.score == 0.0


# -- call form after the attacks: unaffected, still strict ----------------------------------


@pytest.mark.slow
def test_call_form_follow_up(backend):
    cases = [{"args": ["abca"], "expected": "a"}, {"args": ["bbc"], "expected": "b"}]
    honest, cheat = verify_all(backend, [row(MOST_COMMON, tests=cases, entry_point="most_common"),
                                         row(FAKE_COUNTER, tests=cases, entry_point="most_common")])
    assert honest.score == 1.0 and cheat.score == 0.0
