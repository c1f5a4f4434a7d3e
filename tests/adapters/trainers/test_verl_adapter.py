"""The verl adapter, loaded the way verl 0.9.1 loads ``reward.custom_reward_function.path``: by file path.

These tests need no verl; tests/adapters/trainers/test_verl_trainer.py drives the same code through verl 0.9.1 itself.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys

import pytest
from conftest import REPO

from rewardsmith.adapters.on_error import RewardError
from rewardsmith.verifiers import Sample, Verdict, Verifier, build

VERL_FILE = REPO / "adapters" / "trainers" / "verl.py"
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
        module.compute_score(data_source="gsm8k", solution_str="The answer is 5.", ground_truth="4", extra_info=None),
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


class Failing(Verifier):
    def verify_batch(self, samples):
        return [Verdict(score=1.0, status="error", feedback="backend down") for _ in samples]


def test_errors_score_zero_and_are_counted_or_raise_reward_error(module, monkeypatch, caplog):
    module.configure(Failing())
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        res = module.compute_score(data_source="x", solution_str="boom", ground_truth="1")
        module.compute_score(data_source="x", solution_str="boom", ground_truth="1")
    assert (res["score"], res["status"], res["error"]) == (0.0, "error", 1.0)  # never the verdict's 1.0
    warned = [r.message for r in caplog.records if "status=error" in r.message]
    assert len(warned) == 1 and "on_error=raise" in warned[0]
    monkeypatch.setenv("REWARDSMITH_ON_ERROR", "raise")
    with pytest.raises(RewardError, match="backend down"):
        module.compute_score(data_source="x", solution_str="boom", ground_truth="1")


def test_raise_stops_a_batch_with_any_error_row(module):
    class Half(Verifier):
        def verify_batch(self, samples):
            return [Verdict(score=1.0, status="error" if i == 0 else "ok", feedback="down")
                    for i in range(len(samples))]

    module.configure(Half())
    with pytest.raises(RewardError, match="1 of 2 verdicts have status=error"):
        module.compute_score_batch(data_sources=["x", "x"], solution_strs=["a", "b"], ground_truths=["1", "2"],
                                   on_error="raise")


def test_on_error_from_reward_kwargs_wins_over_the_environment(module, monkeypatch):
    """verl 0.9.1 merges reward.custom_reward_function.reward_kwargs into every call."""
    module.configure(Failing())
    monkeypatch.setenv("REWARDSMITH_ON_ERROR", "zero")
    with pytest.raises(RewardError):
        module.compute_score(data_source="x", solution_str="boom", ground_truth="1", on_error="raise")
    monkeypatch.setenv("REWARDSMITH_ON_ERROR", "raise")
    assert module.compute_score(data_source="x", solution_str="boom", ground_truth="1", on_error="zero")["score"] == 0.0


@pytest.mark.parametrize("where", ["env", "kwarg"])
def test_on_error_none_is_refused_because_verl_cannot_take_a_missing_reward(module, monkeypatch, where):
    module.configure(Failing())
    kwargs = {"on_error": "none"} if where == "kwarg" else {}
    if where == "env":
        monkeypatch.setenv("REWARDSMITH_ON_ERROR", "none")
    with pytest.raises(ValueError, match=r"zero, raise.*verl cannot take a missing reward"):
        module.compute_score(data_source="x", solution_str="boom", ground_truth="1", **kwargs)


def test_reward_kwarg_picks_the_spec(module, tmp_path):
    spec = tmp_path / "reward.json"
    spec.write_text(json.dumps({"type": "format", "tags": ["think", "answer"]}))
    tagged = "<think>a</think><answer>5</answer>"
    row = {"data_source": "x", "solution_str": tagged, "ground_truth": "4"}
    assert module.compute_score(**row, reward=str(spec))["score"] == 1.0
    assert module.compute_score(**row)["score"] == 0.0  # the fixture's math spec


# --- item 12: labels become fields in one place (shared with OpenRLHF) ---------------------------

@pytest.mark.parametrize("truth", [{"answer": "4"}, '{"answer": "4"}', "4", 4])
def test_ground_truth_becomes_fields_as_label_fields_says(module, truth):
    res = module.compute_score(data_source="gsm8k", solution_str=GOOD, ground_truth=truth)
    assert (res["score"], res["status"]) == (1.0, "ok")


def test_row_fields_match_the_sample_build_would_score(module):
    spec = {"type": "route", "routes": {"gsm8k": {"type": "math", "workers": 0}}}
    module.configure(spec)
    rows = [("gsm8k", GOOD, '{"answer": "4"}', {"index": 0}), ("gsm8k", "The answer is 5.", "5", None),
            ("other", GOOD, "4", None), ("gsm8k", GOOD, {"answer": "3"}, {"answer": "4"})]
    got = module.compute_score_batch(*map(list, zip(*rows, strict=True)))
    fields = [{"index": 0, "answer": "4", "data_source": "gsm8k"}, {"answer": "5", "data_source": "gsm8k"},
              {"answer": "4", "data_source": "other"}, {"answer": "3", "data_source": "gsm8k"}]
    want = [build(spec).verify(Sample(completion=row[1], fields=f)) for row, f in zip(rows, fields, strict=True)]
    assert [g["score"] for g in got] == [w.score for w in want] == [1.0, 1.0, 0.0, 0.0]
    assert [g["status"] for g in got] == [w.status for w in want]


# --- item 5: one warning per process when rows are mostly invalid_input -------------------------

def test_a_batch_without_ground_truth_warns_once_naming_the_field(module, caplog):
    n = module.HEALTH_WINDOW
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        good = module.compute_score_batch(data_sources=["gsm8k"] * n, solution_strs=[GOOD] * n,
                                          ground_truths=["4"] * n)
        assert not caplog.records
        bad = module.compute_score_batch(data_sources=["gsm8k"] * n, solution_strs=[GOOD] * n)
        module.compute_score_batch(data_sources=["gsm8k"] * n, solution_strs=[GOOD] * n)
        for _ in range(n):
            module.compute_score(data_source="gsm8k", solution_str=GOOD)
    assert len(caplog.records) == 1
    message = caplog.records[0].getMessage()
    assert "'answer'" in message and "reward_model" in message and "ground_truth" in message
    assert {r["invalid"] for r in bad} == {1.0} and {r["invalid"] for r in good} == {0.0}


def test_per_row_calls_warn_over_a_window_not_on_one_bad_row(module, caplog):
    """verl 0.9.1 calls compute_score per row: one unlabelled row among good ones is no wiring mistake."""
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        module.compute_score(data_source="gsm8k", solution_str=GOOD)
        for _ in range(module.HEALTH_WINDOW * 2):
            module.compute_score(data_source="gsm8k", solution_str=GOOD, ground_truth="4")
    assert not caplog.records
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        for _ in range(module.HEALTH_WINDOW):
            module.compute_score(data_source="gsm8k", solution_str=GOOD)
    assert len(caplog.records) == 1
