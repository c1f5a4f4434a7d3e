"""Answer equivalence for the math verifier: leniency switches, false positives, statuses, timeouts.

A reward that says "correct" for a wrong answer is worse than one that misses a right
one: the policy learns to produce whatever fools it. So next to each leniency switch
(equal when on, different when off) this file pins the false positives of plain
math-verify and the ones found while testing, each showing our verifier says "not equal".
"""

from __future__ import annotations

import pickle
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from math_verify import parse as mv_parse
from math_verify import verify as mv_verify

from rewardsmith.verifiers import Sample, Verdict, build
from rewardsmith.verifiers.math import MathVerifier
from rewardsmith.verifiers.math.grade import equivalent
from rewardsmith.verifiers.math.leniency import Leniency
from rewardsmith.verifiers.math.parse import parse_answer
from rewardsmith.verifiers.pool import shared_pool


def grade(gold: str, completion: str, **options: Any) -> Verdict:
    """One sample through the in-process verifier (no pool: fast, deterministic)."""
    return MathVerifier(workers=0, **options).verify(Sample(completion=completion, fields={"answer": gold}))


def same(gold: str, answer: str, **switches: Any) -> bool:
    """The pure grading path, for spans that are already extracted."""
    leniency = Leniency(**switches)
    return equivalent(parse_answer(gold, leniency), parse_answer(answer, leniency), leniency)


def plain_math_verify(gold: str, completion: str) -> bool:
    """What math-verify 0.9 says with its defaults, to document where we differ."""
    return bool(mv_verify(mv_parse(gold), mv_parse(completion)))


# -- leniency switches: equal when on, different when off -------------------------------------

SWITCH_PAIRS = [
    # (id, switches that turn it off, gold, completion)
    ("percent", {"percent": False}, "0.5", r"\boxed{50\%}"),
    ("percent-gold", {"percent": False}, r"50\%", r"\boxed{0.5}"),
    ("percent-number", {"percent": False}, r"50\%", r"The answer is 50."),
    ("units-text", {"units": False}, "10", r"\boxed{10\text{ cm}}"),
    ("units-gold", {"units": False}, r"10\text{ cm}", r"\boxed{10}"),
    ("units-word", {"units": False}, "18", "The answer is 18 dollars."),
    ("units-squared", {"units": False}, "12", r"\boxed{12\ \text{cm}^2}"),
    ("units-glued", {"units": False}, "5", r"\boxed{5kg}"),
    ("degrees", {"degrees": False}, "30", r"\boxed{30^\circ}"),
    ("degrees-gold", {"degrees": False}, r"30^\circ", r"\boxed{30}"),
    ("unsimplified", {"unsimplified": False}, "x^2+2x+1", r"\boxed{(x+1)^2}"),
    ("tolerance", {"rel_tol": 0.0, "abs_tol": 0.0}, "0.333333", r"\boxed{0.3333331}"),
    ("intervals", {"intervals": False}, r"(-\infty,-5)", r"\boxed{k < -5}"),
    ("intervals-gold", {"intervals": False}, "k<-5", r"\boxed{(-\infty,-5)}"),
    ("intervals-chain", {"intervals": False}, "[-2,7]", r"\boxed{-2 \le x \le 7}"),
    ("equation_rhs", {"equation_rhs": False}, "2", r"\boxed{x = 2}"),
    ("equation_rhs-gold", {"equation_rhs": False}, "x=2", r"\boxed{2}"),
    ("choices", {"choices": False}, "(B)", r"\boxed{B}"),
    ("choices-text", {"choices": False}, r"\text{(B)}", r"\boxed{B}"),
    ("choices-option", {"choices": False}, "(B)", r"\boxed{\text{option b}}"),
    ("plain_text-sqrt", {"plain_text": False}, r"\frac{\sqrt{2}}{2}", r"\boxed{sqrt(2)/2}"),
    ("plain_text-pi", {"plain_text": False}, r"\frac{\pi}{2}", "The answer is pi/2"),
    ("plain_text-scientific", {"plain_text": False}, "1000", r"\boxed{1e3}"),
    ("mixed_numbers", {"mixed_numbers": False}, "8/3", r"\boxed{2\frac{2}{3}}"),
]


