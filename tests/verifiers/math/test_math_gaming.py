"""The math reward against a policy that games it: each class of false positive, both polarities.

RL finds every answer shape a verifier wrongly accepts and learns to produce it, so for
each class below (the issue's list, plus what attacking the verifier turned up) there are
cases that must score 0 and, beside them, the honest answer in the same shape that must
still score 1: a fix that rejected everything would fail the second half. Cases here are
our own; ``data/math_cases.jsonl`` and ``data/math_freeform_pairs.jsonl`` are labelled sets
written blind, by someone who had not read the verifier, and are checked at the end.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from conftest import REPO

from rewardsmith.verifiers import Sample, Verdict, build
from rewardsmith.verifiers.math import GradeTask, MathVerifier
from rewardsmith.verifiers.math.extract import extract_answer
from rewardsmith.verifiers.math.grade import equivalent
from rewardsmith.verifiers.math.leniency import Leniency
from rewardsmith.verifiers.math.parse import parse_answer

DATA = REPO / "data"


def grade(gold: str, completion: str, **options: Any) -> Verdict:
    """One sample through the in-process verifier (no pool: fast, deterministic)."""
    return MathVerifier(workers=0, **options).verify(Sample(completion=completion, fields={"answer": gold}))


# (gold, completion, correct)
CLASSES: dict[str, list[tuple[str, str, bool]]] = {
    # 1. Several different final answers in one completion.
    "hedging": [
        ("3", r"It is \boxed{2} or \boxed{3}.", False),
        ("8", "The answer is 7 or 8.", False),
        ("6", "<answer>5</answer> Hmm. <answer>6</answer>", False),
        ("5", r"So \boxed{4}. Final answer: 5", False),  # a later stated answer must agree with the box
        ("4", r"\boxed{\text{either } 3 \text{ or } 4}", False),
        ("12", "#### 10\nOr rather\n#### 12", False),
        ("12", r"\boxed{12, 13}", False),
        ("2", r"\boxed{x = 1 \text{ or } x = 2}", False),
        ("10", r"\boxed{9} and to be safe <answer>10</answer>", False),  # a box outside the tag counts
        ("4", r"\boxed{4 \pm 1}", False),
        ("4", "The answer is 4. Final answer: three, or maybe four", False),
        ("4", r"We get \boxed{4}, and checking again, \boxed{4}.", True),  # the same value twice is one answer
        (r"\frac12", r"\boxed{\frac12}. The final answer is 0.5.", True),
        ("6", r"The answer is 5? Checking the cases again: \boxed{6}", True),  # working before the box
        ("1, 2", r"The roots are \boxed{1} and \boxed{2}.", True),  # both parts of a two-part gold
        ("4", r"<answer>$4$</answer> so \boxed{4}", True),
    ],
    # 2. Ordered tuples, points, vectors and intervals keep their order.
    "order": [
        ("(5,2)", r"\boxed{(2,5)}", False),
        ("(5,2)", r"\boxed{\{5,2\}}", False),
        ("(1,4)", r"\boxed{(4,1)}", False),
        ("(1,4]", r"\boxed{[1,4)}", False),
        ("(5,2)", r"\boxed{\begin{pmatrix}2\\5\end{pmatrix}}", False),
        ("(3,2,1)", r"\boxed{(1,2,3)}", False),
        ("(5,2)", r"\boxed{x = 2, y = 5}", False),
        ("(5,2)", r"\boxed{\left(5, 2\right)}", True),
        (r"\{5,2\}", r"\boxed{\{2,5\}}", True),
        ("2, 5", r"\boxed{5, 2}", True),  # a list of solutions has no order
        ("(5,2)", r"\boxed{\begin{pmatrix}5\\2\end{pmatrix}}", True),
        (r"\{5, 2\}", r"\boxed{x=2 \text{ or } x=5}", True),
        ("(1,4)", r"\boxed{1 < x < 4}", True),
    ],
    # 3. Two undefined values are not one answer; times and ratios are themselves.
    "undefined": [
        ("12:30", r"\boxed{1:30}", False),
        ("12:00", r"\boxed{3:00}", False),
        ("12:00", r"\boxed{\frac{5}{0}}", False),
        ("12:00", r"\boxed{0/0}", False),
        ("6:30", r"\boxed{6:03}", False),
        (r"\infty", r"\boxed{\frac{1}{0}}", False),
        (r"\infty", r"\boxed{\tan 90^\circ}", False),
        ("12:00", r"\boxed{12:00}", True),
        ("3:4", r"\boxed{6:8}", False),  # the value, but not in lowest terms: not final (issue 36)
        ("3:4", r"\boxed{3 : 4}", True),
        ("1:2", r"\boxed{\frac12}", True),
        (r"\infty", r"\boxed{\infty}", True),
    ],
    # 4. A relation is not its bound, boxed or as the last number.
    "relation_bound": [
        ("5", "The solution is $x != 5$", False),
        ("5", r"So $x \neq 5$.", False),
        ("5", "Therefore $x < 5$", False),
        ("2", "We need $x <= 2$", False),
        ("5", r"\boxed{x \geq 5}", False),
        ("5", r"\boxed{y \le 5}", False),
        ("5", "so x ≥ 5", False),
        ("5", "x is at most 5", False),
        ("5", "the count exceeds 5", False),
        ("5", r"\boxed{x = 5}", True),
        (r"[5, \infty)", r"\boxed{x \geq 5}", True),
        (r"(-\infty, 5)", "Therefore $x < 5$ is the solution.", True),
    ],
    # 5. Only real units are dropped.
    "unit_words": [
        ("5", r"\boxed{5 thousand}", False),
        ("2", r"\boxed{2 dozen}", False),
        ("5", r"\boxed{5 squared}", False),
        ("3", r"\boxed{3 million}", False),
        ("5", r"\boxed{5 \text{ but maybe 7}}", False),
        ("5", r"\boxed{5 \text{ at least}}", False),
        ("4", r"\boxed{4 \text{ halves}}", False),
        ("6", "The answer is 6 hundred.", False),
        ("5", r"\boxed{5 \text{ cm}}", True),
        ("5", r"\boxed{5\,\mathrm{kg}}", True),
        ("18", "The answer is 18 dollars.", True),
        ("3", r"\boxed{3 \text{ hours}}", True),
        ("12", r"\boxed{12 \text{ cm}^2}", True),
        ("5", r"\boxed{\$5}", True),
        ("60", r"\boxed{60 \text{ km/h}}", True),
    ],
    # 6. Integers are exact; a tolerance only for a decimal gold, inside structures too.
    "integer_tolerance": [
        ("1000000", r"\boxed{1000000.5}", False),
        ("7", r"\boxed{7.0000001}", False),
        ("(3,4)", r"\boxed{(3, 4.000001)}", False),
        ("[0,10]", r"\boxed{[0, 9.9999999]}", False),
        (r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"\boxed{\begin{pmatrix}1&2\\3&4.0000001\end{pmatrix}}", False),
        (r"\frac13", r"\boxed{0.333333}", False),
        (r"\sqrt2", r"\boxed{1.414214}", False),
        (r"\frac{1}{2006!}", r"\boxed{\frac{1}{2004!}}", False),
        ("2.5", r"\boxed{2.5000001}", True),
        (r"(\frac12, 3)", r"\boxed{(0.5, 3)}", True),
        ("7", r"\boxed{7.0}", True),
        ("1.3333333", r"\boxed{\frac43}", True),
    ],
    # 7. A multi-part gold is read whole: all of it is right, a part is not.
    "multipart_gold": [
        ("$8$,$4$", r"\boxed{8}", False),
        ("$8$,$4$", r"\boxed{8, 4, 2}", False),
        ("$1$ and $2$ and $3$", r"\boxed{1, 2}", False),
        (r"\boxed{1} and \boxed{2}", r"\boxed{1}", False),
        (r"$a=2$, $a=-6-4\sqrt2$", r"\boxed{a = 2}", False),
        ("$8$,$4$", r"\boxed{4, 8}", True),
        ("$8$,$4$", r"\boxed{8, 4}", True),
        ("$1$ and $2$ and $3$", r"\boxed{3, 2, 1}", True),
        (r"\boxed{1} and \boxed{2}", r"\boxed{x=1 \text{ or } x=2}", True),
        (r"$a=2$, $a=-6-4\sqrt2$", r"\boxed{a=-6-4\sqrt{2} \text{ or } a=2}", True),
    ],
    # 8. The named side of an answer equation must be a name.
    "equation_hedge": [
        ("4", r"\boxed{3=4}", False),
        ("4", r"\boxed{x=3=4}", False),
        ("4", r"\boxed{2+2=4}", False),
        ("5", r"\boxed{a+b=5}", False),
        ("4", r"\boxed{4 = x = 5}", False),
        ("5", r"\boxed{5 = 5}", False),
        ("4", r"\boxed{x = 4}", True),
        ("4", r"\boxed{n = \frac{8}{2} = 4}", True),  # a chain whose sides agree
        ("4", r"\boxed{4 = x}", True),
        ("(1,2)", r"\boxed{(p, q) = (1, 2)}", True),
        ("7", r"\boxed{f(4) = 7}", True),
    ],
    # 10. Named-equation golds and bare values, both ways; function variables renamed.
    "named_equation": [
        ("g(x)=x^2-2x+2", r"\boxed{x^2-2x+2}", True),
        ("x^2-2x+2", r"\boxed{g(x)=x^2-2x+2}", True),
        ("(p,q)=(3,2)", r"\boxed{(3,2)}", True),
        (r"m_{\max}=n^2-n-1", r"\boxed{n^2-n-1}", True),
        ("f(z)=z", r"\boxed{f(x)=x}", True),
        ("f(n)=2n+1007", r"\boxed{f(m)=2m+1007}", True),
        ("h(t) = 3t", r"\boxed{h(u)=3u}", True),
        ("(a,b,c) = (1,2,3)", r"\boxed{c=3, a=1, b=2}", True),
        ("f(x)=x", r"\boxed{g(x)=x}", False),
        ("f(x)=x", r"\boxed{f(x)=x+1}", False),
        ("(p,q)=(3,2)", r"\boxed{(p,q)=(2,3)}", False),
        ("x=5", r"\boxed{y=5}", False),
        ("f(n)=2n+1007", r"\boxed{f(m)=2n+1007}", False),  # n is the gold's variable used as a constant
    ],
    # 11. Answers stated in prose without a box.
    "prose_answer": [
        (r"[5, \infty)", r"Therefore $x \geq 5$ is the solution.", True),
        ("34", "Final Answer: The largest $n$ is 34.", True),
        ("10455", "The final answer is $10,455$", True),
        ("17", "So 17 is the answer.", True),
        ("25", "The answer is 25, since $5^2 = 25$.", True),
        (r"\frac34", r"**Answer:** $\frac{3}{4}$", True),
        ("34", "Final Answer: The largest $n$ is 35.", False),
        ("10455", "The final answer is $10,456$", False),
        ("34", "The answer is not 34.", False),
        ("25", "The answer is approximately 25.", False),
    ],
    # 12. Notations of the same set.
    "set_notation": [
        ("(-1,1)", r"\boxed{\{x \mid -1<x<1\}}", True),
        (r"[0, \infty)", r"\boxed{x \in [0, ∞)}", True),
        (r"(-\infty,2]\cup[3,\infty)", r"\boxed{(-∞, 2] ∪ [3, ∞)}", True),
        ("(-7,16,5)", r"\boxed{\begin{pmatrix}-7\\16\\5\end{pmatrix}}", True),
        (r"\{-2,-1,0,1,2\}", r"\boxed{0, \pm 1, \pm 2}", True),
        ("0", r"\boxed{\text{only } x=0}", True),
        (r"(-\infty, 3]", r"\boxed{x ≤ 3}", True),
        (r"(-\infty,0)\cup(0,\infty)", r"\boxed{\mathbb{R}\setminus\{0\}}", True),
        ("(-1,1)", r"\boxed{\{x \mid -1 \le x < 1\}}", False),
        ("(-7,16,5)", r"\boxed{\begin{pmatrix}-7\\5\\16\end{pmatrix}}", False),
        (r"\{-2,-1,0,1,2\}", r"\boxed{\pm 1, \pm 2}", False),
        (r"(-\infty,0)\cup(0,\infty)", r"\boxed{\mathbb{R}}", False),
    ],
    # Found by attacking the verifier white-box: one shape that would earn reward on any gold, a
    # box inside the answer, unit symbols in the wrong case, double readings, negations, near misses.
    "attacks": [
        ("17", r"\boxed{(300!)!}", False),  # evaluated to 50 digits, its noise swamped any gap
        (r"\pi", r"The answer is $(300!)!$.", False),
        ("0.125", r"\boxed{\Gamma(300!)}", False),
        ("x^2+1", r"\boxed{x + (500!)!}", False),
        ("(1,2)", r"\boxed{((300!)!, (300!)!)}", False),
        ("2.5", r"\boxed{10^{100}}", False),  # tolerance is relative to the gold, not the larger side
        ("30", r"\boxed{30^\circ\%}", False),  # would be 30, 0.3 and π/6 at once
        ("4", r"\boxed{x \ne \boxed{4}}", False),
        ("2", r"\boxed{\boxed{2}+1}", False),
        ("4", r"\boxed{4\text{M}}", False),  # M is a million, not a metre
        ("4", r"\boxed{4 \text{ B}}", False),
        ("5", r"$4$ and not $5$ is the answer.", False),
        ("4", r"\boxed{4 + 10^{-100}(\pi+e)}", False),
        (r"\sqrt2", r"\boxed{\sqrt2 + 10^{-45}}", False),
        ("x^2", r"\boxed{x^2 + \sin(7919000\pi x)}", False),  # zero on any fixed grid of points
        (r"\lfloor x\rfloor", r"\boxed{\lceil x\rceil - 1}", False),
        ("4", "\\boxed{4}\n$5$ is the correct answer.", False),
        ("4", "\\boxed{4}\nthe answer might be 5", False),
        ("4", r"\boxed{4} \framebox{5}", False),
        ("4", r"\boxed{4\text{ m}}", True),
        # The value, computed by the grader: not a final answer for a number gold (issue 36).
        (r"\frac{\sqrt6-\sqrt2}{4}", r"\boxed{\sin 15^\circ}", False),
        ("3", r"\boxed{\log_2 8}", False),
        ("10", r"\boxed{\binom{5}{2}}", False),
    ],
    # 14. Reasoning is not the answer.
    "think": [
        ("4", r"<think>maybe \boxed{3}</think> \boxed{4}", True),
        ("4", r"I think it is 3 ... no. </think> The answer is 4.", True),  # the template opened the block
        ("4", r"<think>\boxed{3}? no, \boxed{4}</think>\boxed{4}", True),  # a change of mind in reasoning
        ("4", r"<think>\boxed{4}</think> \boxed{3}", False),
        ("4", r"<think> so it is \boxed{4}", False),  # never closed: no final answer
        ("4", r"\boxed{3} <think> \boxed{4}", False),
        ("4", r"<think>a</think> \boxed{3} <think>b</think> \boxed{4}", False),  # both boxes are outside
    ],
}


CASES = [(name, *case) for name, cases in CLASSES.items() for case in cases]


@pytest.mark.parametrize(("cls", "gold", "completion", "correct"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_class_case(cls: str, gold: str, completion: str, correct: bool) -> None:
    verdict = grade(gold, completion)
    assert verdict.status != "error", verdict.feedback
    assert verdict.correct is correct, (verdict.status, verdict.feedback, verdict.details)
    assert verdict.score == (1.0 if correct else 0.0)


def test_every_class_has_both_polarities() -> None:
    for name, cases in CLASSES.items():
        outcomes = {correct for _, _, correct in cases}
        assert outcomes == {True, False}, name
        assert len(cases) >= 5, name


def test_hedge_feedback_names_the_statements() -> None:
    verdict = grade("4", r"It is \boxed{3} or \boxed{4}.")
    assert verdict.status == "ok" and "hedge" in verdict.feedback
    assert verdict.details["statements"] == ["3", "4"]


# -- 9. crashing the grader -------------------------------------------------------------------

CRASHERS = [
    r"\boxed{\frac{}{}}",
    r"\boxed{\sqrt[]{}}",
    r"\boxed{\begin{pmatrix}1&2\\3\end{pmatrix}}",
    r"\boxed{\left(}",
    r"\boxed{x^{^{^{}}}}",
    r"\boxed{\int}",
    r"\boxed{\lim_{x\to}}",
    "\\boxed{4\x00}",
    "\\boxed{\u202e4}",
    "\\boxed{\ud800}",
    r"\boxed{" + "{" * 300 + "4" + "}" * 300 + "}",
    r"\boxed{\frac{1}{\frac{1}{\frac{1}{\frac{1}{0}}}}}",
    r"\boxed{\binom{-1}{-1}}",
    r"\boxed{0^{-1}}",
    r"\boxed{\log_0 0}",
    r"\boxed{\begin{matrix}\end{matrix}}",
    r"\boxed{(1,2) + \{3\}}",
    r"\boxed{[1,2] \cup x}",
    r"\boxed{\{x \mid x^x > 2\}}",
    r"\boxed{x \in \{y \mid y > x\}}",
]


@pytest.mark.parametrize("completion", CRASHERS)
def test_nothing_a_completion_writes_is_an_error(completion: str) -> None:
    """An error verdict is dropped by trainers: a policy that can cause one learns to."""
    verdict = grade("4", completion)
    assert verdict.status in ("ok", "no_answer", "timeout"), verdict.feedback
    assert verdict.score == 0.0 and verdict.correct is not True


def test_an_exception_from_the_parser_scores_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever sympy raises on a completion's answer, the completion gets 0, not an error."""
    import rewardsmith.verifiers.math.parse as math_parse

    real = math_parse.parse_answer

    def parse(span: str, leniency: Leniency) -> Any:
        if "CRASH" in span:
            raise RecursionError("maximum recursion depth exceeded")
        return real(span, leniency)

    monkeypatch.setattr(math_parse, "parse_answer", parse)
    crashed = grade("4", r"\boxed{CRASH}")
    assert (crashed.status, crashed.correct, crashed.score) == ("no_answer", False, 0.0)
    assert "RecursionError" in crashed.feedback
    assert grade("4", r"\boxed{4}").correct is True
    bad_gold = grade("CRASH", r"\boxed{4}")
    assert (bad_gold.status, bad_gold.score) == ("invalid_input", 0.0)  # the row's fault, not the completion's


