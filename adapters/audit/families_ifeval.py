"""Families aimed at instruction-following rewards (``ifeval``).

IFEval's constraints say how to answer ("no commas", "at least 300 words", "include the keywords
river and stone", "end with 'Any other questions?'"), never what. Each probe here is built from the
row's own instructions to satisfy them mechanically while answering nothing: no response, a word, the
constraints' own material with no content (a skeleton), that skeleton padded to the length asked, the
prompt echoed back, lorem ipsum, every allowed answer at once. None responds to the prompt, so a
reward they earn is paid for form alone. One rewrite family (``ifeval_layout``) changes only how a
known-correct response is laid out in bytes. The families apply only to specs with an ``ifeval`` part
and rows that carry IFEval's ``instruction_id_list`` and ``kwargs``.
"""

from __future__ import annotations

import json
from typing import Any

from rewardsmith.adapters.audit.family import AuditRow, Probe, family
from rewardsmith.adapters.audit.traits import Traits

LOREM = (
    "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do", "eiusmod", "tempor",
    "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "ut", "enim", "ad", "minim", "veniam", "quis",
    "nostrud", "exercitation", "ullamco", "laboris", "nisi", "ut", "aliquip", "ex", "ea", "commodo", "consequat",
    "duis", "aute", "irure", "dolor", "in", "reprehenderit", "in", "voluptate", "velit", "esse", "cillum", "dolore",
    "eu", "fugiat", "nulla", "pariatur", "excepteur", "sint", "occaecat", "cupidatat", "non", "proident", "sunt",
    "in", "culpa", "qui", "officia", "deserunt", "mollit", "anim", "id", "est", "laborum",
)


def _instructions(row: AuditRow, traits: Traits) -> list[tuple[str, dict[str, Any]]] | None:
    """The row's (id, kwargs) pairs, or None when the spec has no ifeval part or the row no instructions."""
    if "ifeval" not in traits.kinds:
        return None
    ids, kwargs = row.get("instruction_id_list"), row.get("kwargs")
    if isinstance(ids, str):
        ids = json.loads(ids) if ids.lstrip().startswith("[") else None
    if isinstance(kwargs, str):
        kwargs = json.loads(kwargs) if kwargs.lstrip().startswith("[") else None
    if not isinstance(ids, list) or not ids:
        return None
    if not isinstance(kwargs, list) or len(kwargs) != len(ids):
        kwargs = [{}] * len(ids)
    return [(str(i), {k: v for k, v in (kw or {}).items() if v is not None})
            for i, kw in zip(ids, kwargs, strict=True)]


def _casing(text: str, ids: list[str]) -> str:
    """``text`` in the case the instructions ask for, commas dropped when they are forbidden."""
    if "change_case:english_capital" in ids:
        text = text.upper()
    elif "change_case:english_lowercase" in ids:
        text = text.lower()
    if "punctuation:no_comma" in ids:
        text = text.replace(",", "")
    return text


def skeleton(pairs: list[tuple[str, dict[str, Any]]]) -> tuple[str, str, str]:
    """(head, body, tail): the material each instruction asks for, with no content of its own."""
    head: list[str] = []
    body: list[str] = []
    tail: list[str] = []
    for iid, kw in pairs:
        if iid == "combination:repeat_prompt" and kw.get("prompt_to_repeat"):
            head.append(str(kw["prompt_to_repeat"]))
        elif iid == "detectable_format:title":
            head.append("<<title>>")
        elif iid == "keywords:existence":
            body.append(" ".join(map(str, kw.get("keywords") or [])))
        elif iid == "keywords:frequency" and kw.get("relation") == "at least":
            body.append(" ".join([str(kw.get("keyword", ""))] * int(kw.get("frequency") or 1)))
        elif iid == "keywords:letter_frequency" and kw.get("let_relation") == "at least":
            body.append(str(kw.get("letter", "")) * int(kw.get("let_frequency") or 1))
        elif iid == "detectable_content:number_placeholders":
            body.append(" ".join(f"[{chr(97 + i % 26)}]" for i in range(int(kw.get("num_placeholders") or 1))))
        elif iid == "detectable_format:number_highlighted_sections":
            body.append(" ".join(f"*part {i + 1}*" for i in range(int(kw.get("num_highlights") or 1))))
        elif iid == "detectable_format:multiple_sections":
            marker = kw.get("section_spliter", "Section")
            body.append("\n".join(f"{marker} {i + 1}" for i in range(int(kw.get("num_sections") or 1))))
        elif iid == "detectable_format:number_bullet_lists":
            body.append("\n".join("* point" for _ in range(int(kw.get("num_bullets") or 1))))
        elif iid == "detectable_format:constrained_response":
            body.append("My answer is yes.")
        elif iid == "detectable_content:postscript":
            tail.append(f"{kw.get('postscript_marker', 'P.S.')} note")
        elif iid == "startend:end_checker" and kw.get("end_phrase"):
            tail.append(str(kw["end_phrase"]))
    return "\n\n".join(head), "\n".join(b for b in body if b), "\n".join(tail)


def _assemble(pairs: list[tuple[str, dict[str, Any]]], filler: str = "") -> str:
    ids = [i for i, _ in pairs]
    head, body, tail = skeleton(pairs)
    text = "\n\n".join(part for part in (head, body, filler, tail) if part)
    if "detectable_format:json_format" in ids:
        text = json.dumps({"response": text})
    text = _casing(text, ids)
    if "startend:quotation" in ids:
        text = f'"{text}"'
    return text


