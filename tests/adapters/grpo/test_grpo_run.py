"""Whole GRPO runs on CPU: ``rewardsmith train grpo`` for two steps with SmolLM2 (the logs, the
samples, the checkpoint and the saved model are checked), and a run killed mid-way that resumes
to the same weights and log as one that was not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from grpo_helpers import make_tiny_llama  # noqa: E402

from rewardsmith.adapters.grpo.config import GRPOConfig  # noqa: E402
from rewardsmith.adapters.grpo.loop import build_trainer  # noqa: E402
from rewardsmith.reward_models.checkpoint import CHECKPOINTS, DONE_FILE, STATE_FILE  # noqa: E402

pytestmark = pytest.mark.slow

STEP_KEYS = {"reward_mean", "reward_std", "pass_rate", "zero_variance_share", "informative_share", "length_mean",
             "clipped_share", "length_passing", "length_failing", "loss", "entropy", "clip_ratio", "kl",
             "sampler_logp_gap_mean", "sampler_logp_gap_max", "time_generate", "time_score", "time_reference",
             "time_update", "time_sync", "step_time", "generate_tokens_per_s", "grad_norm", "lr", "reward/math",
             "invalid_rows", "invalid_rows_total", "error_rows", "error_rows_total"}


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.timeout(900)
def test_cli_two_steps_with_smollm2_writes_the_log_samples_checkpoint_and_model(tmp_path):
    from rewardsmith.adapters.cli import main

    heldout = tmp_path / "heldout.jsonl"
    heldout.write_text("".join(Path("data/arithmetic_heldout.jsonl").read_text().splitlines(keepends=True)[:3]))
    config = tmp_path / "grpo.yaml"
    config.write_text("prompts_per_step: 2\nnum_generations: 4\nmax_completion_length: 16\nbeta: 0.04\n"
                      "num_iterations: 2\ntemperature: 0.8\nsave_every: 1\nsamples_per_step: 3\n"
                      "reward: {type: weighted, parts: [math, {type: format, tags: [answer], mode: soft}], "
                      "weights: [1.0, 0.1], correct_from: math}\n")
    out = tmp_path / "run"
    code = main(["train", "grpo", "--model", "smollm2", "--data", "data/arithmetic_train.jsonl", "--eval-data",
                 str(heldout), "--config", str(config), "--max-steps", "2", "--learning-rate", "1e-5", "-o", str(out),
                 "--no-progress"])
    assert code == 0
    records = _records(out / "log.jsonl")
    steps = [r for r in records if "reward_mean" in r]
    evals = [r for r in records if "eval_pass_at_1" in r]
    assert [r["step"] for r in steps] == [1, 2]
    assert [r["step"] for r in evals] == [0, 2] and all(r["eval_prompts"] == 3 for r in evals)
    for record in steps:
        missing = STEP_KEYS - record.keys() - {"reward/math"}
        assert not missing, missing
        assert any(k.startswith("reward/") for k in record)  # per-component means of the weighted spec
        assert record["rows_in_loss"] == 8 and record["kl"] >= 0
        assert record["sampler_logp_gap_mean"] < 1e-3  # HF samples with the training weights themselves
        assert 0 <= record["clipped_share"] <= 1 and record["length_mean"] <= 16
        assert record["time_generate"] > 0 and record["time_update"] > 0
    assert steps[0]["lr"] > steps[1]["lr"] >= 0  # linear decay over 2 steps x 2 iterations
    samples = _records(out / "samples.jsonl")
    assert [s["step"] for s in samples] == [1, 1, 1, 2, 2, 2]
    assert all({"prompt", "completion", "score", "status", "correct"} <= s.keys() for s in samples)
    checkpoint = out / CHECKPOINTS / "step-1"  # step 2 is the last: the final model, not a checkpoint
    assert (checkpoint / DONE_FILE).is_file()
    state = torch.load(checkpoint / STATE_FILE, weights_only=False)
    assert state["step"] == 1 and state["sampler"]["cursor"] == 2
    assert state["optimizer"]["state"] and state["weights"]
    assert (out / "curves.png").stat().st_size > 10_000
    from transformers import AutoModelForCausalLM

    trained = AutoModelForCausalLM.from_pretrained(out / "model")
    base = AutoModelForCausalLM.from_pretrained(_smollm2())
    assert not torch.equal(trained.model.embed_tokens.weight, base.model.embed_tokens.weight)
    result = json.loads((out / "result.json").read_text())
    assert result["steps"] == 2 and "pass_at_1" in result["final_eval"]


def _smollm2():
    from rewardsmith.reward_models.model import resolve

    return resolve("smollm2")


class Killed(Exception):
    pass


@pytest.mark.timeout(600)
def test_a_killed_run_resumes_to_the_same_weights_and_log(tmp_path, caplog):
    model = make_tiny_llama(tmp_path / "tiny")
    data = tmp_path / "prompts.jsonl"
    data.write_text("".join(Path("data/arithmetic_train.jsonl").read_text().splitlines(keepends=True)[:12]))

    def config(out, **extra):
        return GRPOConfig(model=model, output_dir=str(out), device="cpu", max_steps=4, prompts_per_step=2,
                          num_generations=4, max_completion_length=8, save_every=2, learning_rate=1e-3,
                          num_iterations=2, beta=0.02, samples_per_step=1, save_model=True,
                          reward="test_text_length", **extra)  # varies on random text

    straight = build_trainer(config(tmp_path / "straight"), data, progress=False)
    straight.run()

    first = build_trainer(config(tmp_path / "killed"), data, progress=False)
    original = first.train_step

    def dies_in_step_3():
        if first.step == 2:
            raise Killed
        return original()

    first.train_step = dies_in_step_3
    with pytest.raises(Killed):
        first.run()
    assert [r["step"] for r in _records(tmp_path / "killed" / "log.jsonl")] == [1, 2]
    caplog.set_level("INFO", logger="rewardsmith")
    resumed = build_trainer(config(tmp_path / "killed"), data, progress=False)
    resumed.run()
    assert any("resuming from" in m and "step-2" in m for m in caplog.messages)
    log_a = _records(tmp_path / "straight" / "log.jsonl")
    assert any(r["reward_std"] > 0 for r in log_a)  # the loss has a policy-gradient term to compare
    log_b = [r for r in _records(tmp_path / "killed" / "log.jsonl")]
    assert [r["step"] for r in log_b] == [1, 2, 3, 4]  # every step once
    for a, b in zip(log_a, log_b, strict=True):
        assert a["reward_mean"] == b["reward_mean"] and a["loss"] == pytest.approx(b["loss"], rel=1e-6)
    samples = [s["step"] for s in _records(tmp_path / "killed" / "samples.jsonl")]
    assert samples == [1, 2, 3, 4]
    for (name, p), (_, q) in zip(straight.model.named_parameters(), resumed.model.named_parameters(), strict=True):
        assert torch.allclose(p, q, atol=1e-6), name
    assert not any(p.name.startswith(".") for p in (tmp_path / "killed" / CHECKPOINTS).iterdir())
