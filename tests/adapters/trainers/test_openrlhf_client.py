"""OpenRLHF 0.11.2's own code against rewardsmith (issue 11, items 2, 11 and 12).

Real parts: OpenRLHF's reward client (``openrlhf.utils.agent.SingleTurnAgentExecutor``: it
tokenizes the prompt, cuts it from the left when it is too long, decodes prompt + response
into the query and posts it to ``--reward.remote_url``, or loads a ``reward_func.py`` from a
path), its ``Experience`` merging (``concat_experiences``, ``split_experience_batch``,
``make_experience_batch``), SmolLM2's real tokenizer and chat template, and the reward server
on uvicorn. Stand-ins, because they cannot run here: vLLM's engine (``ScriptedEngine`` returns
the tokens of a scripted response) and its ``SamplingParams``; the three lines of
``samples_generator._process_response_into_experience`` that turn ``extra_logs`` into
``info`` and the mean in ``PPOActor.training_step`` (both modules import ray, vLLM and
deepspeed) are replicated exactly, as :func:`experience_from` and :func:`logged_means`.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import importlib.metadata
import importlib.util
import itertools
import json
import math
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import REPO

agent = pytest.importorskip(
    "openrlhf.utils.agent",
    reason="OpenRLHF 0.11.2's client: pip install --no-deps openrlhf==0.11.2 && pip install aiohttp pylatexenc "
    "(tests/run.sh does)",
)
torch = pytest.importorskip("torch")
from openrlhf.trainer.ppo_utils.experience import (  # noqa: E402
    Experience,
    make_experience_batch,
    split_experience_batch,
)
from server_helpers import ServerThread  # noqa: E402

from rewardsmith.adapters.cli import main as cli_main  # noqa: E402
from rewardsmith.adapters.fields import label_fields  # noqa: E402
from rewardsmith.adapters.serve.reward_server import ServerConfig  # noqa: E402
from rewardsmith.adapters.trainers.openrlhf import component_paths, log_keys  # noqa: E402
from rewardsmith.verifiers import Sample, Verdict, build  # noqa: E402

pytestmark = pytest.mark.slow  # a tokenizer load and real HTTP round trips per row

MATH = {"type": "math", "workers": 0}
ROUTED = {
    "type": "route", "field": "data_source",
    "routes": {
        "gsm8k": {"type": "weighted", "weights": [1.0, 0.2], "correct_from": "math",
                  "parts": [MATH, {"type": "format", "tags": ["think", "answer"], "mode": "soft"}]},
        "math": {"type": "gate", "when": {"type": "format", "tags": ["think", "answer"]}, "then": MATH},
    },
}
LONG_QUESTION = ("Read the whole statement. " + "Some context that does not matter. " * 30
                 + "A student claims the answer is 42; check the claim and box the right answer.")


def test_the_installed_client_is_the_release_the_docs_name():
    assert importlib.metadata.version("openrlhf") == "0.11.2"


def openrlhf_parser() -> argparse.ArgumentParser:
    """OpenRLHF 0.11.2's own ``train_ppo_ray`` parser, built from its installed source: the
    module's ``__main__`` block up to ``parse_args`` (the module itself imports ray, vLLM and
    deepspeed at the top, so it cannot be imported here; its stdlib imports are kept)."""
    path = Path(importlib.util.find_spec("openrlhf").submodule_search_locations[0]) / "cli" / "train_ppo_ray.py"
    tree = ast.parse(path.read_text())

    def stdlib(node: ast.Import | ast.ImportFrom) -> bool:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        return all(n.split(".")[0] in sys.stdlib_module_names for n in names)

    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom) and stdlib(n)]
    main = next(n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))
    body = list(itertools.takewhile(lambda stmt: "parse_args" not in ast.unparse(stmt), main.body))
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=imports + body, type_ignores=[]), str(path), "exec"), namespace)
    return namespace["parser"]


def test_every_openrlhf_command_line_we_print_is_accepted_by_its_real_parser(tmp_path, capsys):
    from openrlhf.utils.config import hierarchize

    from rewardsmith.adapters.trainers.openrlhf import export_source

    texts = [export_source("math", filename="reward_func.py")]
    for command in (["serve", "--help"], ["export", "openrlhf", "--help"]):
        with pytest.raises(SystemExit):
            cli_main(command)
        texts.append(capsys.readouterr().out)
    cli_main(["export", "openrlhf", "--reward", "math", "-o", str(tmp_path / "reward_func.py")])
    texts.append(capsys.readouterr().out)
    page = (REPO / "docs" / "trainers.md").read_text()
    texts.append(page[page.index("## OpenRLHF"):page.index("## verl")])
    parser = openrlhf_parser()
    checked = 0
    for text in texts:
        for line in (line for line in text.splitlines() if "--reward.remote_url" in line):
            pairs = re.findall(r"(--(?:reward|data)\.[a-z_]+) (<[^>]+>|\S+)", line)
            argv = [item if not item.startswith("<") else "answer" for pair in pairs for item in pair]
            args = hierarchize(parser.parse_args(argv))  # exits on a flag 0.11.2 does not declare
            assert args.reward.remote_url == dict(pairs)["--reward.remote_url"], line
            checked += 1
    assert checked >= 5
    with pytest.raises(SystemExit):  # the spelling of older releases is refused by this one
        parser.parse_args(["--remote_rm_url", "http://127.0.0.1:8000/get_reward"])
    assert "unrecognized arguments: --remote_rm_url" in capsys.readouterr().err


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from rewardsmith.reward_models.loading import smollm2_model_dir

    return AutoTokenizer.from_pretrained(smollm2_model_dir())


def chat(tokenizer, question: str) -> str:
    """The prompt as OpenRLHF's prompt dataset hands it over: chat template applied, as text."""
    return tokenizer.apply_chat_template([{"role": "user", "content": question}], tokenize=False,
                                         add_generation_prompt=True)