@pytest.mark.parametrize(("off", "gold", "completion"), [p[1:] for p in SWITCH_PAIRS], ids=[p[0] for p in SWITCH_PAIRS])
def test_switch_on_accepts_off_rejects(off: dict[str, Any], gold: str, completion: str) -> None:
    on = grade(gold, completion)
    assert (on.correct, on.status, on.score) == (True, "ok", 1.0), on.feedback
    strict = grade(gold, completion, leniency=off)
    assert strict.correct is False and strict.score == 0.0


# Switches that are off by default because they let wrong answers through: on, they accept.
OPT_IN_PAIRS = [
    ("set_order", {"set_order": True}, "(1,2)", r"\boxed{(2,1)}"),
    ("set_order-vector", {"set_order": True}, "(1,2,3)", r"\boxed{(3,1,2)}"),
    ("approximate", {"approximate": True}, "1/3", r"\boxed{0.333333}"),
    ("approximate-root", {"approximate": True}, r"\sqrt{2}", r"\boxed{1.4142136}"),
    # A number gold wants its final form by default (final_form.py); on, a computed form counts.
    ("unsimplified-number", {"unsimplified": True}, "1", r"\boxed{(\sqrt{2}+1)(\sqrt{2}-1)}"),
]


@pytest.mark.parametrize(("on", "gold", "completion"), [p[1:] for p in OPT_IN_PAIRS], ids=[p[0] for p in OPT_IN_PAIRS])
def test_opt_in_switch_off_rejects_on_accepts(on: dict[str, Any], gold: str, completion: str) -> None:
    default = grade(gold, completion)
    assert (default.correct, default.score) == (False, 0.0), default.details
    lenient = grade(gold, completion, leniency=on)
    assert (lenient.correct, lenient.status, lenient.score) == (True, "ok", 1.0), lenient.feedback


def test_every_switch_has_a_pair() -> None:
    """A new Leniency field must come with an on/off pair above."""
    covered = {name for _, switches, _, _ in SWITCH_PAIRS + OPT_IN_PAIRS for name in switches}
    assert covered == set(Leniency.__dataclass_fields__)


@pytest.mark.parametrize(
    ("off", "gold", "answer"),
    [
        ({"percent": False}, r"50\%", r"50\%"),
        ({"units": False}, r"10\text{ cm}", r"10\text{ cm}"),
        ({"degrees": False}, r"30^\circ", r"30^{\circ}"),
        ({"unsimplified": False}, r"\frac{2}{4}", r"\frac12"),  # sympy's own canonical form still counts
        ({"unsimplified": False}, "x^2+2x+1", "1+2x+x^2"),
        ({"rel_tol": 0.0, "abs_tol": 0.0}, "0.5", r"\frac{1}{2}"),
        ({"set_order": False}, "(1,2)", "(1, 2)"),
        ({"set_order": False}, r"\{1,2\}", r"\{2,1\}"),  # a set has no order to respect
        ({"intervals": False}, "x<3", "3>x"),
        ({"equation_rhs": False}, "x=2", "x = 2"),
        ({"choices": False}, "(B)", r"\text{(B)}"),
        ({"plain_text": False}, r"\frac{\sqrt{2}}{2}", r"\frac{\sqrt2}{2}"),
        # off, it is 2·(2/3): a product, which answers a number gold only with unsimplified on
        ({"mixed_numbers": False, "unsimplified": True}, "4/3", r"2\frac{2}{3}"),
    ],
)
def test_switch_off_still_accepts_same_answer(off: dict[str, Any], gold: str, answer: str) -> None:
    assert same(gold, answer, **off)


