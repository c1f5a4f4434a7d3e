"""What a scoring summary counts about the judge: the block ``rewardsmith score`` prints and
writes under ``"judge"``.

Kept beside the verifier that writes the details it reads (``cached`` on a judge verdict;
``decided_by`` and ``overturned`` on a cascade's), so the two change together and the scoring
job counts any verdict tree without knowing judge internals.
"""

from __future__ import annotations

from collections import Counter

from rewardsmith.verifiers.core import Verdict
from rewardsmith.verifiers.wording import plural

KEYS = ("rows", "cache_hits", "cascade_to_judge", "overturned")


def judge_counts(verdict: Verdict) -> Counter[str]:
    """One row's contribution: the judge calls in its verdict tree (and how many came from the
    cache), the cascade rows the rule sent on to the judge (and how many the judge overturned)."""
    counts: Counter[str] = Counter()
    for _, part in verdict.walk():
        if "cached" in part.details:
            counts["rows"] += 1
            counts["cache_hits"] += bool(part.details["cached"])
        if part.details.get("decided_by") == "judge":
            counts["cascade_to_judge"] += 1
            counts["overturned"] += bool(part.details.get("overturned"))
    return counts


def judge_lines(counts: Counter[str]) -> list[str]:
    """The summary table's lines for these counts (none when no judge was involved)."""
    lines = []
    if counts["rows"]:
        lines.append(f"  judge         {plural(counts['rows'], 'row')} judged, {counts['cache_hits']} from the cache")
    if counts["cascade_to_judge"]:
        lines.append(f"  cascade       {counts['cascade_to_judge']} rule negatives sent to the judge, "
                     f"{counts['overturned']} overturned")
    return lines
