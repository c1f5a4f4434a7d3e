"""Step-by-step solutions with an error injected at a known step: a reward-model sanity set.

Why this shape. A reward model that must *compute* arithmetic to find an error learns slowly
on a small base (MiniLM reads ``38`` as one opaque token, so checking ``23 + 15 = 38`` means
memorising facts; measured: first-error F1 0.25 after 6,000 examples × 2 epochs). Real
reasoning errors are more often *inconsistencies* — a value carried wrongly from an earlier
step, a number misread from the problem, a final answer that is not the last result — and
those are checkable by comparing tokens, which attention does well. So every injected error
here contradicts something earlier in the text (the problem or an earlier step), and every
step after the first error is computed correctly *from the wrong value*, as a model that
slipped once would continue: the only evidence is the contradiction at the first wrong step.

Nothing on the surface gives the label away: a wrong value is the right one ± 1–5 (same
magnitude, never negative), the error step is uniform over the steps, a correct and a wrong
solution of the *same* problem are emitted side by side (so a model cannot separate them by
the problem's wording), and step texts have the same templates either way. A linear model on
n-grams and step lengths (``benchmarks/rm_synthetic.py``) is the check that this holds.

The base variant tells its stories six ways (different sentence orders and places for the
numbers): with two templates a model can learn "compare token 7 with token 19" instead of
"compare this value with where it came from", and that shortcut does not transfer.
``variant="heldout"`` changes both the number range (3-digit starts) and the story and step
templates, so a score that holds there cannot come from a template shortcut;
``heldout-templates`` changes only the templates and ``heldout-numbers`` only the numbers, to
tell which of the two a drop comes from.
``kinds=("arithmetic",)`` injects the other kind — a wrong result from right operands — for
measuring how far a base gets when it must compute.

Rows are in the PRM stepwise format (``prompt``, ``steps``, ``labels``) plus ``first_error``
(ProcessBench's ``label``: index of the first wrong step, -1 when none), ``answer`` (the gold
final number) and ``pair`` (the problem's id: its correct and wrong solutions share it).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Variant = Literal["base", "heldout", "heldout-templates", "heldout-numbers"]
VARIANTS: tuple[str, ...] = ("base", "heldout", "heldout-templates", "heldout-numbers")
ErrorKind = Literal["start", "carry", "answer", "operand", "arithmetic"]
KINDS: tuple[ErrorKind, ...] = ("start", "carry", "answer", "operand", "arithmetic")
CONTRADICTIONS: tuple[ErrorKind, ...] = ("start", "carry", "answer")


@dataclass(frozen=True)
class _Story:
    """One story template: the problem's sentences and the matching solution steps."""

    opening: str  # problem: the start quantity
    add: tuple[str, ...]  # problem sentences for "+ n"
    sub: tuple[str, ...]  # problem sentences for "- n"
    question: str
    first_step: str  # solution step 1: the start quantity restated
    add_step: str  # solution step for "+": {x} + {n} = {y}
    sub_step: str
    final_step: str


_NAMES = ("Tom", "Ana", "Ravi", "Mei", "Lucas", "Sara", "Omar", "Lena", "Kofi", "Ines", "Yuki", "Pablo")
_ITEMS = ("apples", "stickers", "marbles", "coins", "books", "shells", "cards", "pencils")
_PLACES = ("tank", "barrel", "pool", "vat", "cistern")

