"""How a completion is read: the one place that decides what a reader sees (issue 36, first layer).

:func:`visible` reads a completion the way its reader does: Markdown through a CommonMark parser, LaTeX
through a LaTeX tokenizer, Unicode without what renders as nothing. It says *which spans of the source are
visible*; it does not render them: math inside ``$…$`` reaches the math parser as LaTeX source. A
completion that redefines commands has no readable answer (:attr:`Visible.redefines`).

:func:`fold` is the separate step for labels, keywords and short answers: NFKC and the TR39 confusable
skeleton, so a look-alike letter, digit or comma from another script is what it looks like.

docs/reading.md has the table of constructs and how each is read.
"""

from rewardsmith.verifiers.reading.unicode import fold, is_invisible, strip_invisible
from rewardsmith.verifiers.reading.visible import Visible, readable_text, visible

__all__ = ["Visible", "fold", "is_invisible", "readable_text", "strip_invisible", "visible"]
