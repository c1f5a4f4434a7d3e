"""Shared test helpers: paths, the optional ../shared/data, and tiny verifiers for composition."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.verifiers import Sample, Verdict, Verifier, register

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or a clean skip where the benchmark data is not beside the checkout."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"benchmark data not found at {SHARED_DATA}")
    return SHARED_DATA


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