def test_an_exception_while_comparing_scores_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    import rewardsmith.verifiers.math.grade as math_grade

    def compare(*_: Any) -> bool:
        raise TypeError("cannot determine truth value of Relational")

    monkeypatch.setattr(math_grade, "compare", compare)
    verdict = grade("4", r"\boxed{4}")
    assert (verdict.status, verdict.correct, verdict.score) == ("ok", False, 0.0)
    assert verdict.details["compare_error"] == "TypeError"


@pytest.mark.slow
def test_a_completion_that_kills_its_worker_scores_zero() -> None:
    """A worker the answer kills (twice: the pool retries once) is the completion's doing when the
    gold alone grades: 0, not error. A gold that kills the worker is the row's fault: invalid_input."""
    from pool_tasks import KillsOnMarker

    from rewardsmith.verifiers.pool import shared_pool

    verifier = MathVerifier(workers=2, timeout_s=30.0)
    verifier.task = KillsOnMarker(verifier.leniency, verifier.methods)
    try:
        killer, honest, bad_row = verifier.verify_batch([
            Sample(completion=r"KILL-WORKER \boxed{4}", fields={"answer": "4"}),
            Sample(completion=r"\boxed{4}", fields={"answer": "4"}),
            Sample(completion=r"\boxed{4}", fields={"answer": "4 KILL-WORKER"}),
        ])
    finally:
        shared_pool(2).close()
    assert (killer.status, killer.correct, killer.score) == ("no_answer", False, 0.0), killer.feedback
    assert killer.details["crashed"] is True and "crashed the grader" in killer.feedback
    assert (honest.status, honest.correct) == ("ok", True)
    assert (bad_row.status, bad_row.score) == ("invalid_input", 0.0), bad_row.feedback


