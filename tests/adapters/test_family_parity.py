"""One table, every trainer channel: for each verifier family's example rows, what each adapter hands
its trainer is exactly ``build(spec).verify_batch`` of those rows (issue 26, "Ecosystem").

Channels: ``rewardsmith score`` (JSONL, and a parquet output read back and scored again), the reward
server (``/v1/score``; ``/get_reward`` through OpenRLHF 0.11.2's own reward client, and the file
``rewardsmith export openrlhf`` writes, loaded by that client), TRL's reward functions called by TRL
1.16's own ``GRPOTrainer._calculate_rewards`` (dataset columns as they are, and fields carried as one
JSON label column of a ``datasets`` table), verl 0.9.1 (its parquet loader ``RLHFDataset`` and
``collate_fn``, its ``RewardLoopWorker`` with ``compute_score`` and with rewardsmith's manager), and
the built-in GRPO loop's reward path (prompts read from file, completions decoded from token ids).

The nested-fields case scores with ``test_field_digest`` (tests/field_digest.py): its score is a hash
of exactly the completion and fields it received, so a field reshaped anywhere on the way (None
turned into a missing key, keys added, an int turned into a float, tool-call messages flattened to
text) changes the reward and fails the test. Its rows carry the shapes of the new families' data.

Channels that carry text only (OpenRLHF's decoded query, verl's decoded response, the GRPO loop's
generated text) get the rows whose completion is text; chat-message completions (``tool_calls``)
go through the channels that carry messages: the score CLI, the server's ``/v1/score`` and TRL.
"""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from field_digest import NAME as DIGEST
from field_digest import canonical

from rewardsmith.adapters.cli import main as cli_main
from rewardsmith.adapters.on_error import apply_on_error
from rewardsmith.verifiers import Sample, Verdict, build

# Fields of the new families' rows, each with its nested shape (tests/adapters/data/nested_fields.jsonl).
NESTED_FIELDS = [
    "instruction_id_list",
    "kwargs",
    "schema",
    "reference",
    "function",
    "ground_truth",
    "choices",
    "answer",
    "answers",
]

# (rows file, spec): a name, a spec dict, or a YAML/JSON file (paths relative to the repository).
CASES = [
    ("data/math_examples.jsonl", {"type": "math", "workers": 0}),
    ("data/math_examples.jsonl", "data/reward.yaml"),
    ("data/math_examples.jsonl", {"type": "format", "tags": ["think", "answer"]}),
    ("data/calibration_examples.jsonl", "data/brier.yaml"),
    ("tests/adapters/data/nested_fields.jsonl", {"type": DIGEST, "fields": NESTED_FIELDS}),
    # The new families: one line each, their example rows and their default spec.
    ("data/ifeval_examples.jsonl", "ifeval"),
    ("data/json_examples.jsonl", "json"),
    ("data/tool_call_examples.jsonl", "tool_call"),
    ("data/choice_examples.jsonl", "choice"),
    ("data/qa_examples.jsonl", "qa"),
    ("data/reasoning_gym_examples.jsonl", "reasoning_gym"),
]
# Rows that exist to hang a grader past its timeout (minutes each without a worker pool).
SLOW_ROWS = {"pathological"}
RESERVED = ("prompt", "completion")


def case_id(case: tuple[str, Any]) -> str:
    rows, spec = case
    name = spec.get("type") if isinstance(spec, dict) else Path(str(spec)).name
    return f"{Path(rows).stem}-{name}"


