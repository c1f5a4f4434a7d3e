"""The verl adapter, loaded the way verl loads ``custom_reward_function.path``: by file path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from rewardsmith.verifiers import Verdict, Verifier

VERL_FILE = Path(__file__).resolve().parents[1] / "adapters" / "verl.py"
GOOD = r"So the answer is \boxed{4}."


@pytest.fixture
def module(monkeypatch):
    monkeypatch.delenv("REWARDSMITH_REWARD", raising=False)
    monkeypatch.delenv("REWARDSMITH_ON_ERROR", raising=False)
    # What verl's get_custom_reward_fn does.
    spec = importlib.util.spec_from_file_location("custom_module", VERL_FILE)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "custom_module", mod)
    spec.loader.exec_module(mod)
    mod.configure({"type": "math", "workers": 0})
    return mod


def test_compute_score_with_keyword_arguments_and_same_keys(module):
    results = [
        module.compute_score(data_source="gsm8k", solution_str=GOOD, ground_truth="4", extra_info={"index": 0}),
        module.compute_score(data_source="gsm8k", solution_str="no idea", ground_truth="4"),
        module.compute_score(data_source="gsm8k", solution_str="It is 5", ground_truth="4", extra_info=None),
    ]
    assert [r["score"] for r in results] == [1.0, 0.0, 0.0]
    assert [r["acc"] for r in results] == [1.0, 0.0, 0.0]
    assert [r["status"] for r in results] == ["ok", "no_answer", "ok"]
    assert results[0]["pred"] == "4"
    assert len({tuple(sorted(r)) for r in results}) == 1
    assert set(results[0]) == {"score", *module.EXTRA_KEYS}


def test_routing_by_data_source(module):
    module.configure({"type": "route", "routes": {"gsm8k": {"type": "math", "workers": 0}, "chat": "format"}})
    tagged = "<think>x</think><answer>4</answer>"
    math = module.compute_score(data_source="gsm8k", solution_str=GOOD, ground_truth="4")
    fmt = module.compute_score(data_source="chat", solution_str=GOOD, ground_truth="4")
    fmt_ok = module.compute_score(data_source="chat", solution_str=tagged, ground_truth=None)
    other = module.compute_score(data_source="unknown", solution_str=GOOD, ground_truth="4")
    assert (math["score"], fmt["score"], fmt_ok["score"], other["score"]) == (1.0, 0.0, 1.0, 0.0)
    assert other["status"] == "invalid_input"
    assert (other["invalid"], math["invalid"]) == (1.0, 0.0)  # numeric: verl's metrics drop strings
    assert len({tuple(sorted(r)) for r in (math, fmt, fmt_ok, other)}) == 1


def test_batch_form(module):
    out = module.compute_score_batch(
        data_sources=["gsm8k", "gsm8k"], solution_strs=[GOOD, "5"], ground_truths=["4", "4"],
        extra_infos=[{"split": "train"}, {"split": "train"}],
    )
    assert [r["score"] for r in out] == [1.0, 0.0]
    assert len({tuple(sorted(r)) for r in out}) == 1


def test_batch_form_called_per_sample_is_a_clear_error_not_an_empty_list(module):
    # What verl's per-sample reward manager does with the configured function.
    with pytest.raises(TypeError, match=r"called per sample.*compute_score"):
        module.compute_score_batch(data_source="gsm8k", solution_str=GOOD, ground_truth="4", extra_info=None)


def test_spec_from_environment_and_dict_ground_truth(module, monkeypatch):
    module.configure(None)
    monkeypatch.setenv("REWARDSMITH_REWARD", "format")
    res = module.compute_score(data_source="x", solution_str="<think>a</think><answer>b</answer>",
                               ground_truth={"answer": "b"})
    assert res["score"] == 1.0


def test_errors_score_zero_or_raise(module, monkeypatch):
    class Failing(Verifier):
        def verify_batch(self, samples):
            return [Verdict(status="error", feedback="backend down") for _ in samples]

    module.configure(Failing())
    res = module.compute_score(data_source="x", solution_str="boom", ground_truth="1")
    assert (res["score"], res["status"], res["error"]) == (0.0, "error", 1.0)
    monkeypatch.setenv("REWARDSMITH_ON_ERROR", "raise")
    with pytest.raises(RuntimeError, match="backend down"):
        module.compute_score(data_source="x", solution_str="boom", ground_truth="1")
