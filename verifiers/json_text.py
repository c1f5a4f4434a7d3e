"""Text that can always be written: the JSON ``rewardsmith score`` puts in a file and the reward
server sends back, and completion text a tokenizer can take. A verdict can carry text from the
completion (an extracted answer, a quoted line), and a completion can hold anything JSON can: a
lone surrogate (``"\\ud800"`` decodes to one), which UTF-8 cannot encode; Unicode line breaks that
line splitters take for the end of a row; a number too long for Python to print. None of these
may stop the writer or the reader: a policy that can crash the reward learns to.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

# Escaped in every text written: lone surrogates, and the line breaks JSON leaves raw (U+2028, U+2029,
# NEL), which str.splitlines and older JavaScript take for the end of a line.
_ESCAPED = re.compile("[\ud800-\udfff\u2028\u2029\x85]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (what a decoder puts where bytes were not text):
    what a tokenizer can encode (Hugging Face's raise on a surrogate), one character for one, so
    offsets into ``text`` stay valid."""
    return _SURROGATE.sub("\ufffd", text)


def json_text(value: Any, *, compact: bool = False, indent: int | None = None) -> str:
    """``value`` as one line of JSON that any UTF-8 file can hold (several with ``indent``).

    Non-ASCII text stays readable (``ensure_ascii=False``); JSON escapes control characters and
    NUL itself; a lone surrogate, which UTF-8 cannot encode, becomes JSON's ``\\udXXX`` escape,
    which reads back as the same string, and so do the Unicode line breaks, so that any line
    splitter sees one row per line. These characters only occur inside JSON strings, so escaping
    them in the text is escaping them in those strings.

    Two values JSON could hold but Python will not print come from verifiers, never from rows (the
    readers refuse them): an integer of more than ``sys.get_int_max_str_digits()`` digits is written
    as its text, and nesting near the recursion limit is written with more room.
    """
    options: dict[str, Any] = {"ensure_ascii": False, "default": str}
    if compact:  # no space after , and : (the HTTP bodies)
        options["separators"] = (",", ":")
    if indent is not None:  # a report meant for reading
        options["indent"] = indent
    try:
        text = json.dumps(value, **options)
    except RecursionError:
        with _deeper():
            text = json.dumps(value, **options)
    except ValueError:  # int_max_str_digits
        with _deeper():
            text = json.dumps(_long_ints_as_text(value), **options)
    return _ESCAPED.sub(_escape_char, text)


@contextlib.contextmanager
def _deeper() -> Iterator[None]:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 3000)  # a value as deep as the limit, walked with two frames a level
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def _long_ints_as_text(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            str(value)
        except ValueError:
            return _int_text(value)
        return value
    if isinstance(value, dict):
        return {k: _long_ints_as_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_long_ints_as_text(v) for v in value]
    return value


def _int_text(value: int) -> str:
    """The decimal digits of an int too long for ``str`` (its limit lifted for this one call)."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return str(value)
    finally:
        sys.set_int_max_str_digits(limit)


def _escape_char(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
