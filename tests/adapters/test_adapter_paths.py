"""The 0.1 module paths trainer configs name (issue 25 moved the glue to rewardsmith.adapters.trainers):
each old path is a compatibility module giving the very objects of the new one."""

from __future__ import annotations

import importlib
import importlib.util

import pytest
from conftest import REPO

MOVED = [
    ("rewardsmith.adapters.trl", "rewardsmith.adapters.trainers.trl"),
    ("rewardsmith.adapters.verl", "rewardsmith.adapters.trainers.verl"),
    ("rewardsmith.adapters.openrlhf", "rewardsmith.adapters.trainers.openrlhf"),
    ("rewardsmith.adapters.verl_manager", "rewardsmith.adapters.trainers.verl_manager"),
]


def _modules(old: str, new: str):
    if old.endswith("verl_manager"):
        pytest.importorskip("verl", reason="verl_manager imports verl")
    return importlib.import_module(old), importlib.import_module(new)


@pytest.mark.parametrize(("old", "new"), MOVED)
def test_an_old_adapter_path_gives_the_identical_objects(old, new):
    shim, module = _modules(old, new)
    assert shim.__all__
    for name in shim.__all__:
        assert getattr(shim, name) is getattr(module, name), name
    if hasattr(module, "__all__"):
        assert sorted(shim.__all__) == sorted(module.__all__)


def test_the_names_trainer_configs_use_resolve_at_the_old_paths():
    from rewardsmith.adapters import trainers
    from rewardsmith.adapters.trl import reward_funcs, reward_weights

    trl = importlib.import_module("rewardsmith.adapters.trainers.trl")
    verl = importlib.import_module("rewardsmith.adapters.trainers.verl")
    assert (reward_funcs, reward_weights) == (trl.reward_funcs, trl.reward_weights)
    # verl's custom_reward_function looks compute_score up in the module it loads, by pkg:// path ...
    assert importlib.import_module("rewardsmith.adapters.verl").compute_score is verl.compute_score
    # ... or by file path
    spec = importlib.util.spec_from_file_location("custom_module", REPO / "adapters" / "verl.py")
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    assert loaded.compute_score is verl.compute_score
    assert trainers.__name__ == "rewardsmith.adapters.trainers"


def test_a_reward_file_exported_by_0_1_still_imports(tmp_path):
    """What `rewardsmith export openrlhf` wrote in 0.1 imports the old path."""
    from rewardsmith.adapters.trainers.openrlhf import score_queries

    namespace: dict = {}
    exec("from rewardsmith.adapters.openrlhf import as_tensors, openrlhf_health, score_queries", namespace)
    assert namespace["score_queries"] is score_queries
