"""The TRL adapter: reward-function callables, their policies and logging, the pair exporters,
and one real GRPOTrainer run on CPU with SmolLM2-135M-Instruct."""

from __future__ import annotations

import asyncio
import inspect
import pickle

import pytest

from rewardsmith.adapters.trainers.trl import (
    AsyncRewardFunc,
    RewardError,
    async_reward_funcs,
    dpo_pairs,
    preference_pairs,
    reward_funcs,
    reward_weights,
)
from rewardsmith.verifiers import Sample, Verdict, Verifier, build, register

MATH_FORMAT = {"type": "weighted", "parts": [{"type": "math", "workers": 0}, "format"], "weights": [1.0, 0.5]}
GOOD = "<think>2+2</think><answer>4</answer>"
BAD = "I think it is 5"


@register("test_trl_erroring")
class Erroring(Verifier):
    """Test-only: ``status=error`` for completions containing "boom", else score 1."""

    name = "erroring"

    def verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        return [
            Verdict(score=0.0, status="error", feedback="backend down") if "boom" in s.completion_text
            else Verdict(score=1.0, correct=True)
            for s in samples
        ]


class Log:
    def __init__(self) -> None:
        self.extra: dict[str, list] = {}
        self.metrics: dict[str, float] = {}

    def log_extra(self, column: str, values: list) -> None:
        self.extra[column] = values

    def log_metric(self, name: str, value: float) -> None:
        self.metrics[name] = value


def test_one_callable_per_component_with_distinct_names():
    funcs = reward_funcs(MATH_FORMAT)
    assert [f.__name__ for f in funcs] == ["rewardsmith_math", "rewardsmith_format"]
    assert [f.__name__ for f in reward_funcs("math")] == ["rewardsmith_math"]
    assert [f.__name__ for f in reward_funcs(MATH_FORMAT, split=False)] == ["rewardsmith_weighted"]
    assert reward_weights(MATH_FORMAT) == [1.0, 0.5]
    assert reward_weights(MATH_FORMAT, split=False) == [1.0]  # one function, one weight: what TRL accepts
    assert reward_weights("format") == [1.0]


@pytest.mark.parametrize("kind", ["gate", "min", "max", "route"])
def test_a_spec_that_is_not_a_sum_is_one_callable(kind):
    parts = [{"type": "format"}, {"type": "math", "workers": 0}]
    spec = {"gate": {"type": "gate", "when": "format", "then": {"type": "math", "workers": 0}},
            "min": {"type": "min", "parts": parts}, "max": {"type": "max", "parts": parts},
            "route": {"type": "route", "routes": {"gsm8k": {"type": "math", "workers": 0}, "fmt": "format"}}}[kind]
    funcs = reward_funcs(spec)
    assert [f.__name__ for f in funcs] == [f"rewardsmith_{kind}"] and reward_weights(spec) == [1.0]
    wrong = "<think>x</think><answer>5</answer>"  # well formatted, wrong: a summed gate would pay it 1
    prompts, completions = ["q"] * 3, [GOOD, wrong, "4"]
    kwargs = {"answer": ["4"] * 3, "data_source": ["gsm8k", "gsm8k", "fmt"]}
    expected = [v.score for v in build(spec).verify_batch(
        [Sample(prompt="q", completion=c, fields={"answer": "4", "data_source": d})
         for c, d in zip(completions, kwargs["data_source"], strict=True)])]
    assert funcs[0](prompts, completions, **kwargs) == expected
    if kind == "gate":
        assert expected[1] == 0.0


def test_scores_text_completions_from_the_answer_column():
    math, fmt = reward_funcs(MATH_FORMAT)
    prompts, completions = ["2+2?", "2+2?"], [GOOD, BAD]
    kwargs = {"answer": ["4", "4"], "completion_ids": [[1], [2]], "trainer_state": None}
    assert math(prompts, completions, **kwargs) == [1.0, 0.0]
    assert fmt(prompts, completions, **kwargs) == [1.0, 0.0]