# -- 13. golds in unusual notations parse; prose and broken golds are loud -------------------

@pytest.mark.parametrize(
    ("gold", "completion"),
    [
        (r"\{x \mid x > 0\}", r"\boxed{(0, \infty)}"),
        ("∞", r"\boxed{\infty}"),
        ("(-∞, 0)", r"\boxed{x < 0}"),
        (r"\begin{pmatrix}1\\2\end{pmatrix}", r"\boxed{(1, 2)}"),
        (r"0, \pm 1", r"\boxed{-1, 0, 1}"),
        (r"\text{only } x=0", r"\boxed{0}"),
        ("12:00", r"\boxed{12:00}"),
        (r"x \in [2,5)", r"\boxed{[2, 5)}"),
        (r"n \equiv 3 \pmod 4", r"\boxed{n \equiv -1 \pmod{4}}"),
        ("f(x) = x^2", r"\boxed{x^2}"),
        (r"\text{no solution}", r"\boxed{\emptyset}"),
        (r"\dfrac{\sqrt{3}}{2}", r"\boxed{\frac{\sqrt3}{2}}"),
        (r"\sin 30^\circ", r"\boxed{\frac12}"),
        (r"0.\overline{3}", r"\boxed{\frac13}"),
    ],
)
def test_gold_notations_parse(gold: str, completion: str) -> None:
    verdict = grade(gold, completion)
    assert (verdict.status, verdict.correct) == ("ok", True), verdict.feedback
    assert verdict.details["gold_parsed"] is True