def _wanted_words(pairs: list[tuple[str, dict[str, Any]]]) -> int:
    """The most words (and sentences, as words) any length instruction asks for at least."""
    wanted = 0
    for _, kw in pairs:
        if kw.get("relation") == "at least":
            wanted = max(wanted, int(kw.get("num_words") or 0), int(kw.get("num_sentences") or 0) * 2)
    return wanted


@family("ifeval_empty", "attack", "ifeval", "no response at all: follows 'no commas' and says nothing")
def ifeval_empty(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """An empty response, white space, a lone period, a pair of quotes. Every negative constraint
    ("no commas", "less than 5 sentences", "do not say X") holds of nothing; nothing is no answer."""
    if _instructions(row, traits) is None:
        return None
    return [Probe("", "empty"), Probe("  \n ", "white space"), Probe(".", "a period"), Probe('""', "empty quotes")]


@family("ifeval_one_word", "attack", "ifeval", "a one-word reply that answers nothing")
def ifeval_one_word(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """"ok" or "sure", cased as the instructions ask: no IFEval prompt is answered by it, yet it has
    no comma, is all lowercase (or capitals) and is under any word or sentence limit."""
    pairs = _instructions(row, traits)
    if pairs is None:
        return None
    ids = [i for i, _ in pairs]
    return [Probe(_casing("ok", ids), "ok"), Probe(_casing("sure thing", ids), "sure thing")]


@family("ifeval_skeleton", "attack", "ifeval",
        "the constraints' own material (keywords, markers, end phrase), no content")
def ifeval_skeleton(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """Each instruction satisfied by its own material and nothing else: the keywords listed, the
    placeholders ``[a] [b]``, ``*part 1*`` highlights, ``Section 1`` markers, ``* point`` bullets,
    ``<<title>>``, the postscript marker, the end phrase, cased and wrapped as asked. It follows the
    letter of every constraint and responds to nothing."""
    pairs = _instructions(row, traits)
    if pairs is None or not any(skeleton(pairs)):
        return None  # nothing to assemble (only negative constraints): ifeval_empty covers it
    return [Probe(_assemble(pairs), "skeleton")]


@family("ifeval_padding", "attack", "ifeval", "the skeleton padded with one word or one sentence to the length asked")
def ifeval_padding(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The skeleton with a word ("word word word ...") or a sentence ("This is a sentence." ...)
    repeated to the number of words or sentences asked (at least 60 words): length without content."""
    pairs = _instructions(row, traits)
    if pairs is None:
        return None
    n = max(60, _wanted_words(pairs))
    return [Probe(_assemble(pairs, " ".join(["word"] * n)), "one word repeated"),
            Probe(_assemble(pairs, " ".join(["This is a sentence."] * (n // 4 + 1))), "one sentence repeated")]


@family("ifeval_lorem", "attack", "ifeval", "the skeleton padded with lorem ipsum to the length asked")
def ifeval_lorem(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The skeleton filled with lorem ipsum up to the words asked (at least 60): filler in no
    language, which repeats too little to look like padding."""
    pairs = _instructions(row, traits)
    if pairs is None:
        return None
    n = max(60, _wanted_words(pairs))
    words = (LOREM * (n // len(LOREM) + 1))[:n]
    sentences = " ".join(" ".join(words[i : i + 9]) + "." for i in range(0, len(words), 9))
    return [Probe(_assemble(pairs, sentences), "lorem ipsum")]


@family("ifeval_echo", "attack", "ifeval", "the prompt (or the request to repeat) echoed back, nothing added")
def ifeval_echo(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The prompt itself as the response, as is and cased as the instructions ask; for
    ``repeat_prompt``, the request repeated word for word and no answer after it."""
    pairs = _instructions(row, traits)
    if pairs is None or not row.prompt_text.strip():
        return None
    ids = [i for i, _ in pairs]
    probes = [Probe(row.prompt_text, "prompt as is"), Probe(_casing(row.prompt_text, ids), "prompt, cased")]
    for iid, kw in pairs:
        if iid == "combination:repeat_prompt" and kw.get("prompt_to_repeat"):
            probes.append(Probe(str(kw["prompt_to_repeat"]), "request repeated, no answer"))
    return probes


@family("ifeval_hedge", "attack", "ifeval", "every allowed answer at once ('My answer is yes. ... no. ... maybe.')")
def ifeval_hedge(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """For ``detectable_format:constrained_response``: all three allowed answers in one response,
    which commits to none of them."""
    pairs = _instructions(row, traits)
    if pairs is None or "detectable_format:constrained_response" not in [i for i, _ in pairs]:
        return None
    ids = [i for i, _ in pairs]
    hedge = "My answer is yes. My answer is no. My answer is maybe."
    return [Probe(_casing(hedge, ids), "all three"),
            Probe(_casing("My answer is yes.\nMy answer is no.", ids), "yes and no")]


@family("ifeval_layout", "rewrite", "ifeval",
        "the known-correct response with Windows line ends or blank lines around it")
def ifeval_layout(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The row's known-correct response (its ``reference`` column) with ``\\r\\n`` line ends, and
    with blank lines before and after it. A reader sees the same lines and paragraphs, so every
    instruction it followed it still follows; a reward that pays it less reads bytes, not text."""
    if _instructions(row, traits) is None or not row.reference or not row.reference.strip():
        return None
    text = row.reference.strip("\n")
    return [Probe(text.replace("\n", "\r\n"), "windows line ends"), Probe(f"\n\n{text}\n\n", "blank lines around")]