@dataclass
class Case:
    rows: list[dict[str, Any]]
    spec: Any  # as build takes it (files as absolute paths)
    verdicts: list[Verdict]

    @property
    def statuses(self) -> list[str]:
        return [v.status for v in self.verdicts]

    def rewards(self, on_error: str, rows: list[int] | None = None) -> list[float | None]:
        """What a consumer with this error policy gets (``none``: None for an error row)."""
        picked = self.verdicts if rows is None else [self.verdicts[i] for i in rows]
        return [apply_on_error(v, on_error) for v in picked]  # type: ignore[arg-type]

    def text_rows(self, channel: str) -> list[int]:
        """Rows a text-only channel can carry: those whose completion is text."""
        picked = [i for i, row in enumerate(self.rows) if isinstance(row["completion"], str)]
        if not picked:
            pytest.skip(f"{channel} carries text completions only, and these rows have none")
        return picked

    def spec_arg(self, folder: Path) -> str:
        """The spec as a command line or a trainer config names it: a name, or a file."""
        if isinstance(self.spec, str):
            return self.spec
        path = folder / "spec.json"
        path.write_text(json.dumps(self.spec))
        return str(path)


def resolve(spec: Any) -> Any:
    if isinstance(spec, str) and spec.endswith((".yaml", ".yml", ".json")):
        return str(REPO / spec)
    return spec


@pytest.fixture(scope="module", params=CASES, ids=[case_id(c) for c in CASES])
def case(request) -> Case:
    rows_file, spec = request.param
    rows = [json.loads(line) for line in (REPO / rows_file).read_text().splitlines() if line.strip()]
    rows = [row for row in rows if row.get("expect") not in SLOW_ROWS]
    spec = resolve(spec)
    verdicts = build(spec).verify_batch([Sample.from_row(row) for row in rows])
    assert len({v.score for v in verdicts}) > 1, "every row scores the same: the comparisons could not fail"
    if isinstance(spec, dict) and spec.get("type") == DIGEST:  # tool-call rows are hashed as whole messages
        tool_rows = [v for row, v in zip(rows, verdicts, strict=True) if not isinstance(row["completion"], str)]
        assert tool_rows and all("list" in v.details["received"]["completion"] for v in tool_rows)
    return Case(rows, spec, verdicts)


def assert_messages_kept(case: Case, details: list[dict[str, Any]]) -> None:
    """Where the digest verifier scored, chat-message completions reached it as messages, not text."""
    if not (isinstance(case.spec, dict) and case.spec.get("type") == DIGEST):
        return
    for row, detail in zip(case.rows, details, strict=True):
        if not isinstance(row["completion"], str):
            assert detail["received"]["completion"] == canonical(row["completion"]), row["id"]


def fields_of(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in RESERVED}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def float32(values: list[float | None]) -> list[float]:
    """What a float32 tensor holds (TRL's reward matrix, the GRPO loop's rewards); NaN for None."""
    import torch

    return torch.tensor([float("nan") if v is None else v for v in values], dtype=torch.float32).tolist()


def same(got: list[float], want: list[float]) -> bool:
    """Equal element by element, NaN equal to NaN."""
    return len(got) == len(want) and all(g == w or (g != g and w != w) for g, w in zip(got, want, strict=True))


# --------------------------------------------------------------------------- rewardsmith score


def score_cli(*args: str) -> int:
    return cli_main(["score", *args, "--no-progress"])


def test_score_cli_jsonl(case, tmp_path):
    src = write_jsonl(tmp_path / "rows.jsonl", case.rows)
    out = tmp_path / "scored.jsonl"
    assert score_cli(str(src), "-o", str(out), "--reward", case.spec_arg(tmp_path)) == 0
    got = read_jsonl(out)
    assert [r["verdict"]["status"] for r in got] == case.statuses
    assert [r["verdict"]["score"] for r in got] == [v.score for v in case.verdicts]
    assert [r["reward"] for r in got] == case.rewards("none")
    assert_messages_kept(case, [r["verdict"]["details"] for r in got])
    assert [fields_of(r) for r in got] == [
        {**fields_of(row), "reward": r["reward"], "verdict": r["verdict"]}
        for row, r in zip(case.rows, got, strict=True)
    ]