@pytest.mark.parametrize(
    ("gold", "switches", "answer", "expected"),
    [
        ("1/3", {}, "0.333333", False),  # an exact gold takes an exact answer
        ("1/3", {"approximate": True}, "0.333333", True),
        ("1/3", {"approximate": True}, "0.3333", False),  # the default tolerance is 1e-6 relative
        ("1/3", {"approximate": True, "rel_tol": 1e-3}, "0.3333", True),
        ("0.3333", {}, "0.33330001", True),  # a decimal gold is itself an approximation
        ("0.3333", {}, "1/3", False),
        ("0.3333", {"rel_tol": 1e-3}, "1/3", True),
        ("0.3333", {"rel_tol": 0.0, "abs_tol": 1e-3}, "1/3", True),
        ("0.3333", {"rel_tol": 0.0}, "0.33330001", False),
        ("2.5", {}, "2.5000001", True),
        ("2.5", {}, r"\frac{5}{2}", True),
        ("1000000", {}, "1000000.5", False),  # integers are exact, however small the relative gap
        ("1000000", {"approximate": True}, "1000000.5", False),
        ("1000000", {}, "999999.9999999", False),
        ("5.0", {}, "5", True),
        ("5.0", {}, "5.0000001", False),  # an integer written as a decimal is still an integer
    ],
)
def test_numeric_tolerance(gold: str, switches: dict[str, Any], answer: str, expected: bool) -> None:
    assert same(gold, answer, **switches) is expected


@pytest.mark.parametrize(
    ("gold", "answer", "expected"),
    [
        (r"50\%", "50", True),
        (r"50\%", r"\frac{1}{2}", True),
        ("0.5", r"5\%", False),
        (r"30^\circ", "30", True),
        (r"\frac{\pi}{2}", r"\frac{\pi}{6}", False),
        ("(1,2)", "(1,3)", False),
        ("1,1,2", "1,2", False),  # a list keeps its repeats; as a set it would lose them
        ("1,2", "1,2,3", False),
        (r"\{1,2\}", "2, 1", True),
        ("(B)", "(C)", False),
        ("(B)", "b", True),
        ("(B)", "(B) 12", True),  # the letter with its option's content
        ("(B)", r"\textbf{(B)}", True),
        ("e", "2.718281828459045", False),  # a bare lowercase e is Euler's number (exact), not choice E
        ("e", r"\exp(1)", True),
        ("1, 2, 3", "3, 1, 2", True),  # a list of solutions has no order
        ("(1,2)", "(2,1)", False),  # a pair does
        (r"x \in [-2,7]", "[-2,7]", True),
        (r"(-\infty, 3]", "x<3", False),
        ("y = 2x + 3", "2x+3", True),
        ("y = 2x + 3", "y = 2x - 3", False),
        ("x=2", "y=2", False),
    ],
)
def test_default_equivalence(gold: str, answer: str, expected: bool) -> None:
    assert same(gold, answer) is expected


def test_leniency_from_spec() -> None:
    verifier = build({"type": "math", "leniency": {"percent": False}, "workers": 0})
    assert isinstance(verifier, MathVerifier)
    assert verifier.leniency == Leniency(percent=False)
    assert Leniency.from_spec(None) == Leniency()
    with pytest.raises(ValueError, match="unknown leniency switch"):
        Leniency.from_spec({"percentt": False})


# -- false positives: plain math-verify says equal, we do not --------------------------------

def test_factorials_far_apart_are_not_equal() -> None:
    """evalf(chop=True) makes both 0; our comparison is relative."""
    assert plain_math_verify(r"$\frac{1}{2006!}$", r"$\frac{1}{2004!}$") is True
    assert grade(r"\frac{1}{2006!}", r"\boxed{\frac{1}{2004!}}").correct is False
    assert grade("1/2006!", "The answer is 1/2004!").correct is False
    assert grade("1/2004!", "The answer is 1/2004!").correct is True


def test_number_is_not_picked_out_of_a_product() -> None:
    """Unboxed, plain math-verify reads only the leading 4 of ``4\\sqrt{2}``."""
    completion = r"The answer is 4\sqrt{2}"
    assert plain_math_verify("$4$", completion) is True
    verdict = grade("4", completion)
    assert (verdict.correct, verdict.status) == (False, "ok")
    assert verdict.details["extracted"] == r"4\sqrt{2}"
    assert grade(r"4\sqrt{2}", completion).correct is True