def test_conversational_prompts_and_completions():
    (math,) = reward_funcs({"type": "math", "workers": 0})
    prompts = [[{"role": "user", "content": "2+2?"}]] * 2
    completions = [[{"role": "assistant", "content": GOOD}], [{"role": "assistant", "content": BAD}]]
    assert math(prompts, completions, answer=["4", "4"]) == [1.0, 0.0]


def test_column_renames():
    (math,) = reward_funcs({"type": "math", "workers": 0}, columns={"answer": "solution"})
    assert math(["q"], [GOOD], solution=["4"]) == [1.0]
    (plain,) = reward_funcs({"type": "math", "workers": 0})
    assert plain(["q"], [GOOD], solution=["4"]) == [0.0]  # no answer column: invalid_input, 0


def test_whole_spec_scored_once_per_batch():
    funcs = reward_funcs(MATH_FORMAT)
    scorer = funcs[0].scorer
    assert all(f.scorer is scorer for f in funcs)
    prompts, completions = ["q"] * 3, [GOOD, BAD, GOOD]
    for f in funcs:
        f(prompts, completions, answer=["4"] * 3)
    assert scorer.batches == 1
    funcs[0](prompts, list(completions), answer=["4"] * 3)  # a new batch (new list) is scored again
    assert scorer.batches == 2


@pytest.mark.parametrize(("policy", "expected"), [("none", [1.0, None]), ("zero", [1.0, 0.0])])
def test_on_error_policies(policy, expected):
    (func,) = reward_funcs("test_trl_erroring", on_error=policy)
    assert func(["p", "p"], ["fine", "boom"]) == expected


def test_on_error_raise():
    (func,) = reward_funcs("test_trl_erroring", on_error="raise")
    with pytest.raises(RewardError, match="backend down"):
        func(["p"], ["boom"])
    with pytest.raises(ValueError, match="on_error"):
        reward_funcs("math", on_error="skip")


def test_an_error_in_one_part_is_an_error_in_every_split_callable():
    spec = {"type": "weighted", "parts": ["test_trl_erroring", "format"]}
    funcs = reward_funcs(spec, on_error="zero")
    assert [f.__name__ for f in funcs] == ["rewardsmith_erroring", "rewardsmith_format"]
    erroring, fmt = funcs
    assert erroring(["p"], ["boom"]) == [0.0]
    assert fmt(["p"], ["boom"]) == [0.0]
    erroring, fmt = reward_funcs(spec)  # on_error none: TRL must not add the format part's reward
    completions = ["<think>a</think><answer>boom</answer>", "<think>a</think><answer>1</answer>"]
    assert erroring(["p", "p"], completions) == [None, 1.0]
    assert fmt(["p", "p"], completions) == [None, 1.0]


def test_log_extra_and_log_metric():
    math, fmt = reward_funcs(MATH_FORMAT)
    log = Log()
    kwargs = {"answer": ["4", "4"], "log_extra": log.log_extra, "log_metric": log.log_metric}
    math(["q", "q"], [GOOD, "no numbers here"], **kwargs)
    fmt(["q", "q"], [GOOD, "no numbers here"], **kwargs)
    assert log.extra["rewardsmith_math/status"] == ["ok", "no_answer"]
    assert log.extra["rewardsmith_math/extracted"] == ["4", ""]
    assert log.extra["rewardsmith_format/status"] == ["ok", "ok"]
    assert log.metrics["rewardsmith_math/status/ok"] == 0.5
    assert log.metrics["rewardsmith_math/status/no_answer"] == 0.5
    assert log.metrics["rewardsmith_format/status/ok"] == 1.0