def test_score_cli_parquet_output_reads_back_as_the_rows_and_scores_the_same(case, tmp_path):
    pytest.importorskip("pyarrow")
    from rewardsmith.adapters.scoring.rows import read_rows

    src = write_jsonl(tmp_path / "rows.jsonl", case.rows)
    out = tmp_path / "scored.parquet"
    spec = case.spec_arg(tmp_path)
    assert score_cli(str(src), "-o", str(out), "--reward", spec) == 0
    back = [{k: v for k, v in row.data.items() if k not in ("reward", "verdict")} for row in read_rows(out)]
    assert [canonical(row) for row in back] == [canonical(row) for row in case.rows]  # types, None, keys: all kept
    again = tmp_path / "again.jsonl"
    write_jsonl(tmp_path / "back.jsonl", back)
    assert score_cli(str(tmp_path / "back.jsonl"), "-o", str(again), "--reward", spec) == 0
    assert [r["reward"] for r in read_jsonl(again)] == case.rewards("none")


# --------------------------------------------------------------------------- the reward server


@pytest.fixture(scope="module")
def server(case):
    pytest.importorskip("fastapi")
    from server_helpers import ServerThread

    from rewardsmith.adapters.serve.reward_server import ServerConfig

    with ServerThread(ServerConfig(reward=case.spec)) as running:
        yield running


def test_server_native_route(case, server):
    import httpx

    response = httpx.post(f"{server.url}/v1/score", json={"samples": case.rows}, timeout=120)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [v["status"] for v in body["verdicts"]] == case.statuses
    assert [v["score"] for v in body["verdicts"]] == [v.score for v in case.verdicts]
    assert body["rewards"] == case.rewards("none")
    assert_messages_kept(case, [v["details"] for v in body["verdicts"]])


# --------------------------------------------------------------------------- OpenRLHF


def templated(prompt: Any) -> str:
    """The prompt as OpenRLHF's prompt dataset hands it over (a Qwen-style chat template applied)."""
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


def openrlhf_rewards(executor: Any, rows: list[dict[str, Any]], label_form: str) -> list[dict[str, Any]]:
    """Every row through OpenRLHF 0.11.2's own reward call (one row per call, all in flight at once,
    as its rollout workers send them); the query is the decoded prompt + response, end token kept."""

    def label(row: dict[str, Any]) -> Any:
        return json.dumps(fields_of(row)) if label_form == "json" else fields_of(row)

    async def main() -> list[Any]:
        fetch = executor._fetch_rewards_via_func if executor.reward_func else executor._fetch_rewards_via_http
        calls = [
            fetch([templated(r["prompt"]) + r["completion"] + "<|im_end|>"], [templated(r["prompt"])], [label(r)])
            for r in rows
        ]
        return [answer[0] for answer in await asyncio.gather(*calls)]

    return asyncio.run(main())


def plain(value: Any) -> Any:
    return value.tolist() if hasattr(value, "tolist") else value


@pytest.mark.slow
@pytest.mark.parametrize("label_form", ["json", "dict"])
@pytest.mark.parametrize("channel", ["server", "exported_file"])
def test_openrlhf_client(case, server, tmp_path, channel, label_form):
    """A label column holding the row's fields, as JSON text or as a dict (a ``datasets`` struct
    column; OpenRLHF's client sends it as a JSON object): spread into fields either way."""
    agent = pytest.importorskip("openrlhf.utils.agent")
    from rewardsmith.adapters.trainers.openrlhf import log_keys

    picked = case.text_rows("OpenRLHF")
    rows = [case.rows[i] for i in picked]
    if channel == "server":
        url = f"{server.url}/get_reward"
        want = case.rewards("zero", picked)  # the server's default policy, and OpenRLHF's choice
    else:
        pytest.importorskip("torch")  # the exported file returns torch tensors (float32) when it can
        url = str(tmp_path / "reward_func.py")
        assert cli_main(["export", "openrlhf", "--reward", case.spec_arg(tmp_path), "-o", url]) == 0
        want = float32(case.rewards("zero", picked))  # the exported file returns float32 tensors
    executor = agent.SingleTurnAgentExecutor(remote_rm_url=url)
    assert (executor.reward_func is not None) == (channel == "exported_file")
    answers = openrlhf_rewards(executor, rows, label_form)
    assert [plain(a["rewards"]) for a in answers] == [[w] for w in want]
    statuses = [case.statuses[i] for i in picked]
    for answer, status in zip(answers, statuses, strict=True):
        logs = {k: plain(v) for k, v in answer["extra_logs"].items()}
        assert set(logs) == set(log_keys(build(case.spec)))
        assert [k for k, v in logs.items() if k.startswith("status_") and v == [1.0]] == [f"status_{status}"]