def test_sign_of_a_symbolic_term_matters() -> None:
    """math-verify 0.9 gets this one right as well; pinned so neither side regresses."""
    assert plain_math_verify(r"$1+\frac{1}{e}$", r"$1-\frac{1}{e}$") is False
    assert grade(r"1+\frac{1}{e}", r"\boxed{1-\frac{1}{e}}").correct is False
    assert grade("1+1/e", r"\boxed{1-1/e}").correct is False
    assert grade("1-1/e", r"\boxed{1-\frac{1}{e}}").correct is True


def test_no_number_from_an_unparseable_span() -> None:
    """Plain math-verify falls back to the 5 inside a span it cannot parse."""
    completion = r"The answer is $5 \weird{q}$"
    assert plain_math_verify("$5$", completion) is True
    verdict = grade("5", completion)
    assert (verdict.correct, verdict.status, verdict.score) == (False, "no_answer", 0.0)
    boxed = grade("5", r"\boxed{5 \weird{q}}")
    assert (boxed.correct, boxed.status) == (False, "no_answer")


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("123456789", "123456788"),  # integers are exact: a relative tolerance would pass this
        ("1000001", "1000000"),
        ("0", r"10\,000"),  # "10\,000" is ten thousand, not 10·000
        ("0", "10 000"),
        ("5", "5xy"),  # a glued word is algebra, not a unit
        ("5", "5 ab"),
        ("2", "2pi"),
        ("2", "2 pi"),
        ("2", "2m"),
        ("3", r"3 \mathrm{i}"),
        ("east", "seat"),  # words are compared as words, not as products of letters
        (r"\text{east}", "seat"),
        ("52_8", "52_9"),  # latex2sympy drops the base subscript
        ("52_8", "42"),
        ("1A_{16}", "1B_{16}"),
        ("40_9", "40_0"),
        ("6-5i", "6+5i"),
        ("5", r"5 \text{ or } 6"),  # hedges between answers
        ("5", "5, 6"),
        ("(B)", "(B) or (C)"),
        ("(A)", "(A) (B) (C) (D)"),
        ("5", "6 = 5"),  # math-verify takes the right side of any equation
        ("x^2+y^2=1", "1"),  # a gold equation is not its right side
        ("5", "x > 0"),
        ("5", r"x \geq 5"),
        ("5", "2 + 3 = 5"),  # the named side of an answer must be a name, not an expression
        ("5", "a + b = 5"),
        ("5", "5 tens"),  # a count noun is dropped (issue 23: "5 apples" is 5), but not a plural that counts
        ("5", "5 sixes"),
        ("5", "5 dozens"),
    ],
)
def test_found_false_positives_stay_fixed(gold: str, answer: str) -> None:
    assert not same(gold, answer)


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        ("10000", r"10,\!000"),
        ("10000", r"10\,000"),
        ("10000", "10 000"),
        ("1000", r"1{,}000"),
        ("1000000", "1,000,000"),
        ("4", r"\text{4 inches}"),
        ("10", r"10\ \text{cm}"),
        ("12", "12 cm^2"),
        ("52_8", "52"),
        ("52_8", "52_{8}"),
        (r"\text{Evelyn}", "Evelyn"),
        ("east", "East"),
        ("1500", "1.5e3"),
        (r"\frac{3\pi}{4}", "3pi/4"),  # no word boundary between 3 and pi
        (r"2\sqrt{3}", "2sqrt3"),
        ("2xy", "2*x*y"),
        (r"\infty", "infinity"),
        ("x^2+y^2=1", "y^2 + x^2 = 1"),
        ("y = 2x + 3", "2x + 3 = y"),
        ("1,2", "x=1, x=2"),
    ],
)
def test_lenient_forms_that_are_right(gold: str, answer: str) -> None:
    assert same(gold, answer)


