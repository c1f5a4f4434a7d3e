"""Calls written in a syntax the reader does not accept: anything outside the parsed calls that looks like a call.

The parser (:mod:`~rewardsmith.verifiers.tool_call.parse`) reads the calls of one accepted format. Runtimes
differ in what they execute: Hermes and Qwen read ``<tool_call>`` tags, Llama 3 ``<|python_tag|>`` and JSON
or pythonic calls, Mistral ``[TOOL_CALLS][...]``, Qwen3-Coder ``<function=name>``, DeepSeek and Kimi their
own special tokens, BFCL's prompting models a Python call list. A second call written in any of them beside
the parsed ones is a second call set: a reward that read only the accepted format would pay a completion
whose call, to another runtime (or to the person reading it), is another one. So whatever looks like a call
in the rest of the answer region makes the answer ambiguous, and it scores 0.

"Looks like a call" is structural, never a phrase: the text is folded first (:func:`reading.fold`: fullwidth
brackets, Unicode quotes and look-alike letters are what they look like, invisible characters are gone), then

* an offered tool's name (a whole token, any case) followed by an argument structure: ``(`` right after it
  (past quotes, a ``.method`` or a ``:0`` index), or after spaces, a ``:``/``=`` and a code fence opener,
  one of ``{`` ``[`` ``<``, or a ``(`` that opens arguments (``)``, ``name=``/``name:``, a literal);
* an offered tool's name given as a value (``"name": "get_weather"``, ``<function=get_weather>``,
  ``name='get_weather'``) or quoted as a key (``{"get_weather": {...}}``);
* a quoted ``name`` or ``function`` key (``{"name": ..., "arguments": ...}``, ``{"function": {...}}``):
  the JSON call object of every JSON-based template, whatever function it names.

A name in prose without an argument structure is not a call: "I will use get_weather." and "get_weather
(the forecast tool) needs a city" are prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from rewardsmith.verifiers.core import short
from rewardsmith.verifiers.reading import fold, visible

_QUOTES = "\"'`"
_AFTER_NAME = re.compile(r"(?:[\"'`]+|\.\w+|:\d+)*")  # get_weather" / .call / :0 (Kimi's index)
# spaces, a key or assignment mark, a code fence opener (fold reads a backtick as an apostrophe in non-ASCII text)
_GAP = re.compile(r"\s*(?:[:=]\s*)?(?:(?:```|''')\w*\s*)?")
_ARGUMENTS = re.compile(r"\(\s*(?:\)|\w+\s*[=:]|[\"'{\[\d-])")  # ( that opens arguments, not a parenthesis
_KEY = re.compile(r"[\\\"'`]+(?:name|function)[\\\"'`]+\s*:", re.IGNORECASE)  # also JSON escaped in a string
_FIELD = re.compile(r"\w+\s*[:=]")  # get_weather:\n  city: London (a call as YAML or keyword lines)


@lru_cache(maxsize=256)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def _is_call(text: str, start: int, end: int) -> bool:
    """Whether the name at ``text[start:end]`` stands in a call structure."""
    after = _AFTER_NAME.match(text, end).end()
    if text.startswith("(", after):
        return True
    gap = _GAP.match(text, after)
    if text.startswith(("{", "[", "<"), gap.end()) or _ARGUMENTS.match(text, gap.end()):
        return True
    if (":" in gap.group(0) or "=" in gap.group(0)) and _FIELD.match(text, gap.end()):
        return True
    window = text[max(0, start - 40) : start]  # bounded: a name mentioned often costs no quadratic scan
    before = window.rstrip(_QUOTES)
    quoted = len(before) < len(window)
    before = before.rstrip()
    if before.endswith("=") or (quoted and before.endswith(":")):
        return True  # the name given as a value: <function=get_weather>, "name": "get_weather"
    key = text[end:after]  # the name quoted as a key: {"get_weather": ...}
    return quoted and key != "" and key.strip(_QUOTES) == "" and text[after : after + 40].lstrip().startswith(":")


def stray_call(text: str, offered: Sequence[str]) -> str | None:
    """The first thing in ``text`` that looks like a call (see the module), shown short; None when nothing does."""
    if not text.strip():
        return None
    seen = visible(text).text
    # hidden text included; entities as they render; escapes as a renderer or a JSON parser decodes them
    for view in dict.fromkeys((text, seen, decoded(text), decoded(seen))):
        found = _first(fold(view), offered)
        if found is not None:
            return found
    return None


_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: a backslash before ASCII punctuation


def decoded(text: str) -> str:
    """``text`` with its escapes decoded as whoever reads it decodes them: a JSON parser reads ``n\\u0061me`` as
    ``name``, a Markdown renderer shows ``get\\_weather`` as ``get_weather``."""
    return _MARKDOWN_ESCAPE.sub(r"\1", _JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text))


def _first(folded: str, offered: Sequence[str]) -> str | None:
    names = tuple(sorted({n for n in offered if n}))
    found: list[int] = []
    if names:
        for match in _names_pattern(names).finditer(folded):
            if _is_call(folded, match.start(), match.end()):
                found.append(match.start())
                break
    key = _KEY.search(folded)
    if key is not None:
        found.append(key.start())
    if not found:
        return None
    at = min(found)
    return short(folded[max(0, at - 10) : at + 50].strip(), 60)