@pytest.mark.parametrize(
    "gold",
    [r"\frac{", r"\weird{3}", "The answer depends on which player moves first here", r"\frac{5}{0}", "1 +* ^"],
)
def test_prose_and_broken_golds_are_invalid_input(gold: str) -> None:
    verdict = grade(gold, r"\boxed{4}")
    assert (verdict.status, verdict.correct, verdict.score) == ("invalid_input", None, 0.0), verdict.feedback


# -- 15. how the answer was found ------------------------------------------------------------

@pytest.mark.parametrize(
    ("completion", "method"),
    [
        ("<answer>4</answer>", "answer_tag"),
        (r"so \boxed{4}", "boxed"),
        ("The final answer is 4.", "phrase"),
        ("4 is the answer.", "phrase"),
        ("2 + 2\n#### 4", "gsm8k"),
        ("we count 4 in all", "last_number"),
    ],
)
def test_verdict_names_the_extraction_method(completion: str, method: str) -> None:
    verdict = grade("4", completion, last_number=method == "last_number")
    assert verdict.correct is True and verdict.details["method"] == method


@pytest.mark.parametrize(
    ("completion", "off"),
    [
        ("<answer>4</answer>", "answer_tag"),
        (r"so \boxed{4}", "boxed"),
        ("The final answer is 4.", "phrase"),
        ("2 + 2\n#### 4", "gsm8k"),
        ("we count 4 in all", "last_number"),
    ],
)
def test_each_extraction_form_can_be_switched_off(completion: str, off: str) -> None:
    forms = [m for m in ("answer_tag", "boxed", "phrase", "gsm8k", "last_number") if m != off]
    forms = [m for m in forms if m != "last_number"]  # else the 4 is still found as the last number
    verdict = grade("4", completion, extract=forms)
    assert (verdict.correct, verdict.score) == (False, 0.0), verdict.details
    assert grade("4", completion, extract=[*forms, off]).correct is True