# --------------------------------------------------------------------------- TRL


class TrlTrainer:
    """What ``GRPOTrainer._calculate_rewards`` (TRL 1.16) reads of its trainer: it is called on this."""

    def __init__(self, funcs: list[Any]) -> None:
        import torch
        from accelerate import PartialState
        from transformers import TrainerState

        PartialState()  # what the trainer's Accelerator sets up; TRL's warnings need it

        self.reward_funcs = funcs
        self.reward_processing_classes = [None] * len(funcs)
        self.reward_func_names = [f.__name__ for f in funcs]
        self.accelerator = type("Accelerator", (), {"device": torch.device("cpu"), "is_main_process": True})()
        self.args = type("Args", (), {"report_to": []})()
        self.state = TrainerState()
        self.environments = None
        self.extra: dict[str, list[Any]] = {}
        self.metrics: dict[str, float] = {}

    def _log_completion_extra(self, column: str, values: list[Any]) -> None:
        self.extra[column] = values

    def _log_metric(self, name: str, value: float) -> None:
        self.metrics[name] = value


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "on_error"), [("columns", "none"), ("datasets_label_column", "none"), ("columns", "zero")]
)
def test_trl_reward_functions(case, source, on_error):
    """TRL passes every dataset column (but prompt and completion) to the reward functions as lists.
    ``columns``: the rows as columns of a table (every row has every column, None where it had no
    such field, as in any dataset); ``datasets_label_column``: the fields as one JSON column of a
    ``datasets`` table (the way nested fields survive Arrow unchanged), read with ``label_column``."""
    pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    import torch
    from trl import GRPOTrainer

    from rewardsmith.adapters.trainers.trl import reward_funcs, reward_weights

    expected = case
    if source == "columns":
        funcs = reward_funcs(case.spec, on_error=on_error)
        names = list(dict.fromkeys(name for row in case.rows for name in row))
        inputs = [{name: row.get(name) for name in names} for row in case.rows]
        expected = Case(inputs, case.spec, build(case.spec).verify_batch([Sample.from_row(r) for r in inputs]))
    else:
        funcs = reward_funcs(case.spec, label_column="label", on_error=on_error)
        table = datasets.Dataset.from_list([{"label": json.dumps(fields_of(row))} for row in case.rows])
        inputs = list(table)
    trainer = TrlTrainer(funcs)
    prompts = [row["prompt"] for row in case.rows]
    completions = [row["completion"] for row in case.rows]  # chat messages (tool_calls) stay messages
    per_func = GRPOTrainer._calculate_rewards(trainer, inputs, prompts, completions, [[1]] * len(prompts))
    weights = torch.tensor(reward_weights(case.spec), dtype=torch.float32)
    failed = torch.isnan(per_func).all(dim=1)  # TRL's unscorable rows: every function returned None
    totals = (per_func * weights).nansum(dim=1).masked_fill(failed, float("nan"))
    assert same(totals.tolist(), float32(expected.rewards(on_error)))
    if len(funcs) == 1:  # one function for the whole spec: its logged statuses are the spec's
        assert trainer.extra[f"{funcs[0].__name__}/status"] == expected.statuses


# --------------------------------------------------------------------------- verl


@pytest.fixture(scope="module")
def verl_tokenizer(tmp_path_factory):
    from verl_helpers import require_verl, save_byte_tokenizer

    require_verl()
    return save_byte_tokenizer(tmp_path_factory.mktemp("tokenizer"))


