"""Calibration: confidence extraction, the `brier` reward (RLCR), the metrics against
scikit-learn, and `rewardsmith calibrate` (report files, plot, skipped rows)."""

from __future__ import annotations

import csv
import json
import pickle
import subprocess
import sys
from collections.abc import Sequence

import matplotlib.image
import numpy as np
import pytest
from conftest import REPO, sample
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, roc_auc_score

import rewardsmith.verifiers.calibration  # noqa: F401  (runs @register("brier"))
from rewardsmith.adapters.cli import main
from rewardsmith.adapters.reports import calibration_metrics as metrics
from rewardsmith.reward_models.metrics import auroc
from rewardsmith.verifiers import Sample, SpecError, Verdict, Verifier, build, register
from rewardsmith.verifiers.calibration import brier_reward
from rewardsmith.verifiers.calibration.confidence import (
    coerce_confidence,
    compile_patterns,
    extract_confidence,
    find_confidence,
    strip_confidence,
)
from rewardsmith.verifiers.core import lookup

CAL_EXAMPLES = REPO / "data" / "calibration_examples.jsonl"
BRIER_SPEC = REPO / "data" / "brier.yaml"


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    # -c instead of -m: the brier module must be imported before the spec is built, until
    # the registry's built-in list names it.
    code = (
        "import sys, rewardsmith.verifiers.calibration; from rewardsmith.adapters.cli import main; "
        "raise SystemExit(main(sys.argv[1:]))"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout)


# --------------------------------------------------------------------------- confidence extraction


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<answer>4</answer>\n<confidence>0.8</confidence>", 0.8),
        ("<confidence> 75% </confidence>", 0.75),
        ("The answer is 4.\nConfidence: 80%", 0.8),
        ("The answer is 4. confidence: 0.8", 0.8),
        ("So 4. I am 80% confident.", 0.8),
        ("I'm 90 percent sure it is 4", 0.9),
        ("**Confidence:** 0.7", 0.7),
        ("Confidence level: .65", 0.65),
        ("My confidence is 0.3.", 0.3),
        ("confidence = 1", 1.0),
        ("Confidence: 0%", 0.0),
    ],
)
def test_confidence_forms_are_read(text, expected):
    assert extract_confidence(text) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "text",
    [
        "Confidence: 80",  # no % sign: 80 is not a probability
        "Confidence: 150%",
        "confidence: -0.2",
        "confidence: 1.5",
        "<confidence>very high</confidence>",
    ],
)
def test_confidence_outside_unit_interval_or_not_a_number_is_rejected(text):
    found = find_confidence(text)
    assert found is not None and found.value is None and found.reason
    assert extract_confidence(text) is None


def test_no_confidence_stated_is_none():
    assert find_confidence("The answer is 4, with 3 steps and 80% of the work done.") is None
    assert extract_confidence("") is None


def test_pattern_order_decides_and_the_last_match_wins():
    assert extract_confidence("Confidence: 0.2 ... on reflection, Confidence: 0.9") == 0.9
    # the tag is the strongest form wherever it sits
    assert extract_confidence("<confidence>0.6</confidence> later: Confidence: 0.1") == 0.6
    # a stated but unusable confidence is not replaced by a weaker pattern's value
    assert extract_confidence("<confidence>85</confidence> I am 80% confident") is None


def test_custom_patterns_with_named_group_first_group_and_percent_after_the_group():
    named = compile_patterns([r"P\(correct\)\s*=\s*(?P<value>[\d.]+)"])
    assert extract_confidence("P(correct) = 0.35", named) == 0.35
    assert extract_confidence("Confidence: 0.9", named) is None  # defaults replaced, not extended
    unnamed = compile_patterns([r"conf=(\d+)"])
    assert extract_confidence("conf=40%", unnamed) == 0.4
    assert extract_confidence("conf=40 percent", unnamed) == 0.4
    assert extract_confidence("conf=40", unnamed) is None


@pytest.mark.parametrize("bad", [["(unclosed"], ["no group here"], [], "Confidence: (.*)"])
def test_bad_patterns_fail_at_compile_time(bad):
    with pytest.raises(ValueError):
        compile_patterns(bad)


