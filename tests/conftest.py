"""Shared test helpers: paths (the optional ../shared/data among them) and tiny verifiers for composition."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rewardsmith.verifiers import Sample, Verdict, Verifier, register

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def require_docker() -> None:
    """Skip when Docker cannot run the sandbox here, but fail instead where the set-up promised
    an engine (tests/run.sh sets REWARDSMITH_REQUIRE_DOCKER=1): CI must not pass by skipping."""
    from rewardsmith.sandbox.backend import docker_available

    problem = docker_available()
    if problem is None:
        return
    if os.environ.get("REWARDSMITH_REQUIRE_DOCKER") == "1":
        pytest.fail(f"Docker is required here but {problem}")
    pytest.skip(problem)


def require_gym() -> None:
    """Skip when reasoning-gym is not installed, but fail where the set-up promised it
    (REWARDSMITH_REQUIRE_GYM=1): CI must not pass by skipping the reasoning_gym family."""
    import importlib.util

    if importlib.util.find_spec("reasoning_gym") is not None:
        return
    if os.environ.get("REWARDSMITH_REQUIRE_GYM") == "1":
        pytest.fail("reasoning-gym is required here (REWARDSMITH_REQUIRE_GYM=1) but missing: pip install -e '.[gym]'")
    pytest.skip("reasoning-gym is not installed (pip install -e '.[gym]')")


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


@pytest.fixture(scope="module", params=["local", "local-plain", pytest.param("docker", marks=pytest.mark.docker)])
def code_backend(request):
    """Every sandbox a code reward may run on: Docker, the local backend with bubblewrap, and its
    fallback without bubblewrap (opted in). Attack tests of the code verifier run on each."""
    from rewardsmith.sandbox.backend import get_backend
    from rewardsmith.sandbox.local import LocalBackend

    if request.param == "local-plain":
        with LocalBackend(use_bwrap=False, allow_unsafe=True) as backend:
            yield backend
        return
    if request.param == "docker":
        require_docker()
    yield get_backend(request.param)


@pytest.fixture
def smollm2_dir() -> str:
    """SmolLM2-135M-Instruct as a transformers model folder (converted once from the bundled GGUF, cached under
    ~/.cache/rewardsmith), for the tests that run a real trainer; skipped where it cannot be built."""
    from rewardsmith.reward_models.loading import smollm2_model_dir
    from rewardsmith.verifiers.judge.backends import BackendError

    try:
        return str(smollm2_model_dir())
    except BackendError as exc:
        pytest.skip(str(exc))
