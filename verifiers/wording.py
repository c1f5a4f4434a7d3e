"""Counts in messages read as English: ``plural(1, "row")`` is "1 row", ``plural(2, "row")`` "2 rows".

One helper for every layer that prints a count (the CLI, the trainers, the server's logs), kept here
at the bottom of the package tree so that each may import it; standard library only.
"""

from __future__ import annotations


def plural(n: int, noun: str, nouns: str | None = None, *, thousands: bool = False) -> str:
    """``n`` and the noun in the form ``n`` takes: ``nouns`` (default ``noun + "s"``) unless n is 1.

    A verb may ride along: ``plural(n, "row has", "rows have")``. ``thousands`` groups the digits
    (``12,345 rows``).
    """
    count = f"{n:,}" if thousands else str(n)
    return f"{count} {noun if n == 1 else nouns or noun + 's'}"
