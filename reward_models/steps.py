"""One step splitter for every place a solution becomes steps.

``rewardsmith label steps`` cuts a policy's solution into prefixes with it, ``train prm`` joins a
row's ``steps`` with it (and records it in the saved model), and the ``prm`` verifier, which
receives raw completions, cuts them with the separator the model was trained with. If these
three disagreed, the model would be scored on boundaries it never saw.

A step is the text between separators, stripped of surrounding whitespace; empty pieces are
dropped. ``split(join(steps)) == steps`` for any steps that are non-empty, stripped and free of
the separator (the round trip the tests check). The default separator, a blank line, is what
ProcessBench, PRM800K-style data and most chat models' step-by-step answers use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class StepSplitter:
    separator: str = DEFAULT_SEPARATOR

    def __post_init__(self) -> None:
        if not self.separator:
            raise ValueError("the step separator must be a non-empty string (e.g. '\\n\\n' or '\\n')")

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans ``[start, end)`` of the steps in ``text``, whitespace trimmed."""
        out = []
        start = 0
        while start <= len(text):
            end = text.find(self.separator, start)
            piece_end = len(text) if end < 0 else end
            left, right = start, piece_end
            while left < right and text[left].isspace():
                left += 1
            while right > left and text[right - 1].isspace():
                right -= 1
            if right > left:
                out.append((left, right))
            if end < 0:
                break
            start = end + len(self.separator)
        return out

    def split(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.spans(text)]

    def join(self, steps: Sequence[str]) -> str:
        return self.separator.join(steps)

    def joined_spans(self, steps: Sequence[str], offset: int = 0) -> tuple[str, list[tuple[int, int]]]:
        """``join(steps)`` and each step's span in it (shifted by ``offset``): the spans of the
        steps as given, even when a step holds the separator (training data is taken as labelled)."""
        spans, position = [], offset
        for i, step in enumerate(steps):
            if i:
                position += len(self.separator)
            spans.append((position, position + len(step)))
            position += len(step)
        return self.join(steps), spans

    def prefixes(self, text: str) -> list[str]:
        """The solution cut after each step: what a step-level label (or a process reward during
        RL) is about. The last prefix is the whole solution up to its last step."""
        return [text[:end] for _, end in self.spans(text)]