@pytest.fixture(scope="module")
def verl_config(case, verl_tokenizer, tmp_path_factory):
    """verl's composed config for this case's spec, by entry point: ``compute_score`` (the custom reward
    function, under verl's default manager) or ``manager`` (rewardsmith's). Hydra runs in a
    subprocess, so once per case and entry; each test gets a copy."""
    from verl_helpers import compose

    spec = case.spec_arg(tmp_path_factory.mktemp("spec"))
    composed: dict[str, Any] = {}

    def get(entry: str) -> Any:
        if entry not in composed:
            if entry == "compute_score":
                overrides = (
                    f"reward.custom_reward_function.path={REPO / 'adapters' / 'trainers' / 'verl.py'}",
                    "reward.custom_reward_function.name=compute_score",
                    f"+reward.custom_reward_function.reward_kwargs.reward={spec}",
                )
            else:
                overrides = (
                    "reward.reward_manager.source=importlib",
                    "reward.reward_manager.name=RewardsmithRewardManager",
                    "reward.reward_manager.module.path=pkg://rewardsmith.adapters.trainers.verl_manager",
                    f"+reward.reward_kwargs.reward={spec}",
                )
            composed[entry] = compose(f"actor_rollout_ref.model.path={verl_tokenizer}", *overrides)
        return copy.deepcopy(composed[entry])

    return get


def messages(prompt: Any) -> list[dict[str, Any]]:
    """The prompt as chat messages, as verl's datasets hold prompts."""
    return [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt


def verl_parquet(rows: list[dict[str, Any]], path: Path) -> Path:
    """The rows as verl's example preprocessing writes them (``datasets`` → parquet): the fields in
    ``reward_model.ground_truth`` as JSON text, which Arrow stores as it is; the prompt in
    ``extra_info`` too, where ``compute_score`` finds it (verl passes it no prompt)."""
    import datasets

    records = [
        {
            "data_source": row.get("data_source", "unknown"),
            "prompt": messages(row["prompt"]),
            "ability": "test",
            "reward_model": {"style": "rule", "ground_truth": json.dumps(fields_of(row))},
            "extra_info": {"split": "test", "index": i, "prompt": messages(row["prompt"])},
        }
        for i, row in enumerate(rows)
    ]
    datasets.Dataset.from_list(records).to_parquet(str(path))
    return path


def verl_columns(rows: list[dict[str, Any]], source: str, tokenizer: Any, folder: Path) -> dict[str, Any]:
    """The non-tensor columns verl's reward loop gets for ``rows``: ``parquet``: written as verl's
    preprocessing does, read by verl's ``RLHFDataset`` and batched by its ``collate_fn``;
    ``objects``: the fields as a dict ground truth in verl's numpy object arrays (``collate_fn``'s
    ``np.fromiter``), as a dataset built in memory hands them over."""
    import numpy as np
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    if source == "objects":
        column = lambda values: np.fromiter(values, dtype=object, count=len(rows))  # noqa: E731
        return {
            "data_source": column(row.get("data_source", "unknown") for row in rows),
            "reward_model": column({"style": "rule", "ground_truth": fields_of(row)} for row in rows),
            "extra_info": column({"index": i, "prompt": messages(row["prompt"])} for i, row in enumerate(rows)),
        }
    config = OmegaConf.create({"filter_overlong_prompts": False, "cache_dir": str(folder / "cache")})
    dataset = RLHFDataset(
        data_files=[str(verl_parquet(rows, folder / "train.parquet"))], tokenizer=tokenizer, config=config
    )
    loaded = collate_fn([dataset[i] for i in range(len(dataset))])
    return {k: v for k, v in loaded.items() if isinstance(v, np.ndarray) and v.dtype == object}


@pytest.mark.slow
@pytest.mark.parametrize("source", ["parquet", "objects"])
@pytest.mark.parametrize("entry", ["compute_score", "manager"])
def test_verl(case, verl_tokenizer, verl_config, tmp_path, monkeypatch, entry, source):
    from verl_helpers import load_tokenizer, make_batch, run_worker

    monkeypatch.delenv("REWARDSMITH_REWARD", raising=False)
    monkeypatch.delenv("REWARDSMITH_ON_ERROR", raising=False)
    picked = case.text_rows("verl")
    rows = [case.rows[i] for i in picked]
    tokenizer = load_tokenizer(verl_tokenizer)
    non_tensor = verl_columns(rows, source, tokenizer, tmp_path)
    texts = [{"prompt": Sample(prompt=r["prompt"]).prompt_text, "response": r["completion"]} for r in rows]
    data = make_batch(tokenizer, texts, non_tensor=non_tensor)
    _, outputs = run_worker(verl_config(entry), data)
    assert [o["reward_extra_info"]["status"] for o in outputs] == [case.statuses[i] for i in picked]
    assert [o["reward_score"] for o in outputs] == case.rewards("zero", picked)
    assert [o["reward_extra_info"]["error"] for o in outputs] == [float(case.statuses[i] == "error") for i in picked]


# --------------------------------------------------------------------------- the GRPO loop


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from grpo_helpers import make_tiny_llama

    from rewardsmith.reward_models.loading import load_tokenizer

    path = make_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))
    return path, load_tokenizer(path, padded=True)