def test_coerce_confidence_from_a_dataset_field():
    assert coerce_confidence(0.7).value == 0.7
    assert coerce_confidence(1).value == 1.0
    assert coerce_confidence("80%").value == 0.8
    assert coerce_confidence(None) is None
    for bad in (True, 1.5, -0.1, float("nan"), "high", [0.5]):
        found = coerce_confidence(bad)
        assert found is not None and found.value is None and found.reason, bad


def test_strip_confidence_removes_every_statement():
    text = "So it is 18. Confidence: 90%\n<confidence>0.9</confidence> I am 90% confident."
    stripped = strip_confidence(text)
    assert "90" not in stripped and "0.9" not in stripped and "18" in stripped


# --------------------------------------------------------------------------- the brier reward


@register("test_batch_counter")
class BatchCounter(Verifier):
    """Test-only: correct when the completion contains ``RIGHT``; records each batch size."""

    name = "batch_counter"
    batches: list[int] = []  # noqa: RUF012  (class-level on purpose: shared with the built copy)

    def verify_batch(self, samples: Sequence[Sample]) -> list[Verdict]:
        BatchCounter.batches.append(len(samples))
        return [Verdict(score=float("RIGHT" in s.completion_text), correct="RIGHT" in s.completion_text)
                for s in samples]

    def verify(self, sample: Sample) -> Verdict:  # the brier verifier must never go one by one
        raise AssertionError("verify() called instead of verify_batch()")


@register("test_no_correct")
class NoCorrect(Verifier):
    """Test-only: a score without a correct/incorrect verdict."""

    name = "no_correct"

    def _verify(self, sample: Sample) -> Verdict:
        return Verdict(score=0.7, correct=None)


def brier(**options) -> Verifier:
    return build({"type": "brier", "correctness": options.pop("correctness", "test_batch_counter"), **options})


@pytest.mark.parametrize(
    ("correct", "q", "expected"),
    [(True, 0.8, 0.96), (False, 0.3, -0.09), (True, 1.0, 1.0), (False, 0.0, 0.0), (True, 0.0, 0.0),
     (False, 1.0, -1.0), (False, 0.5, -0.25)],
)
def test_brier_reward_is_c_minus_squared_gap(correct, q, expected):
    reward, penalty = brier_reward(correct, q)
    assert reward == pytest.approx(expected, abs=1e-12)
    assert reward - penalty == (1.0 if correct else 0.0)


def test_stating_the_true_probability_maximises_expected_reward():
    grid = [i / 100 for i in range(101)]
    for p in (0.0, 0.13, 0.5, 0.77, 1.0):
        expected = [p * brier_reward(True, q)[0] + (1 - p) * brier_reward(False, q)[0] for q in grid]
        assert grid[max(range(len(grid)), key=expected.__getitem__)] == pytest.approx(p, abs=0.005)


def test_verdict_score_details_and_components():
    v = brier()
    right, wrong = v.verify_batch([
        sample(completion="RIGHT <confidence>0.8</confidence>"),
        sample(completion="nope. Confidence: 30%"),
    ])
    assert (right.status, right.correct, right.score) == ("ok", True, pytest.approx(0.96))
    assert right.details["confidence"] == 0.8 and right.details["correctness"] == 1
    assert right.details["confidence_text"] == "0.8"
    assert right.parts["correctness"].correct is True
    assert right.components == {"correctness": 1.0, "calibration": pytest.approx(-0.04)}
    assert (wrong.status, wrong.correct, wrong.score) == ("ok", False, pytest.approx(-0.09))
    assert wrong.components == {"correctness": 0.0, "calibration": pytest.approx(-0.09)}
    for verdict in (right, wrong):
        assert sum(verdict.components.values()) == pytest.approx(verdict.score)


def test_missing_confidence_is_no_answer_scored_zero_and_keeps_correctness():
    right, wrong, bad = brier().verify_batch([
        sample(completion="RIGHT"), sample(completion="wrong"), sample(completion="RIGHT Confidence: 80"),
    ])
    assert (right.status, right.score, right.correct) == ("no_answer", 0.0, True)
    assert (wrong.status, wrong.score, wrong.correct) == ("no_answer", 0.0, False)
    assert right.components == {"correctness": 1.0, "calibration": None}
    assert right.details["confidence"] is None and "no confidence" in right.feedback
    assert (bad.status, bad.score, bad.correct) == ("no_answer", 0.0, True)
    assert "outside [0, 1]" in bad.feedback


