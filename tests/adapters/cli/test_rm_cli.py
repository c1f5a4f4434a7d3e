"""The reward-model commands end to end: `label` (outcome, processbench, synthetic, steps),
`train orm|prm`, `eval rm`, and a trained model used by `score`, the server and TRL's reward
functions exactly as `build(spec)` scores it."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import SHARED_DATA

from rewardsmith.adapters.cli import main
from rewardsmith.reward_models.steps import StepSplitter
from rewardsmith.reward_models.synthetic import generate

pytest.importorskip("torch")


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_label_synthetic_writes_each_form(tmp_path, capsys):
    for form, columns in (("stepwise", {"prompt", "steps", "labels"}), ("pointwise", {"prompt", "completion", "label"}),
                          ("pairwise", {"prompt", "chosen", "rejected"})):
        out = tmp_path / f"{form}.jsonl"
        assert main(["label", "synthetic", "-o", str(out), "--problems", "10", "--form", form]) == 0
        rows = read_jsonl(out)
        assert len(rows) == (10 if form == "pairwise" else 20)
        assert columns <= set(rows[0])
    assert "10 correct solutions, 10 with an error" in capsys.readouterr().out
    assert main(["label", "synthetic", "-o", str(tmp_path / "x.jsonl"), "--kinds", "typo"]) == 2


def test_label_outcome_from_a_scored_file(tmp_path, capsys):
    rows = [{"prompt": "What is 2+2?", "completion": c, "answer": "4"}
            for c in ("The answer is \\boxed{4}.", "The answer is \\boxed{5}.", "no idea")]
    rows.append({"prompt": "What is 3+3?", "completion": "\\boxed{6}", "answer": "6"})
    scored = tmp_path / "scored.jsonl"
    assert main(["score", str(write_jsonl(tmp_path / "in.jsonl", rows)), "-o", str(scored), "--no-progress"]) == 0
    pairs = tmp_path / "pairs.jsonl"
    assert main(["label", "outcome", str(scored), "-o", str(pairs), "--form", "pairwise"]) == 0
    written = read_jsonl(pairs)
    assert written == [{"prompt": "What is 2+2?", "chosen": "The answer is \\boxed{4}.",
                        "rejected": "The answer is \\boxed{5}.", "chosen_score": 1.0, "rejected_score": 0.0}]
    assert "skipped: prompts with one completion (1)" in capsys.readouterr().out
    points = tmp_path / "points.jsonl"
    assert main(["label", "outcome", str(scored), "-o", str(points)]) == 0
    assert [r["label"] for r in read_jsonl(points)] == [1.0, 0.0, 0.0, 1.0]
    assert main(["label", "outcome", str(write_jsonl(tmp_path / "raw.jsonl", rows)), "-o", str(points)]) == 2


def test_label_processbench_reports_bad_rows_by_line(tmp_path, capsys):
    rows = [{"problem": "q", "steps": ["a", "b", "c"], "label": 1},
            {"problem": "q", "steps": ["a"], "label": 5},
            {"problem": "q", "steps": ["a", "b"], "label": -1}]
    out = tmp_path / "pb.jsonl"
    assert main(["label", "processbench", str(write_jsonl(tmp_path / "pb.json", rows)), "-o", str(out)]) == 0
    written = read_jsonl(out)
    assert [r["labels"] for r in written] == [[True, False], [True, True]]
    text = capsys.readouterr().out
    assert "skipped 1 (first: line 2: label 5 is outside -1..0)" in text


@pytest.fixture(scope="module")
def synthetic_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    rows = generate(12, seed=11)
    write_jsonl(folder / "steps.jsonl", rows)
    join = StepSplitter().join
    pairs = [{"prompt": a["prompt"], "chosen": join(a["steps"]), "rejected": join(b["steps"])}
             for a, b in zip(rows[::2], rows[1::2], strict=True)]
    write_jsonl(folder / "pairs.jsonl", pairs)
    points = [{"prompt": r["prompt"], "completion": join(r["steps"]), "label": float(r["first_error"] < 0),
               "answer": r["answer"]} for r in rows]
    write_jsonl(folder / "points.jsonl", points)
    return folder


def test_train_with_malformed_rows_reports_them_and_trains_on_the_rest(synthetic_files, tmp_path, capsys):
    lines = (synthetic_files / "steps.jsonl").read_text().splitlines()
    bad = [*lines[:3], "{not json", json.dumps({"prompt": "p", "steps": ["a", "b"], "labels": [1]}),
           json.dumps({"prompt": "p", "steps": [], "labels": []}), *lines[3:]]
    data = tmp_path / "mixed.jsonl"
    data.write_text("\n".join(bad) + "\n")
    out = tmp_path / "prm"
    code = main(["train", "prm", "--data", str(data), "-o", str(out), "--max-steps", "2", "--batch-size", "4",
                 "--no-progress", "--eval-every", "0"])
    assert code == 0
    err = capsys.readouterr().err
    assert "24 stepwise rows; 3 skipped (line 4: not a JSON object" in err
    assert "line 5: 1 labels for 2 steps" in err and "line 6: steps must be a non-empty list" in err
    assert (out / "model" / "rewardsmith.json").is_file() and (out / "curves.png").is_file()
    records = read_jsonl(out / "log.jsonl")
    assert {"loss", "accuracy", "lr", "grad_norm", "samples_per_s"} <= set(records[0])


def test_train_fails_at_once_without_a_usable_row_or_a_loadable_base(synthetic_files, tmp_path, capsys):
    junk = write_jsonl(tmp_path / "junk.jsonl", [{"question": "q"}])
    assert main(["train", "orm", "--data", str(junk), "-o", str(tmp_path / "o"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no usable row in 1 row " in err and "prompt, chosen, rejected" in err
    code = main(["train", "orm", "--data", str(synthetic_files / "pairs.jsonl"), "--model", "nowhere/model",
                 "-o", str(tmp_path / "o"), "--no-progress"])
    assert code == 2
    assert "rewardsmith: error: cannot find the model 'nowhere/model'; tried:" in capsys.readouterr().err
    bad_config = tmp_path / "train.yaml"
    bad_config.write_text("learning_rte: 0.001\n")
    code = main(["train", "orm", "--data", str(synthetic_files / "pairs.jsonl"), "--config", str(bad_config)])
    assert code == 2 and "did you mean 'learning_rate'" in capsys.readouterr().err
    bad_config.write_text("learning_rate: 5e-6\nmodel: nowhere/model\n")  # 5e-6 is a number, as people write it
    code = main(["train", "orm", "--data", str(synthetic_files / "pairs.jsonl"), "--config", str(bad_config),
                 "-o", str(tmp_path / "o"), "--no-progress"])
    assert code == 2 and "cannot find the model 'nowhere/model'" in capsys.readouterr().err
    bad_config.write_text("- learning_rate\n")
    code = main(["train", "orm", "--data", str(synthetic_files / "pairs.jsonl"), "--config", str(bad_config)])
    assert code == 2 and "must hold a mapping of config keys" in capsys.readouterr().err


def test_list_config_prints_every_key(capsys):
    assert main(["train", "prm", "--list-config"]) == 0
    out = capsys.readouterr().out
    for key in ("learning_rate", "lora", "gradient_checkpointing", "attention", "center_rewards_coefficient"):
        assert key in out


@pytest.fixture(scope="module")
def trained(synthetic_files, tmp_path_factory):
    out = tmp_path_factory.mktemp("trained")
    for kind, data in (("orm", "pairs.jsonl"), ("prm", "steps.jsonl")):
        assert main(["train", kind, "--data", str(synthetic_files / data), "-o", str(out / kind), "--max-steps", "3",
                     "--batch-size", "4", "--no-progress", "--eval-every", "0", "--save-every", "0"]) == 0
    return out


def test_eval_reports_each_kind_of_row(trained, synthetic_files, tmp_path, capsys):
    report = tmp_path / "orm-report"
    assert main(["eval", "rm", str(trained / "orm" / "model"), "--data", str(synthetic_files / "pairs.jsonl"),
                 "--data", str(synthetic_files / "points.jsonl"), "-o", str(report)]) == 0
    metrics = json.loads((report / "metrics.json").read_text())
    pairs, points = metrics["files"]["pairs"], metrics["files"]["points"]
    assert 0 <= pairs["pairwise_accuracy"] <= 1 and set(pairs["baselines"]["auroc"]) == {"length", "steps"}
    assert points["best_of_n"]["groups"] == 12 and points["best_of_n"]["pass_at_n"] == 1.0
    assert (report / "report.png").stat().st_size > 1000
    report = tmp_path / "prm-report"
    assert main(["eval", "rm", str(trained / "prm" / "model"), "--data", str(synthetic_files / "steps.jsonl"),
                 "--threshold-data", str(synthetic_files / "steps.jsonl"), "-o", str(report)]) == 0
    metrics = json.loads((report / "metrics.json").read_text())
    steps = metrics["files"]["steps"]
    assert set(steps["best_of_n"]) == {"min", "product", "last", "mean"}
    assert steps["processbench"]["steps"]["n_error"] == 12 and "threshold_chosen_on" in metrics
    f1 = steps["processbench"]["steps"]["f1"]
    assert f1 == pytest.approx(metrics["threshold_chosen_on"]["f1"])  # chosen on the same rows here
    assert set(steps["baselines"]["step_auroc"]) == {"length", "steps", "position"}
    assert set(steps["baselines"]["processbench/steps"]) == {"length", "steps", "position"}
    assert set(steps["baselines"]["outcome_auroc/min"]) == {"length", "steps"}
    assert "majority_at_n" in steps["best_of_n"]["min"]  # the synthetic solutions state their answers
    out = capsys.readouterr().out
    header = next(x for x in out.splitlines() if x.split()[:2] == ["metric", "model"] and "position" in x)
    assert header.split() == ["metric", "model", "length", "steps", "position"]
    step_auroc = next(x for x in out.splitlines() if x.strip().startswith("step AUROC"))
    shown = [float(v) for v in step_auroc.split()[2:6]]
    baselines = steps["baselines"]["step_auroc"]
    assert shown == [round(v, 3) for v in (steps["step_auroc"], baselines["length"]["value"],
                                           baselines["steps"]["value"], baselines["position"]["value"])]
    assert any(x.strip().startswith("first-error F1 steps") for x in out.splitlines())


def length_tells_all(path, prompts=6):
    """Pointwise rows where the label is exactly "the longer completion" and no completion states
    an answer: the length baseline's AUROC is 1 and majority voting has nothing to count."""
    long = "We work through every part of it slowly and check each line twice before we stop here."
    rows = [{"prompt": f"question {i}?", "completion": text, "label": label}
            for i in range(prompts) for text, label in ((long, 1), ("No idea.", 0))]
    return write_jsonl(path, rows)


