"""The ``choice`` verifier: does the completion commit to the gold option of a multiple-choice row?

Fields read: ``choices`` (``choices_field``): the options, as a list of texts (MMLU, lm-eval), ARC's
``{"text": [...], "label": [...]}`` or a mapping label → text; ``answer`` (``answer_field``): the
gold as a 0-based index, a label (``B``, ``(B)``) or an option's exact text
(:mod:`~rewardsmith.verifiers.choice.row`).

The final answer is read from the forms ``answer_from`` names (:mod:`~rewardsmith.verifiers.reading.statements`:
an answer tag, a box, an answer phrase, a bare one-line completion), never from wherever a letter
happens to appear. Each statement of it names options (:mod:`~rewardsmith.verifiers.choice.reading`);
the completion pays 1.0 only when, over all its statements, it names exactly one option and that
option is the gold. Two options named (in one statement, or in two statements: a hedge), every
option, a letter that is no option's label, an option only denied: 0.

Statuses: ``invalid_input`` when the row's options or gold cannot be read; ``no_answer`` when the
completion states no final answer or its answer names no option; ``ok`` otherwise (score 0 or 1).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from rewardsmith.verifiers.choice.reading import (
    Named,
    in_shape,
    mentioned_in_working,
    read_statement,
    said_in_working,
)
from rewardsmith.verifiers.choice.row import Options, read_gold, read_options
from rewardsmith.verifiers.core import Sample, Verdict, Verifier, invalid_input, read_completion, short
from rewardsmith.verifiers.options import NonEmpty, Unique, declare, option
from rewardsmith.verifiers.reading import PROMPT_OPENS_THINK_DOC, Region, answer_region, hinted
from rewardsmith.verifiers.reading.frame import sentence_start, working
from rewardsmith.verifiers.reading.statements import FORMS, MAX_STATEMENTS, Form, final_answer
from rewardsmith.verifiers.registry import register

_SHOWN = 80


@register("choice")
@declare
class ChoiceVerifier(Verifier):
    """Multiple choice: 1.0 when the completion's final answer names exactly one option, the gold one.

    A label (``B``, ``(B)``, ``B)``, ``B.``, ``**B**``, "option B"), a label with its option's text
    or the exact text of one option counts; two different options anywhere in the final answer
    ("A or B", "B (or maybe C)", two boxes that disagree), every option, a letter outside the
    options or a denied one ("not B") scores 0.
    """

    name = "choice"

    choices_field: str = option(
        "choices", "the field holding the options (list of texts, ARC's {text, label}, or label → text)"
    )
    answer_field: str = option("answer", "the field holding the gold: a 0-based index, a label or an option's text")
    answer_from: Annotated[tuple[Form, ...], NonEmpty(), Unique()] = option(
        FORMS, "where the final answer is read, strongest first: answer_tag, boxed, phrase, bare"
    )
    prompt_opens_think: bool = option(False, PROMPT_OPENS_THINK_DOC)
    accept_text: bool = option(True, 'an option\'s exact text ("Paris") names it, as its label does')
    working: Literal["names", "statements"] = option(
        "names", "names: every option label in the working before the final statement names that option (a "
        "second one is a hedge: working belongs in the reasoning block); statements: only a sentence that ends "
        "on a label or states one option (lenient: 'I'd pick C, honestly.' is then free)")

    def _verify(self, sample: Sample) -> Verdict:
        options = read_options(sample.get(self.choices_field))
        if isinstance(options, str):
            missing = self.choices_field if sample.get(self.choices_field) is None else None
            return invalid_input(f"{self.choices_field}: {options}", missing_field=missing)
        raw_gold = sample.get(self.answer_field)
        if raw_gold is None or (isinstance(raw_gold, str) and not raw_gold.strip()):
            return invalid_input(
                f"sample has no {self.answer_field!r} field to compare against", missing_field=self.answer_field
            )
        gold = read_gold(raw_gold, options)
        if isinstance(gold, str):
            return invalid_input(f"{self.answer_field}: {gold}")
        text = read_completion(sample)
        if isinstance(text, Verdict):
            return text
        region = answer_region(text, self.prompt_opens_think)
        return hinted(self._judge(region, options, gold), region)

    def _judge(self, text: Region, options: Options, gold: int) -> Verdict:
        details: dict[str, Any] = {"gold": options.labels[gold], "labels": list(options.labels)}
        answer = final_answer(text, self.answer_from)
        if answer is None:
            return Verdict(
                score=0.0,
                correct=False,
                status="no_answer",
                feedback=f"no final answer found (read from {', '.join(self.answer_from)})",
                details=details,
            )
        details.update(form=answer.form, statements=[short(s, _SHOWN) for s in answer.texts[:8]])
        if answer.overflow:
            return _wrong(f"more than {MAX_STATEMENTS} statements of the final answer", details)
        named = Named()
        for statement in answer.statements:
            named = named | read_statement(statement.text, options, self.accept_text)
        final = max(s.start for s in answer.statements if s.form != "offer")
        read = mentioned_in_working if self.working == "names" else said_in_working
        for said in working(text.text, sentence_start(text.text, final)):
            named = named | read(said, options, self.accept_text)
        chosen = sorted(options.labels[i] for i in named.indices) + sorted(named.outside)
        details.update(named=chosen, denied=sorted(named.denied))
        if named.count == 0:
            why = f"only denied {', '.join(sorted(named.denied))}" if named.denied else "names no option"
            return Verdict(
                score=0.0,
                correct=False,
                status="no_answer",
                feedback=f"the final answer {short(answer.texts[0], _SHOWN)!r} {why}",
                details=details,
            )
        if named.count > 1:
            every = " (every option)" if len(named.indices) == len(options.labels) else ""
            hint = ("; every option named in the working counts (working belongs in the reasoning block, or set "
                    "working: statements)") if self.working == "names" else ""
            return _wrong(f"several options named{every}: {', '.join(chosen)} (a hedge){hint}", details)
        if answer.unframed:
            return Verdict(score=0.0, correct=False, status="no_answer", feedback=answer.unframed, details=details)
        if named.outside:
            return _wrong(f"{chosen[0]} is not one of the options ({', '.join(options.labels)})", details)
        shapeless = next((s.text for s in answer.statements if not in_shape(s.text, options, self.accept_text)), None)
        if shapeless is not None:
            return Verdict(
                score=0.0,
                correct=False,
                status="no_answer",
                feedback=f"the final answer {short(shapeless, _SHOWN)!r} is not one option in a documented shape "
                "(a label, dressed or not, alone, with its own option's text or 'is correct'; or one option's text)",
                details=details,
            )
        picked = next(iter(named.indices))
        if picked == gold:
            return Verdict(score=1.0, correct=True, status="ok", feedback="", details=details)
        return _wrong(f"answered {options.labels[picked]}, gold is {options.labels[gold]}", details)


def _wrong(feedback: str, details: dict[str, Any]) -> Verdict:
    return Verdict(score=0.0, correct=False, status="ok", feedback=feedback, details=details)