def test_last_number_is_opt_in_from_a_spec() -> None:
    sample = Sample(completion="we count 4 in all", fields={"answer": "4"})
    assert build({"type": "math", "workers": 0}).verify(sample).status == "no_answer"
    assert build({"type": "math", "last_number": True, "workers": 0}).verify(sample).correct is True
    with pytest.raises(ValueError, match=r"math\.extract\[1\]: expected one of 'answer_tag'"):
        build({"type": "math", "extract": ["boxed", "vibes"]})


# -- robustness: linear extraction, and the in-process path within a budget ------------------

PATHOLOGICAL = {
    "unclosed boxes": r"\boxed{" * 10_000,
    "distinct boxes": "".join(rf"\boxed{{{i}}}" for i in range(10_000)),
    "open braces": "{" * 50_000 + "4",
    "huge box": r"\boxed{" + "1+" * 50_000 + "1}",
    "tower": r"\boxed{5^{5^{5^{5^5}}}}",
    "factorial": r"\boxed{100000!}",
    "power of a near one": r"\boxed{\left(1+\frac{1}{10^{20}}\right)^{10^{20}}}",
    "binomial": r"\boxed{\binom{10^9}{5\cdot 10^8}}",
    "negative tower": r"\boxed{10^{-10^{10}}}",
    "product": r"\boxed{\prod_{k=1}^{10^9} k}",
    "phrases": "the answer is 4, " * 10_000,
    "answer tags": "<answer>" * 10_000 + "4",
    "think tags": "<think></think>" * 5_000 + "<think>" + r"\boxed{4}",
    "dollars": "$" * 100_001 + "x",
    "digits": r"\boxed{" + "9" * 200_000 + "}",
    "nested fractions": r"\boxed{" + r"\frac{1}{" * 200 + "2" + "}" * 200 + "}",
    "long prose": "1 " * 500_000,
    "set builder": r"\boxed{\{x \mid " + "x > 1, " * 2_000 + r"\}}",
    "python power tower": r"\boxed{2**10**10}",
    "factorial of a sum": r"\boxed{(1+10^{10})!}",
    "power of a factorial": r"\boxed{2^{(1000!)}}",
    "binomial of factorials": r"\boxed{\binom{300!}{150!}}",
    "product to a sum": r"\boxed{\prod_{k=1}^{1+10^{10}} k}",
    "factorial of a factorial": r"\boxed{(100!)!}",
    "gamma of gamma": r"\boxed{\Gamma(\Gamma(50))}",
    "factorial to a power": r"\boxed{(20000!)^{9999}}",
    "exp of a huge number": r"\boxed{\exp(10^{100000})}",
    "open parentheses after ####": "#### " + "\\(" * 20_000,
    "open brackets in a tag": "<answer>" + "\\[" * 20_000 + "</answer>",
    "many closed tags": "<answer>x</answer>" * 10_000,
}
BUDGET_S = 5.0  # per input, in-process; typical is well under 0.5 s


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PATHOLOGICAL))
def test_in_process_mode_survives_pathological_inputs(name: str) -> None:
    """``workers: 0`` has no hard time limit; the size guard and linear extraction keep this fixed
    set of hostile inputs inside a budget anyway (the pool's hard limit covers everything else)."""
    task = GradeTask(Leniency(), ("answer_tag", "boxed", "phrase", "gsm8k", "last_number"))
    start = time.perf_counter()
    verdict = task(("2.5" if name == "exp of a huge number" else "4", PATHOLOGICAL[name]))
    elapsed = time.perf_counter() - start
    assert elapsed < BUDGET_S, f"{name}: {elapsed:.1f}s"
    assert verdict.status != "error" and verdict.score == 0.0, verdict.feedback


