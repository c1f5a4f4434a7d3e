"""The ``tool_call`` verifier: did the completion make exactly the expected tool calls?

Fields read: ``ground_truth`` (the expected calls, BFCL's shape: a list of
``{function: {param: [acceptable values]}}``, ``""`` among the values marking an optional
parameter; an empty list: no call should be made) and ``function`` (the function docs, whose
declared types and ``required`` lists are checked; optional). BFCL rows (question file joined
with its possible answers by ``id``) load as they are. The completion is a string or chat
messages (OpenAI ``tool_calls`` are read from the assistant turns).

What counts (module docstrings of ``parse``, ``expected`` and ``match`` give each rule):

* the calls are read in ``format``: ``openai``, ``hermes`` (``<tool_call>`` tags), ``python``
  (the whole text is a call or a list of calls, literals only) or ``auto`` (default): whichever one
  of the three the completion uses (calls in two formats are a hedge: 0). Set ``format`` to what
  your runtime executes to read only that format;
* in every format, anything else in the answer region that looks like a call in any syntax
  (another template's, look-alike punctuation; :mod:`.stray`) is a second call set: 0; with no call
  read it is a call attempted (``no_answer``, or 0 where no call should be made). A tag a reader
  does not see as written (struck, commented, hidden, in code) is never paid;
* a call matches an expected one when the names are equal, every argument given is expected and
  matches one of its acceptable values by value and type (``"5"`` is not ``5``), every required
  or non-optional argument is given; an explicit ``""`` is not an omission;
* parallel calls match in any order (a maximum matching); each expected call once.
* a leading reasoning block (``<think>…</think>``, or text up to a lone ``</think>``) is not read;
  an unclosed one is all reasoning.

Score: 1.0 when the calls match the expected ones exactly (same number, every one matched), else
0.0. With ``partial``: ``max(0, (matched − unmatched calls made) / expected)``, which is 1.0 only
for an exact match and gives nothing for a hedge (a right and a wrong call: ``(1 − 1) / 1``).
A row that expects no call pays 1.0 for a completion that makes none, 0.0 for any call (an
unreadable attempt included). Status ``no_answer`` when calls are expected and none was made;
``invalid_input`` when the row's expected calls or docs cannot be read.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from rewardsmith.verifiers.core import Sample, Verdict, Verifier, completion_problem, invalid_input
from rewardsmith.verifiers.options import Range, declare, option
from rewardsmith.verifiers.reading import PROMPT_OPENS_THINK_DOC, Region, hinted
from rewardsmith.verifiers.registry import register
from rewardsmith.verifiers.tool_call.expected import ExpectedCall, RowError, read_expected
from rewardsmith.verifiers.tool_call.match import call_problem, pair
from rewardsmith.verifiers.tool_call.parse import Call, Limits, Reading, read_calls
from rewardsmith.verifiers.trajectory import to_messages

__all__ = ["ToolCallVerifier"]


@register("tool_call")
@declare
class ToolCallVerifier(Verifier):
    """Tool-call reward: the completion's calls against the expected ones (BFCL's ground-truth shape).

    Names, arguments by value and type, optional parameters, several acceptable values, parallel
    calls in any order, and rows where no call should be made. 1.0 for an exact match, else 0.0
    (``partial`` for shaping credit below 1.0). The module docstring details each rule.
    """

    name = "tool_call"

    format: Literal["auto", "openai", "hermes", "python"] = option(
        "auto",
        "auto: the one format the completion uses (two formats: 0); openai: tool_calls of the "
        "assistant turns; hermes: <tool_call> tags; python: the text is only f(a=1) or [f(a=1), g(b=2)]",
    )
    calls_field: str = option("ground_truth", "field with the expected calls: [{function: {param: [acceptable]}}]")
    functions_field: str = option("function", "field with the function docs (declared types, required); optional")
    partial: bool = option(False, "credit max(0, (matched - extra calls) / expected), below 1.0 unless exact")
    strings: Literal["normalized", "exact"] = option(
        "normalized",
        "normalized: case, whitespace and , . / - _ * ^ ignored (BFCL's rule) but the same words and "
        "signed numbers; exact: character for character",
    )
    max_chars: Annotated[int, Range(gt=0)] = option(50_000, "a longer completion scores 0 unread")
    max_calls: Annotated[int, Range(gt=0)] = option(32, "a completion making more calls scores 0")
    max_depth: Annotated[int, Range(gt=0)] = option(16, "a value nested deeper makes its call unreadable")
    prompt_opens_think: bool = option(False, PROMPT_OPENS_THINK_DOC)

    def _verify(self, sample: Sample) -> Verdict:
        problem = completion_problem(sample)
        if problem is not None:
            return problem
        ground_truth = sample.get(self.calls_field)
        if ground_truth is None:
            return invalid_input(f"no expected calls in field {self.calls_field!r}", missing_field=self.calls_field)
        try:
            expected, docs = read_expected(ground_truth, sample.get(self.functions_field))
        except RowError as exc:
            return invalid_input(str(exc))
        offered = [*(docs or {}), *(e.name for e in expected)]
        limits = Limits(self.max_chars, self.max_calls, self.max_depth)
        trajectory = sample.trajectory()
        completion = sample.completion if trajectory is None else to_messages(trajectory.messages)
        reading = read_calls(completion, self.format, limits, offered, self.prompt_opens_think)
        verdict = self._judge(reading, expected, docs is not None)
        if trajectory is not None:  # what the environment recorded of each call, beside what was read
            verdict.details["statuses"] = [record.status for record in trajectory.calls()]
        return hinted(verdict, Region("", reading.stray_close))

    def _judge(self, reading: Reading, expected: list[ExpectedCall], typed: bool) -> Verdict:
        details: dict[str, Any] = {
            "format": self.format,
            "forms": reading.forms,
            "calls": [c.shown() for c in reading.calls],
            "expected": len(expected),
            "typed": typed,
        }
        if reading.problem is not None:
            details["problems"] = [reading.problem]
            return Verdict(score=0.0, correct=False, status="ok", feedback=reading.problem, details=details)
        calls = reading.calls
        unread = f" (a call not read as one: {reading.unread!r})" if reading.unread else ""
        if not expected:
            made = bool(calls) or reading.unread is not None
            feedback = (f"no call should be made; made {len(calls)}" if calls else unread.strip(" ()")) if made else ""
            details["problems"] = [feedback] if made else []
            return Verdict(score=float(not made), correct=not made, status="ok", feedback=feedback, details=details)
        if not calls:
            feedback = f"no {'' if self.format == 'auto' else self.format + ' '}tool call found{unread}"
            details["problems"] = [feedback]
            return Verdict(score=0.0, correct=False, status="no_answer", feedback=feedback, details=details)
        fits = [[call_problem(c, e, self.strings, explain=False) is None for c in calls] for e in expected]
        matching = pair(fits, len(calls))
        extra = [i for i in range(len(calls)) if i not in matching.values()]
        exact = len(matching) == len(expected) and not extra
        if exact:
            score = 1.0
        elif self.partial:
            score = max(0.0, (len(matching) - len(extra)) / len(expected))
        else:
            score = 0.0
        feedback_items = [f"{len(calls)} calls made, {len(expected)} expected"] if len(calls) != len(expected) else []
        feedback_items += [self._why_unmatched(e, calls) for i, e in enumerate(expected) if i not in matching]
        if not (len(expected) == len(calls) == 1):  # one call for one expected: the reason above says it all
            feedback_items += [f"extra call {calls[i].shown(80)}" for i in extra]
        details.update(matched={str(e): c for e, c in sorted(matching.items())}, extra=extra, problems=feedback_items)
        return Verdict(score=score, correct=exact, status="ok", feedback="; ".join(feedback_items), details=details)

    def _why_unmatched(self, expected: ExpectedCall, calls: list[Call]) -> str:
        """Why no call answered ``expected``: what was wrong with a call of that function, if one was made."""
        for call in calls:
            if call.name == expected.name and (problem := call_problem(call, expected, self.strings)) is not None:
                return problem
        if len(calls) == 1:
            return call_problem(calls[0], expected, self.strings) or f"no call of {expected.name}"
        return f"no call of {expected.name}"