@pytest.mark.slow
@pytest.mark.parametrize("prompts_file", ["prompts.jsonl", "prompts.parquet"])
def test_grpo_loop_reward_path(case, tiny_policy, tmp_path, prompts_file):
    """Prompts and their fields read from a file as ``rewardsmith train grpo`` reads them (JSONL, or
    parquet as ``rewardsmith score`` writes it); the completions the sampler returns as token ids,
    decoded and scored by the loop's own ``score``."""
    import torch
    from grpo_helpers import ReplayGenerator
    from transformers import AutoModelForCausalLM

    from rewardsmith.adapters.grpo.config import GRPOConfig
    from rewardsmith.adapters.grpo.data import load_prompts
    from rewardsmith.adapters.grpo.loop import GRPOTrainer

    path, tokenizer = tiny_policy
    picked = case.text_rows("the GRPO loop")
    rows = [case.rows[i] for i in picked]
    prompt_rows = [{k: v for k, v in row.items() if k != "completion"} for row in rows]
    if prompts_file.endswith(".parquet"):
        pytest.importorskip("pyarrow")
        from rewardsmith.adapters.scoring.outputs import write_parquet

        write_parquet(lambda: iter(prompt_rows), tmp_path / prompts_file)
    else:
        write_jsonl(tmp_path / prompts_file, prompt_rows)
    prompts = load_prompts(tmp_path / prompts_file, tokenizer)
    assert len(prompts.prompts) == len(rows), prompts.describe()
    ids = [
        tokenizer(row["completion"], add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id] for row in rows
    ]
    assert tokenizer.batch_decode(ids, skip_special_tokens=True) == [row["completion"] for row in rows]
    config = GRPOConfig.from_mapping(
        {
            "model": path,
            "output_dir": str(tmp_path / "out"),
            "device": "cpu",
            "max_completion_length": max(map(len, ids)) + 1,
        }
    )
    trainer = GRPOTrainer(
        config,
        prompts,
        reward=build(case.spec),
        tokenizer=tokenizer,
        model=AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32),
        generator=ReplayGenerator(ids, {tokenizer.eos_token_id}),
        progress=False,
    )
    sampled = trainer.generator.generate([list(p.ids) for p in prompts.prompts], 1, trainer.sampling)
    batch = trainer.score(prompts.prompts, sampled, 1)
    assert [v.status for v in batch.verdicts] == [case.statuses[i] for i in picked]
    assert [v.score for v in batch.verdicts] == [case.verdicts[i].score for i in picked]
    assert same(batch.rewards.tolist(), float32(case.rewards("none", picked)))  # NaN: left out, never paid 0