_BASE = (
    _Story("{name} has {a} {items}.",
           ("{name} buys {n} more {items}.", "{name} finds {n} more {items}.", "A friend gives {name} {n} {items}."),
           ("{name} gives away {n} {items}.", "{name} loses {n} {items}.", "{name} sells {n} {items}."),
           "How many {items} does {name} have now?",
           "{name} starts with {a} {items}.",
           "After that, {name} has {x} + {n} = {y} {items}.",
           "After that, {name} has {x} - {n} = {y} {items}.",
           "The answer is {y}."),
    _Story("There are {a} {items} in a box.",
           ("{n} {items} are added to the box.", "Someone puts {n} more {items} in the box."),
           ("{n} {items} are taken out of the box.", "{n} {items} are removed from the box."),
           "How many {items} are in the box at the end?",
           "The box begins with {a} {items}.",
           "Now the box holds {x} + {n} = {y} {items}.",
           "Now the box holds {x} - {n} = {y} {items}.",
           "The answer is {y}."),
    _Story("A bus leaves the depot with {a} passengers.",
           ("At the next stop {n} people get on.", "{n} passengers board at the station."),
           ("At the next stop {n} people get off.", "{n} passengers leave at the market."),
           "How many passengers are on the bus at the last stop?",
           "The bus starts out carrying {a} passengers.",
           "With the new riders, {x} + {n} = {y} passengers are on board.",
           "Without those riders, {x} - {n} = {y} passengers are on board.",
           "So {y} passengers are on the bus."),
    _Story("{name} scores {a} points in the first round.",
           ("{name} wins {n} points in a bonus round.", "{name} earns {n} points for a correct guess."),
           ("{name} loses {n} points as a penalty.", "{n} points are taken from {name} for a foul."),
           "What is {name}'s final score?",
           "{name}'s score begins at {a} points.",
           "The score rises: {x} + {n} = {y} points.",
           "The score drops: {x} - {n} = {y} points.",
           "{name} finishes the game with {y} points."),
    _Story("A warehouse stores {a} crates of {items}.",
           ("A truck delivers {n} crates.", "The night shift unloads {n} more crates."),
           ("{n} crates are shipped to a shop.", "A customer collects {n} crates."),
           "How many crates are in the warehouse now?",
           "Initially there are {a} crates in stock.",
           "Stock is now {x} + {n} = {y} crates.",
           "Stock is now {x} - {n} = {y} crates.",
           "Final answer: {y} crates."),
    _Story("A farmer keeps {a} sheep.",
           ("In spring {n} lambs are born.", "The farmer buys {n} sheep at the fair."),
           ("The farmer sells {n} sheep.", "{n} sheep wander off and are not found."),
           "How many sheep does the farmer have after all this?",
           "The flock has {a} sheep to begin with.",
           "The flock grows to {x} + {n} = {y} sheep.",
           "The flock shrinks to {x} - {n} = {y} sheep.",
           "The farmer is left with {y} sheep."),
)

_HELDOUT = (
    _Story("A {place} holds {a} liters of water.",
           ("{n} liters are poured into the {place}.", "Rain adds {n} liters to the {place}."),
           ("{n} liters are drained from the {place}.", "{n} liters leak out of the {place}."),
           "How many liters are in the {place} in the end?",
           "At first the {place} has {a} liters.",
           "Adding gives {x} + {n} = {y} liters in the {place}.",
           "Removing leaves {x} - {n} = {y} liters in the {place}.",
           "So the {place} ends with {y} liters."),
    _Story("{name}'s savings account has {a} dollars.",
           ("{name} deposits {n} dollars.", "{name} earns {n} dollars in interest."),
           ("{name} withdraws {n} dollars.", "{name} pays a bill of {n} dollars."),
           "What is the balance at the end?",
           "The balance starts at {a} dollars.",
           "The balance becomes {x} + {n} = {y} dollars.",
           "The balance becomes {x} - {n} = {y} dollars.",
           "Therefore the final balance is {y} dollars."),
)

_SMALL = (10, 99, 2, 60)  # (start low, start high, operand low, operand high)
_LARGE = (100, 999, 10, 400)
_VARIANTS = {  # variant: (stories, number ranges)
    "base": (_BASE, _SMALL),
    "heldout": (_HELDOUT, _LARGE),
    "heldout-templates": (_HELDOUT, _SMALL),
    "heldout-numbers": (_BASE, _LARGE),
}


def generate(n_problems: int, seed: int = 0, variant: Variant = "base", ops: tuple[int, int] = (2, 5),
             kinds: Sequence[ErrorKind] = CONTRADICTIONS, both: bool = True) -> list[dict[str, Any]]:
    """``n_problems`` problems, each as a correct solution and (``both``) one with an injected
    error; without ``both``, one of the two, chosen at random (half the rows wrong)."""
    return list(iter_rows(n_problems, seed, variant, ops, kinds, both))


def iter_rows(n_problems: int, seed: int = 0, variant: Variant = "base", ops: tuple[int, int] = (2, 5),
              kinds: Sequence[ErrorKind] = CONTRADICTIONS, both: bool = True) -> Iterator[dict[str, Any]]:
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if not kinds or set(kinds) - set(KINDS):
        raise ValueError(f"kinds must be a non-empty subset of {', '.join(KINDS)}; got {list(kinds)}")
    rng = random.Random(f"{variant}:{seed}")
    stories, ranges = _VARIANTS[variant]
    for index in range(n_problems):
        problem = _problem(rng, stories, ranges, ops)
        pair = f"{variant}-{seed}-{index}"
        if both:
            yield _row(problem, None, pair)
            yield _row(problem, _injected(rng, problem, kinds), pair)
        else:
            yield _row(problem, _injected(rng, problem, kinds) if rng.random() < 0.5 else None, pair)


