"""Issue 24, item 1: a returned value the host cannot compare is a failed test, never an error.

``10 ** 4000`` against an expected float or complex overflows a float conversion; a dict keyed by a
huge int cannot be written as a JSON key; a deeply nested value cannot be shown. Each used to raise
in the host's comparison (``status=error``, which trainers drop, so a policy would learn to cause
it). Each attack is followed by an honest job that must pass and a wrong one that must fail.
"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.code import CodeVerifier
from rewardsmith.verifiers.code.tests import values_equal
from rewardsmith.verifiers.core import short


@pytest.mark.parametrize(("actual", "expected"), [
    (10 ** 4000, 1.5),
    (-(10 ** 4000), -1e308),
    (10 ** 4000, 1 + 2j),
    ({10 ** 5000: 1}, {"1": 1}),
    ([10 ** 4000], [1.0]),
    ({"a": 10 ** 4000}, {"a": 0.5}),
    (float("inf"), 1.5),
])
def test_an_uncomparable_value_is_not_equal(actual: object, expected: object) -> None:
    assert values_equal(actual, expected) is False
    assert short(actual)  # and it can still be shown in the feedback


@pytest.mark.parametrize(("actual", "expected"), [
    (10 ** 4000, 10 ** 4000), (2, 2.0), (1.5, 1.5), ([1, [2.0]], [1, [2]]), ({1: "a"}, {"1": "a"}), (1 + 2j, 1 + 2j),
])
def test_comparable_values_still_compare(actual: object, expected: object) -> None:
    assert values_equal(actual, expected) is True


@pytest.fixture
def local(code_backend):
    return code_backend


def verify(local, code: str, expected: object) -> object:
    verifier: CodeVerifier = build({"type": "code"})
    verifier._backend_override = local  # the documented test-only hook
    return verifier.verify(Sample(completion=f"```python\n{code}```", fields={
        "tests": [{"args": [], "expected": expected}], "entry_point": "f"}))


@pytest.mark.slow
@pytest.mark.parametrize(("code", "expected"), [
    ("def f():\n    return 10 ** 4000\n", 1.5),
    ("def f():\n    return 10 ** 4000\n", [1.0, 2.0]),
    ("def f():\n    return {10 ** 5000: 1}\n", {"1": 1}),
    ("def f():\n    return [10 ** 4000, 1.0]\n", [1.0, 1.0]),
])
def test_a_returned_value_that_cannot_be_compared_fails_the_test(local, code: str, expected: object) -> None:
    attack = verify(local, code, expected)
    assert (attack.status, attack.score) == ("ok", 0.0), attack.feedback
    honest = verify(local, f"def f():\n    return {expected!r}\n", expected)
    assert (honest.status, honest.score) == ("ok", 1.0), honest.feedback
    wrong = verify(local, "def f():\n    return 'no'\n", expected)
    assert (wrong.status, wrong.score) == ("ok", 0.0), wrong.feedback
