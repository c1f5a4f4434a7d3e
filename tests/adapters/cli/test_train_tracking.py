"""Short runs from the command line have curves, and their metrics reach TensorBoard and W&B:
``train orm`` and ``train grpo`` for 2-3 steps with no ``--log-every`` log every step and write
the plot; ``--report-to tensorboard wandb`` writes event files and an offline W&B run whose
values are those of log.jsonl, under TRL's names (``train/loss``, ``eval/auroc``)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from rewardsmith.adapters.cli import main
from rewardsmith.reward_models.synthetic import generate
from rewardsmith.reward_models.tracking import metric_name

pytestmark = pytest.mark.slow


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tensorboard_scalars(folder: Path) -> dict[str, dict[int, float]]:
    """Every scalar of the event files in ``folder``: name -> {step: value}."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    events.Reload()
    return {tag: {e.step: e.value for e in events.Scalars(tag)} for tag in events.Tags()["scalars"]}


def wandb_history(path: Path) -> list[dict]:
    """The history rows of an offline run's ``.wandb`` file: a LevelDB-style log of protobuf
    Records (a 7-byte file header, then 32 KiB blocks of chunks: checksum u32, length u16, type u8:
    1 whole, 2 first, 3 middle, 4 last)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, pending, rows = 7, b"", []
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        if left < 7:  # a block's tail too short for a chunk header is padding
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if kind == 0:  # zeros to the end of the block
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            record = pb.Record()
            record.ParseFromString(pending)
            if record.WhichOneof("record_type") == "history":
                rows.append({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item})
    return rows


@pytest.fixture
def offline_wandb(tmp_path, monkeypatch):
    """No W&B credentials or mode in the environment (the run must choose offline by itself), and
    W&B's own config and cache kept inside the test's folder."""
    for name in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_PROJECT", "WANDB_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    pytest.importorskip("wandb")
    pytest.importorskip("tensorboard")


def assert_sinks_hold_the_log(out: Path, records: list[dict], *, wandb: bool) -> None:
    """Every number of log.jsonl is in TensorBoard (and W&B) at its step, under its shown name."""
    scalars = tensorboard_scalars(out / "tensorboard")
    history = {}
    if wandb:
        runs = list((out / "wandb").glob("offline-run-*/run-*.wandb"))
        assert len(runs) == 1, runs
        for row in wandb_history(runs[0]):
            history.setdefault(row["_step"], {}).update(row)
    checked = 0
    for record in records:
        for key, value in record.items():
            if key == "step" or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            name = metric_name(key)
            assert scalars[name][record["step"]] == pytest.approx(value, rel=1e-6, abs=1e-7), name
            if wandb:
                assert history[record["step"]][name] == pytest.approx(value, rel=1e-9, abs=1e-12), name
            checked += 1
    assert checked >= 10


def test_a_three_step_orm_run_logs_every_step_plots_and_reports_to_tensorboard_and_wandb(tmp_path, offline_wandb,
                                                                                        capsys):
    from rewardsmith.reward_models.steps import StepSplitter

    join = StepSplitter().join
    rows = generate(12, seed=5)
    pairs = [{"prompt": a["prompt"], "chosen": join(a["steps"]), "rejected": join(b["steps"])}
             for a, b in zip(rows[::2], rows[1::2], strict=True)]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    out = tmp_path / "orm"
    code = main(["train", "orm", "--data", str(data), "--eval-data", str(data), "-o", str(out), "--max-steps", "3",
                 "--batch-size", "2", "--eval-every", "2", "--save-every", "0", "--report-to", "tensorboard",
                 "wandb", "--no-progress"])
    assert code == 0
    records = read_jsonl(out / "log.jsonl")
    assert [r["step"] for r in records if "loss" in r] == [1, 2, 3]  # auto: every step of a short run
    assert [r["step"] for r in records if "eval_auroc" in r] == [2, 3]
    assert (out / "curves.png").stat().st_size > 10_000
    assert_sinks_hold_the_log(out, records, wandb=True)
    err = capsys.readouterr().err
    assert "W&B: offline" in err and "wandb sync" in err


def test_log_every_from_the_command_line(tmp_path):
    rows = generate(6, seed=2)
    data = tmp_path / "steps.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "prm"
    assert main(["train", "prm", "--data", str(data), "-o", str(out), "--max-steps", "3", "--batch-size", "2",
                 "--eval-every", "0", "--save-every", "0", "--log-every", "2", "--no-progress"]) == 0
    assert [r["step"] for r in read_jsonl(out / "log.jsonl") if "loss" in r] == [2, 3]  # and the last step
    assert not (out / "tensorboard").exists() and not (out / "wandb").exists()  # report_to: none


def test_a_two_step_grpo_run_logs_every_step_plots_and_reports_to_tensorboard(tmp_path, offline_wandb):
    from grpo_helpers import make_tiny_llama

    model = make_tiny_llama(tmp_path / "tiny")
    lines = Path("data/arithmetic_train.jsonl").read_text().splitlines(keepends=True)
    data, heldout = tmp_path / "prompts.jsonl", tmp_path / "heldout.jsonl"
    data.write_text("".join(lines[:8]))
    heldout.write_text("".join(lines[8:10]))
    config = tmp_path / "grpo.yaml"
    config.write_text("prompts_per_step: 2\nnum_generations: 4\nmax_completion_length: 8\nsave_every: 0\n"
                      "samples_per_step: 1\nsave_model: false\nlearning_rate: 1.0e-3\n")
    out = tmp_path / "grpo"
    code = main(["train", "grpo", "--model", model, "--data", str(data), "--eval-data", str(heldout), "--config",
                 str(config), "--reward", "math", "--max-steps", "2", "--device", "cpu", "--report-to",
                 "tensorboard", "-o", str(out), "--no-progress"])
    assert code == 0
    records = read_jsonl(out / "log.jsonl")
    assert [r["step"] for r in records if "reward_mean" in r] == [1, 2]
    assert [r["step"] for r in records if "eval_pass_at_1" in r] == [0, 2]
    assert (out / "curves.png").stat().st_size > 10_000
    assert_sinks_hold_the_log(out, records, wandb=False)
    assert "eval/pass_at_1" in tensorboard_scalars(out / "tensorboard")
