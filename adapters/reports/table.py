"""The plain-text tables the CLI prints: ``score``'s summary, ``calibrate``'s report and
``eval rm``'s. One number format (``n/a`` for a figure that does not exist) and one column layout,
so the commands read alike."""

from __future__ import annotations

from collections.abc import Sequence


def number(value: float | None, digits: int = 3) -> str:
    """A figure as the tables show it: fixed digits, ``n/a`` when it could not be computed."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def grid(header: Sequence[str], rows: Sequence[Sequence[str]], align: str, indent: int = 2) -> list[str]:
    """Columns as wide as their widest cell, two spaces apart, each aligned by ``align`` (one
    ``<`` or ``>`` per column); trailing blanks dropped, so an empty last column costs nothing."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return [(" " * indent + "  ".join(f"{cell:{a}{w}}" for cell, a, w in zip(row, align, widths, strict=True))).rstrip()
            for row in [header, *rows]]