def test_eval_table_shows_a_model_that_does_not_beat_the_length_baseline(trained, tmp_path, capsys):
    data = length_tells_all(tmp_path / "points.jsonl")
    report = tmp_path / "report"
    assert main(["eval", "rm", str(trained / "orm"), "--data", str(data), "-o", str(report)]) == 0
    out = capsys.readouterr().out
    result = json.loads((report / "metrics.json").read_text())["files"]["points"]
    assert result["baselines"]["auroc"]["length"] == {"value": 1.0, "direction": "higher"}
    assert "does not beat the length baseline (1.000)" in result["flags"]["auroc"]
    line = next(x for x in out.splitlines() if x.strip().startswith("AUROC"))
    assert line.split()[2] == "1.000" and "does not beat the length baseline (1.000)" in line
    assert "1 of 1 figures do not beat a trivial baseline" in out
    # no completion has a final answer: majority@N is absent (not 0) from metrics.json and the table
    assert "majority_at_n" not in result["best_of_n"] and result["best_of_n"]["pass_at_n"] == 1.0
    assert "majority@N: absent, no completion has a final answer to vote with" in out
    assert not any("majority@N" in x and "pass@N" in x for x in out.splitlines())


def test_eval_takes_the_run_folder_or_its_model_folder(trained, synthetic_files, tmp_path):
    figures = []
    for folder in (trained / "orm", trained / "orm" / "model"):
        report = tmp_path / folder.name
        assert main(["eval", "rm", str(folder), "--data", str(synthetic_files / "pairs.jsonl"), "-o", str(report)]) == 0
        metrics = json.loads((report / "metrics.json").read_text())
        assert metrics["model"] == str(trained / "orm" / "model")
        figures.append(metrics["files"])
    assert figures[0] == figures[1]


