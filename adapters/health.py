"""Warn once when a batch is mostly ``invalid_input``: the tell-tale of a wiring mistake.

A trainer pointed at the wrong label column trains on zeros without a word: every row is
``invalid_input`` (no ``answer``), which is reward 0. Each adapter keeps one
:class:`InputHealth` and calls :meth:`InputHealth.check` per batch; the first batch that is
mostly invalid gets one log line naming the missing field and the adapter's own fix
(``--data.label_key``, ``columns=``, ``--field``), and the adapter reports the fraction as a metric.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from rewardsmith.verifiers.core import Verdict
from rewardsmith.verifiers.wording import plural

logger = logging.getLogger("rewardsmith")  # the name users and tests filter warnings by

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
    when the verdicts name none). ``min_rows``: judge over at least this many rows, pooling small
    batches, for trainers that send one row at a time (OpenRLHF's requests, verl's per-row calls):
    one unlabeled row among good ones must not read as "every row invalid". Thread-safe.
    """

    def __init__(self, adapter: str, fix: Callable[[str | None], str], threshold: float = 0.5,
                 emit: Callable[[str], None] | None = None, min_rows: int = 1) -> None:
        self.adapter = adapter
        self.fix = fix
        self.threshold = threshold
        self.emit = emit or logger.warning
        self.min_rows = max(1, min_rows)
        self.rows = 0
        self.invalid = 0
        self.warned = False
        self._pending: list[Verdict] = []
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_lock")
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def check(self, verdicts: Sequence[Verdict]) -> float:
        """Count the batch; warn the first time more than ``threshold`` of a window of at least
        ``min_rows`` rows is invalid. Returns the batch's invalid fraction (for the adapter's metric)."""
        if not verdicts:
            return 0.0
        count = sum(v.status == "invalid_input" for v in verdicts)
        fraction = count / len(verdicts)
        with self._lock:
            self.rows += len(verdicts)
            self.invalid += count
            if self.warned:
                return fraction
            self._pending.extend(verdicts)
            if len(self._pending) < self.min_rows:
                return fraction
            window, self._pending = self._pending, []
            invalid = [v for v in window if v.status == "invalid_input"]
            if len(invalid) / len(window) <= self.threshold:
                return fraction
            self.warned = True
        self.emit(self.message(invalid, len(window)))
        return fraction

    def message(self, invalid: Sequence[Verdict], total: int) -> str:
        counts = Counter(name for v in invalid for name in missing_fields(v))
        are = "is" if len(invalid) == 1 else "are"
        head = f"{self.adapter}: {len(invalid)} of {plural(total, 'row')} in a batch {are} invalid_input (reward 0)"
        if counts:
            field, n = counts.most_common(1)[0]
            return f"{head}; {n} lack the field {field!r}: {self.fix(field)}"
        reason = invalid[0].feedback or "no reason given"
        return f"{head}, e.g. {reason!r}: {self.fix(None)}"