@pytest.mark.parametrize(
    "payload",
    [
        "__import__('os').system('touch {marker}') + sqrt(2)",
        "(lambda: __import__('os').system('touch {marker}'))() + pi",
        "x.__class__.__mro__ + sqrt(2)",
        "open('{marker}', 'w') + sqrt(2)",
    ],
)
def test_plain_text_parsing_never_runs_code(payload: str, tmp_path: Any) -> None:
    """sympy's parse_expr calls eval(); a completion must not reach it with Python in it."""
    marker = tmp_path / "pwned"
    verdict = grade("5", r"\boxed{" + payload.format(marker=marker) + "}")
    assert not marker.exists()
    assert verdict.correct is False and verdict.status == "no_answer"


# -- statuses -------------------------------------------------------------------------------

def test_status_ok_for_right_and_wrong_answers() -> None:
    right, wrong = grade("4", r"\boxed{4}"), grade("4", r"\boxed{5}")
    assert (right.score, right.correct, right.status) == (1.0, True, "ok")
    assert (wrong.score, wrong.correct, wrong.status) == (0.0, False, "ok")
    assert wrong.feedback and wrong.details["extracted"] == "5"


@pytest.mark.parametrize("completion", ["no idea", r"\boxed{}", r"\boxed{\weird{x}}", r"<answer>\frac{</answer>"])
def test_status_no_answer(completion: str) -> None:
    verdict = grade("4", completion)
    assert (verdict.score, verdict.correct, verdict.status) == (0.0, False, "no_answer")


@pytest.mark.parametrize("fields", [{}, {"answer": ""}, {"answer": "   "}, {"answer": None}, {"solution": "4"}])
def test_status_invalid_input_without_gold(fields: dict[str, Any]) -> None:
    verdict = MathVerifier(workers=0).verify(Sample(completion=r"\boxed{4}", fields=fields))
    assert (verdict.score, verdict.correct, verdict.status) == (0.0, None, "invalid_input")


@pytest.mark.parametrize("gold", [r"\frac{", r"\weird{", "1 +* ^"])
@pytest.mark.parametrize("completion", [r"\boxed{4}", "no answer here", r"\boxed{\weird{}}"])
def test_status_invalid_input_for_unparseable_gold(gold: str, completion: str) -> None:
    """A bad gold is the row's fault: it outranks a missing or unparseable answer."""
    verdict = grade(gold, completion)
    assert (verdict.score, verdict.correct, verdict.status) == (0.0, None, "invalid_input")
    assert "gold" in verdict.feedback


def test_answer_field_is_configurable() -> None:
    verifier = MathVerifier(workers=0, answer_field="solution")
    assert verifier.verify(Sample(completion=r"\boxed{4}", fields={"solution": "4"})).correct is True


def test_batch_keeps_order_and_duplicates() -> None:
    golds = ["1", "2", "1", "3", "2"]
    completions = [r"\boxed{1}", r"\boxed{3}", r"\boxed{1}", "nothing", r"\boxed{2}"]
    samples = [Sample(completion=c, fields={"answer": g}) for g, c in zip(golds, completions, strict=True)]
    samples.append(Sample(completion=r"\boxed{1}"))
    verdicts = MathVerifier(workers=0).verify_batch(samples)
    assert [v.status for v in verdicts] == ["ok", "ok", "ok", "no_answer", "ok", "invalid_input"]
    assert [v.correct for v in verdicts] == [True, False, True, False, True, None]
    assert verdicts[0] is not verdicts[2]  # duplicates get their own verdict objects


def test_verifier_pickles() -> None:
    """Trainers ship reward functions to their workers by pickling them."""
    verifier = MathVerifier(workers=0, leniency={"units": False})
    clone = pickle.loads(pickle.dumps(verifier))
    assert clone.leniency == verifier.leniency
    assert clone.verify(Sample(completion=r"\boxed{4}", fields={"answer": "4"})).correct is True


# -- timeouts on the real worker pool ---------------------------------------------------------

