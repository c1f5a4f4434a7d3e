"""Warn once when a batch is mostly ``invalid_input``: the tell-tale of a wiring mistake.

A trainer pointed at the wrong label column trains on zeros without a word: every row is
``invalid_input`` (no ``answer``), which is reward 0. Each adapter keeps one
:class:`InputHealth` and calls :meth:`InputHealth.check` per batch; the first batch that is
mostly invalid gets one log line naming the missing field and the adapter's own fix
(``--data.label_key``, ``columns=``, ``--field``), and the adapter reports the fraction as a metric.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence

from rewardsmith.verifiers.core import Verdict

logger = logging.getLogger("rewardsmith")

# Which field each reason for a row being invalid points at, when the verdict names none.
MISSING_DETAIL = "missing_field"


def missing_fields(verdict: Verdict) -> list[str]:
    """The fields an ``invalid_input`` verdict (or any of its parts) says the row lacks."""
    found = []
    for _, part in verdict.walk():
        if part.status == "invalid_input":
            name = part.details.get(MISSING_DETAIL)
            if isinstance(name, str) and name not in found:
                found.append(name)
    return found


class InputHealth:
    """Counts ``invalid_input`` rows and warns once (per instance) when a batch is mostly invalid.

    ``fix(field)`` returns the adapter's own advice for a missing field (``field`` is ``None``
    when the verdicts name none).
    """

    def __init__(self, adapter: str, fix: Callable[[str | None], str], threshold: float = 0.5,
                 emit: Callable[[str], None] | None = None) -> None:
        self.adapter = adapter
        self.fix = fix
        self.threshold = threshold
        self.emit = emit or logger.warning
        self.rows = 0
        self.invalid = 0
        self.warned = False

    def check(self, verdicts: Sequence[Verdict]) -> float:
        """Count the batch; warn the first time more than ``threshold`` of it is invalid. Returns
        the batch's invalid fraction (for the adapter's metric)."""
        if not verdicts:
            return 0.0
        invalid = [v for v in verdicts if v.status == "invalid_input"]
        self.rows += len(verdicts)
        self.invalid += len(invalid)
        fraction = len(invalid) / len(verdicts)
        if fraction > self.threshold and not self.warned:
            self.warned = True
            self.emit(self.message(invalid, len(verdicts)))
        return fraction

    def message(self, invalid: Sequence[Verdict], total: int) -> str:
        counts = Counter(name for v in invalid for name in missing_fields(v))
        head = f"{self.adapter}: {len(invalid)} of {total} rows in a batch are invalid_input (reward 0)"
        if counts:
            field, n = counts.most_common(1)[0]
            return f"{head}; {n} lack the field {field!r}: {self.fix(field)}"
        reason = invalid[0].feedback or "no reason given"
        return f"{head}, e.g. {reason!r}: {self.fix(None)}"
