"""Rerunning `train orm|prm|grpo` into a folder that holds a run (issue 27, item 5): refused with
what is there and what to do (exit 2, as `score` refuses), before any model loads and without
touching a file; `--overwrite` starts over; an interrupted run with checkpoints still resumes
(tests/reward_models/test_rm_model.py and tests/adapters/grpo/test_grpo_run.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rewardsmith.adapters.cli import main
from rewardsmith.reward_models.synthetic import generate

ADVICE = "rerun with --overwrite to start over, or pass another --output-dir"


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    from rewardsmith.reward_models.steps import StepSplitter

    folder = tmp_path_factory.mktemp("rerun-data")
    rows = generate(8, seed=3)
    join = StepSplitter().join
    files = {"prm": folder / "steps.jsonl", "orm": folder / "pairs.jsonl", "grpo": folder / "prompts.jsonl"}
    files["prm"].write_text("".join(json.dumps(r) + "\n" for r in rows))
    files["orm"].write_text("".join(json.dumps({"prompt": a["prompt"], "chosen": join(a["steps"]),
                                                "rejected": join(b["steps"])}) + "\n"
                                    for a, b in zip(rows[::2], rows[1::2], strict=True)))
    lines = Path("data/arithmetic_train.jsonl").read_text().splitlines(keepends=True)
    files["grpo"].write_text("".join(lines[:4]))
    return files


def _finished_run(out: Path) -> Path:
    out.mkdir(parents=True)
    (out / "log.jsonl").write_text('{"step": 1, "loss": 0.3}\n')
    (out / "curves.png").write_bytes(b"\x89PNG")
    (out / "model").mkdir()
    (out / "model" / "config.json").write_text("{}")
    (out / "result.json").write_text("{}")
    return out


@pytest.mark.parametrize("kind", ["orm", "prm", "grpo"])
def test_a_finished_runs_folder_is_refused_before_the_model_loads_and_left_as_it_was(data, tmp_path, capsys, kind):
    out = _finished_run(tmp_path / "run")
    before = _snapshot(out)
    started = time.perf_counter()
    code = main(["train", kind, "--data", str(data[kind]), "--model", "/no/such/model", "-o", str(out),
                 "--no-progress"])
    seconds = time.perf_counter() - started
    err = capsys.readouterr().err
    assert code == 2
    assert f"{out} holds a finished run (nothing to resume): curves.png, log.jsonl, model/, result.json" in err
    assert ADVICE in err and "cannot load" not in err  # refused first: the bogus model was never tried
    assert seconds < 10
    assert _snapshot(out) == before


def test_a_grpo_run_that_left_no_checkpoint_is_refused(data, tmp_path, capsys):
    """The issue's case: a short run without checkpoints, rerun, started over and overwrote it."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "log.jsonl").write_text('{"step": 0, "eval_pass_at_1": 0.0}\n{"step": 1, "reward_mean": 0.0}\n')
    (out / "samples.jsonl").write_text('{"step": 1, "completion": "4"}\n')
    before = _snapshot(out)
    assert main(["train", "grpo", "--data", str(data["grpo"]), "--model", "/no/such/model", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no checkpoint to resume from: log.jsonl, samples.jsonl" in err and ADVICE in err
    assert _snapshot(out) == before


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_finished_reward_model_run_is_refused_and_overwrite_starts_over(data, tmp_path, capsys):
    out = tmp_path / "orm"
    args = ["train", "orm", "--data", str(data["orm"]), "-o", str(out), "--max-steps", "1", "--batch-size", "2",
            "--eval-every", "0", "--save-every", "0", "--no-progress"]
    assert main(args) == 0
    capsys.readouterr()
    (out / "log.jsonl").write_text('{"step": 99, "loss": 9.0}\n')  # marks the first run's log
    before = _snapshot(out)
    assert main(args) == 2
    assert "holds a finished run" in capsys.readouterr().err
    assert _snapshot(out) == before
    assert main([*args, "--overwrite"]) == 0
    assert "removed the previous run's" in capsys.readouterr().err
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [1, 1]  # the new run's step and its evaluation; the old record is gone
    assert (out / "model" / "rewardsmith.json").is_file() and (out / "result.json").is_file()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_finished_grpo_run_is_refused_and_overwrite_starts_over(data, tmp_path, capsys):
    from grpo_helpers import make_tiny_llama

    model = make_tiny_llama(tmp_path / "tiny")
    out = tmp_path / "grpo"
    args = ["train", "grpo", "--data", str(data["grpo"]), "--model", model, "-o", str(out), "--max-steps", "1",
            "--prompts-per-step", "2", "--num-generations", "2", "--max-completion-length", "4", "--device", "cpu",
            "--no-progress"]
    assert main(args) == 0
    capsys.readouterr()
    (out / "samples.jsonl").write_text('{"step": 99}\n')
    before = _snapshot(out)
    assert main(args) == 2
    assert "holds a finished run" in capsys.readouterr().err
    assert _snapshot(out) == before
    assert main([*args, "--overwrite"]) == 0
    samples = [json.loads(line)["step"] for line in (out / "samples.jsonl").read_text().splitlines()]
    assert samples == [1, 1]  # the new run's samples only
    assert json.loads((out / "result.json").read_text())["steps"] == 1


def test_an_interrupt_says_how_to_rerun_with_or_without_a_checkpoint(tmp_path, caplog):
    from rewardsmith.adapters.cli.common import _interrupted
    from rewardsmith.reward_models.checkpoint import CHECKPOINTS, DONE_FILE

    caplog.set_level("INFO", logger="rewardsmith.cli")
    assert _interrupted(tmp_path) == 130
    assert "before the first checkpoint; rerun with --overwrite to start over" in caplog.messages[-1]
    (tmp_path / CHECKPOINTS / "step-2").mkdir(parents=True)
    (tmp_path / CHECKPOINTS / "step-2" / DONE_FILE).write_text("{}")
    assert _interrupted(tmp_path) == 130
    assert "rerun the same command to resume from the last checkpoint" in caplog.messages[-1]
