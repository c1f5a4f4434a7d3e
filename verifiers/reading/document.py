"""A completion read as a document: everything its reader sees, code included.

:func:`~rewardsmith.verifiers.reading.visible` leaves code out, because code is not a stated answer. A family
that judges the response as a whole (instruction following: "no commas", "at most 100 words", "do not say
X") judges the code too: a reader sees it, and a comma or a forbidden word in a code block is on the page.
:func:`shown` is the same reading with code and style markup kept as written (fences, backticks and
emphasis markers included: "highlight three sections" is about the markers), except code that is itself
hidden (a code span inside ``~~…~~`` or an HTML comment stays hidden). Everything else is decided by the
same parsers, in the same way (docs/reading.md).
"""

from __future__ import annotations

from rewardsmith.verifiers.reading.markdown import code_ranges
from rewardsmith.verifiers.reading.visible import visible

__all__ = ["code_ranges", "shown"]


def shown(source: str) -> str | None:
    """What a reader sees of ``source`` as a document: :func:`visible`'s text with code kept as written;
    ``None`` when the completion redefines commands or a parser cannot read it (nothing in it can be read as
    written)."""
    seen = visible(source, keep_code=True, keep_style=True)
    return seen.text if seen.readable else None
