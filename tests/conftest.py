"""Shared test helpers: paths (the optional ../shared/data among them) and tiny verifiers for composition."""

from __future__ import annotations

from pathlib import Path

from rewardsmith.verifiers import Sample, Verdict, Verifier, register

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@register("test_field_score")
class FieldScore(Verifier):
    """Test-only: the score is the sample's ``field`` (default ``s``); ``status`` read from ``st``."""

    name = "field_score"

    def __init__(self, field: str = "s") -> None:
        self.field = field
        self.calls = 0

    def verify_batch(self, samples):
        self.calls += len(samples)
        out = []
        for sample in samples:
            score = float(sample.get(self.field, 0.0))
            status = sample.get("st", "ok")
            out.append(Verdict(score=score, correct=score > 0.5, status=status, feedback=f"{self.field}={score}"))
        return out


def sample(**fields) -> Sample:
    return Sample(prompt="p", completion=fields.pop("completion", "c"), fields=fields)