def test_a_batch_without_the_answer_column_warns_once_naming_the_fix(caplog):
    """Item 5: a dataset whose gold sits in another column trains on zeros; say so once, with the fix."""
    (math,) = reward_funcs({"type": "math", "workers": 0})
    log = Log()
    with caplog.at_level("WARNING", logger="rewardsmith"):
        rewards = math(["q", "q"], [r"\boxed{4}", r"\boxed{5}"], solution=["4", "5"], log_metric=log.log_metric)
        assert rewards == [0.0, 0.0]
        math(["q"], [r"\boxed{4}"], solution=["4"])
    warnings = [r.getMessage() for r in caplog.records if r.name == "rewardsmith"]
    assert len(warnings) == 1
    assert "'answer'" in warnings[0] and "columns={'answer': '<your column>'}" in warnings[0]
    assert log.metrics["rewardsmith_math/status/invalid_input"] == 1.0


def test_a_good_batch_does_not_warn(caplog):
    (math,) = reward_funcs({"type": "math", "workers": 0})
    with caplog.at_level("WARNING", logger="rewardsmith"):
        math(["q", "q"], [r"\boxed{4}", r"\boxed{5}"], answer=["4", "4"])
    assert not [r for r in caplog.records if r.name == "rewardsmith"]


def test_columns_may_be_dotted_paths_into_nested_columns():
    (math,) = reward_funcs({"type": "math", "workers": 0}, columns={"answer": "reward_model.ground_truth"})
    nested = [{"ground_truth": "4", "style": "rule"}, {"ground_truth": "7", "style": "rule"}]
    rewards = math(["q", "q"], [r"\boxed{4}", r"\boxed{4}"], reward_model=nested)
    assert rewards == [1.0, 0.0]


def test_a_mapped_column_a_row_lacks_never_falls_back_to_the_rows_own_field():
    """columns={"answer": "solution"} on a rollout dataset whose own `answer` column holds the model's
    extracted answer: without `solution`, grading must not use that column (it would pay the model
    for agreeing with itself)."""
    (math,) = reward_funcs({"type": "math", "workers": 0}, columns={"answer": "reward_model.ground_truth"})
    rewards = math(["q", "q"], [r"\boxed{9}", r"\boxed{4}"], answer=["9", "4"],
                   reward_model=[{"style": "rule"}, {"ground_truth": "4"}])
    assert rewards == [0.0, 1.0]


def test_a_label_column_is_spread_into_fields_like_verls_ground_truth():
    """One JSON column carries nested fields through a datasets table unchanged; a plain label is the answer."""
    (func,) = reward_funcs("test_field_score", label_column="label")
    labels = ['{"s": 0.25, "st": "ok"}', {"s": 0.75}, None]
    assert func(["p"] * 3, ["c"] * 3, label=labels, s=[1.0, 1.0, 0.5]) == [0.25, 0.75, 0.5]  # the label wins
    (math,) = reward_funcs({"type": "math", "workers": 0}, label_column="label")
    assert math(["q", "q"], [GOOD, GOOD], label=["4", '{"answer": "5"}']) == [1.0, 0.0]
    copy = pickle.loads(pickle.dumps(func))
    assert copy(["p"], ["c"], label=['{"s": 0.5}']) == [0.5]


def test_the_error_policy_is_the_shared_one():
    """Item 12: one policy, one exception type, for every adapter."""
    from rewardsmith.adapters import on_error as policy

    assert RewardError is policy.RewardError
    with pytest.raises(ValueError, match="on_error must be one of none, zero, raise"):
        reward_funcs("math", on_error="skip")


def test_pickling_keeps_the_shared_scorer():
    funcs = reward_funcs(MATH_FORMAT)
    funcs[0](["q"], [GOOD], answer=["4"])  # fill the process-local cache first
    copies = pickle.loads(pickle.dumps(funcs))
    assert [f.__name__ for f in copies] == ["rewardsmith_math", "rewardsmith_format"]
    assert copies[0].scorer is copies[1].scorer
    assert copies[0](["q"], [GOOD], answer=["4"]) == [1.0]