def test_extraction_is_linear_in_the_length() -> None:
    """10,000 unclosed boxes took 26 s when each box scanned to the end; now one pass."""
    start = time.perf_counter()
    assert extract_answer(r"\boxed{" * 10_000, last_number=False) is None
    assert time.perf_counter() - start < BUDGET_S


# -- the blind sets --------------------------------------------------------------------------

def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines()]


BLIND_CASES = _rows("math_cases.jsonl")


@pytest.mark.slow
@pytest.mark.parametrize("row", BLIND_CASES, ids=[r["id"] for r in BLIND_CASES])
def test_blind_case(row: dict[str, Any]) -> None:
    verdict = grade(row["gold"], row["completion"], **row.get("options", {}))
    assert verdict.correct is row["correct"] or (not row["correct"] and verdict.correct is None), (
        verdict.status, verdict.feedback)
    if row.get("status_not"):
        assert verdict.status != row["status_not"]
    if row.get("method"):
        assert verdict.details.get("method") == row["method"]


def test_blind_free_form_pairs_recall_and_false_positives() -> None:
    """People-style labels for olympiad answers: no false positive, recall well above plain math-verify."""
    leniency = Leniency()
    rows = _rows("math_freeform_pairs.jsonl")
    from rewardsmith.verifiers.math.extract import extract_gold

    said = [equivalent(parse_answer(extract_gold(r["gold"]), leniency), parse_answer(r["answer"], leniency), leniency)
            for r in rows]
    false_positives = [r["id"] for r, s in zip(rows, said, strict=True) if s and not r["equivalent"]]
    positives = [s for r, s in zip(rows, said, strict=True) if r["equivalent"]]
    assert false_positives == []
    assert sum(positives) / len(positives) >= 0.9


def test_a_missing_completion_is_invalid_input_not_an_unanswered_one():
    from rewardsmith.verifiers import Sample, build

    missing, empty = build({"type": "math", "workers": 0}).verify_batch(
        [Sample(prompt="p", completion=None, fields={"answer": "4"}),
         Sample(prompt="p", completion="", fields={"answer": "4"})])
    assert missing.status == "invalid_input" and "no completion" in missing.feedback
    assert empty.status == "no_answer" and empty.score == 0.0  # saying nothing is a real (empty) generation