@pytest.mark.parametrize("status", ["error", "timeout", "invalid_input"])
def test_failed_correctness_status_propagates(status):
    verdict = brier(correctness="test_field_score").verify(
        sample(completion="<confidence>0.9</confidence>", s=1.0, st=status)
    )
    assert verdict.status == status and verdict.score == 0.0
    assert verdict.components["calibration"] is None
    assert verdict.parts["correctness"].status == status
    if status == "error":
        assert verdict.reward is None


def test_correctness_without_a_verdict_is_an_error_not_a_number():
    verdict = brier(correctness="test_no_correct").verify(sample(completion="<confidence>0.9</confidence>"))
    assert verdict.status == "error" and verdict.reward is None and "no correct/incorrect" in verdict.feedback


def test_correctness_runs_once_on_the_whole_batch():
    BatchCounter.batches.clear()
    v = brier()
    verdicts = v.verify_batch([sample(completion=f"RIGHT confidence: 0.{i}") for i in range(7)])
    assert BatchCounter.batches == [7]
    assert [d.score for d in verdicts] == pytest.approx([1 - (0.1 * i - 1) ** 2 for i in range(7)])


def test_no_final_answer_counts_as_wrong_and_the_confidence_is_not_read_as_the_answer():
    v = brier(correctness={"type": "math", "workers": 0})
    no_answer, stated, stated_unstripped = (
        v.verify(Sample(completion="I could not work it out. Confidence: 20%", fields={"answer": "42"})),
        v.verify(Sample(completion="So it is 18. Confidence: 90%", fields={"answer": "18"})),
        brier(correctness={"type": "math", "workers": 0}, strip_confidence=False).verify(
            Sample(completion="So it is 18. Confidence: 90%", fields={"answer": "18"})),
    )
    assert (no_answer.status, no_answer.correct, no_answer.score) == ("ok", False, pytest.approx(-0.04))
    assert no_answer.parts["correctness"].status == "no_answer"
    assert (stated.correct, stated.score) == (True, pytest.approx(0.99))
    assert stated_unstripped.correct is False  # what stripping protects against: 90% read as the answer


def test_confidence_from_a_dataset_field():
    v = brier(confidence_field="conf")
    a, b, c = v.verify_batch([
        sample(completion="RIGHT Confidence: 0.1", conf=0.9),
        sample(completion="wrong", conf="25%"),
        sample(completion="RIGHT <confidence>0.5</confidence>"),
    ])
    assert a.details["confidence"] == 0.9 and a.score == pytest.approx(0.99)
    assert b.score == pytest.approx(-0.0625)
    assert c.status == "no_answer"  # the field is missing; the completion is not consulted


def test_chat_completion_uses_the_last_assistant_turn():
    v = brier(correctness={"type": "math", "workers": 0})
    chat = [{"role": "user", "content": "7?"}, {"role": "assistant", "content": "So the answer is 7. I'm 70% sure"}]
    verdict = v.verify(Sample(completion=chat, fields={"answer": "7"}))
    assert (verdict.correct, verdict.score) == (True, pytest.approx(0.91))


def test_custom_patterns_option_and_spec_errors():
    v = brier(patterns=[r"p=(?P<value>[\d.]+)"])
    assert v.verify(sample(completion="RIGHT p=0.6")).score == pytest.approx(0.84)
    assert v.verify(sample(completion="RIGHT Confidence: 0.6")).status == "no_answer"
    with pytest.raises(SpecError):
        brier(patterns=["(unclosed"])
    with pytest.raises(SpecError):
        brier(confidence="x")
    with pytest.raises(SpecError):
        brier(correctness="no_such_verifier")


def test_default_correctness_is_math_and_the_verifier_pickles():
    v = build("brier")
    assert v.correctness.name == "math"
    clone = pickle.loads(pickle.dumps(brier()))
    assert clone.verify_batch([sample(completion="RIGHT confidence: 1")])[0].score == 1.0