def test_eval_says_which_folder_it_looked_for_and_what_it_found(trained, synthetic_files, tmp_path, capsys):
    unfinished = tmp_path / "unfinished"
    (unfinished / "checkpoints").mkdir(parents=True)
    (unfinished / "log.jsonl").write_text("")
    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text("{}")
    cases = {unfinished: "it is a run folder (log.jsonl, checkpoints/) without a saved model",
             base: "it is a model folder without rewardsmith.json (a base model",
             synthetic_files: "it holds pairs.jsonl, points.jsonl, steps.jsonl",
             tmp_path / "nowhere": "it does not exist"}
    for folder, found in cases.items():
        assert main(["eval", "rm", str(folder), "--data", str(synthetic_files / "pairs.jsonl")]) == 2
        err = capsys.readouterr().err
        assert f"looked for a model folder ({folder / 'rewardsmith.json'}) or a run folder" in err
        assert f"({folder / 'model' / 'rewardsmith.json'})" in err and found in err, err


@pytest.mark.shared_data
def test_eval_reads_processbench_files_as_they_ship(trained, tmp_path):
    source = SHARED_DATA / "prm" / "processbench_gsm8k.json"
    if not source.exists():
        pytest.skip("../shared/data is absent")
    rows = json.loads(source.read_text())[:20]
    small = tmp_path / "processbench_gsm8k.json"
    small.write_text(json.dumps(rows))
    report = tmp_path / "pb"
    assert main(["eval", "rm", str(trained / "prm" / "model"), "--data", str(small), "-o", str(report)]) == 0
    result = json.loads((report / "metrics.json").read_text())["files"]["processbench_gsm8k"]
    pb = result["processbench"]["processbench_gsm8k"]
    assert pb["n_error"] + pb["n_correct"] == 20


