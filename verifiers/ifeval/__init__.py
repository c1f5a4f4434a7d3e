"""The ``ifeval`` verifier: does a response follow IFEval's verifiable instructions?

Fields read (names are options): ``instruction_id_list`` (IFEval's ids, e.g.
``punctuation:no_comma``) and ``kwargs`` (one object per id, as IFEval's data gives them; ``None``
values mean "not given"; a JSON-encoded string of either is read too). The prompt is read only by
the echo guard; ``combination:repeat_prompt`` reads the request to repeat from its kwargs
(``prompt_to_repeat``), as the reference does.

Options:

``mode``: ``strict`` (default) judges the response as it is; ``loose`` (IFEval's upper bound) also
    tries it without its first line, its last line, both, and each of these with every ``*``
    removed: an instruction is followed when any variant follows it.
``level``: ``prompt`` (default) pays 1.0 only when every instruction is followed; ``instruction``
    pays the fraction followed.
``parity`` (default ``false``): reproduce lm-eval's lenient corners (text langdetect cannot read
    counts as any language; a bare JSON scalar counts as "wrapped in JSON"; "My answer is yes. My
    answer is no." counts as choosing one; the text is judged as written, where by default it is
    judged as its reader sees it: :func:`reading_of`). For benchmarks.
``min_words`` / ``max_repeated`` / ``reject_echo``: the guard of
    :mod:`~rewardsmith.verifiers.ifeval.guard` (empty, padded and echoed responses score 0 whatever
    the instructions); the parity benchmark turns it off (``0`` / ``1.0`` / ``false``).
``max_chars`` (default 100,000): a longer response is not judged (score 0): every check is linear,
    this bounds the work.

An unknown instruction id, a kwargs entry of the wrong shape, or lists of different lengths is
``invalid_input`` naming the field. ``details["instructions"]`` lists each id with ``followed`` and
why; ``feedback`` names the ones not followed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from rewardsmith.verifiers.core import Sample, Status, Verdict, Verifier, invalid_input, read_completion, short
from rewardsmith.verifiers.ifeval.checks import CHECKS, Check, KwargsError, parse_kwargs
from rewardsmith.verifiers.ifeval.guard import degenerate
from rewardsmith.verifiers.options import NonEmpty, Range, declare, option
from rewardsmith.verifiers.reading import PROMPT_OPENS_THINK_DOC, hinted, source_region
from rewardsmith.verifiers.reading.code_blocks import line_feeds
from rewardsmith.verifiers.reading.document import Page, read_page
from rewardsmith.verifiers.registry import register

__all__ = ["CHECKS", "IfevalVerifier", "loose_variants", "reading_of"]


def loose_variants(text: str) -> list[str]:
    """IFEval's loose variants, in its order: as is, without ``*``, then without the first line, the
    last line, both (stripped), and those three without ``*``."""
    lines = text.split("\n")
    cut = ["\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return [text, text.replace("*", ""), *cut, *(c.replace("*", "") for c in cut)]


def reading_of(text: str) -> Page:
    """The response as its reader sees it, the one reading every check judges (docs/reading.md): what
    Markdown, HTML and LaTeX hide is gone (a comment, a link's target, struck-out, white or phantom text),
    HTML tags are rendered (a tag is no text, its attributes neither), code is kept (it is on the page),
    invisible characters are removed (``b\\u200bad`` is "bad", one word), every line ending is ``\\n``
    (CommonMark's: ``\\r\\n``, ``\\r``, ``\\n``). Unreadable (``Page.unreadable`` says why) when the response
    redefines LaTeX commands or holds HTML outside the readable grammar: then nothing in it reads as written.
    Checks that compare letters also fold look-alikes (``checks.looks``); checks of structure read it from the
    CommonMark parse of this text (``reading.structure``)."""
    return read_page(line_feeds(text))


def _decoded(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@register("ifeval")
@declare
class IfevalVerifier(Verifier):
    """IFEval's 25 verifiable instructions, strict or loose, scored per prompt or per instruction,
    behind a guard that pays nothing for an empty, padded or echoed response."""

    name = "ifeval"

    instructions_field: Annotated[str, NonEmpty()] = option("instruction_id_list", "the field holding the "
                                                                                   "instruction ids")
    kwargs_field: Annotated[str, NonEmpty()] = option("kwargs", "the field holding one kwargs object per id")
    mode: Literal["strict", "loose"] = option("strict", "strict: the response as is; loose: also without its "
                                                        "first/last line and without '*' (any variant counts)")
    level: Literal["prompt", "instruction"] = option("prompt", "prompt: 1.0 only when all are followed; "
                                                               "instruction: the fraction followed")
    parity: bool = option(False, "lm-eval's lenient corners: undetectable language passes, a bare JSON "
                                 "scalar is JSON, several constrained answers pass, text judged as written")
    min_words: Annotated[int, Range(ge=0)] = option(1, "fewer words than this (placeholders aside) score 0")
    max_repeated: Annotated[float, Range(ge=0, le=1)] = option(0.6, "a larger share of repeated word "
                                                                     "trigrams is padding: 0")
    reject_echo: bool = option(True, "a copy of the prompt with under 2 distinct words of its own scores 0")
    max_chars: Annotated[int, Range(gt=0)] = option(100_000, "a longer response is not judged (score 0)")
    prompt_opens_think: bool = option(False, PROMPT_OPENS_THINK_DOC)

    def _verify(self, sample: Sample) -> Verdict:
        text = read_completion(sample)
        if isinstance(text, Verdict):
            return text
        if self.parity:  # lm-eval judges the response whole, reasoning included
            return self._judge_response(sample, text)
        region = source_region(text, self.prompt_opens_think)  # the response without its reasoning blocks
        return hinted(self._judge_response(sample, region.text), region)

    def _judge_response(self, sample: Sample, text: str) -> Verdict:
        parsed = self._instructions(sample)
        if isinstance(parsed, Verdict):
            return parsed
        ids = [i for i, _, _ in parsed]
        base = {"mode": self.mode, "level": self.level}
        if len(text) > self.max_chars:
            return self._refused(ids, base, "ok", "too_long",
                                 f"response of {len(text)} characters is over max_chars={self.max_chars}")
        if not self.parity:
            page = reading_of(text)
            if page.unreadable:
                return self._refused(ids, base, "no_answer", "unreadable", page.unreadable)
            text = page.text
        if not text.strip():
            return self._refused(ids, base, "no_answer", "nothing", "empty response")
        prompts = [sample.prompt_text, *(kw.get("prompt_to_repeat", "") for _, _, kw in parsed)]
        if not self.parity:  # a copy is a copy as written and as shown ("using <br> to separate" renders a break)
            prompts += [reading_of(p).text for p in prompts if "<" in p]
        shape, why = degenerate(text, prompts, self.min_words, self.max_repeated, self.reject_echo)
        if shape:
            return self._refused(ids, base, "no_answer" if shape == "nothing" else "ok", shape, why)
        variants = loose_variants(text) if self.mode == "loose" else [text]
        results = [self._judge(check, kw, variants) for _, check, kw in parsed]
        followed = [ok for ok, _ in results]
        score = float(all(followed)) if self.level == "prompt" else sum(followed) / len(followed)
        missed = [i for i, ok in zip(ids, followed, strict=True) if not ok]
        details = {**base, "instructions": [{"id": i, "followed": ok, "why": why}
                                            for i, (ok, why) in zip(ids, results, strict=True)],
                   "followed": sum(followed), "total": len(followed)}
        feedback = "not followed: " + ", ".join(missed) if missed else "all instructions followed"
        return Verdict(score=score, correct=not missed, status="ok", feedback=feedback, details=details)

    @staticmethod
    def _refused(ids: list[str], base: dict[str, Any], status: Status, shape: str, why: str) -> Verdict:
        """A response judged before any instruction (empty, too long, degenerate): every one not followed."""
        details = {**base, "guard": shape, "instructions": [{"id": i, "followed": False, "why": why} for i in ids],
                   "followed": 0, "total": len(ids)}
        return Verdict(score=0.0, correct=False, status=status, feedback=why, details=details)

    def _judge(self, check: Check, kwargs: dict[str, Any], variants: list[str]) -> tuple[bool, str]:
        first = ""
        for variant in variants:
            if not variant.strip():
                continue
            ok, why = check.judge(kwargs, variant, not self.parity)
            if ok:
                return True, why
            first = first or why
        return False, first or "empty"

    def _instructions(self, sample: Sample) -> list[tuple[str, Check, dict[str, Any]]] | Verdict:
        ids = _decoded(sample.get(self.instructions_field))
        if ids is None:
            return invalid_input(f"no {self.instructions_field!r} field", missing_field=self.instructions_field)
        if not isinstance(ids, Sequence) or isinstance(ids, str) or not ids or not all(
                isinstance(i, str) for i in ids):
            return invalid_input(f"{self.instructions_field} must be a non-empty list of instruction ids, got "
                                 f"{short(ids, 80)}", missing_field=self.instructions_field)
        unknown = [i for i in ids if i not in CHECKS]
        if unknown:
            return invalid_input(f"unknown instruction id {short(unknown[0], 80)} in {self.instructions_field}",
                                 missing_field=self.instructions_field, unknown=unknown)
        kwargs = _decoded(sample.get(self.kwargs_field, [{}] * len(ids)))
        if not isinstance(kwargs, Sequence) or isinstance(kwargs, str) or len(kwargs) != len(ids):
            return invalid_input(f"{self.kwargs_field} must be a list of {len(ids)} objects (one per instruction),"
                                 f" got {short(kwargs, 80)}", missing_field=self.kwargs_field)
        parsed = []
        for index, (iid, kw) in enumerate(zip(ids, kwargs, strict=True)):
            check = CHECKS[iid]
            try:
                args = parse_kwargs(check, kw if isinstance(kw, Mapping) or kw is None else _decoded(kw))
            except KwargsError as exc:
                return invalid_input(f"{self.kwargs_field}[{index}] ({iid}): {exc}", missing_field=self.kwargs_field,
                                     instruction=iid, argument=exc.arg)
            parsed.append((iid, check, args))
        return parsed
