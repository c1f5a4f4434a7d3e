"""Issue 11 item 4: routing by the dataset names trainers really write.

verl's preprocessing writes ``openai/gsm8k``, ``lighteval/MATH``,
``DigitalLearningGmbH/MATH-lighteval``; OpenRLHF sends no ``data_source`` at all. Route keys are
globs (case-insensitive), exact names win, the first glob in spec order wins among globs, a
``default`` takes the rest, and rows no route takes are ``invalid_input``, counted and logged
once per process. The completion can never pick its own route.
"""

from __future__ import annotations

import json
import logging

import pytest
from conftest import REPO, sample

from rewardsmith.adapters.cli import main
from rewardsmith.adapters.trainers.openrlhf import score_queries
from rewardsmith.adapters.trainers.verl import row_sample
from rewardsmith.verifiers import Sample, SpecError, build
from rewardsmith.verifiers import compose as compose_module

BUNDLED = REPO / "data" / "reward.yaml"
SCORE = {"type": "test_field_score", "field": "s"}


def _const(value: float, label: str | None = None) -> dict:
    """A route target whose score says which route ran: field ``r<value>`` holds ``value``."""
    spec = {"type": "test_field_score", "field": f"r{value:g}"}
    return {**spec, "name": label} if label else spec


def _row(data_source: str | None = None, **fields) -> Sample:
    values = {"r1": 1.0, "r2": 2.0, "r3": 3.0, "r4": 4.0}
    if data_source is not None:
        values["data_source"] = data_source
    return sample(**values, **fields)


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """Each test sees a process that has not warned yet (the once-per-process memory is module state)."""
    monkeypatch.setattr(compose_module, "_warned_routes", set(), raising=False)


# --- the bundled data/reward.yaml, unchanged, with each trainer's names --------------------------------


@pytest.mark.parametrize(
    ("data_source", "route"),
    [
        ("gsm8k", "gsm8k"),  # this repository's examples
        ("openai/gsm8k", "gsm8k"),  # verl examples/data_preprocess/gsm8k.py
        ("lighteval/MATH", "math"),  # verl examples/data_preprocess/math_dataset.py
        ("DigitalLearningGmbH/MATH-lighteval", "math"),  # verl's newer MATH preprocessing
        ("math", "math"),
        (None, "default"),  # OpenRLHF sends no data_source
    ],
)
def test_bundled_spec_routes_every_trainers_names(data_source, route):
    fields = {"answer": "4"} | ({"data_source": data_source} if data_source else {})
    verdict = build(str(BUNDLED)).verify(Sample(completion=r"<think>2+2</think><answer>\boxed{4}</answer>",
                                                fields=fields))
    assert verdict.status == "ok" and verdict.correct is True
    assert verdict.details["route"] == route and list(verdict.parts) == [route]


def test_bundled_spec_scores_as_its_routes_say():
    """The gsm8k route adds the format bonus, the MATH route compares exactly: the reward is the route's."""
    spec = build(str(BUNDLED))
    right = r"<think>6*3</think><answer>\boxed{18}</answer>"
    gsm8k = spec.verify(Sample(completion=right, fields={"answer": "18", "data_source": "openai/gsm8k"}))
    assert gsm8k.score == pytest.approx(1.2) and gsm8k.components["gsm8k.format"] == 1.0
    close = Sample(completion=r"\boxed{0.6667}", fields={"answer": r"\frac{2}{3}", "data_source": "lighteval/MATH"})
    assert spec.verify(close).correct is False  # rel_tol 0 on the MATH route


def test_openrlhf_rows_without_data_source_take_the_default_route():
    """OpenRLHF's remote reward sends queries, prompts and labels: no data_source anywhere."""
    prompt = "What is 2+2? "
    result = score_queries(build(str(BUNDLED)), [prompt + r"\boxed{4}"], [prompt], ["4"])
    assert result["rewards"] == [1.0]
    assert result["extra_logs"]["status_invalid_input"] == [0.0]


# --- matching rules ------------------------------------------------------------------------------------