def test_async_variant_matches_trl_detection():
    pytest.importorskip("trl")
    from trl.trainer.utils import get_callable_name, is_async_callable

    funcs = async_reward_funcs(MATH_FORMAT)
    assert all(isinstance(f, AsyncRewardFunc) and is_async_callable(f) for f in funcs)
    assert [get_callable_name(f) for f in funcs] == ["rewardsmith_math", "rewardsmith_format"]
    assert not is_async_callable(reward_funcs(MATH_FORMAT)[0])
    assert inspect.iscoroutinefunction(type(funcs[0]).__call__)

    prompts, completions = ["q", "q"], [GOOD, BAD]

    async def gather():  # as TRL does: every async reward function of a step at once
        return await asyncio.gather(*(f(prompts, completions, answer=["4", "4"]) for f in funcs))

    assert asyncio.run(gather()) == [[1.0, 0.0], [1.0, 0.0]]
    assert funcs[0].scorer.batches == 1
    assert reward_funcs(MATH_FORMAT, asynchronous=True)[0].__class__ is AsyncRewardFunc


# --------------------------------------------------------------------------- exporters

ROWS = [
    {"prompt": "A?", "completion": "a1", "reward": 0.2},
    {"prompt": "A?", "completion": "a2", "reward": 1.0},
    {"prompt": "A?", "completion": "a3", "reward": 0.0},
    {"prompt": "A?", "completion": "a4", "reward": None},  # error: never a side of a pair
    {"prompt": "B?", "completion": "b1", "reward": 0.5},  # all tie: no pair
    {"prompt": "B?", "completion": "b2", "reward": 0.5},
    {"prompt": "C?", "completion": "c1", "reward": 1.0},  # a group of one: no pair
]


def test_dpo_pairs_best_vs_worst_skipping_ties():
    assert dpo_pairs(ROWS) == [{"prompt": "A?", "chosen": "a2", "rejected": "a3"}]


def test_reward_trainer_pairs_share_the_prompt():
    assert preference_pairs(ROWS) == [{"chosen": "A?a2", "rejected": "A?a3"}]


def test_exporters_keep_chat_format_and_custom_keys():
    user = [{"role": "user", "content": "A?"}]
    rows = [
        {"q": user, "out": [{"role": "assistant", "content": "x"}], "r": 1},
        {"q": user, "out": [{"role": "assistant", "content": "y"}], "r": 0},
    ]
    keys = {"prompt_key": "q", "completion_key": "out", "reward_key": "r"}
    assert dpo_pairs(rows, **keys) == [{"prompt": user, "chosen": rows[0]["out"], "rejected": rows[1]["out"]}]
    (pair,) = preference_pairs(rows, **keys)
    assert pair["chosen"] == [*user, {"role": "assistant", "content": "x"}]
    assert pair["rejected"] == [*user, {"role": "assistant", "content": "y"}]


# --------------------------------------------------------------------------- a real GRPOTrainer run


@pytest.mark.slow
def test_grpo_trainer_runs_with_our_rewards(tmp_path, smollm2_dir):
    pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    from trl import GRPOConfig, GRPOTrainer

    model_dir = smollm2_dir

    seen: list[tuple[str, list]] = []

    def spy(func):
        def wrapper(prompts, completions, **kwargs):
            seen.append((func.__name__, list(kwargs["answer"])))
            return func(prompts, completions, **kwargs)

        wrapper.__name__ = func.__name__
        return wrapper

    funcs = reward_funcs({"type": "weighted", "parts": [{"type": "math", "workers": 0}, {"type": "format"}]})
    problems = [(2, 3), (4, 5), (1, 1), (7, 2)]
    dataset = datasets.Dataset.from_list([
        {"prompt": [{"role": "user", "content": f"What is {a}+{b}? Reply in <answer></answer>."}], "answer": str(a + b)}
        for a, b in problems
    ])
    args = GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, bf16=False, per_device_train_batch_size=4, num_generations=4,
        max_completion_length=16, max_steps=2, report_to=[], logging_steps=1, save_strategy="no", seed=0,
    )
    trainer = GRPOTrainer(model=model_dir, reward_funcs=[spy(f) for f in funcs], args=args, train_dataset=dataset)
    trainer.train()

    assert trainer.state.global_step == 2
    answers = {str(a + b) for a, b in problems}
    assert {name for name, _ in seen} == {"rewardsmith_math", "rewardsmith_format"}
    assert all(batch and set(batch) <= answers for _, batch in seen)
    logged = [h for h in trainer.state.log_history if "rewards/rewardsmith_math/mean" in h]
    assert len(logged) == 2
    assert all("rewards/rewardsmith_format/mean" in h for h in logged)
    assert funcs[0].scorer.batches == 2  # both parts scored by one verification per step


