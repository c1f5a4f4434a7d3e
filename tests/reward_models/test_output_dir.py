"""What a training run does with an output folder that already holds a run (issue 27, item 5):
resume an unfinished run that has a checkpoint, refuse anything else that holds a previous run's
files, and start over (removing only those files) when asked to overwrite. One rule for both
trainers (``lifecycle.claim_output_dir``); torch is not needed to decide."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.reward_models.checkpoint import CHECKPOINTS, DONE_FILE
from rewardsmith.reward_models.lifecycle import OutputDirInUse, claim_output_dir, previous_run_files

ADVICE = "rerun with --overwrite to start over, or pass another --output-dir"


def _run(out: Path, *, finished: bool, checkpoints: tuple[int, ...] = ()) -> Path:
    """A folder as a run leaves it: the log and samples, complete checkpoints, and when finished
    the model and result.json."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "log.jsonl").write_text(json.dumps({"step": 1, "loss": 0.5}) + "\n")
    (out / "samples.jsonl").write_text(json.dumps({"step": 1, "completion": "x"}) + "\n")
    for step in checkpoints:
        folder = out / CHECKPOINTS / f"step-{step}"
        folder.mkdir(parents=True)
        (folder / DONE_FILE).write_text(json.dumps({"step": step}))
    if finished:
        (out / "model").mkdir()
        (out / "model" / "config.json").write_text("{}")
        (out / "curves.png").write_bytes(b"png")
        (out / "result.json").write_text("{}")
    return out


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def test_an_absent_an_empty_or_an_unrelated_folder_is_a_new_run(tmp_path):
    assert claim_output_dir(tmp_path / "absent", resume=True, overwrite=False) == "new"
    (tmp_path / "empty").mkdir()
    assert claim_output_dir(tmp_path / "empty", resume=True, overwrite=False) == "new"
    (tmp_path / "notes.txt").write_text("mine")
    assert claim_output_dir(tmp_path, resume=True, overwrite=True) == "new"
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("resume", [True, False])
def test_a_finished_run_is_refused_and_left_as_it_was(tmp_path, resume):
    out = _run(tmp_path / "run", finished=True, checkpoints=(2,))
    before = _snapshot(out)
    with pytest.raises(OutputDirInUse) as refused:
        claim_output_dir(out, resume=resume, overwrite=False)
    message = str(refused.value)
    assert "a finished run (nothing to resume)" in message and ADVICE in message
    assert "model/" in message and "result.json" in message and "checkpoints/ (step-2)" in message
    assert _snapshot(out) == before


def test_a_run_without_a_checkpoint_is_refused_not_overwritten(tmp_path):
    """The issue's case: a rerun into a folder whose run left no checkpoint started over silently."""
    out = _run(tmp_path / "run", finished=False)
    before = _snapshot(out)
    with pytest.raises(OutputDirInUse, match=r"no checkpoint to resume from: log\.jsonl, samples\.jsonl; rerun with"):
        claim_output_dir(out, resume=True, overwrite=False)
    assert _snapshot(out) == before


def test_an_unfinished_run_with_a_checkpoint_resumes_unless_resume_is_off(tmp_path):
    out = _run(tmp_path / "run", finished=False, checkpoints=(2, 4))
    before = _snapshot(out)
    assert claim_output_dir(out, resume=True, overwrite=False) == "resume"
    with pytest.raises(OutputDirInUse, match="checkpoints \\(last: step-4\\), and resume is off"):
        claim_output_dir(out, resume=False, overwrite=False)
    assert _snapshot(out) == before


def test_an_incomplete_checkpoint_is_nothing_to_resume(tmp_path):
    out = _run(tmp_path / "run", finished=False)
    (out / CHECKPOINTS / ".step-2.tmp99").mkdir(parents=True)  # killed mid-save
    with pytest.raises(OutputDirInUse, match="checkpoints/ \\(none complete\\)"):
        claim_output_dir(out, resume=True, overwrite=False)


def test_overwrite_removes_the_previous_runs_files_and_nothing_else(tmp_path):
    out = _run(tmp_path / "run", finished=True, checkpoints=(2,))
    (out / "tensorboard").mkdir()
    (out / ".model.tmp123").mkdir()
    (out / "README.txt").write_text("the user's own file")
    assert claim_output_dir(out, resume=True, overwrite=True) == "overwritten"
    assert sorted(p.name for p in out.iterdir()) == ["README.txt"]
    assert previous_run_files(out) == []
    assert claim_output_dir(out, resume=True, overwrite=False) == "new"


def test_a_file_where_the_folder_should_be_is_refused(tmp_path):
    target = tmp_path / "out"
    target.write_text("x")
    with pytest.raises(OutputDirInUse, match="is a file; pass another --output-dir"):
        claim_output_dir(target, resume=True, overwrite=True)
    assert target.read_text() == "x"