class ScriptedEngine:
    """Stand-in for vLLM's async engine (not runnable here): 'generates' a fixed response."""

    def __init__(self, tokenizer, response: str) -> None:
        self.tokenizer, self.response = tokenizer, response
        self.prompt_token_ids: list[int] = []

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        self.prompt_token_ids = list(prompt_token_ids)
        ids = self.tokenizer(text=self.response + "<|im_end|>", add_special_tokens=False)["input_ids"]
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, text=self.response, finish_reason="stop",
                                                        logprobs=None)])


def rollout(executor, tokenizer, prompt: str, label: Any, response: str, max_length: int = 1024) -> tuple[dict, str]:
    """One OpenRLHF rollout through the real executor; returns its output and the query it sent."""
    engine = ScriptedEngine(tokenizer, response)
    params = SimpleNamespace(max_tokens=64, logprobs=None)  # vllm.SamplingParams' two fields it reads
    output = asyncio.run(executor.execute(prompt, label, params, max_length, tokenizer, engine))
    return output, tokenizer.decode(output["observation_tokens"], skip_special_tokens=False)


def expected(spec: Any, prompt: str, label: Any, response: str) -> Verdict:
    return build(spec).verify(Sample(prompt=prompt, completion=response, fields=label_fields(label)))


def math_rows(tokenizer) -> list[tuple[str, str, str, int]]:
    """(prompt, label, response, max_length); the last two prompts are cut by OpenRLHF to fit."""
    long_prompt = chat(tokenizer, LONG_QUESTION)
    return [
        (chat(tokenizer, "What is 2+2?"), "4", "2+2 is \\boxed{4}.", 1024),
        (chat(tokenizer, "What is 3*5?"), "15", "3*5 = 16, so the answer is 16", 1024),
        (chat(tokenizer, "What is 10-7?"), "3", "I don't know", 1024),
        (long_prompt, "42", "no idea", 64 + 40),  # the kept tail says "the answer is 42"
        (long_prompt, "42", "It is \\boxed{42}.", 64 + 40),
    ]


def test_real_client_gets_the_spec_reward_for_every_row_including_a_cut_prompt(tokenizer):
    with ServerThread(ServerConfig(reward=MATH)) as server:
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/get_reward")
        for prompt, label, response, max_length in math_rows(tokenizer):
            output, query = rollout(executor, tokenizer, prompt, label, response, max_length)
            want = expected(MATH, prompt, label, response)
            assert output["reward"] == [want.score], (query, output)
            assert output["scores"] == [1.0 if want.correct else 0.0]
            assert set(output["extra_logs"]) == set(log_keys(build(MATH)))
            assert all(len(v) == 1 for v in output["extra_logs"].values())
            if max_length < 1024:  # OpenRLHF really cut the prompt: the query holds only its tail
                assert not query.startswith(prompt) and "the answer is 42" in query
    rewards = [expected(MATH, p, lab, r).score for p, lab, r, _ in math_rows(tokenizer)]
    assert rewards == [1.0, 0.0, 0.0, 0.0, 1.0]  # "no idea" after a cut prompt earns nothing


