"""One base for rewardsmith's own errors (issue 25): ``except RewardsmithError`` catches each of
them, and each still is what it was before (``except ValueError`` / ``except RuntimeError`` code
keeps working)."""

from __future__ import annotations

import importlib

import pytest

from rewardsmith.verifiers import RewardsmithError

# (module, class, the builtin base it had before it got RewardsmithError)
PUBLIC_ERRORS = [
    ("rewardsmith.sandbox.docker_pool", "SandboxUnavailable", RuntimeError),
    ("rewardsmith.sandbox.local", "LocalSandboxRefused", RuntimeError),
    ("rewardsmith.verifiers.options", "SpecError", ValueError),
    ("rewardsmith.verifiers.code.tests", "TestsError", ValueError),
    ("rewardsmith.verifiers.judge.rubric", "RubricError", ValueError),
    ("rewardsmith.verifiers.judge", "ParseError", ValueError),
    ("rewardsmith.verifiers.judge.backends", "BackendError", RuntimeError),
    ("rewardsmith.reward_models.loading", "ModelLoadError", RuntimeError),
    ("rewardsmith.reward_models.data", "DataError", ValueError),
    ("rewardsmith.reward_models.encoding", "TooLong", ValueError),
    ("rewardsmith.adapters.scoring.outputs", "OutputError", ValueError),
    ("rewardsmith.adapters.scoring.rows", "InputError", ValueError),
    ("rewardsmith.adapters.scoring.provenance", "ResumeError", RuntimeError),
    ("rewardsmith.adapters.on_error", "RewardError", RuntimeError),
    ("rewardsmith.adapters.grpo.loop", "RewardOutage", RuntimeError),
    ("rewardsmith.adapters.serve.reward_server", "BindError", RuntimeError),
    ("rewardsmith.adapters.serve.auth", "TokenError", ValueError),
]


def _load(module: str, name: str) -> type[BaseException]:
    # No skip on ImportError: tests/run.sh installs every extra, so a failing import here means a
    # module moved without this list following it, which must fail, not pass by skipping.
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize(("module", "name", "old_base"), PUBLIC_ERRORS, ids=[n for _, n, _ in PUBLIC_ERRORS])
def test_each_public_error_is_a_rewardsmith_error_and_still_its_old_builtin(module, name, old_base):
    cls = _load(module, name)
    assert issubclass(cls, RewardsmithError)
    assert issubclass(cls, old_base)
    error = cls.__new__(cls)  # some take more than a message (SpecError); the instance is what matters
    assert isinstance(error, RewardsmithError) and isinstance(error, old_base)


def test_a_raised_error_is_caught_by_the_base_and_by_its_old_builtin():
    from rewardsmith.verifiers import SpecError, build

    for catch in (RewardsmithError, ValueError):
        with pytest.raises(catch, match="unknown verifier"):
            build({"type": "no-such-verifier"})
    assert issubclass(SpecError, RewardsmithError)


def test_the_base_is_the_same_class_wherever_it_is_imported_from():
    from rewardsmith.sandbox.errors import RewardsmithError as from_sandbox

    assert from_sandbox is RewardsmithError
    assert issubclass(RewardsmithError, Exception) and not issubclass(RewardsmithError, ValueError | RuntimeError)
