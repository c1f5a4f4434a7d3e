"""A GRPO run that learns nothing says so (issue 27, item 4): after ``no_signal_warn_after`` steps
whose groups all got equal rewards, one warning says why (all right, all wrong, or the reward
cannot judge) and what to change, with the config's numbers; every run ends with the share of
such steps and, with an eval set, held-out pass@1 before -> after (also in result.json)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from rewardsmith.adapters.grpo.config import GRPOConfig
from rewardsmith.adapters.grpo.no_signal import NoSignalWatch, StepSignal, diagnose_no_signal, flat_group_kind
from rewardsmith.verifiers.core import Verdict, Verifier
from rewardsmith.verifiers.registry import register

G = 4


def _step(step: int, groups: list[list[Verdict]], passed: list[list[bool]] | None = None,
          truncated: list[list[bool]] | None = None, flat: list[bool] | None = None) -> StepSignal:
    signal = StepSignal(step=step)
    for g, verdicts in enumerate(groups):
        signal.add_group(verdicts, passed[g] if passed else [bool(v.correct) for v in verdicts],
                         truncated[g] if truncated else [False] * len(verdicts), True if flat is None else flat[g])
    return signal


def right() -> Verdict:
    return Verdict(score=1.0, correct=True)


def wrong() -> Verdict:
    return Verdict(score=0.0, correct=False)


def no_answer() -> Verdict:
    return Verdict(score=0.0, correct=None, status="no_answer")


CONFIG = GRPOConfig(num_generations=G, temperature=0.7, max_completion_length=16)


def test_each_kind_of_group_without_signal_is_named():
    assert flat_group_kind([right()] * G, [True] * G) == "all_pass"
    assert flat_group_kind([wrong()] * G, [False] * G) == "all_fail"
    assert flat_group_kind([Verdict(score=0.0)] * G, [False] * G) == "all_fail"  # pays nothing, no flag
    assert flat_group_kind([no_answer(), Verdict(score=0.0, status="error")] * 2, [False] * G) == "unjudged"
    assert flat_group_kind([Verdict(score=0.5)] * G, [False] * G) == "constant"


def test_all_right_says_too_easy_and_what_to_change_with_the_numbers():
    window = [_step(s, [[right()] * G] * 2) for s in (1, 2, 3)]
    message = diagnose_no_signal(window, CONFIG)
    assert message.startswith("no learning signal for 3 steps in a row (steps 1-3): 6 of 6 groups")
    assert "every completion passed in 6 groups: the prompts are too easy" in message
    assert "harder prompts" in message and "skip_extreme_prompts: true" in message
    assert "num_generations (now 4)" in message and "temperature (now 0.7)" in message
    assert "rare failure" in message


def test_all_wrong_and_cut_short_says_raise_max_completion_length():
    window = [_step(s, [[wrong()] * G], truncated=[[True, True, True, False]]) for s in (4, 5, 6)]
    message = diagnose_no_signal(window, CONFIG)
    assert "every completion was judged wrong in 3 groups: the prompts are too hard" in message
    assert "75% of their completions were cut at max_completion_length 16" in message
    assert "What to change: raise max_completion_length (now 16)" in message
    assert "easier prompts" in message and "rare success" in message
    uncut = diagnose_no_signal([_step(1, [[wrong()] * G])], CONFIG)
    assert "too hard" in uncut and "max_completion_length" not in uncut


def test_a_reward_that_cannot_judge_says_which_statuses_and_their_fix():
    window = [_step(1, [[no_answer()] * 3 + [Verdict(score=0.0, status="invalid_input")]])]
    message = diagnose_no_signal(window, CONFIG)
    assert "the reward could not judge any completion in 1 groups (status no_answer 3, invalid_input 1)" in message
    assert "\\boxed{}" in message and "columns:" in message
    outage = diagnose_no_signal([_step(1, [[Verdict(score=0.0, status="error")] * G])], CONFIG)
    assert "fix the reward backend" in outage
    same = diagnose_no_signal([_step(1, [[Verdict(score=0.5)] * G])], CONFIG)
    assert "the same score (0.5)" in same and "does not tell these completions apart" in same


def test_the_main_reason_comes_first_and_the_others_are_counted():
    window = [_step(1, [[right()] * G, [right()] * G, [wrong()] * G])]
    message = diagnose_no_signal(window, CONFIG)
    assert "passed in 2 groups" in message and "(other groups: all wrong: 1)" in message


def test_a_step_with_signal_is_no_stretch():
    mixed = _step(2, [[right()] * G, [right(), wrong(), wrong(), right()]], flat=[True, False])
    assert mixed.share == 0.5 and not mixed.no_signal
    assert diagnose_no_signal([_step(1, [[right()] * G]), mixed], CONFIG) is None
    assert diagnose_no_signal([], CONFIG) is None


def test_the_watch_warns_once_per_stretch_and_again_after_signal_returns():
    watch = NoSignalWatch(CONFIG)  # no_signal_warn_after: 3 by default
    flat = lambda s: _step(s, [[right()] * G])  # noqa: E731
    said = [watch.observe(flat(s)) for s in (1, 2, 3, 4, 5)]
    assert [m is not None for m in said] == [False, False, True, False, False]
    assert "(steps 1-3)" in said[2]
    assert watch.observe(_step(6, [[right(), wrong(), right(), right()]], flat=[False])) is None
    again = [watch.observe(flat(s)) for s in (7, 8, 9)]
    assert again[:2] == [None, None] and "(steps 7-9)" in again[2]
    off = NoSignalWatch(GRPOConfig(no_signal_warn_after=0))
    assert all(off.observe(flat(s)) is None for s in range(1, 6))


# --------------------------------------------------------------------------- real short runs


@register("test_pays_all")
class PaysAll(Verifier):
    """Test-only: every completion is right (a reward that cannot teach anything)."""

    def _verify(self, sample):
        return Verdict(score=1.0, correct=True)


@register("test_pays_nothing")
class PaysNothing(Verifier):
    """Test-only: every completion is judged wrong."""

    def _verify(self, sample):
        return Verdict(score=0.0, correct=False)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from grpo_helpers import make_tiny_llama

    folder = tmp_path_factory.mktemp("no-signal")
    model = make_tiny_llama(folder / "tiny")
    lines = Path("data/arithmetic_train.jsonl").read_text().splitlines(keepends=True)
    (folder / "train.jsonl").write_text("".join(lines[:8]))
    (folder / "heldout.jsonl").write_text("".join(lines[8:10]))
    return model, folder


def _run(tiny, out: Path, reward: str, **extra):
    from rewardsmith.adapters.grpo.loop import build_trainer

    model, folder = tiny
    config = GRPOConfig(model=model, output_dir=str(out), device="cpu", max_steps=3, prompts_per_step=2,
                        num_generations=4, max_completion_length=6, save_every=0, save_model=False,
                        learning_rate=1e-3, reward=reward, **extra)
    return build_trainer(config, folder / "train.jsonl", progress=False).run()


@pytest.mark.slow
@pytest.mark.parametrize(("reward", "says"), [("test_pays_all", "every completion passed in 6 groups"),
                                               ("test_pays_nothing", "every completion was judged wrong in 6 groups")])
def test_three_steps_without_signal_warn_with_the_reason(tiny, tmp_path, caplog, reward, says):
    caplog.set_level(logging.INFO, logger="rewardsmith")
    result = _run(tiny, tmp_path / "run", reward)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("no learning signal for 3 steps in a row (steps 1-3)") and says in warnings[0]
    assert "num_generations (now 4)" in warnings[0]
    assert result.no_signal_steps == 3
    assert "3 of 3 steps (100%) without learning signal" in caplog.messages[-1]
    assert json.loads((tmp_path / "run" / "result.json").read_text())["no_signal_steps"] == 3


@pytest.mark.slow
def test_a_run_with_signal_does_not_warn_and_ends_with_eval_before_and_after(tiny, tmp_path, caplog):
    import grpo_helpers  # noqa: F401  (registers test_text_length: a reward that varies on random text)

    caplog.set_level(logging.INFO, logger="rewardsmith")
    _, folder = tiny
    result = _run(tiny, tmp_path / "run", "test_text_length", eval_data=str(folder / "heldout.jsonl"))
    assert not [r for r in caplog.records if r.levelno == logging.WARNING and "no learning signal" in r.getMessage()]
    assert result.no_signal_steps == 0
    last = caplog.messages[-1]
    before, after = result.initial_eval, result.final_eval
    assert f"eval pass@1 {before['pass_at_1']:.3f} → {after['pass_at_1']:.3f}" in last
    assert f"answered {before['answered']:.3f} → {after['answered']:.3f} (2 prompts)" in last
    assert "0 of 3 steps (0%) without learning signal" in last
    saved = json.loads((tmp_path / "run" / "result.json").read_text())
    assert saved["initial_eval"] == before and saved["final_eval"] == after
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert log[0]["step"] == 0 and log[0]["eval_pass_at_1"] == before["pass_at_1"]


def test_with_dynamic_sampling_every_rounds_groups_count(tiny, tmp_path):
    """Dynamic sampling trains only on groups with variance, so the batch's zero_variance_share says
    nothing when none had any: the groups of every round are what the rule counts."""
    from grpo_helpers import ReplayGenerator

    from rewardsmith.adapters.grpo.data import load_prompts
    from rewardsmith.adapters.grpo.loop import GRPOTrainer
    from rewardsmith.reward_models.loading import load_tokenizer
    from rewardsmith.verifiers.registry import build

    model, folder = tiny
    tok = load_tokenizer(model, padded=True)
    prompts = load_prompts(folder / "train.jsonl", tok, "prompt", "auto", 200)
    config = GRPOConfig(model=model, output_dir=str(tmp_path / "out"), device="cpu", prompts_per_step=2,
                        num_generations=G, max_completion_length=4, dynamic_sampling=True, max_resample_rounds=2,
                        no_signal_warn_after=1, reward="test_pays_all")
    generator = ReplayGenerator([[tok.eos_token_id]] * (2 * G), {tok.eos_token_id})
    trainer = GRPOTrainer(config, prompts, reward=build("test_pays_all"), tokenizer=tok, generator=generator,
                          progress=False)
    record = trainer.train_step()
    assert record["rows_in_loss"] == 0 and record["sampling_rounds"] == 3
    assert trainer.signal.groups == 6 and trainer.signal.kinds == {"all_pass": 6}
    assert trainer.counters["no_signal_steps"] == 1
