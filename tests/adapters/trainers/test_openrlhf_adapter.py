"""The OpenRLHF adapter without OpenRLHF installed: the shared error policy and label fields
(issue 11, item 12), extra_logs keys and presence masks (item 11), and the input-health warning
of an exported ``reward_func`` (item 5)."""

from __future__ import annotations

import importlib.util
import json
import logging

import pytest

from rewardsmith.adapters import on_error as policy
from rewardsmith.adapters.cli import build_parser
from rewardsmith.adapters.cli import main as cli_main
from rewardsmith.adapters.fields import label_fields
from rewardsmith.adapters.trainers.openrlhf import log_keys, reward_dict, score_queries, to_samples
from rewardsmith.verifiers import build

MATH = {"type": "math", "workers": 0}
GATE = {"type": "gate", "when": {"type": "format", "tags": ["answer"]}, "then": MATH}


def test_on_error_raise_is_the_shared_reward_error():
    import rewardsmith.adapters.trainers.openrlhf as openrlhf

    assert not hasattr(openrlhf, "ON_ERROR_CHOICES")
    assert getattr(openrlhf, "RewardError", policy.RewardError) is policy.RewardError
    queries, labels = ["a"], [json.dumps({"s": 0.9, "st": "error"})]
    with pytest.raises(policy.RewardError, match="1 of 1 verdicts have status=error"):
        score_queries(build("test_field_score"), queries, None, labels, on_error="raise")
    assert score_queries(build("test_field_score"), queries, None, labels)["rewards"] == [0.0]


def test_none_is_refused_because_openrlhf_cannot_take_a_missing_reward(capsys):
    with pytest.raises(ValueError, match="OpenRLHF cannot take a missing reward"):
        reward_dict([], build(MATH), on_error="none")
    for command in ("serve", "export"):
        action = next(a for a in build_parser()._subparsers._group_actions[0].choices[command]._actions
                      if "--on-error" in a.option_strings)
        assert tuple(action.choices) == policy.NO_MISSING
    with pytest.raises(SystemExit):
        cli_main(["serve", "--on-error", "none"])
    assert "invalid choice: 'none'" in capsys.readouterr().err


@pytest.mark.parametrize("label", ["4", 4, '{"answer": "4", "data_source": "gsm8k"}', {"answer": "4", "task": "t"},
                                   "{not json", '["a", "b"]', None])
def test_labels_become_fields_as_every_adapter_does(label):
    sample = to_samples(["q"], None, [label], "solution")[0]
    assert sample.fields == label_fields(label, "solution")


def test_extra_logs_keys_are_fixed_nested_and_absent_parts_are_masked_not_zeroed():
    verifier = build(GATE)
    keys = log_keys(verifier)
    samples_passed = to_samples(["<answer>4</answer>"], None, ["4"])
    samples_blocked = to_samples(["\\boxed{4}"], None, ["4"])
    passed = reward_dict(verifier.verify_batch(samples_passed), verifier)["extra_logs"]
    blocked = reward_dict(verifier.verify_batch(samples_blocked), verifier)["extra_logs"]
    assert list(passed) == list(blocked) == keys  # same keys whatever the batch held
    assert passed["component/math"] == [1.0] and passed["component/math/present"] == [1.0]
    # The gate stopped the row: its math part has no score. Not a 0 that reads as "wrong".
    assert blocked["component/math/present"] == [0.0]
    assert blocked["component/format"] == [0.0] and blocked["component/format/present"] == [1.0]
    assert blocked["correct"] == [0.0] and blocked["correct/present"] == [1.0]


def test_an_error_part_has_no_score_in_extra_logs():
    spec = {"type": "weighted", "parts": ["test_field_score", MATH]}
    verifier = build(spec)
    labels = [json.dumps({"s": 0.9, "st": "error", "answer": "4"})]
    logs = score_queries(verifier, ["\\boxed{4}"], None, labels)["extra_logs"]
    assert logs["component/field_score/present"] == [0.0] and logs["component/math/present"] == [1.0]
    assert logs["status_error"] == [1.0] and logs["correct/present"] == [1.0]


def test_exported_reward_func_warns_once_when_most_rows_lack_their_label(tmp_path, caplog):
    """OpenRLHF calls reward_func with one query at a time: the warning waits for enough rows."""
    caplog.set_level(logging.WARNING, logger="rewardsmith")
    path = tmp_path / "reward_func.py"
    (tmp_path / "reward.json").write_text(json.dumps(MATH))
    assert cli_main(["export", "openrlhf", "--reward", str(tmp_path / "reward.json"), "-o", str(path)]) == 0
    spec = importlib.util.spec_from_file_location("reward_func", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    good = [module.reward_func(["\\boxed{4}"], [""], ["4"]) for _ in range(40)]
    assert all(r["rewards"].tolist() == [1.0] for r in good)
    assert not caplog.records
    first = module.reward_func(["\\boxed{4}"], [""], [None])
    assert first["extra_logs"]["status_invalid_input"].tolist() == [1.0]
    assert not caplog.records  # one row says nothing yet
    for _ in range(40):
        module.reward_func(["\\boxed{4}"], [""], [None])
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1, messages
    assert "'answer'" in messages[0] and "--data.label_key" in messages[0]