def test_a_trained_model_scores_the_same_in_score_server_and_trl(trained, synthetic_files, tmp_path):
    """`score`, the HTTP server and TRL's reward functions all give build(spec)'s reward, for the
    model alone and composed (the outcome gate; a weighted sum with the clipped process reward)."""
    import httpx
    from server_helpers import ServerThread

    from rewardsmith.adapters.serve.reward_server import ServerConfig
    from rewardsmith.adapters.trainers.trl import reward_funcs
    from rewardsmith.verifiers import Sample, build

    rows = read_jsonl(synthetic_files / "points.jsonl")[:6]
    for spec in ({"type": "prm", "path": str(trained / "prm" / "model")},
                 {"type": "gate", "when": "math", "then": {"type": "orm", "path": str(trained / "orm" / "model")}},
                 {"type": "weighted", "parts": ["math", {"type": "prm", "path": str(trained / "prm" / "model"),
                                                         "form": "clip"}]}):
        samples = [Sample(prompt=r["prompt"], completion=r["completion"], fields={"answer": r["answer"]})
                   for r in rows]
        expected = [v.reward for v in build(spec).verify_batch(samples)]
        inputs = write_jsonl(tmp_path / "in.jsonl", rows)
        out = tmp_path / "out.jsonl"
        assert main(["score", str(inputs), "-o", str(out), "--reward", json.dumps(spec), "--overwrite",
                     "--no-progress"]) == 0
        assert [r["reward"] for r in read_jsonl(out)] == pytest.approx(expected, abs=1e-6)
        funcs = reward_funcs(spec, split=False)
        got = funcs[0](prompts=[r["prompt"] for r in rows], completions=[r["completion"] for r in rows],
                       answer=[r["answer"] for r in rows])
        assert got == pytest.approx(expected, abs=1e-6)
        with ServerThread(ServerConfig(reward=spec)) as server:
            response = httpx.post(f"{server.url}/v1/score", json={"samples": rows}, timeout=120)
        assert response.status_code == 200, response.text
        assert response.json()["rewards"] == pytest.approx(expected, abs=1e-6)


