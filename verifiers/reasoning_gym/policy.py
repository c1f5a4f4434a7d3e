"""Which reasoning-gym scorers are safe to pay at face value, and the stricter check for those that are not.

From the survey (:mod:`.survey`: ``survey.json``, rerun in CI; table in docs/verifiers/reasoning_gym.md):
every dataset of :data:`UNSAFE` is one whose own scorer paid at least one cheat in full (the gold with
junk after it, the gold repeated, an empty answer, another puzzle's answer, a JSON key given two values).
Under the default ``unsafe: exact`` an answer to one of them counts only when it also equals the row's
gold (whitespace collapsed, case ignored), or for ``puzzle24`` when its numbers are the puzzle's own;
``refuse`` makes such rows ``invalid_input``; ``trust`` pays the scorer.

Partial credit (0.01 for any answer, 0.05 for a parseable grid, substring ratios) is a separate matter:
``partial: false`` (the default) pays only a full score.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from rewardsmith.verifiers.reading import fold
from rewardsmith.verifiers.reasoning_gym.survey import CHEAT_WORDS, load, pays_cheats


def _unsafe() -> dict[str, str]:
    """dataset -> what its scorer pays that it should not, as the survey measured it."""
    found = {}
    for name, row in load().items():
        cheats = pays_cheats(row)
        if cheats:
            found[name] = "its own scorer pays 1.0 for " + ", ".join(CHEAT_WORDS[c] for c in cheats)
    return found


UNSAFE: dict[str, str] = _unsafe()

# Metadata that reasoning-gym keeps as tuples and compares by ==: JSON turns them into lists.
TUPLE_FIELDS: dict[str, tuple[str, ...]] = {"arc_agi": ("input", "output"), "rearc": ("input", "output")}


def squash(text: str, fold: bool = False) -> str:
    """Whitespace collapsed to single spaces, ends stripped; with ``fold``, case folded too."""
    text = " ".join(text.split())
    return text.casefold() if fold else text


def stricter_check(dataset: str, answer: str, gold: Any, metadata: Mapping[str, Any]) -> str | None:
    """Why an answer the scorer paid in full does not count for an unsafe dataset, or None when it does."""
    if dataset == "puzzle24":
        used = Counter(int(n) for n in re.findall(r"\d+", answer))
        wanted = Counter(int(n) for n in metadata.get("numbers", ()))
        return None if used == wanted else "the expression does not use exactly the puzzle's numbers"
    if not isinstance(gold, str) or not gold.strip():
        return "the row has no gold answer to hold an unsafe scorer's verdict against"
    if _same_text(answer, gold) or _same_number(answer, gold) or _same_literal(answer, gold):
        return None
    return "the answer is not exactly the gold (the scorer is lenient)"


_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?(?:/\d+)?")


_COMMA = re.compile(r"\s*,\s*")


def _same_text(answer: str, gold: str) -> bool:
    """Whether both say the same, whitespace (runs of it, and around commas) and case aside."""
    return _COMMA.sub(", ", squash(answer, fold=True)) == _COMMA.sub(", ", squash(gold, fold=True))


def _same_literal(answer: str, gold: str) -> bool:
    """Whether both are the same JSON document or Python literal (``[[0,1]]`` for ``[[0, 1]]``, ``["a"]``
    for ``['a']``), when the gold is one: compared as written back, so ``true`` is not 1, nor 1.0 1."""
    if len(answer) > 100_000 or not gold.strip().startswith(("[", "{", "(")):
        return False
    try:
        return _canonical(_literal(answer)) == _canonical(_literal(gold))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False


def _literal(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text.strip())


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _same_number(answer: str, gold: str) -> bool:
    """Whether both are one plain number (integer, decimal or a/b) of the same value: ``28080.0`` for
    ``28080``. The gold decides: only a gold that is a number admits another spelling of it."""
    a, g = answer.strip(), gold.strip()
    if not (_NUMBER.fullmatch(a) and _NUMBER.fullmatch(g)) or len(a) > 100 or len(g) > 100:
        return False
    try:
        return Fraction(a) == Fraction(g)
    except (ValueError, ZeroDivisionError):
        return False


# What an answer to these tasks is, by their own statement ("an arithmetic expression ... using the
# operators +, -, *, /"): whole numbers, those four operators, parentheses and spaces. Read before
# any scorer: a float literal (164e0, which the scorer's number count does not see) or a function is
# not such an answer.
_ARITHMETIC = re.compile(r"[0-9+\-*/() \t]+")
ANSWER_GRAMMARS: dict[str, str] = {
    "puzzle24": "arithmetic",
    "countdown": "arithmetic",
}


def grammar_problem(dataset: str, answer: str) -> str | None:
    """Why ``answer`` is not in the grammar of ``dataset``'s answers, or None (also for datasets with none)."""
    if ANSWER_GRAMMARS.get(dataset) != "arithmetic":
        return None
    if _ARITHMETIC.fullmatch(answer) and "**" not in answer and "//" not in answer:
        return None
    return "the answer is not an arithmetic expression of whole numbers with + - * / and parentheses"


