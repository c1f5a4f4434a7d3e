"""The verl glue driven by verl 0.9.1's own code: its Hydra config, its loaders, its reward-loop worker.

What is real: verl 0.9.1's packaged trainer config composed by Hydra's compose API with the
overrides docs/trainers.md gives; ``get_custom_reward_fn`` / ``resolve_reward_manager_cls`` /
``load_reward_manager`` as 0.9.1's ``RewardLoopWorker`` calls them; ``RewardLoopWorker`` itself
(its ``compute_score_batch`` validation path and its per-row ``compute_score`` streaming path);
``DataProto`` batches of left-padded prompts and right-padded responses; a real byte-level BPE
tokenizer (``tokenizers`` + transformers, loaded by verl's ``hf_tokenizer`` from a directory);
``assemble_rm_scores``, which builds verl's reward tensor. What is not: Ray. The worker is
constructed and awaited in this process instead of as a Ray actor (starting a Ray cluster on
two shared cores buys nothing the test checks). The config is composed with Hydra in a
subprocess (``tests/verl_helpers.py`` says why).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO
from verl_helpers import HYDRA_PATH, compose, load_tokenizer, make_batch, require_verl, run_worker, save_byte_tokenizer

from rewardsmith.adapters.health import InputHealth
from rewardsmith.adapters.on_error import RewardError
from rewardsmith.verifiers import Sample, build

pytestmark = pytest.mark.slow

MANAGER = "RewardsmithRewardManager"
# The 0.1 paths (adapters/verl*.py, rewardsmith.adapters.verl*) are compatibility modules: still tested.
MANAGER_PATHS = ["pkg://rewardsmith.adapters.trainers.verl_manager",
                 str(REPO / "adapters" / "trainers" / "verl_manager.py"),
                 "pkg://rewardsmith.adapters.verl_manager", str(REPO / "adapters" / "verl_manager.py")]
FUNCTION_PATHS = [str(REPO / "adapters" / "trainers" / "verl.py"), "pkg://rewardsmith.adapters.trainers.verl",
                  str(REPO / "adapters" / "verl.py"), "pkg://rewardsmith.adapters.verl"]
MATH = {"type": "math", "workers": 0}


require_verl()

import numpy as np  # noqa: E402
from verl.experimental.reward_loop.reward_loop import RewardLoopWorker  # noqa: E402
from verl.trainer.ppo.reward import get_custom_reward_fn, resolve_reward_manager_cls  # noqa: E402
from verl.utils.reward_score import default_compute_score  # noqa: E402

from rewardsmith.adapters.trainers import verl as glue  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    return save_byte_tokenizer(tmp_path_factory.mktemp("tokenizer"))


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    """Per-process state of the glue module (the manager imports it by name), fresh per test."""
    monkeypatch.delenv("REWARDSMITH_REWARD", raising=False)
    monkeypatch.delenv("REWARDSMITH_ON_ERROR", raising=False)
    monkeypatch.setattr(glue, "HEALTH", InputHealth("verl", glue._advice))
    monkeypatch.setattr(glue, "_errors_warned", False)
    monkeypatch.setattr(glue, "_configured", None)


def expected_verdicts(spec, rows):
    """What ``build(spec).verify`` says of each row, its fields spelled out independently of the glue."""
    verifier = build(spec)
    out = []
    for r in rows:
        truth = r.get("ground_truth")
        fields = {**r.get("extra_info", {}), **(truth if isinstance(truth, dict) else {"answer": truth}),
                  "data_source": r["data_source"]}
        out.append(verifier.verify(Sample(prompt=r["prompt"], completion=r["response"], fields=fields)))
    return out


ROWS = [
    {"prompt": "What is 2+2?", "response": r"<think>2+2</think><answer>\boxed{4}</answer>",
     "data_source": "gsm8k", "ground_truth": "4"},
    {"prompt": "What is 3*3?", "response": "It is 10, I think.", "data_source": "gsm8k", "ground_truth": "9"},
    {"prompt": "Half of 1?", "response": r"The answer is $\frac{1}{2}$", "data_source": "math",
     "ground_truth": {"answer": "0.5"}},
    {"prompt": "Say nothing", "response": "", "data_source": "gsm8k", "ground_truth": "7"},
    {"prompt": "2^10?", "response": r"We get \boxed{1024}. Done, with a long tail of words.",
     "data_source": "math", "ground_truth": "1024", "extra_info": {"split": "test", "index": 4}},
    # The prompt holds the answer; the response does not: only the response tokens are scored.
    {"prompt": r"Is it \boxed{7}? Answer \boxed{7}.", "response": "no idea", "data_source": "math",
     "ground_truth": "7"},
]
ROUTED = {"type": "route", "field": "data_source", "routes": {
    "gsm8k": {"type": "weighted", "parts": [MATH, {"type": "format", "tags": ["think", "answer"]}],
              "weights": [1.0, 0.5]},
    "math": {"type": "math", "workers": 0, "leniency": {"rel_tol": 0.0}}}}


def manager_overrides(tokenizer_dir, path=MANAGER_PATHS[0], *extra):
    return (f"actor_rollout_ref.model.path={tokenizer_dir}", "reward.reward_manager.source=importlib",
            f"reward.reward_manager.name={MANAGER}", f"reward.reward_manager.module.path={path}", *extra)


def manager_spec(path) -> str:
    return f"+reward.reward_kwargs.reward={path}"


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory):
    """A reward spec written to a file: ``+...reward=/abs/spec.json``, as docs/trainers.md has users pass it."""
    folder = tmp_path_factory.mktemp("specs")

    def write(spec) -> Path:
        path = folder / f"spec-{len(list(folder.iterdir()))}.json"
        path.write_text(json.dumps(spec))
        return path
    return write


# --- item 3: the keys verl 0.9.1 reads for a custom reward function ---------------------------------

@pytest.mark.parametrize("path", FUNCTION_PATHS)
def test_documented_function_keys_reach_compute_score_and_score_like_build(tokenizer_dir, spec_file, path):
    cfg = compose(f"actor_rollout_ref.model.path={tokenizer_dir}",
                  f"reward.custom_reward_function.path={path}", "reward.custom_reward_function.name=compute_score",
                  f"+reward.custom_reward_function.reward_kwargs.reward={spec_file(ROUTED)}")
    assert get_custom_reward_fn(cfg) is not None
    worker, outputs = run_worker(cfg, make_batch(load_tokenizer(tokenizer_dir), ROWS))
    assert type(worker.reward_manager).__name__ == "NaiveRewardManager"  # 0.9.1's default manager, per row
    expected = expected_verdicts(ROUTED, ROWS)
    assert [o["reward_score"] for o in outputs] == [v.score for v in expected]
    assert [o["reward_extra_info"]["status"] for o in outputs] == [v.status for v in expected]
    assert {v.score for v in expected} == {0.0, 1.0, 1.5}, "the rows should exercise every outcome"


def test_top_level_custom_reward_function_is_what_0_9_1_ignores(tokenizer_dir):
    """The old README keys: main_ppo never reads them, and verl silently scores with its own scorer."""
    cfg = compose(f"actor_rollout_ref.model.path={tokenizer_dir}",
                  f"custom_reward_function.path={FUNCTION_PATHS[0]}", "custom_reward_function.name=compute_score")
    assert cfg.custom_reward_function.path == FUNCTION_PATHS[0]
    assert get_custom_reward_fn(cfg) is None
    rows = [{"prompt": "What is 2+2?", "response": r"So \boxed{4}.", "data_source": "openai/gsm8k",
             "ground_truth": "4"}]
    worker, outputs = run_worker(cfg, make_batch(load_tokenizer(tokenizer_dir), rows))
    assert worker.reward_manager.compute_score is default_compute_score
    assert outputs[0]["reward_score"] == 0.0  # verl's gsm8k scorer wants "#### 4"
    assert expected_verdicts(MATH, rows)[0].score == 1.0  # the reward the user asked for


def test_docs_give_only_keys_0_9_1_reads():
    page = (REPO / "docs" / "trainers.md").read_text()
    section = page[page.index("## verl"):]
    text = "\n".join(path.read_text() for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))])
    assert "reward.custom_reward_function.path=" in section
    assert "reward.reward_manager.source=importlib" in section and MANAGER in section
    assert "0.9.1" in section
    # Every custom_reward_function key it names is under `reward.`; no `reward_model.reward_manager`.
    assert not re.search(r"(?<![\w.])custom_reward_function\.", text)
    assert "reward_model.reward_manager" not in text


# --- item 3: the reward manager, through verl's importlib loader ------------------------------------

@pytest.mark.parametrize("path", MANAGER_PATHS)
def test_manager_loads_by_importlib_and_scores_the_batch_in_one_verify_batch(tokenizer_dir, spec_file, monkeypatch,
                                                                            path):
    spec = spec_file(ROUTED)
    cfg = compose(*manager_overrides(tokenizer_dir, path, manager_spec(spec)))
    assert resolve_reward_manager_cls(cfg).__name__ == MANAGER
    verifier = glue.verifier(str(spec))  # the instance the manager will use (built once per process)
    batches = []
    real = verifier.verify_batch
    monkeypatch.setattr(verifier, "verify_batch", lambda samples: batches.append(len(samples)) or real(samples))

    data = make_batch(load_tokenizer(tokenizer_dir), ROWS)
    worker, outputs = run_worker(cfg, data)
    assert batches == [len(ROWS)]

    expected = expected_verdicts(ROUTED, ROWS)
    scores = [o["reward_score"] for o in outputs]
    assert scores == [v.score for v in expected]
    infos = [o["reward_extra_info"] for o in outputs]
    assert [i["status"] for i in infos] == [v.status for v in expected]
    assert len({tuple(sorted(i)) for i in infos}) == 1 and set(infos[0]) == {"score", *glue.EXTRA_KEYS}

    # verl's reward tensor: the score on each row's last valid response token, 0 elsewhere.
    rm_scores = type(worker.reward_manager).assemble_rm_scores(data, scores)
    response_len = data.batch["responses"].shape[1]
    last = data.batch["attention_mask"][:, -response_len:].sum(1) - 1
    for i, score in enumerate(scores):
        assert rm_scores[i, last[i]].item() == score
        assert rm_scores[i].sum().item() == score
    assert rm_scores.sum(1).tolist() == [v.score for v in expected]


def test_manager_batches_rows_streamed_one_at_a_time(tokenizer_dir, spec_file, monkeypatch):
    """0.9.1's agent loop sends each finished rollout alone (``RewardLoopWorker.compute_score``): rows
    that arrive together share a batch, and rows that arrive while a batch is scored form the next."""
    spec = spec_file(ROUTED)
    cfg = compose(*manager_overrides(tokenizer_dir, MANAGER_PATHS[0], manager_spec(spec)))
    verifier = glue.verifier(str(spec))
    batches = []
    entered, release = threading.Event(), threading.Event()
    real = verifier.verify_batch

    def spy(samples):
        batches.append(len(samples))
        entered.set()
        assert release.wait(60)
        return real(samples)

    monkeypatch.setattr(verifier, "verify_batch", spy)
    data = make_batch(load_tokenizer(tokenizer_dir), ROWS)
    expected = [v.score for v in expected_verdicts(ROUTED, ROWS)]

    release.set()
    _, outputs = run_worker(cfg, data, per_row=True)
    assert batches == [len(ROWS)]
    assert [o["reward_score"] for o in outputs] == expected

    batches.clear()
    entered.clear()
    release.clear()

    async def trickle():
        worker = RewardLoopWorker(cfg)
        loop = asyncio.get_running_loop()
        first = asyncio.create_task(worker.compute_score(data[0:1]))
        assert await loop.run_in_executor(None, entered.wait, 60)  # row 0 is being scored
        rest = [asyncio.create_task(worker.compute_score(data[i:i + 1])) for i in range(1, len(ROWS))]
        await asyncio.sleep(0)  # the other rows arrive meanwhile
        release.set()
        return await asyncio.gather(first, *rest)

    outputs = asyncio.run(trickle())
    assert batches == [1, len(ROWS) - 1]
    assert [o["reward_score"] for o in outputs] == expected


def test_manager_takes_the_prompt_from_raw_prompt_or_the_prompt_tokens(tokenizer_dir, spec_file):
    cfg = compose(*manager_overrides(tokenizer_dir, MANAGER_PATHS[0], manager_spec(spec_file(MATH))))
    data = make_batch(load_tokenizer(tokenizer_dir), ROWS[:2])

    async def prompts():
        worker = RewardLoopWorker(cfg)
        return [worker.reward_manager.sample(data[i:i + 1]).prompt for i in range(2)]

    assert asyncio.run(prompts()) == [ROWS[0]["prompt"], ROWS[1]["prompt"]]
    chat = [{"role": "user", "content": "What is 2+2?"}]
    data.non_tensor_batch["raw_prompt"] = np.array([chat, chat], dtype=object)
    assert asyncio.run(prompts()) == [chat, chat]


# --- item 3 / 12: the error policy in verl --------------------------------------------------------

ERRORING = {"type": "test_field_score"}  # tests/conftest.py: score from field `s`, status from field `st`
ERROR_ROWS = [{"prompt": "p", "response": "r", "data_source": "x", "ground_truth": {"s": 1.0, "st": "error"}},
              {"prompt": "p", "response": "r", "data_source": "x", "ground_truth": {"s": 1.0}}]


def test_manager_on_error_zero_scores_error_rows_zero_and_counts_them(tokenizer_dir, spec_file, caplog):
    cfg = compose(*manager_overrides(tokenizer_dir, MANAGER_PATHS[0],
                                     manager_spec(spec_file(ERRORING))))
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        _, outputs = run_worker(cfg, make_batch(load_tokenizer(tokenizer_dir), ERROR_ROWS))
    assert [o["reward_score"] for o in outputs] == [0.0, 1.0]  # the failed row never pays its 1.0
    assert [o["reward_extra_info"]["error"] for o in outputs] == [1.0, 0.0]
    assert [r.message for r in caplog.records if "status=error" in r.message][:1]


def test_manager_on_error_raise_stops_with_reward_error(tokenizer_dir, spec_file):
    cfg = compose(*manager_overrides(tokenizer_dir, MANAGER_PATHS[0],
                                     manager_spec(spec_file(ERRORING)),
                                     "+reward.reward_kwargs.on_error=raise"))
    with pytest.raises(RewardError, match="status=error"):
        run_worker(cfg, make_batch(load_tokenizer(tokenizer_dir), ERROR_ROWS))


@pytest.mark.parametrize(("extra", "message"), [
    (("+reward.reward_kwargs.on_error=none",), "verl cannot take a missing reward"),
    (("+reward.reward_kwargs.overlong_buffer_cfg.enable=true",), "overlong_buffer_cfg"),
    ((f"reward.custom_reward_function.path={FUNCTION_PATHS[0]}",), "custom_reward_function.path"),
])
def test_manager_refuses_a_config_it_cannot_honour(tokenizer_dir, extra, message):
    cfg = compose(*manager_overrides(tokenizer_dir, MANAGER_PATHS[0], *extra))
    with pytest.raises(ValueError, match=message):
        run_worker(cfg, make_batch(load_tokenizer(tokenizer_dir), ROWS[:1]))


# --- item 5: the input-health warning, verl side ---------------------------------------------------

def test_manager_warns_once_when_rows_lack_the_ground_truth(tokenizer_dir, spec_file, caplog):
    cfg = compose(*manager_overrides(tokenizer_dir, MANAGER_PATHS[0], manager_spec(spec_file(MATH))))
    tok = load_tokenizer(tokenizer_dir)
    unlabelled = [{k: v for k, v in r.items() if k != "ground_truth"} for r in ROWS] * 4  # 20 rows, no reward_model
    with caplog.at_level(logging.WARNING, logger="rewardsmith"):
        _, good = run_worker(cfg, make_batch(tok, ROWS * 4))
        assert not [r for r in caplog.records if "invalid_input" in r.message]
        _, bad = run_worker(cfg, make_batch(tok, unlabelled))
        run_worker(cfg, make_batch(tok, unlabelled))
    warnings = [r.message for r in caplog.records if "invalid_input" in r.message]
    assert len(warnings) == 1
    assert "'answer'" in warnings[0] and "reward_model" in warnings[0] and "ground_truth" in warnings[0]
    assert {o["reward_extra_info"]["invalid"] for o in bad} == {1.0}
    assert {o["reward_extra_info"]["invalid"] for o in good} == {0.0}


# --- item 4: the bundled data/reward.yaml with verl's own data_source names --------------------------

VERL_NAMED_ROWS = [
    {"prompt": "Natalia sold 4 clips...", "response": r"<think>2+2</think><answer>\boxed{4}</answer>",
     "data_source": "openai/gsm8k", "ground_truth": "4"},
    {"prompt": "Janet has 9 ducks...", "response": "So she has 10 ducks.", "data_source": "openai/gsm8k",
     "ground_truth": "9"},
    {"prompt": "Compute 1/2 + 0", "response": r"Thus $\boxed{\frac{1}{2}}$.", "data_source": "lighteval/MATH",
     "ground_truth": r"\frac{1}{2}"},
    {"prompt": "Compute 2/3", "response": r"$\boxed{0.6667}$", "data_source": "lighteval/MATH",
     "ground_truth": r"\frac{2}{3}"},
]


@pytest.mark.parametrize("entry", ["compute_score", "manager"])
def test_bundled_reward_yaml_scores_verls_data_source_names(tokenizer_dir, entry):
    """verl's example preprocessing writes data_source=openai/gsm8k and lighteval/MATH: the shipped
    data/reward.yaml, unchanged, must route them (glob keys / default), not score them invalid_input."""
    spec = REPO / "data" / "reward.yaml"
    expected = expected_verdicts(str(spec), VERL_NAMED_ROWS)
    if entry == "compute_score":
        overrides = (f"actor_rollout_ref.model.path={tokenizer_dir}",
                     f"reward.custom_reward_function.path={FUNCTION_PATHS[0]}",
                     "reward.custom_reward_function.name=compute_score",
                     f"+reward.custom_reward_function.reward_kwargs.reward={spec}")
    else:
        overrides = manager_overrides(tokenizer_dir, MANAGER_PATHS[0], manager_spec(spec))
    _, outputs = run_worker(compose(*overrides), make_batch(load_tokenizer(tokenizer_dir), VERL_NAMED_ROWS))
    assert [o["reward_extra_info"]["status"] for o in outputs] == [v.status for v in expected]
    assert [o["reward_score"] for o in outputs] == [v.score for v in expected]
    assert "invalid_input" not in {v.status for v in expected}
    assert [v.correct for v in expected] == [True, False, True, False]


@pytest.mark.slow
def test_math_grades_the_same_beside_hydras_antlr_runtime():
    """verl needs Hydra, whose grammar needs antlr4 4.9; math-verify's LaTeX parser ships a 4.9.3
    grammar too, so one environment can hold both (rewardsmith pins no single runtime). The
    labelled math cases grade the same under 4.9.3 (Hydra's folder first on the path) as here."""
    import json

    lines = (REPO / "data" / "math_cases.jsonl").read_text().splitlines()
    rows = [row for row in map(json.loads, lines) if "options" not in row]
    code = (
        "import json, sys\n"
        "from importlib.metadata import version\n"
        "from rewardsmith.verifiers import Sample, build\n"
        "rows = json.load(sys.stdin)\n"
        "math = build({'type': 'math', 'workers': 0})\n"
        "out = [bool(math.verify(Sample(completion=r['completion'], fields={'answer': r['gold']})).correct)\n"
        "       for r in rows]\n"
        "print(json.dumps({'antlr': version('antlr4-python3-runtime'), 'correct': out}))\n"
    )

    def grade(env: dict[str, str]) -> dict:
        done = subprocess.run([sys.executable, "-c", code], input=json.dumps(rows), capture_output=True, text=True,
                              env={**os.environ, **env}, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)

    beside_hydra = grade({"PYTHONPATH": str(HYDRA_PATH)})
    here = grade({})
    assert beside_hydra["antlr"] == "4.9.3" and here["antlr"] != "4.9.3"
    assert beside_hydra["correct"] == here["correct"]
    assert here["correct"] == [r["correct"] for r in rows]