# sympy's integrate() works on this for far longer than the limit; the size guard refuses what
# it can size from the text (5^{5^{5^{5^5}}}, (300!)!, (10^7)!), but not work of this kind.
TOWER = r"\boxed{\int_0^1 e^{x^{3}} \sin(x^{5}) \, dx}"
TIMEOUT_S = 1.0


def _sample(completion: str, gold: str = "5") -> Sample:
    return Sample(completion=completion, fields={"answer": gold})


def _timeout_round(verifier: MathVerifier) -> tuple[float, list[Verdict], list[Verdict]]:
    """A batch with the tower and a normal sample, then a following batch on the same pool."""
    start = time.monotonic()
    batch = verifier.verify_batch([_sample(TOWER), _sample(r"\boxed{5}")])
    elapsed = time.monotonic() - start
    following = verifier.verify_batch([_sample(rf"\boxed{{{n}}}", str(n)) for n in range(4)] + [_sample(r"\boxed{6}")])
    return elapsed, batch, following


def _check_round(elapsed: float, batch: list[Verdict], following: list[Verdict]) -> None:
    tower, normal = batch
    assert (tower.status, tower.correct, tower.score) == ("timeout", None, 0.0)
    assert elapsed < TIMEOUT_S + 1.0
    assert (normal.status, normal.correct) == ("ok", True)
    assert [(v.status, v.correct) for v in following] == [("ok", True)] * 4 + [("ok", False)]


@pytest.fixture
def pooled() -> Iterator[MathVerifier]:
    verifier = MathVerifier(timeout_s=TIMEOUT_S, workers=2)
    # Start and warm both workers so the 1 s limit measures grading, not interpreter start-up.
    verifier.verify_batch([_sample(rf"\boxed{{{n}}}", str(n)) for n in range(4)])
    yield verifier
    shared_pool(2).close()  # the next test starts a fresh pool and inherits no killed workers


def _in_thread(work: Callable[[], Any]) -> Any:
    """Run ``work`` on a new thread that then exits; re-raise what it raised."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # re-raised on the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "grading from a thread hung"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.mark.slow
def test_tower_times_out_and_pool_recovers(pooled: MathVerifier) -> None:
    _check_round(*_timeout_round(pooled))


@pytest.mark.slow
def test_tower_alone_times_out_within_limit(pooled: MathVerifier) -> None:
    start = time.monotonic()
    verdict = pooled.verify(_sample(TOWER))
    assert (verdict.status, verdict.correct) == ("timeout", None), verdict.feedback
    assert time.monotonic() - start < TIMEOUT_S + 1.0
    assert pooled.verify(_sample(r"\boxed{5}")).correct is True


@pytest.mark.slow
def test_tower_times_out_from_a_worker_thread(pooled: MathVerifier) -> None:
    """math-verify's signal.alarm only works on the main thread; the pool works from any thread."""
    _check_round(*_in_thread(lambda: _timeout_round(pooled)))


@pytest.mark.slow
def test_pool_survives_the_thread_that_used_it(pooled: MathVerifier) -> None:
    _check_round(*_in_thread(lambda: _timeout_round(pooled)))
    time.sleep(0.5)  # join() returns before the OS thread is gone; a later request comes later anyway
    later = pooled.verify_batch([_sample(rf"\boxed{{{n}}}", str(n)) for n in range(4)])
    assert [(v.status, v.correct) for v in later] == [("ok", True)] * 4, [v.feedback for v in later]


@pytest.mark.slow
def test_pool_and_in_process_agree() -> None:
    """The worker pool grades exactly as the in-process path does."""
    cases = [(g, c) for _, _, g, c in SWITCH_PAIRS] + [("5", "no answer"), ("5", r"\boxed{5 \weird{q}}")]
    samples = [_sample(c, g) for g, c in cases]
    pooled = MathVerifier(workers=2, timeout_s=10.0).verify_batch(samples)
    local = MathVerifier(workers=0).verify_batch(samples)
    assert [(v.status, v.correct) for v in pooled] == [(v.status, v.correct) for v in local]