def test_importing_the_verifiers_and_the_cli_pulls_no_numpy_or_matplotlib():
    code = (
        "import sys, rewardsmith.verifiers, rewardsmith.verifiers.calibration, "
        "rewardsmith.verifiers.calibration.confidence, rewardsmith.adapters.cli, "
        "rewardsmith.adapters.reports.calibration\n"
        "from rewardsmith.verifiers import available; available()\n"
        "bad = [m for m in ('numpy', 'matplotlib', 'sklearn') if m in sys.modules]\n"
        "assert not bad, bad"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# --------------------------------------------------------------------------- metrics


def random_cases(count: int = 120):
    rng = np.random.default_rng(1234)
    for i in range(count):
        n = int(rng.integers(2, 300))
        p = rng.random(n)
        if i % 3 == 0:
            p = np.round(p, 1)  # many ties, many values exactly on uniform bin edges
        if i % 5 == 0:
            p[: n // 4] = rng.choice([0.0, 0.5, 1.0], size=n // 4)
        y = (rng.random(n) < p).astype(int)
        y[0], y[1] = 0, 1
        yield p, y


def test_reliability_curve_and_brier_and_auroc_match_scikit_learn():
    for p, y in random_cases():
        for strategy in ("uniform", "quantile"):
            for n_bins in (1, 2, 5, 10, 15):
                curve = metrics.reliability_curve(p, y, n_bins, strategy)
                prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
                assert curve.prob_true.shape == prob_true.shape
                np.testing.assert_allclose(curve.prob_true, prob_true, rtol=0, atol=1e-12)
                np.testing.assert_allclose(curve.prob_pred, prob_pred, rtol=0, atol=1e-12)
                assert curve.total == len(p)
        assert metrics.brier_score(p, y) == pytest.approx(brier_score_loss(y, p), abs=1e-12)
        assert auroc(y, p) == pytest.approx(roc_auc_score(y, p), abs=1e-12)
        # booleans are labels too
        assert metrics.brier_score(p, y.astype(bool)) == pytest.approx(brier_score_loss(y, p), abs=1e-12)


def test_ece_and_mce_by_hand():
    # 2 uniform bins [0, .5], (.5, 1]: means .15 / .85, observed .5 / 1 -> gaps .35 / .15
    p, y = [0.1, 0.2, 0.8, 0.9], [0, 1, 1, 1]
    assert metrics.expected_calibration_error(p, y, 2) == pytest.approx(0.5 * 0.35 + 0.5 * 0.15, abs=1e-12)
    assert metrics.max_calibration_error(p, y, 2) == pytest.approx(0.35, abs=1e-12)
    # bins are right-closed: 0.5 falls in the lower bin, so the two rows are apart
    assert metrics.expected_calibration_error([0.5, 0.6], [1, 0], 2) == pytest.approx(0.55, abs=1e-12)
    assert metrics.max_calibration_error([0.5, 0.6], [1, 0], 2) == pytest.approx(0.6, abs=1e-12)
    # equal mass: edges at the quantiles (.1, .25, .4) split 2 + 2, unlike 2 uniform bins
    p, y = [0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1]
    assert metrics.expected_calibration_error(p, y, 2, "quantile") == pytest.approx(0.4, abs=1e-12)
    assert metrics.max_calibration_error(p, y, 2, "quantile") == pytest.approx(0.65, abs=1e-12)
    assert metrics.expected_calibration_error(p, y, 2, "uniform") == pytest.approx(0.25, abs=1e-12)
    # weighted by bin counts: 3 rows at .9 all right (gap .1), 1 row at .2 right (gap .8)
    assert metrics.expected_calibration_error([0.9, 0.9, 0.9, 0.2], [1, 1, 1, 1], 10) == pytest.approx(
        0.75 * 0.1 + 0.25 * 0.8, abs=1e-12)
    # perfectly calibrated
    assert metrics.expected_calibration_error([0.5] * 4, [0, 1, 0, 1], 10) == 0.0
    assert metrics.expected_calibration_error([0.0, 1.0], [0, 1], 10) == 0.0


def test_auroc_by_hand_with_ties():
    assert auroc([0, 1], [0.2, 0.9]) == 1.0
    assert auroc([0, 1], [0.9, 0.2]) == 0.0
    assert auroc([0, 1], [0.5, 0.5]) == 0.5
    # pairs (pos, neg): (.8,.3) 1, (.8,.8) ½, (.5,.3) 1, (.5,.8) 0 -> 2.5 / 4
    assert auroc([1, 1, 0, 0], [0.8, 0.5, 0.3, 0.8]) == pytest.approx(0.625, abs=1e-12)
    assert auroc([1, 1], [0.1, 0.9]) is None


def test_reliability_bins_include_empty_ones():
    curve = metrics.reliability_curve([0.05, 0.95, 0.95], [0, 1, 0], 4)
    bins = curve.bins()
    assert [b["count"] for b in bins] == [1, 0, 0, 2]
    assert bins[1]["mean_predicted"] is None and bins[3]["observed_frequency"] == 0.5
    assert (bins[0]["lower"], bins[3]["upper"]) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("probs", "labels", "kwargs"),
    [([0.5, 1.2], [0, 1], {}), ([0.5, -0.1], [0, 1], {}), ([0.5, float("nan")], [0, 1], {}),
     ([0.5, 0.6], [0, 2], {}), ([0.5], [0, 1], {}), ([], [], {}),
     ([0.5, 0.6], [0, 1], {"strategy": "kmeans"}), ([0.5, 0.6], [0, 1], {"n_bins": 0})],
)
def test_bad_metric_inputs_raise(probs, labels, kwargs):
    with pytest.raises(ValueError):
        metrics.expected_calibration_error(probs, labels, **kwargs)


# --------------------------------------------------------------------------- rewardsmith calibrate


def test_get_path_follows_dots_lists_and_literal_keys():
    row = {"verdict": {"details": {"confidence": 0.4}, "correct": False}, "a.b": 1, "xs": [{"p": 0.3}]}
    assert lookup(row, "verdict.details.confidence") == 0.4
    assert lookup(row, "verdict.correct") is False
    assert lookup(row, "a.b") == 1
    assert lookup(row, "xs.0.p") == 0.3
    missing = lookup(row, "verdict.details.nope")
    assert missing is lookup(row, "xs.5.p") and missing is not None


def write_known_file(path):
    rows = [
        {"conf": 0.9, "ok": True},
        {"conf": 0.8, "ok": 1},
        {"conf": 0.7, "ok": False},
        {"conf": 0.2, "ok": 0},
        {"conf": 0.1, "ok": False},
        {"conf": None, "ok": True},  # null prob
        {"ok": True},  # missing prob
        {"conf": 0.5},  # missing label
        {"conf": 0.5, "ok": None},  # null label
        {"conf": 1.5, "ok": True},  # invalid prob
        {"conf": 0.5, "ok": "yes"},  # invalid label
    ]
    lines = [json.dumps(r) for r in rows]
    lines.insert(3, "{not json")
    path.write_text("\n".join(lines) + "\n")


def test_calibrate_report_on_a_small_known_file(tmp_path, capsys):
    data, out = tmp_path / "scored.jsonl", tmp_path / "report"
    write_known_file(data)
    assert main(["calibrate", str(data), "--prob", "conf", "--label", "ok", "-o", str(out), "--bins", "2"]) == 0
    report = json.loads((out / "metrics.json").read_text())
    p, y = [0.9, 0.8, 0.7, 0.2, 0.1], [1, 1, 0, 0, 0]
    assert (report["rows"], report["used"], report["skipped"]) == (12, 5, 7)
    assert report["skipped_by_reason"] == {"malformed_line": 1, "missing_prob": 2, "missing_label": 2,
                                           "invalid_prob": 1, "invalid_label": 1}
    assert report["brier"] == pytest.approx(sum((a - b) ** 2 for a, b in zip(p, y, strict=True)) / 5, abs=1e-12)
    # bins [0, .5]: {.2, .1} mean .15 observed 0; (.5, 1]: {.9, .8, .7} mean .8 observed 2/3
    assert report["ece"] == pytest.approx(0.4 * 0.15 + 0.6 * abs(2 / 3 - 0.8), abs=1e-12)
    assert report["mce"] == pytest.approx(0.15, abs=1e-12)
    assert report["auroc"] == 1.0
    assert report["accuracy"] == pytest.approx(0.4) and report["strategy"] == "uniform"

    with (out / "reliability.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert [int(r["count"]) for r in table] == [2, 3]
    assert float(table[0]["mean_predicted"]) == pytest.approx(0.15)
    assert float(table[1]["observed_frequency"]) == pytest.approx(2 / 3)
    assert list(table[0]) == ["bin", "lower", "upper", "count", "mean_predicted", "observed_frequency", "gap"]

    png = out / "reliability.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(png)
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 300 and image.shape[2] in (3, 4)

    printed = capsys.readouterr().out
    for word in ("Brier", "ECE", "MCE", "AUROC", "7 skipped", "malformed line", "reliability.png"):
        assert word in printed, word


def test_calibrate_quantile_strategy_and_no_plot(tmp_path):
    data, out = tmp_path / "scored.jsonl", tmp_path / "report"
    write_known_file(data)
    assert main(["calibrate", str(data), "--prob", "conf", "--label", "ok", "-o", str(out),
                 "--bins", "2", "--strategy", "quantile", "--no-plot"]) == 0
    report = json.loads((out / "metrics.json").read_text())
    # quantile edges (.1, .7, .9): {.1, .2, .7} observed 0 / mean 1/3, {.8, .9} observed 1 / mean .85
    assert report["ece"] == pytest.approx(0.6 * (1 / 3) + 0.4 * 0.15, abs=1e-12)
    assert report["bins"][1]["lower"] == pytest.approx(0.7)
    assert not (out / "reliability.png").exists()


def test_calibrate_fails_clearly_without_usable_rows(tmp_path, capsys):
    data = tmp_path / "scored.jsonl"
    data.write_text(json.dumps({"conf": None, "ok": True}) + "\n")
    assert main(["calibrate", str(data), "--prob", "conf", "--label", "ok", "-o", str(tmp_path / "r")]) == 2
    assert "missing_prob" in capsys.readouterr().err
    assert main(["calibrate", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "r")]) == 2


def test_calibrate_help_explains_fields_bins_and_outputs():
    result = run_cli("calibrate", "--help")
    assert result.returncode == 0
    for word in ("--prob", "--label", "dotted path", "verdict.details.confidence", "--strategy", "quantile",
                 "ECE", "reliability.png", "metrics.json", "skipped"):
        assert word in result.stdout, word


@pytest.mark.slow
def test_score_then_calibrate_the_example_file(tmp_path):
    scored, report_dir = tmp_path / "scored.jsonl", tmp_path / "report"
    result = run_cli("score", str(CAL_EXAMPLES), "-o", str(scored), "--reward", str(BRIER_SPEC), "--no-progress")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in scored.read_text().splitlines()]
    assert len(rows) == len(CAL_EXAMPLES.read_text().splitlines()) > 50
    kinds = {"right": 0, "wrong": 0, "no_answer": 0, "no_confidence": 0}
    for row in rows:
        verdict, q = row["verdict"], row["stated_confidence"]
        c = 1 if row["expect"] == "right" else 0
        assert verdict["correct"] is bool(c), row
        if q is None:
            kinds["no_confidence"] += 1
            assert (verdict["status"], row["reward"]) == ("no_answer", 0.0), row
        else:
            kinds[row["expect"]] += 1
            assert verdict["status"] == "ok", row
            assert row["reward"] == pytest.approx(c - (q - c) ** 2, abs=1e-12), row
            assert verdict["details"]["confidence"] == pytest.approx(q, abs=1e-12)
    assert all(kinds.values()), kinds  # every kind of row is in the file

    result = run_cli("calibrate", str(scored), "--prob", "verdict.details.confidence",
                     "--label", "verdict.correct", "-o", str(report_dir))
    assert result.returncode == 0, result.stderr
    report = json.loads((report_dir / "metrics.json").read_text())
    stated = [r for r in rows if r["stated_confidence"] is not None]
    assert report["used"] == len(stated) and report["skipped_by_reason"] == {"missing_prob": len(rows) - len(stated)}
    expected_brier = sum((r["stated_confidence"] - r["verdict"]["correct"]) ** 2 for r in stated) / len(stated)
    assert report["brier"] == pytest.approx(expected_brier, abs=1e-12)
    assert 0.5 < report["auroc"] <= 1.0  # the simulated model's confidence carries signal
    assert (report_dir / "reliability.png").stat().st_size > 0
    assert "ECE" in result.stdout
