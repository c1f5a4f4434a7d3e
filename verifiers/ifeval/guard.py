"""What the ``ifeval`` reward refuses to pay for before it looks at any instruction.

IFEval's constraints say how to answer, not what: a response can follow every one of them and say
nothing. Three degenerate shapes are cheap to recognise without knowing the task, and a policy
trained on instruction rewards finds all three (see ``docs/verifiers/ifeval.md``):

- **nothing**: fewer than ``min_words`` words once ``[placeholders]`` are taken out (an empty reply
  follows "no commas" and "all lowercase"; ``[a] [b] [c] [d]`` follows "4 placeholders");
- **padding**: a long response whose word trigrams mostly repeat earlier ones (one word or one
  sentence over and over to reach a word or sentence count);
- **echo**: a response that is a copy of the prompt (or of the request it was told to repeat) with
  almost nothing of its own: it copies a run of ``ECHO_NGRAM`` words from the prompt, and fewer than
  ``ECHO_OWN_WORDS`` distinct words lie outside such runs (IFEval's GPT-4 responses that repeat the
  request add at least 2: "<<Midnight Shadow>>").

Content stuffing (keywords strewn over filler, lorem ipsum to reach a length) needs a judgement of the
content: compose with a task-quality reward (``gate``/``min`` in :mod:`~rewardsmith.verifiers.compose`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"\w+")
ECHO_NGRAM = 8
ECHO_OWN_WORDS = 2
REPEAT_MIN_TRIGRAMS = 20


def without_placeholders(text: str) -> str:
    """``text`` with every ``[...]`` span (within a line) removed, in one pass."""
    out: list[str] = []
    for line in text.split("\n"):
        pos = 0
        start = line.find("[")
        while start != -1:
            end = line.find("]", start + 1)
            if end == -1:
                break
            out.append(line[pos:start])
            pos = end + 1
            start = line.find("[", pos)
        out.append(line[pos:] + "\n")
    return "".join(out)


def repeated_fraction(words: list[str]) -> float:
    """The share of word trigrams that repeat an earlier one (0.0 below ``REPEAT_MIN_TRIGRAMS``)."""
    grams = list(zip(words, words[1:], words[2:], strict=False))
    if len(grams) < REPEAT_MIN_TRIGRAMS:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


def own_words(words: list[str], sources: Iterable[str], n: int = ECHO_NGRAM) -> int | None:
    """How many distinct words of ``words`` lie outside every run of ``n`` words copied from a source
    (a whole source, when it is shorter: "Name a river in Europe." repeated and nothing else);
    ``None`` when nothing was copied."""
    grams: dict[int, set[tuple[str, ...]]] = {}
    for source in sources:
        src = [w.lower() for w in _WORD.findall(source)]
        k = min(n, len(src))
        if k >= 3:
            grams.setdefault(k, set()).update(tuple(src[i : i + k]) for i in range(len(src) - k + 1))
    covered = [False] * len(words)
    for k, known in grams.items():
        for i in range(len(words) - k + 1):
            if tuple(words[i : i + k]) in known:
                covered[i : i + k] = [True] * k
    if not any(covered):
        return None
    return len({word for word, copied in zip(words, covered, strict=True) if not copied})


def degenerate(text: str, prompts: Iterable[str], min_words: int, max_repeated: float,
               reject_echo: bool) -> tuple[str, str]:
    """``(shape, why)`` when ``text`` earns nothing whatever the instructions say (shape ``nothing``,
    ``padding`` or ``echo``); ``("", "")`` when it is a real response."""
    words = [w.lower() for w in _WORD.findall(without_placeholders(text))]
    if len(words) < min_words:
        return "nothing", f"{len(words)} words outside placeholders (at least {min_words} wanted)"
    share = repeated_fraction(words)
    if share > max_repeated:
        return "padding", f"{share:.0%} of its word trigrams repeat earlier ones (padding; at most {max_repeated:.0%})"
    if reject_echo:  # on every word: a copied prompt keeps its own [placeholders]
        own = own_words([w.lower() for w in _WORD.findall(text)], prompts)
        if own is not None and own < ECHO_OWN_WORDS:
            return "echo", f"copies the prompt with {own} distinct words of its own (an echo, not an answer)"
    return "", ""