@pytest.mark.slow
def test_label_steps_end_to_end_with_a_real_policy_resumes_and_reports(tmp_path, capsys):
    """SmolLM2 continues each prefix, `math` scores the continuations, and the output is stepwise
    rows `train prm` reads; a rerun resumes (nothing redone) and a changed spec is refused."""
    rows = [{"prompt": "What is 2 + 3? Put the answer in \\boxed{}.", "answer": "5",
             "completion": "2 + 3 = 5.\n\nSo the answer is \\boxed{5}."},
            {"prompt": "What is 4 + 4? Put the answer in \\boxed{}.", "answer": "8",
             "completion": "4 + 4 = 9.\n\nSo the answer is \\boxed{9}."},
            {"prompt": "no solution here", "answer": "1"}]
    inputs = write_jsonl(tmp_path / "sol.jsonl", rows)
    out = tmp_path / "steps.jsonl"
    args = ["label", "steps", str(inputs), "-o", str(out), "--policy", "smollm2", "--engine", "hf", "-k", "2",
            "--max-new-tokens", "24", "--no-progress"]
    assert main(args) == 0
    written = read_jsonl(out)
    assert len(written) == 3
    assert written[0]["steps"] == ["2 + 3 = 5.", "So the answer is \\boxed{5}."]
    assert written[0]["labels"][-1] == 1.0 and written[1]["labels"][-1] == 0.0  # the final step: its own verdict
    assert all(0.0 <= v <= 1.0 for v in written[0]["labels"])
    assert written[2]["verdict"]["status"] == "invalid_input" and "steps" not in written[2]
    text = capsys.readouterr().out
    assert "labels: 2 rows, 4 steps" in text and "s per prefix" in text
    assert main(args) == 0
    assert read_jsonl(out) == written  # resumed: nothing rescored
    assert main([*args[:-1], "--mode", "hard", "--no-progress"]) == 2  # another labelling config: refused
    err = capsys.readouterr().err
    assert "refusing to resume" in err and "hard" in err
    train_out = tmp_path / "prm"
    assert main(["train", "prm", "--data", str(out), "-o", str(train_out), "--max-steps", "1", "--batch-size", "2",
                 "--no-progress", "--eval-every", "0"]) == 0
    # prompts only: --generate samples the solution from the policy first, and keeps it
    prompts = write_jsonl(tmp_path / "q.jsonl", [{"question": "What is 6 + 1?", "answer": "7"}])
    generated = tmp_path / "generated.jsonl"
    assert main(["label", "steps", str(prompts), "-o", str(generated), "--policy", "smollm2", "--engine", "hf",
                 "-k", "1", "--max-new-tokens", "24", "--generate", "--field", "prompt=question",
                 "--no-progress"]) == 0
    row = read_jsonl(generated)[0]
    assert row["question"] == "What is 6 + 1?" and isinstance(row["completion"], str) and row["completion"]
    assert row["verdict"]["status"] == "ok" and len(row["labels"]) == len(row["steps"]) >= 1
    assert StepSplitter().split(row["completion"]) == row["steps"]


def test_label_steps_refuses_agree_only_without_a_judge(tmp_path, capsys):
    inputs = write_jsonl(tmp_path / "sol.jsonl", [{"prompt": "p", "completion": "a", "answer": "1"}])
    code = main(["label", "steps", str(inputs), "-o", str(tmp_path / "o.jsonl"), "--policy", "smollm2",
                 "--agree-only"])
    assert code == 2 and "--agree-only compares" in capsys.readouterr().err


def test_model_dirs_can_be_copied_and_still_serve(trained, tmp_path):
    from rewardsmith.verifiers import Sample, build

    copy = tmp_path / "copy"
    shutil.copytree(trained / "orm" / "model", copy)
    a = build({"type": "orm", "path": str(copy)}).verify(Sample(prompt="q", completion="The answer is 4."))
    b = build({"type": "orm", "path": str(trained / "orm" / "model")}).verify(
        Sample(prompt="q", completion="The answer is 4."))
    assert a.score == pytest.approx(b.score, abs=1e-6)