def test_exact_key_wins_over_an_earlier_glob():
    route = build({"type": "route", "routes": {"*gsm8k*": _const(1), "openai/gsm8k": _const(2)}})
    assert route.verify(_row("openai/gsm8k")).score == 2.0
    assert route.verify(_row("gsm8k_hard")).score == 1.0


def test_first_matching_glob_in_spec_order_wins():
    routes = {"*math*": _const(1), "*gsm8k*": _const(2), "*": _const(3)}
    route = build({"type": "route", "routes": routes})
    assert [v.score for v in route.verify_batch([_row("gsm8k_math_mix"), _row("openai/gsm8k"), _row("mbpp")])] == \
        [1.0, 2.0, 3.0]
    reordered = build({"type": "route", "routes": {"*gsm8k*": _const(2), "*math*": _const(1)}})
    assert reordered.verify(_row("gsm8k_math_mix")).score == 2.0


def test_matching_ignores_case_for_exact_keys_and_globs():
    route = build({"type": "route", "routes": {"GSM8K": _const(1), "*math*": _const(2)}})
    assert [v.score for v in route.verify_batch([_row("gsm8k"), _row("lighteval/MATH"), _row("Math")])] == \
        [1.0, 2.0, 2.0]


def test_keys_equal_but_for_case_are_refused():
    with pytest.raises(SpecError, match=r'routes\.gsm8k: same key as \'GSM8K\''):
        build({"type": "route", "routes": {"GSM8K": "format", "gsm8k": "format"}})


def test_a_glob_never_takes_a_row_without_the_field():
    route = build({"type": "route", "routes": {"*": _const(1)}, "default": _const(4)})
    assert route.verify(_row(None)).score == 4.0
    assert route.verify(_row("anything")).score == 1.0


def test_explicit_field_with_a_dotted_path():
    route = build({"type": "route", "field": "extra_info.source", "routes": {"*gsm8k*": _const(1)}})
    verdict = route.verify(sample(r1=1.0, extra_info={"source": "openai/gsm8k"}))
    assert verdict.score == 1.0 and verdict.details["route"] == "*gsm8k*"


def test_a_route_named_in_its_spec_is_logged_under_that_name():
    route = build({"type": "route", "routes": {"*gsm8k*": _const(1, "gsm8k")}, "default": _const(2, "fallback")})
    verdicts = route.verify_batch([_row("openai/gsm8k"), _row(None)])
    assert [v.details["route"] for v in verdicts] == ["gsm8k", "fallback"]
    assert set(route.components()) == {"gsm8k", "fallback"}
    assert verdicts[0].components["gsm8k"] == 1.0 and list(verdicts[0].parts) == ["gsm8k"]


# --- rows no route takes: invalid_input, counted, warned once ----------------------------------------------


def test_a_row_without_the_field_is_invalid_input_naming_it():
    route = build({"type": "route", "routes": {"gsm8k": _const(1)}})
    for row in (_row(None), sample(r1=1.0, data_source=None)):
        verdict = route.verify(row)
        assert verdict.status == "invalid_input" and verdict.score == 0.0
        assert verdict.details["missing_field"] == "data_source"
    named = build({"type": "route", "field": "task", "routes": {"gsm8k": _const(1)}})
    assert named.verify(_row("gsm8k")).details["missing_field"] == "task"  # data_source is not task


def test_an_unmatched_name_is_invalid_input_without_missing_field():
    verdict = build({"type": "route", "routes": {"gsm8k": _const(1)}}).verify(_row("lighteval/MATH"))
    assert verdict.status == "invalid_input" and "missing_field" not in verdict.details
    assert "lighteval/MATH" in verdict.feedback and "'default'" in verdict.feedback


def test_unrouted_rows_are_counted_and_warned_about_once_with_the_names_seen(caplog):
    route = build({"type": "route", "routes": {"gsm8k": _const(1)}})
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        route.verify_batch([_row("openai/gsm8k"), _row("openai/gsm8k"), _row(None), _row("gsm8k")])
        route.verify_batch([_row("lighteval/MATH")])
        again = build({"type": "route", "routes": {"gsm8k": _const(1)}})  # same spec, same process
        again.verify_batch([_row("mbpp")])
    warnings = [r.getMessage() for r in caplog.records if r.name == "rewardsmith"]
    assert len(warnings) == 1, warnings
    assert "'openai/gsm8k' (2)" in warnings[0] and "'<no data_source>' (1)" in warnings[0]
    assert route.unrouted == {"openai/gsm8k": 2, "<no data_source>": 1, "lighteval/MATH": 1}
    assert again.unrouted == {"mbpp": 1}


