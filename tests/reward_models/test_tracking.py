"""Where a run's metrics go, without a model: the log cadence (``log_every: auto``), the shown
names (``train/…``, ``eval/…``), ``report_to`` checked before anything loads, the flags, and the
plots' series (labels and styles, not pixels)."""

from __future__ import annotations

import argparse
import importlib.util

import pytest

from rewardsmith.adapters.cli.common import add_tracking_flags
from rewardsmith.adapters.grpo.config import GRPOConfig
from rewardsmith.adapters.grpo.report import run_panels
from rewardsmith.reward_models import tracking
from rewardsmith.reward_models.curves import MARKERS_BELOW, Series, draw
from rewardsmith.reward_models.tracking import TrackingError, log_interval, metric_name, require, sinks
from rewardsmith.reward_models.train import TrainConfig, curve_panels
from rewardsmith.verifiers import SpecError


@pytest.mark.parametrize(("steps", "interval"), [(1, 1), (3, 1), (10, 1), (199, 1), (200, 2), (499, 2), (500, 5),
                                                   (1000, 10), (1999, 10), (2000, 20), (10_000, 100),
                                                   (123_456, 1000)])
def test_auto_logs_every_step_of_a_short_run_and_about_a_hundred_records_of_a_long_one(steps, interval):
    assert log_interval("auto", steps) == interval
    assert steps // interval >= min(steps, 100)  # never fewer than 100 records (or every step)
    assert interval == 1 or steps // interval < 250  # and not many more


def test_a_number_is_kept_as_it_is():
    assert log_interval(7, 3) == 7 and log_interval(1, 10_000) == 1


@pytest.mark.parametrize("config_type", [TrainConfig, GRPOConfig])
def test_both_configs_default_to_auto_and_none_and_check_the_values(config_type):
    config = config_type.from_mapping({})
    assert config.log_every == "auto" and config.report_to == "none"
    assert config_type.from_mapping({"log_every": 5, "report_to": ["tensorboard", "wandb"]}).report_to == (
        "tensorboard", "wandb")
    for bad, word in (({"log_every": 0}, "log_every"), ({"log_every": "often"}, "log_every"),
                      ({"log_every": "5"}, "log_every"), ({"report_to": "mlflow"}, "report_to")):
        with pytest.raises(SpecError, match=word):
            config_type.from_mapping(bad)


def test_grpo_tensorboard_true_still_works_as_report_to_tensorboard(caplog):
    caplog.set_level("WARNING", logger="rewardsmith")
    assert GRPOConfig.from_mapping({"tensorboard": True}).report_to == ("tensorboard",)
    assert "deprecated" in caplog.text and "report_to: tensorboard" in caplog.text
    both = GRPOConfig.from_mapping({"tensorboard": True, "report_to": ["wandb", "tensorboard"]})
    assert both.report_to == ("wandb", "tensorboard")


def test_names_follow_trl():
    assert metric_name("loss") == "train/loss" and metric_name("reward/math") == "train/reward/math"
    assert metric_name("eval_auroc") == "eval/auroc" and metric_name("eval_pass_at_1") == "eval/pass_at_1"


def test_sinks_and_their_errors():
    assert sinks("none") == () and sinks(("none",)) == () and sinks(["wandb", "wandb"]) == ("wandb",)
    with pytest.raises(TrackingError, match="mixes none"):
        sinks(["none", "wandb"])


def test_a_missing_package_is_an_error_naming_the_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(tracking.importlib.util, "find_spec", lambda name: None if name == "wandb" else real(name))
    with pytest.raises(TrackingError, match=r"needs the wandb package: pip install wandb .*rewardsmith\[tracking\]"):
        require(("wandb",))
    assert require("none") == ()


def test_the_rm_trainer_checks_report_to_before_loading_anything(monkeypatch):
    torch = pytest.importorskip("torch")  # noqa: F841
    from rewardsmith.reward_models import train as train_module
    from rewardsmith.reward_models.data import Pair

    monkeypatch.setattr(tracking.importlib.util, "find_spec", lambda name: None)

    def no_loading(*args, **kwargs):
        raise AssertionError("loaded a tokenizer or a model before checking report_to")

    monkeypatch.setattr(train_module, "load_tokenizer", no_loading)
    monkeypatch.setattr(train_module, "load_model", no_loading)
    config = TrainConfig.from_mapping({"kind": "orm", "report_to": "tensorboard"})
    with pytest.raises(TrackingError, match="pip install tensorboard"):
        train_module.Trainer(config, [Pair("p", "a", "b")], [], progress=False)


def _parse(*argv):
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_tracking_flags(parser)
    return parser.parse_args(list(argv))


