"""A model name resolves in a fixed order (a local path, an alias, the local Hugging Face cache, one
quick question to the hub) and a name found nowhere fails in seconds with what was tried, true on
any machine; `rewardsmith models` prints where the aliases keep their checkpoints."""

from __future__ import annotations

import json
import time

import pytest

from rewardsmith.reward_models import loading
from rewardsmith.reward_models.loading import ModelLoadError, aliases, resolve

pytest.importorskip("huggingface_hub")

BOGUS = "rewardsmith-tests/no-such-model-3f9a"


@pytest.fixture(autouse=True)
def empty_hub_cache(tmp_path, monkeypatch):
    """An empty HF cache, so that what these tests see does not depend on the machine's, and a
    fresh memory of what the hub said."""
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(loading, "_ON_HUB", set())
    return cache


def no_hub(*args, **kwargs):
    raise AssertionError("the hub was asked")


def test_a_name_found_nowhere_fails_fast_saying_what_was_tried(empty_hub_cache):
    """Here the hub is unreachable, elsewhere it answers "no such model": either way one question,
    no retries, and the message says what happened."""
    started = time.perf_counter()
    with pytest.raises(ModelLoadError) as raised:
        resolve(BOGUS)
    assert time.perf_counter() - started < 20  # transformers' retries took ~50 s
    message = str(raised.value)
    assert message.startswith(f"cannot find the model {BOGUS!r}; tried:")
    assert "a local folder:" in message and f"{BOGUS} does not exist" in message
    for alias in aliases():  # each alias with the folder of its checkpoint
        assert f"{alias.name} ({alias.path or alias.source})" in message
    assert f"not in {empty_hub_cache}" in message
    hub_line = next(line for line in message.splitlines() if line.strip().startswith("the hub:"))
    assert "could not be reached" in hub_line or "has no model" in hub_line or "answered" in hub_line
    assert "there is no hub" not in message
    assert f"hf download {BOGUS}" in message


def test_the_hub_answer_is_reported_as_given(monkeypatch):
    from huggingface_hub.errors import RepositoryNotFoundError

    def not_there(name, timeout=None):
        assert timeout is not None and timeout <= 10  # a short timeout
        error = RepositoryNotFoundError.__new__(RepositoryNotFoundError)
        Exception.__init__(error, "404 Client Error")
        raise error

    monkeypatch.setattr("huggingface_hub.model_info", not_there)
    with pytest.raises(ModelLoadError, match=r"the hub: +https://\S+ answered that it has no model"):
        resolve(BOGUS)


def test_offline_mode_does_not_ask_the_hub(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.model_info", no_hub)
    with pytest.raises(ModelLoadError, match=r"the hub: +not asked \(HF_HUB_OFFLINE"):
        resolve(BOGUS)


def test_a_hub_id_the_hub_has_is_passed_on_and_asked_once(monkeypatch):
    asked = []
    monkeypatch.setattr("huggingface_hub.model_info", lambda name, timeout=None: asked.append(name))
    assert resolve("some-org/some-model") == "some-org/some-model"
    assert resolve("some-org/some-model") == "some-org/some-model"
    assert asked == ["some-org/some-model"]


def test_a_cached_hub_id_loads_from_its_snapshot_without_asking(empty_hub_cache, monkeypatch):
    repo = empty_hub_cache / "models--some-org--cached-model"
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    monkeypatch.setattr("huggingface_hub.model_info", no_hub)
    assert resolve("some-org/cached-model") == str(snapshot)


def test_a_path_that_is_not_a_hub_id_is_not_looked_up(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.model_info", no_hub)
    missing = tmp_path / "runs" / "rm" / "model"
    with pytest.raises(ModelLoadError, match="not a hub id") as raised:
        resolve(str(missing))
    assert f"{missing} does not exist" in str(raised.value)


def test_a_near_miss_of_an_alias_is_named(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="did you mean 'smollm2'"):
        resolve("smollm3")


def test_local_folders_and_aliases_resolve_without_the_hub(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.model_info", no_hub)
    assert resolve(str(tmp_path)) == str(tmp_path)
    for alias in aliases():
        if alias.present:
            assert resolve(alias.name) == str(alias.path)


def test_the_models_command_prints_each_alias_and_its_folder(capsys):
    from rewardsmith.adapters.cli import main

    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for alias in aliases():
        line = next(line for line in out.splitlines() if line.startswith(alias.name + " "))
        assert str(alias.path or alias.source) in line
        assert ("present" if alias.present else "not") in line
    assert "Hugging Face cache" in out
    present = [alias for alias in aliases() if alias.present]
    if present:
        assert main(["models", present[0].name]) == 0
        assert capsys.readouterr().out == f"{present[0].path}\n"
    assert main(["models", "smol"]) == 2
    assert "not an alias" in capsys.readouterr().err


def test_a_training_run_with_a_bogus_model_fails_in_seconds(tmp_path, capsys):
    pytest.importorskip("transformers")
    from rewardsmith.adapters.cli import main

    rows = tmp_path / "pairs.jsonl"
    rows.write_text(json.dumps({"prompt": "p", "chosen": "a", "rejected": "b"}) + "\n")
    started = time.perf_counter()
    code = main(["train", "orm", "--data", str(rows), "--model", BOGUS, "-o", str(tmp_path / "o"), "--no-progress"])
    assert code == 2 and time.perf_counter() - started < 20
    assert f"rewardsmith: error: cannot find the model {BOGUS!r}; tried:" in capsys.readouterr().err


def test_a_local_judge_model_found_nowhere_is_a_backend_error_in_seconds():
    pytest.importorskip("torch")
    from rewardsmith.reward_models.loading import load_causal_lm
    from rewardsmith.verifiers.judge.backends import BackendError

    started = time.perf_counter()
    with pytest.raises(BackendError, match=f"cannot find the model {BOGUS!r}"):
        load_causal_lm(BOGUS)
    assert time.perf_counter() - started < 20
