"""How a completion is read: the one place that decides what a reader sees (issue 36, first layer).

:func:`visible` reads a completion the way its reader does: Markdown through a CommonMark parser, LaTeX
through a LaTeX tokenizer, Unicode without what renders as nothing. It says *which spans of the source are
visible*; it does not render them: math inside ``$…$`` reaches the math parser as LaTeX source. A
completion that redefines commands has no readable answer (:attr:`Visible.redefines`).

:func:`fold` is the separate step for labels, keywords and short answers: NFKC and the TR39 confusable
skeleton, so a look-alike letter, digit or comma from another script is what it looks like.

:func:`answer_region` is where the answer may be: what a reader sees, without the reasoning blocks, by one
rule taken from what the prompt opened (``prompt_opens_think``), never guessed from the completion.

docs/reading.md has the table of constructs and how each is read.
"""

from rewardsmith.verifiers.reading.region import (
    PROMPT_OPENS_THINK_DOC,
    STRAY_CLOSE_HINT,
    Region,
    answer_region,
    hinted,
    source_region,
)
from rewardsmith.verifiers.reading.unicode import fold, is_invisible, strip_invisible
from rewardsmith.verifiers.reading.visible import Visible, readable_text, visible

__all__ = [
    "PROMPT_OPENS_THINK_DOC",
    "STRAY_CLOSE_HINT",
    "Region",
    "Visible",
    "answer_region",
    "fold",
    "hinted",
    "is_invisible",
    "readable_text",
    "source_region",
    "strip_invisible",
    "visible",
]