def test_one_callable_logs_its_components_as_metrics():
    spec = {"type": "gate", "when": "format", "then": {"type": "math", "workers": 0}}
    (whole,) = reward_funcs(spec)
    log = Log()
    assert whole(["q", "q"], [GOOD, "4"], answer=["4", "4"], log_metric=log.log_metric) == [1.0, 0.0]
    assert log.metrics["rewardsmith_gate/component/format"] == 0.5
    assert log.metrics["rewardsmith_gate/component/math"] == 1.0  # only the row that reached it


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gate", "min", "weighted"])
def test_grpo_trainer_total_reward_is_the_specs(tmp_path, kind, smollm2_dir):
    """What TRL computes from our callables (its per-function rewards, weighted by its own
    reward_weights, nansum) equals build(spec).verify on the same rows. The parts score a
    dataset column (conftest's test_field_score), so the rewards differ by row whatever the
    tiny model writes: a gate whose parts TRL summed would pay rows the gate refuses."""
    pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    import torch
    from trl import GRPOConfig, GRPOTrainer

    model_dir = smollm2_dir
    s_part, t_part = {"type": "test_field_score", "field": "s"}, {"type": "test_field_score", "field": "t"}
    spec = {"gate": {"type": "gate", "when": s_part, "then": t_part},
            "min": {"type": "min", "parts": [s_part, t_part]},
            "weighted": {"type": "weighted", "parts": [s_part, t_part], "weights": [1.0, 0.5]}}[kind]
    rows = {"Say hi.": (0.2, 0.9), "Say yes.": (0.9, 0.3), "Say no.": (1.0, 1.0), "Say ok.": (0.0, 0.6)}
    dataset = datasets.Dataset.from_list([{"prompt": [{"role": "user", "content": q}], "s": s_, "t": t_}
                                          for q, (s_, t_) in rows.items()])
    args = GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, bf16=False, per_device_train_batch_size=8, num_generations=2,
        max_completion_length=8, max_steps=1, report_to=[], logging_steps=1, save_strategy="no", seed=0,
        reward_weights=reward_weights(spec),
    )
    trainer = GRPOTrainer(model=model_dir, reward_funcs=reward_funcs(spec), args=args, train_dataset=dataset)
    trainer.train()
    logs = trainer._logs
    names = list(logs["rewards"])
    assert len(names) == (2 if kind == "weighted" else 1)
    per_func = torch.tensor([list(logs["rewards"][name]) for name in names], dtype=torch.float).T
    totals = (per_func * trainer.reward_weights.unsqueeze(0)).nansum(dim=1).tolist()
    prompts, completions = list(logs["prompt"]), list(logs["completion"])
    assert len(totals) == len(completions) >= 4
    fields = [dict(zip("st", rows[p[-1]["content"]], strict=True)) for p in prompts]
    expected = [v.score for v in build(spec).verify_batch(
        [Sample(prompt=p, completion=c, fields=f) for p, c, f in zip(prompts, completions, fields, strict=True)])]
    assert totals == pytest.approx(expected), (names, totals, expected)
    assert len(set(expected)) > 1  # the rows really differ: the comparison can fail