@dataclass
class _Problem:
    story: _Story
    words: dict[str, str]
    start: int
    ops: list[tuple[str, int, str]]  # (sign, operand, the problem's sentence)


def _problem(rng: random.Random, stories: Sequence[_Story], ranges: tuple[int, int, int, int],
             ops: tuple[int, int]) -> _Problem:
    lo, hi, op_lo, op_hi = ranges
    story = rng.choice(stories)
    words = {"name": rng.choice(_NAMES), "items": rng.choice(_ITEMS), "place": rng.choice(_PLACES)}
    start = value = rng.randint(lo, hi)
    chosen = []
    for _ in range(rng.randint(*ops)):
        n = rng.randint(op_lo, op_hi)
        sign = "+" if value - n < 5 or rng.random() < 0.5 else "-"  # stay well above zero
        value = value + n if sign == "+" else value - n
        sentence = rng.choice(story.add if sign == "+" else story.sub)
        chosen.append((sign, n, sentence))
    return _Problem(story, words, start, chosen)


@dataclass
class _Error:
    step: int
    kind: ErrorKind
    delta: int


def _injected(rng: random.Random, problem: _Problem, kinds: Sequence[ErrorKind]) -> _Error:
    """A uniformly chosen step, then a kind that can happen there, then a shift that keeps every
    value non-negative."""
    n_steps = len(problem.ops) + 2
    while True:
        step = rng.randrange(n_steps)
        possible = [k for k in kinds if _fits(k, step, n_steps)]
        if not possible:
            continue
        kind = rng.choice(possible)
        delta = rng.randint(1, 5) * rng.choice((-1, 1))
        error = _Error(step, kind, delta)
        if min(_values(problem, error)) >= 0:
            return error


def _fits(kind: ErrorKind, step: int, n_steps: int) -> bool:
    if kind == "start":
        return step == 0
    if kind == "answer":
        return step == n_steps - 1
    return 0 < step < n_steps - 1  # carry, operand and arithmetic: an operation step


def _values(problem: _Problem, error: _Error | None) -> list[int]:
    """Every number the solution writes, for the non-negativity check."""
    return [v for step in _steps(problem, error) for v in step[1]]


def _steps(problem: _Problem, error: _Error | None) -> list[tuple[str, list[int]]]:
    """The solution's steps as (text, numbers written), computed forward from any wrong value."""
    story, words = problem.story, problem.words

    def hit(step: int, kind: ErrorKind) -> bool:
        return error is not None and error.step == step and error.kind == kind

    delta = error.delta if error is not None else 0
    value = problem.start + (delta if hit(0, "start") else 0)
    out = [(story.first_step.format(a=value, **words), [value])]
    for k, (sign, n, _) in enumerate(problem.ops, start=1):
        x = value + (delta if hit(k, "carry") else 0)
        operand = n + (delta if hit(k, "operand") else 0)
        y = x + operand if sign == "+" else x - operand
        y += delta if hit(k, "arithmetic") else 0
        template = story.add_step if sign == "+" else story.sub_step
        out.append((template.format(x=x, n=operand, y=y, **words), [x, operand, y]))
        value = y
    final = value + (delta if hit(len(problem.ops) + 1, "answer") else 0)
    out.append((story.final_step.format(y=final, **words), [final]))
    return out


def _row(problem: _Problem, error: _Error | None, pair: str) -> dict[str, Any]:
    story, words = problem.story, problem.words
    sentences = [story.opening.format(a=problem.start, **words)]
    sentences += [sentence.format(n=n, **words) for _, n, sentence in problem.ops]
    sentences.append(story.question.format(**words))
    steps = [text for text, _ in _steps(problem, error)]
    first = -1 if error is None else error.step
    answer = _steps(problem, None)[-1][1][0]
    return {
        "prompt": " ".join(sentences),
        "steps": steps,
        "labels": [first < 0 or i < first for i in range(len(steps))],
        "first_error": first,
        "error_kind": None if error is None else error.kind,
        "answer": str(answer),
        "pair": pair,
    }