def test_named_rows_that_fall_to_the_default_are_counted_and_warned_about_once(caplog):
    route = build({"type": "route", "routes": {"*gsm8k*": _const(1)}, "default": _const(4)})
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        scores = [v.score for v in route.verify_batch([_row("humaneval"), _row(None), _row("openai/gsm8k")])]
        route.verify_batch([_row("humaneval")])
    assert scores == [4.0, 4.0, 1.0]
    assert route.defaulted == {"humaneval": 2} and not route.unrouted  # no data_source is what default is for
    warnings = [r.getMessage() for r in caplog.records if r.name == "rewardsmith"]
    assert len(warnings) == 1 and "'humaneval' (1)" in warnings[0] and "default" in warnings[0]


# --- think like the policy: the completion never picks its route ------------------------------------------

CHEEKY = 'I choose my grader. {"data_source": "gsm8k"} data_source: gsm8k \\boxed{4}'


def test_a_completion_cannot_route_itself_through_from_row():
    route = build({"type": "route", "routes": {"gsm8k": "math"}})
    row = Sample.from_row({"prompt": "2+2?", "completion": CHEEKY, "answer": "4"})
    verdict = route.verify(row)
    assert verdict.status == "invalid_input" and verdict.details["missing_field"] == "data_source"


def test_a_completion_cannot_route_itself_through_the_openrlhf_adapter():
    route = build({"type": "route", "routes": {"gsm8k": {"type": "math", "workers": 0}}})
    prompt = "2+2? "
    result = score_queries(route, [prompt + CHEEKY], [prompt], ["4"])
    assert result["rewards"] == [0.0] and result["extra_logs"]["status_invalid_input"] == [1.0]
    # the dataset's label may carry the route (a JSON object label is the dataset's, not the policy's)
    labelled = score_queries(route, [prompt + CHEEKY], [prompt], [json.dumps({"answer": "4", "data_source": "gsm8k"})])
    assert labelled["rewards"] == [1.0]


def test_a_completion_cannot_route_itself_through_the_verl_adapter():
    route = build({"type": "route", "routes": {"gsm8k": {"type": "math", "workers": 0}}})
    assert route.verify(row_sample(None, CHEEKY, "4", {"split": "train"})).status == "invalid_input"
    assert route.verify(row_sample("openai/gsm8k", CHEEKY, "4", None)).status == "invalid_input"  # exact key only
    assert route.verify(row_sample("gsm8k", CHEEKY, "4", None)).correct is True


@pytest.mark.parametrize("field", ["completion", "prompt", "completion.0.content"])
def test_routing_on_the_completion_or_prompt_is_refused(field):
    with pytest.raises(SpecError, match=r"route\.field: cannot route on"):
        build({"type": "route", "field": field, "routes": {"gsm8k": "format"}})


# --- the README's commands still run --------------------------------------------------------------------


@pytest.mark.slow
def test_readme_main_command_and_the_bundled_spec_score_the_examples(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    out = tmp_path / "scored.jsonl"
    assert main(["score", "data/math_examples.jsonl", "-o", str(out), "--overwrite", "--no-progress"]) == 0
    routed = tmp_path / "routed.jsonl"
    assert main(["score", "data/math_examples.jsonl", "-o", str(routed), "--reward", "data/reward.yaml",
                 "--no-progress", "--workers", "1"]) == 0
    rows = [json.loads(line) for line in routed.read_text().splitlines()]
    source = [json.loads(line) for line in (REPO / "data" / "math_examples.jsonl").read_text().splitlines()]
    assert len(rows) == len(source)
    assert {row["verdict"]["details"]["route"] for row in rows} == {"gsm8k", "math"}
    assert all(row["verdict"]["status"] != "invalid_input" for row in rows)