# Presentation a reader does not take as part of an answer: emphasis, code, math, quotes around the whole of it.
_WRAPPERS = (("```", "```"), ("**", "**"), ("__", "__"), ("`", "`"), ("$", "$"), ('"', '"'), ("*", "*"), ("_", "_"))


def unwrapped(answer: str, gold: object) -> str:
    """``answer`` without presentation wrapped around the whole of it (``**156**``, ``$156$``, a code fence,
    quotes) that the gold does not have: the scorer reads raw text, and a reader reads ``**156**`` as 156."""
    if not isinstance(gold, str):
        return answer  # many-solution puzzles: the scorer reads the answer as written
    previous = None
    while previous != answer:
        previous = answer
        for opener, closer in _WRAPPERS:
            inner = answer[len(opener) : -len(closer)] if len(answer) > len(opener) + len(closer) else ""
            if answer.startswith(opener) and answer.endswith(closer) and not gold.strip().startswith(opener):
                if opener == "```":
                    inner = inner.split("\n", 1)[1] if "\n" in inner else inner  # the info string line
                answer = inner.strip()
                break
    return answer


_PLAIN_NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")


def number_problem(gold: object, answer: str) -> str | None:
    """Why ``answer`` is not a plain number where the gold is one, or None. Scorers parse leniently (chain_sum's
    strips commas, so ``15,6`` and ``1,5,6`` are 156; ``Decimal`` reads ``1_56`` and any script's digits, and
    Bengali ``৪`` is 4 though it looks like 8): a gold written as plain ASCII digits asks for the same."""
    if not isinstance(gold, str) or not _PLAIN_NUMBER.fullmatch(gold.strip()):
        return None
    if _PLAIN_NUMBER.fullmatch(answer.strip()):
        return None
    return "the gold is a plain number and the answer is not one (ASCII digits, a sign and a decimal point only)"


_LAST_NUMBER = re.compile(r"(?<![\w.,^])([+-]?[0-9]+(?:\.[0-9]+)?)[\s.!?。]*$")
_NUMBERS = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def working_number(sentences: list[str], answer: str, prompt: str) -> str | None:
    """A number other than ``answer`` that a sentence of the working ends on, in any words and any script
    ("La somme est 155.", "Η απάντηση είναι 𝟏𝟓𝟓."): a reader takes it as stated, so a plain-number answer beside
    it is a hedge. Not a computation's result (after ``=``), nor a number the prompt gives."""
    given = {Decimal(n) for n in _NUMBERS.findall(fold(prompt))}
    for sentence in sentences:
        seen = fold(sentence)
        last = _LAST_NUMBER.search(seen)
        if last is None or seen[: last.start()].rstrip().endswith(("=", "\u2248", "\\approx")):
            continue
        value = Decimal(last.group(1))
        if value != Decimal(answer) and value not in given:
            return last.group(1)
    return None


def tuple_paths(dataset: str) -> tuple[str, ...]:
    """Where in an entry the dataset's scorer compares tuples that JSON turned into lists (the sandboxed
    scorer turns them back: the entry crosses to it as JSON)."""
    return tuple(f"metadata.{field}" for field in TUPLE_FIELDS.get(dataset, ()))