def test_real_client_loads_the_exported_reward_func_and_gets_the_same_rewards(tokenizer, tmp_path):
    path = tmp_path / "reward_func.py"
    spec_file = tmp_path / "reward.json"
    spec_file.write_text(json.dumps(MATH))
    assert cli_main(["export", "openrlhf", "--reward", str(spec_file), "-o", str(path)]) == 0
    executor = agent.SingleTurnAgentExecutor(remote_rm_url=str(path))  # OpenRLHF loads the .py by path
    assert executor.reward_func is not None
    for prompt, label, response, max_length in math_rows(tokenizer):
        output, _ = rollout(executor, tokenizer, prompt, label, response, max_length)
        want = expected(MATH, prompt, label, response)
        assert output["reward"].tolist() == [want.score]
        assert set(output["extra_logs"]) == set(log_keys(build(MATH)))


def test_real_client_loads_the_exported_server_client_which_sends_the_token(tokenizer, tmp_path, monkeypatch):
    """Several nodes (issue 27, item 9): the server requires a token; OpenRLHF's own HTTP client
    sends no headers, so it loads the file `export openrlhf --url --token-file` writes, which posts
    to the server with the token it reads at each call; a rollout without the token gets no reward."""
    import secrets

    from rewardsmith.adapters.serve.auth import TOKEN_ENV

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    token_file = tmp_path / "token"
    token_file.write_text(secrets.token_urlsafe(32) + "\n")
    path = tmp_path / "reward_func.py"
    with ServerThread(ServerConfig(reward=MATH, token_file=str(token_file))) as server:
        assert cli_main(["export", "openrlhf", "--url", server.url, "--token-file", str(token_file),
                         "-o", str(path)]) == 0
        assert token_file.read_text().strip() not in path.read_text()
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=str(path))
        for prompt, label, response, max_length in math_rows(tokenizer):
            output, _ = rollout(executor, tokenizer, prompt, label, response, max_length)
            want = expected(MATH, prompt, label, response)
            assert output["reward"].tolist() == [want.score]
            assert set(output["extra_logs"]) == set(log_keys(build(MATH)))
        plain = agent.SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/get_reward")  # no header: 401
        prompt, label, response, _ = math_rows(tokenizer)[0]
        output, _ = rollout(plain, tokenizer, prompt, label, response)  # its 5 tries, 1 s apart
    assert output["reward"] is None


def test_on_error_raise_reaches_the_real_client_as_a_missing_reward(tokenizer):
    """What --on-error raise does in OpenRLHF 0.11.2: a 500, which its client retries (5 times,
    1 s apart), then logs and leaves the reward None; zero gives 0 and counts status_error."""
    label = json.dumps({"s": 0.9, "st": "error"})
    prompt = chat(tokenizer, "Anything")
    with ServerThread(ServerConfig(reward="test_field_score")) as server:
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/get_reward")
        output, _ = rollout(executor, tokenizer, prompt, label, "x")
    assert output["reward"] == [0.0] and output["extra_logs"]["status_error"] == [1.0]
    with ServerThread(ServerConfig(reward="test_field_score", on_error="raise")) as server:
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/get_reward")
        output, _ = rollout(executor, tokenizer, prompt, label, "x")
    assert output["reward"] is None and output["extra_logs"] == {}


# ---------------------------------------------------------------- extra_logs through OpenRLHF's merging


def experience_from(output: dict) -> Experience:
    """``SamplesGenerator._process_response_into_experience`` of OpenRLHF 0.11.2, the parts that
    touch rewards and ``info`` (replicated: that module imports ray and vLLM)."""
    tokens = torch.tensor(output["observation_tokens"], dtype=torch.long)
    start, end = output["action_ranges"][0]
    action_mask = torch.zeros(len(tokens), dtype=torch.long)
    action_mask[start:end] = 1
    info = {"response_clip_ratio": torch.tensor([False]), "reward": torch.tensor([output["reward"]]),
            "score": torch.tensor([output["scores"]])}
    for key, value in output["extra_logs"].items():
        if isinstance(value, torch.Tensor):
            value = value.flatten()[0].item()
        info[key] = torch.tensor([value])
    return Experience(
        sequences=tokens.unsqueeze(0), attention_mask=torch.ones_like(tokens).unsqueeze(0),
        action_mask=action_mask[1:].unsqueeze(0), prompts=[output["prompt"]], labels=[output["label"]],
        images=[None], mm_train_inputs=[None], rewards=torch.tensor([output["reward"]]),
        scores=torch.tensor([output["scores"]]), response_length=torch.tensor([end - start]),
        truncated=torch.tensor([False]), total_length=torch.tensor([float(len(tokens))]), info=info,
    )


def logged_means(batch: Experience) -> dict[str, float]:
    """``PPOActor.training_step`` + ``ppo_train`` of OpenRLHF 0.11.2 for one micro-batch: every
    ``info`` entry becomes a float tensor and is logged as its plain mean (replicated)."""
    means = {}
    for key, value in batch.info.items():
        tensor = value if isinstance(value, torch.Tensor) else torch.tensor(value, dtype=torch.float)
        means[key] = tensor.float().mean().item()
    return means