def test_the_flags():
    assert _parse().log_every is None and _parse().report_to is None  # the config decides
    assert _parse("--log-every", "auto").log_every == "auto" and _parse("--log-every", "3").log_every == 3
    assert _parse("--report-to", "tensorboard", "wandb").report_to == ["tensorboard", "wandb"]
    for bad in (("--log-every", "0"), ("--log-every", "x"), ("--report-to", "mlflow")):
        with pytest.raises((argparse.ArgumentError, SystemExit)):
            _parse(*bad)


def test_every_train_command_has_the_flags_with_help(capsys):
    from rewardsmith.adapters.cli import main

    for kind in ("orm", "prm", "grpo"):
        with pytest.raises(SystemExit):
            main(["train", kind, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "--log-every N|auto" in text and "every step up to 199 steps" in text
        assert "--report-to SINK" in text and "tensorboard" in text and "wandb" in text


# --------------------------------------------------------------------------- plots

RM_LOG = [{"step": 1, "epoch": 0.5, "loss": 0.7, "accuracy": 0.5, "lr": 1e-4, "grad_norm": 1.0},
          {"step": 2, "epoch": 1.0, "loss": 0.6, "accuracy": 0.75, "lr": 5e-5, "grad_norm": 0.9},
          {"step": 2, "eval_auroc": 0.8, "eval_accuracy": 0.7, "eval_threshold": 0.5}]


def test_rm_series_are_named_as_trl_shows_them_and_eval_ones_stand_apart():
    panels = curve_panels(RM_LOG)
    labels = {title: [s.label for s in curves] for title, curves in panels.items()}
    assert labels == {"training loss": ["train/loss"],
                      "accuracy and evaluation": ["train/accuracy", "eval/accuracy", "eval/auroc"],
                      "learning rate": ["train/lr"]}
    accuracy, evaluation = panels["accuracy and evaluation"][0], panels["accuracy and evaluation"][2]
    assert accuracy.xs == [1, 2] and evaluation.xs == [2] and evaluation.ys == [0.8]
    assert accuracy.style()["marker"] and accuracy.style()["linestyle"] == "-"  # 2 points: both visible
    assert evaluation.style()["marker"] and evaluation.style()["linestyle"] != "-"  # one eval point: a marker
    assert evaluation.style()["marker"] != accuracy.style()["marker"]
    assert evaluation.style(0)["marker"] != evaluation.style(1)["marker"]  # equal values at a step both show


def test_long_series_drop_markers_but_eval_keeps_them():
    long = Series("loss", list(range(MARKERS_BELOW)), [0.0] * MARKERS_BELOW)
    assert long.style()["marker"] is None
    assert Series("eval_auroc", long.xs, long.ys).style()["marker"]


def test_grpo_series_carry_the_prefixes_and_the_reward_band():
    records = [{"step": 0, "eval_pass_at_1": 0.1}, {"step": 1, "reward_mean": 0.5, "reward_std": 0.1, "kl": 0.0},
               {"step": 2, "reward_mean": 0.7, "reward_std": 0.2, "kl": 0.01}, {"step": 2, "eval_pass_at_1": 0.3}]
    panels = run_panels(records)
    reward = {s.label: s for s in panels["reward"]}
    assert set(reward) == {"train/reward_mean", "eval/pass_at_1"}
    assert reward["eval/pass_at_1"].xs == [0, 2] and reward["train/reward_mean"].xs == [1, 2]
    low, high = reward["train/reward_mean"].band
    assert low == pytest.approx([0.4, 0.5]) and high == pytest.approx([0.6, 0.9])
    assert [s.label for s in panels["policy drift"]] == ["train/kl"]


@pytest.mark.parametrize("points", [1, 2])
def test_a_plot_is_written_from_one_point_on_with_integer_steps(tmp_path, points):
    pytest.importorskip("matplotlib")
    series = Series("loss", list(range(1, points + 1)), [0.5] * points)
    target = draw({"loss": [series], "eval": [Series("eval_auroc", [points], [0.9])]}, tmp_path / "c.png")
    assert target is not None and target.stat().st_size > 5_000


def test_a_resumed_run_drops_the_tensorboard_steps_past_its_checkpoint(tmp_path):
    """The run that stopped logged steps 1-3 but its checkpoint is step 2: resumed there, step 3
    shows once, with the resumed run's value."""
    pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from rewardsmith.reward_models.tracking import Tracker

    first = Tracker.open("tensorboard", tmp_path, {})
    for step in (1, 2, 3):
        first.log(step, {"step": step, "loss": float(step), "eval_auroc": 0.5, "flag": True, "note": "x"})
    first.close()
    resumed = Tracker.open(["tensorboard"], tmp_path, {}, start_step=2)
    resumed.log(3, {"step": 3, "loss": 30.0, "missing": None})
    resumed.close()
    resumed.close()  # twice is harmless
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == ["eval/auroc", "train/loss"]
    assert [(e.step, e.value) for e in events.Scalars("train/loss")] == [(1, 1.0), (2, 2.0), (3, 30.0)]
