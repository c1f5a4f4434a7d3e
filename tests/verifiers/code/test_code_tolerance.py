"""Issue 24, item 7: float tolerance is relative to the expected value. An absolute tolerance lets a
constant answer pass small expected values (``return 0.0`` for ``1e-12``, ``print(0)`` for
``0.0000001``); the floor applies only where the expected value is 0, unless the spec sets ``abs_tol``
itself (a problem statement's "absolute or relative error"). On stdout an expected number's own printing
is allowed for (``0.333333``), capped at ``rel_tol`` of ``max(1, |expected|)`` (``3.5`` is not ``3.54``)."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.code.tests import check_output, values_equal


@pytest.mark.parametrize(("actual", "expected"), [
    (0.0, 1e-12), (0.0, -3e-10), (1e-12, 2e-12), (0.0, 1e-7), (1.0, 1.00001), (0j, 1e-12j), (1e-3, 0.0),
])
def test_a_small_expected_value_is_not_answered_by_zero(actual: complex, expected: complex) -> None:
    assert values_equal(actual, expected) is False


@pytest.mark.parametrize(("actual", "expected"), [
    (1e-12 * (1 + 1e-9), 1e-12), (0.1 + 0.2, 0.3), (5e-17, 0.0), (1e300 * (1 + 1e-8), 1e300), (1.0, 1.0),
    (0.3333333333, 1 / 3), (1j + 1e-18, 1j),
])
def test_values_within_the_relative_tolerance_are_equal(actual: complex, expected: complex) -> None:
    assert values_equal(actual, expected) is True


def test_a_spec_that_sets_abs_tol_gets_it_everywhere() -> None:
    assert values_equal(0.0, 1e-12, abs_tol=1e-9) is True
    assert values_equal(0.0, 1e-6, abs_tol=1e-9) is False


@pytest.mark.parametrize(("expected", "printed", "equal"), [
    ("0.0000001", "0", False),
    ("0.0000001", "0.0000001", True),
    ("0.333333", "0.3333331", True),
    ("0.333333", "0.3333333333", True),  # printed to 6 places: its own rounding is allowed
    ("0.333333", "0.3334", False),
    ("3.5", "3.54", False),  # a short expected number is not a wide one
    ("1e-12", "0", False),
    ("1.5e-12", "1.5000000001e-12", True),
    ("0.000000", "0.0000001", True),  # printed as 0 to 6 places: under half its last digit
    ("0.000000", "0.000001", False),
    ("0.0000001", "0", False),
    ("3.50", "3.504", False),  # the rounding allowance is capped at rel_tol of max(1, |expected|)
    ("12", "12.0000000001", False),  # an expected integer is answered only by exactly that number
    ("12", "13", False),
    ("3 0.5", "3 0.5000001", True),
    ("inf", "inf", True),
])
def test_the_stdout_float_checker_is_relative_too(expected: str, printed: str, equal: bool) -> None:
    assert check_output("float", expected, printed) is equal


def test_a_spec_abs_tol_reaches_the_stdout_checker() -> None:
    assert check_output("float", "0.0000001", "0", abs_tol=1e-6) is True
    assert check_output("float", "3.5", "3.5000009", abs_tol=1e-6) is True