def routed_rows(tokenizer) -> list[tuple[str, str, str]]:
    gsm8k = lambda answer: json.dumps({"answer": answer, "data_source": "gsm8k"})  # noqa: E731
    hard = lambda answer: json.dumps({"answer": answer, "data_source": "math"})  # noqa: E731
    prompt = chat(tokenizer, "Compute it.")
    return [
        (prompt, gsm8k("4"), "<think>2+2</think><answer>4</answer>"),
        (prompt, gsm8k("4"), "the answer is 5"),
        (prompt, gsm8k("7"), "<think>hm</think> \\boxed{7}"),
        (prompt, hard("9"), "<think>3*3</think><answer>9</answer>"),  # gate passed, right
        (prompt, hard("9"), "<think>3*3</think><answer>8</answer>"),  # gate passed, wrong
        (prompt, hard("9"), "\\boxed{9}"),  # gate not passed: its math part never ran
        (prompt, hard("2"), "no tags, no answer"),
    ]


def test_extra_logs_survive_openrlhfs_merge_and_mean_without_invented_zeros(tokenizer):
    verifier = build(ROUTED)
    rows = routed_rows(tokenizer)
    with ServerThread(ServerConfig(reward=ROUTED)) as server:
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/get_reward")
        outputs = [rollout(executor, tokenizer, p, lab, r)[0] for p, lab, r in rows]
    keys = set(log_keys(verifier))
    assert all(set(o["extra_logs"]) == keys for o in outputs)  # the same key set in every answer
    paths = component_paths(verifier)
    assert {"gsm8k.math", "gsm8k.format", "math.format", "math.math"} <= set(paths)  # nested parts too

    # OpenRLHF's real merging: per-sample experiences -> one rollout batch -> split -> micro-batch.
    merged = Experience.concat_experiences([experience_from(o) for o in outputs], pad_token_id=0)
    batch = make_experience_batch(split_experience_batch(merged))
    means = logged_means(batch)
    assert not any(math.isnan(v) for v in means.values())

    verdicts = [expected(ROUTED, p, lab, r) for p, lab, r in rows]
    assert means["reward"] == pytest.approx(sum(v.score for v in verdicts) / len(rows))
    for path in paths:
        having = [part.score for v in verdicts for p, part in v.walk() if p == path and part.status != "error"]
        key = f"component/{path}"
        assert means[f"{key}/present"] == pytest.approx(len(having) / len(rows)), path
        if having:  # the mean over the rows that have the component, recovered from two plain means
            assert means[key] / means[f"{key}/present"] == pytest.approx(sum(having) / len(having)), path
    # The gate's math part ran on 2 of the 4 "math" rows; a 0 for the others would halve its mean.
    assert means["component/math.math/present"] == pytest.approx(2 / 7)
    assert means["component/math.math"] / means["component/math.math/present"] == pytest.approx(0.5)


def test_bundled_reward_yaml_scores_openrlhfs_rows_unchanged(tokenizer):
    """OpenRLHF sends no data_source: its rows take data/reward.yaml's default route, and a JSON
    label naming one reaches that route; never invalid_input for want of a routing field."""
    spec = str(REPO / "data" / "reward.yaml")
    prompt = chat(tokenizer, "What is 2+2?")
    rows = [
        ("4", "<think>2+2</think><answer>4</answer>"),  # OpenRLHF's default: the label is the answer
        ("5", "<think>2+2</think><answer>4</answer>"),
        ("4", "I don't know"),
        (json.dumps({"answer": "4", "data_source": "openai/gsm8k"}), "<think>2+2</think><answer>4</answer>"),
        (json.dumps({"answer": "4", "data_source": "lighteval/MATH"}), "\\boxed{4}"),
    ]
    with ServerThread(ServerConfig(reward=spec)) as server:
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=f"{server.url}/get_reward")
        outputs = [rollout(executor, tokenizer, prompt, label, response)[0] for label, response in rows]
    verdicts = [expected(spec, prompt, label, response) for label, response in rows]
    assert [o["reward"] for o in outputs] == [[v.score] for v in verdicts]
    assert [v.status for v in verdicts] == ["ok", "ok", "no_answer", "ok", "ok"]
    assert [v.score for v in verdicts] == [1.0, 0.0, 0.0, pytest.approx(1.2), 1.0]
    assert [o["extra_logs"]["status_invalid_input"] for o in outputs] == [[0.0]] * len(rows)
    taken = [[p for p in ("default", "gsm8k", "math") if o["extra_logs"][f"component/{p}/present"] == [1.0]]
             for o in outputs]
    assert taken == [["default"], ["default"], ["default"], ["gsm8k"], ["math"]]
