"""Composition and routing: scores combine as documented and every part's score is kept."""

from __future__ import annotations

import pytest
from conftest import sample

from rewardsmith.verifiers import SpecError, build


def test_weighted_sum_keeps_each_component():
    v = build({"type": "weighted", "parts": [{"type": "test_field_score", "field": "a", "name": "acc"},
                                             {"type": "test_field_score", "field": "b", "name": "fmt"}],
               "weights": [1.0, 0.5]})
    verdict = v.verify(sample(a=1.0, b=0.4))
    assert verdict.score == pytest.approx(1.2)
    assert verdict.components == {"acc": 1.0, "fmt": 0.4}
    assert set(verdict.parts) == {"acc", "fmt"} and verdict.parts["acc"].score == 1.0


def test_min_and_max():
    parts = [{"type": "test_field_score", "field": "a"}, {"type": "test_field_score", "field": "b"}]
    assert build({"type": "min", "parts": parts}).verify(sample(a=0.2, b=0.9)).score == 0.2
    assert build({"type": "max", "parts": parts}).verify(sample(a=0.2, b=0.9)).score == 0.9


def test_duplicate_part_names_get_suffixes():
    v = build({"type": "weighted", "parts": ["test_field_score", "test_field_score"]})
    assert list(v.components()) == ["field_score", "field_score_2"]


def test_error_in_any_part_makes_the_composite_an_error():
    v = build({"type": "weighted", "parts": [{"type": "test_field_score", "field": "a"}, "math"]})
    verdict = v.verify(sample(a=1.0, st="error", answer="1", completion="\\boxed{1}"))
    assert verdict.status == "error" and verdict.reward is None


def test_gate_scores_then_only_when_the_gate_passes():
    spec = {"type": "gate", "when": {"type": "test_field_score", "field": "fmt"},
            "then": {"type": "math", "workers": 0}, "otherwise": -1.0}
    v = build(spec)
    good_format_right = sample(fmt=1.0, answer="4", completion="\\boxed{4}")
    good_format_wrong = sample(fmt=1.0, answer="4", completion="\\boxed{5}")
    bad_format_right = sample(fmt=0.0, answer="4", completion="\\boxed{4}")
    verdicts = v.verify_batch([good_format_right, good_format_wrong, bad_format_right])
    assert [x.score for x in verdicts] == [1.0, 0.0, -1.0]
    assert [x.correct for x in verdicts] == [True, False, False]
    assert verdicts[2].components == {"field_score": 0.0, "math": None}
    assert verdicts[2].details["gate_passed"] is False and "not passed" in verdicts[2].feedback


def test_gate_does_not_run_then_on_failed_samples():
    v = build({"type": "gate", "when": {"type": "test_field_score", "field": "fmt"},
               "then": {"type": "test_field_score", "field": "s"}})
    v.verify_batch([sample(fmt=1.0, s=1.0), sample(fmt=0.0, s=1.0), sample(fmt=0.0, s=1.0)])
    assert v.then.calls == 1


def test_gate_threshold():
    v = build({"type": "gate", "when": {"type": "test_field_score", "field": "fmt"},
               "then": {"type": "test_field_score", "field": "s"}, "threshold": 0.3})
    assert v.verify(sample(fmt=0.4, s=0.7)).score == 0.7
    assert v.verify(sample(fmt=0.2, s=0.7)).score == 0.0


def test_route_by_data_source_then_task_field():
    v = build({"type": "route", "routes": {"gsm8k": {"type": "math", "workers": 0},
                                           "const": {"type": "test_field_score", "field": "s"}}})
    verdicts = v.verify_batch([
        sample(data_source="gsm8k", answer="3", completion="#### 3"),
        sample(task="const", s=0.25),
        sample(data_source="unknown"),
    ])
    assert verdicts[0].correct is True and verdicts[0].details["route"] == "gsm8k"
    assert verdicts[0].components["gsm8k"] == 1.0
    assert verdicts[1].score == 0.25 and verdicts[1].details["route"] == "const"
    assert verdicts[2].status == "invalid_input" and "gsm8k" in verdicts[2].feedback


def test_route_default_and_explicit_field():
    v = build({"type": "route", "field": "kind", "routes": {"a": {"type": "test_field_score", "field": "s"}},
               "default": {"type": "test_field_score", "field": "t"}})
    verdicts = v.verify_batch([sample(kind="a", s=0.1, t=0.9), sample(kind="b", s=0.1, t=0.9)])
    assert [x.score for x in verdicts] == [0.1, 0.9]
    assert verdicts[1].details["route"] == "default"


def test_route_preserves_order_across_groups():
    v = build({"type": "route", "routes": {"x": {"type": "test_field_score", "field": "s"},
                                           "y": {"type": "test_field_score", "field": "s"}}})
    rows = [sample(data_source="xy"[i % 2], s=i / 10) for i in range(7)]
    assert [x.score for x in v.verify_batch(rows)] == [i / 10 for i in range(7)]


def test_empty_composites_fail_at_build_time():
    with pytest.raises(SpecError):
        build({"type": "weighted", "parts": []})
    with pytest.raises(SpecError):
        build({"type": "route", "routes": {}})


def test_correct_comes_from_all_parts_or_the_named_one():
    parts = [{"type": "test_field_score", "field": "a", "name": "acc"},
             {"type": "test_field_score", "field": "b", "name": "fmt"}]
    row = sample(a=1.0, b=0.0)
    assert build({"type": "weighted", "parts": parts}).verify(row).correct is False
    assert build({"type": "weighted", "parts": parts, "correct_from": "acc"}).verify(row).correct is True
    with pytest.raises(SpecError, match="correct_from: unknown part 'nope'"):
        build({"type": "min", "parts": parts, "correct_from": "nope"})
