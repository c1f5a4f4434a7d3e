"""The ``qa`` verifier: is the completion's short final answer one of the gold answers?

Fields read: ``answer`` (``answer_field``): the gold answers, as a string, a list, SQuAD's
``{"text": [...], "answer_start": [...]}`` or TriviaQA's ``{"value", "aliases", "normalized_aliases"}``
(:mod:`~rewardsmith.verifiers.qa.golds`); ``prompt`` for the echo check.

The final answer is read from the forms ``answer_from`` names (:mod:`~rewardsmith.verifiers.reading.statements`),
never from anywhere in the completion, and compared after SQuAD v1.1's normalisation with numbers
read as exact decimals and look-alike characters folded (:mod:`~rewardsmith.verifiers.qa.match`:
``2.5`` is not ``25``, ``-7`` is not ``7``), taking the best alias:

* ``metric: em`` (default): 1.0 when the answer equals an alias, else 0.0;
* ``metric: f1``: token F1 against the best alias, partial credit (opt-in: see below).

Before either, what is not one committed short answer scores 0: several statements that differ
(a hedge), an answer longer than ``max_answer_words`` (or the longest alias, when longer), a list
of candidates ("Paris, London or Berlin") unless an alias is itself written with that separator
(``refuse_lists``), and, under F1, an answer made only of the prompt's words and longer than every
alias (an echo). Under F1 a list would otherwise be paid: "Paris, London or Berlin" earns 0.4
against "Paris" (precision 1/4, recall 1), more on average than committing to one of three
guesses, so F1 would teach listing.

Statuses: ``invalid_input`` when the row has no gold answer; ``no_answer`` when no final answer is
stated or it is empty once normalised; ``ok`` otherwise. ``correct`` is exact match in both metrics.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from rewardsmith.verifiers.core import Sample, Verdict, Verifier, invalid_input, read_completion, short
from rewardsmith.verifiers.options import NonEmpty, Range, Unique, declare, option
from rewardsmith.verifiers.qa.golds import read_aliases
from rewardsmith.verifiers.qa.match import f1, key, same
from rewardsmith.verifiers.qa.normalize import normalize
from rewardsmith.verifiers.reading import PROMPT_OPENS_THINK_DOC, Region, answer_region, hinted
from rewardsmith.verifiers.reading.statements import FORMS, MAX_STATEMENTS, Form, final_answer, plain
from rewardsmith.verifiers.registry import register

_SHOWN = 80
# What separates candidates in a list: "Paris, London or Berlin", "Paris / London", "Paris and London",
# "Paris vs Lyon", "Paris (possibly Lyon)", "Paris – Lyon". Only an answer that matches no alias exactly
# is refused, so this matters under F1, where it would otherwise earn partial credit for each candidate.
_SEPARATORS = {
    "comma": re.compile(r","),
    "semicolon": re.compile(r";"),
    "slash": re.compile(r"/|\|"),
    "or": re.compile(r"\b(?:or|nor|either|else|otherwise|alternatively|unless|if\s+not)\b", re.IGNORECASE),
    "and": re.compile(r"\b(?:and|plus|as\s+well\s+as|but\s+also|together\s+with)\b|[&+]", re.IGNORECASE),
    "versus": re.compile(r"\b(?:vs|versus|then|though|although|maybe|perhaps|possibly|probably)\b", re.IGNORECASE),
    "dash": re.compile(r"\s[-–—]+\s|[–—]|->|=>|\.\.\.|…|\n|\.\s"),
    "brackets": re.compile(r"[()\[\]{}]"),
    "question": re.compile(r"\?"),
    "colon": re.compile(r":"),
}


def list_separators(text: str) -> set[str]:
    """The kinds of list separator written in ``text`` (between words, not inside a number: "1,000")."""
    text = re.sub(r"(?<=\d)[,/](?=\d)", "", text)
    return {kind for kind, pattern in _SEPARATORS.items() if pattern.search(text)}


@register("qa")
@declare
class QAVerifier(Verifier):
    """Short-answer QA: exact match (default) or token F1 with SQuAD v1.1 normalisation, best over aliases.

    Only a committed final answer is read (an answer tag, a box, "The answer is …", or a bare
    one-line completion); a hedge, a list of candidates, an over-long answer or, under F1, an echo
    of the prompt scores 0.
    """

    name = "qa"

    answer_field: str = option(
        "answer", "the field holding the gold answers: a string, a list, SQuAD's {text: [...]}, TriviaQA's {aliases}"
    )
    metric: Literal["em", "f1"] = option("em", "em: exact match after normalisation; f1: token F1 (partial credit)")
    answer_from: Annotated[tuple[Form, ...], NonEmpty(), Unique()] = option(
        FORMS, "where the final answer is read, strongest first: answer_tag, boxed, phrase, bare"
    )
    prompt_opens_think: bool = option(False, PROMPT_OPENS_THINK_DOC)
    max_answer_words: Annotated[int, Range(ge=0)] = option(
        10, "an answer with more words (after normalisation) than this or the longest alias scores 0; 0: no cap"
    )
    refuse_lists: bool = option(
        True,
        "an answer listing candidates (',', ';', '/', 'or', 'and', 'vs', brackets, ...) scores 0 unless an alias "
        "is written so",
    )

    def _verify(self, sample: Sample) -> Verdict:
        raw = sample.get(self.answer_field)
        if raw is None:
            return invalid_input(
                f"sample has no {self.answer_field!r} field to compare against", missing_field=self.answer_field
            )
        aliases = read_aliases(raw)
        if isinstance(aliases, str):
            return invalid_input(f"{self.answer_field}: {aliases}")
        text = read_completion(sample)
        if isinstance(text, Verdict):
            return text
        region = answer_region(text, self.prompt_opens_think)
        return hinted(self._judge(region, aliases, sample.prompt_text), region)

    def _judge(self, text: Region, aliases: list[str], prompt: str) -> Verdict:
        details: dict[str, Any] = {"gold": [short(a, _SHOWN) for a in aliases[:8]], "metric": self.metric}
        answer = final_answer(text, self.answer_from)
        if answer is None:
            return _no_answer(f"no final answer found (read from {', '.join(self.answer_from)})", details)
        said = [plain(t) for t in answer.texts]
        details.update(form=answer.form, statements=[short(s, _SHOWN) for s in said[:8]])
        if answer.overflow:
            return _scored(0.0, False, f"more than {MAX_STATEMENTS} statements of the final answer", details)
        distinct = list(dict.fromkeys(n for s in said if (n := key(s))))
        if not distinct:
            return _no_answer("the final answer is empty", details)
        if len(distinct) > 1:
            shown = " | ".join(short(d, 30) for d in distinct[:4])
            return _scored(0.0, False, f"several different final answers ({shown}): a hedge", details)
        if answer.unframed:
            return _no_answer(answer.unframed, details)
        prediction = next(s for s in said if key(s) == distinct[0])
        details["answer"] = short(prediction, _SHOWN)
        refused = self._refused(prediction, aliases, prompt)
        if refused:
            return _scored(0.0, False, refused, details)
        correct = any(same(prediction, alias) for alias in aliases)
        score = float(correct) if self.metric == "em" else max(f1(prediction, alias) for alias in aliases)
        feedback = "" if correct else f"answer {short(prediction, _SHOWN)!r} matches no gold answer"
        if not correct and score > 0:
            feedback += f" exactly (F1 {score:.2f})"
        return _scored(score, correct, feedback, details)

    def _refused(self, prediction: str, aliases: list[str], prompt: str) -> str | None:
        """Why a single stated answer is still not one committed short answer, or None."""
        words = len(normalize(prediction).split())
        longest = max(len(normalize(a).split()) for a in aliases)
        if self.max_answer_words and words > max(self.max_answer_words, longest):
            return f"the answer has {words} words, more than {max(self.max_answer_words, longest)}"
        if self.refuse_lists:
            listed = list_separators(prediction) - set().union(*(list_separators(a) for a in aliases))
            if listed and not any(same(prediction, alias) for alias in aliases):
                return f"the answer lists candidates (separated by {', '.join(sorted(listed))}): a hedge"
        if self.metric == "f1" and words > longest:
            asked = set(normalize(prompt).split())
            if asked and set(normalize(prediction).split()) <= asked:
                return "the answer only repeats the prompt's words"
        return None


def _no_answer(feedback: str, details: dict[str, Any]) -> Verdict:
    return Verdict(score=0.0, correct=False, status="no_answer", feedback=feedback, details=details)


def _scored(score: float, correct: bool, feedback: str, details: dict[str, Any]) -> Verdict:
    return Verdict(score=score, correct=correct, status="ok", feedback=feedback, details=details)
