"""The reward server, for real: uvicorn on 127.0.0.1 (a free port) driven over HTTP with httpx.

The requests below have the shape OpenRLHF 0.11.2's client sends (a JSON body with ``query``,
``prompts`` and ``labels``, each query the decoded prompt + response with special tokens kept),
built by hand to cover many cases cheaply; ``test_openrlhf_client.py`` drives that real client
(and OpenRLHF's real parser) against the server.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from server_helpers import OPENRLHF_REQUEST, PROMPTS, ServerThread, free_port, metric_samples

from rewardsmith.adapters.cli import main as cli_main
from rewardsmith.adapters.serve.reward_server import ServerConfig
from rewardsmith.adapters.trainers.openrlhf import split_response
from rewardsmith.verifiers import Verdict, Verifier, build, register

MATH = {"type": "math", "workers": 0}

@register("test_server_slow")
class SlowVerifier(Verifier):
    """Test-only: sleeps ``delay_s`` per batch, counts batches; score = 1."""

    name = "test_server_slow"

    def __init__(self, delay_s: float = 0.5) -> None:
        self.delay_s = delay_s
        self.batches: list[int] = []

    def verify_batch(self, samples):
        self.batches.append(len(samples))
        time.sleep(self.delay_s)
        return [Verdict(score=1.0, correct=True) for _ in samples]


@pytest.fixture(scope="module")
def math_server():
    with ServerThread(ServerConfig(reward=MATH, max_body_mb=0.01)) as server:
        yield server


def test_split_response_drops_prompt_and_end_tokens():
    assert split_response("<s>" + PROMPTS[0] + "x \\boxed{4}<|im_end|><|endoftext|>", PROMPTS[0]) == "x \\boxed{4}"
    assert split_response("no prompt here</s>", None) == "no prompt here"


LONG_PROMPT = ("<|im_start|>user\nA long problem statement. " + "Some context. " * 40
               + "A student claims the answer is 42; check it and box the right answer.<|im_end|>\n"
               "<|im_start|>assistant\n")


def test_split_response_after_a_truncated_prompt_is_anchored_at_the_start():
    truncated = LONG_PROMPT[300:]  # OpenRLHF cut the prompt to prompt_max_len: only its tail is in the query
    assert split_response(truncated + "no idea<|im_end|>", LONG_PROMPT) == "no idea"
    # A response that repeats the prompt cannot move the split to after its own copy.
    echo = split_response(truncated + "no idea. " + LONG_PROMPT + "\\boxed{7}", LONG_PROMPT)
    assert echo.startswith("no idea. ") and echo.endswith("\\boxed{7}")
    # A query that starts with no tail of the prompt: not separable, never scored whole.
    assert split_response("The answer is 42. " + LONG_PROMPT, LONG_PROMPT) is None
    assert split_response("xyz" + LONG_PROMPT[-20:] + "ok", LONG_PROMPT) is None


def test_a_truncated_prompts_numbers_never_earn_reward():
    from rewardsmith.adapters.trainers.openrlhf import score_queries

    verifier = build(MATH)
    truncated = LONG_PROMPT[300:]
    queries = [truncated + "no idea<|im_end|>", "garbled " + truncated + "no idea", truncated + "\\boxed{42}"]
    result = score_queries(verifier, queries, [LONG_PROMPT] * 3, ["42"] * 3)
    assert result["rewards"] == [0.0, 0.0, 1.0]  # the whole query would read the prompt's "the answer is 42"
    assert result["extra_logs"]["status_no_answer"][0] == 1.0
    assert result["extra_logs"]["status_invalid_input"][1] == 1.0
    samples_verdict = verifier.verify(__import__("rewardsmith.adapters.trainers.openrlhf", fromlist=["to_samples"])
                                      .to_samples(queries[1:2], [LONG_PROMPT], ["42"])[0])
    assert samples_verdict.status == "invalid_input" and "tail of it" in samples_verdict.feedback


def test_get_reward_openrlhf_request(math_server):
    r = httpx.post(f"{math_server.url}/get_reward", json=OPENRLHF_REQUEST)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["rewards"] == [1.0, 0.0, 0.0]
    assert body["scores"] == [1.0, 0.0, 0.0]
    # OpenRLHF concatenates every extra_logs key across requests and splits it per sample.
    assert all(len(v) == 3 for v in body["extra_logs"].values())
    assert body["extra_logs"]["status_no_answer"] == [0.0, 0.0, 1.0]
    assert body["extra_logs"]["status_error"] == [0.0, 0.0, 0.0]


def test_native_score(math_server):
    samples = [{"prompt": "p", "completion": "#### 18", "answer": "18"},
               {"prompt": "p", "completion": [{"role": "assistant", "content": "\\boxed{2}"}], "answer": "3"}]
    r = httpx.post(f"{math_server.url}/v1/score", json={"samples": samples})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["rewards"] == [1.0, 0.0]
    assert [v["status"] for v in body["verdicts"]] == ["ok", "ok"]
    assert body["verdicts"][0]["details"]["extracted"] == "18"


@register("test_server_echo")
class EchoVerifier(Verifier):
    """Test-only: pays 1 and quotes the completion in its details, with a number Python will not
    print (as a verifier that reports an extracted answer or a computed value does)."""

    name = "test_server_echo"

    def verify_batch(self, samples):
        return [Verdict(score=1.0, correct=True, details={"quoted": s.completion, "value": 10**5000})
                for s in samples]


def test_a_completion_of_odd_text_gets_its_reward_not_a_500(math_server):
    """Think like the policy: a completion holding a lone surrogate (JSON's "\\ud800" escape decodes to
    one, which UTF-8 cannot encode), NUL or a Unicode line break, quoted back in a verdict, must not
    turn the batch into a 500 (a trainer drops or retries the batch, so a policy learns to cause it):
    the body is written as `rewardsmith score` writes rows, and reads back as the same strings."""
    odd = "\\boxed{5\ud800} \x00 \u2028 \x85"
    samples = [{"prompt": "p", "completion": odd, "answer": "5"},
               {"prompt": "p", "completion": "\\boxed{5}", "answer": "5"}]
    body = json.dumps({"samples": samples}).encode()  # ensure_ascii: the surrogate travels as its escape
    r = httpx.post(f"{math_server.url}/v1/score", content=body)
    assert r.status_code == 200, r.text
    verdicts = r.json()["verdicts"]
    assert r.json()["rewards"] == [0.0, 1.0] and verdicts[0]["status"] == "no_answer"
    assert verdicts[0]["details"]["extracted"] == "5\ud800"  # the same string back, escaped on the wire
    assert b"\\ud800" in r.content and "\u2028".encode() not in r.content
    with ServerThread(ServerConfig(reward="test_server_echo")) as echo:
        r = httpx.post(f"{echo.url}/v1/score",
                       content=json.dumps({"samples": [{"prompt": "p", "completion": "a\udfff"}]}).encode())
    assert r.status_code == 200, r.text
    verdict = r.json()["verdicts"][0]
    assert verdict["details"]["quoted"] == "a\udfff" and verdict["details"]["value"] == "1" + "0" * 5000


@pytest.mark.parametrize(
    ("route", "content", "code", "needle"),
    [
        ("/get_reward", b"{not json", 400, "not valid JSON"),
        ("/get_reward", json.dumps({"query": "a string"}).encode(), 422, "'query'"),
        ("/get_reward", json.dumps({"query": ["a"], "prompts": ["a", "b"]}).encode(), 422, "'prompts'"),
        ("/get_reward", json.dumps({"query": ["a"], "labels": "4"}).encode(), 422, "'labels'"),
        ("/v1/score", json.dumps({"samples": [{"completion": 5}]}).encode(), 422, "samples[0].completion"),
        ("/v1/score", json.dumps({"samples": [], "reward": "nope"}).encode(), 400, "math"),
        ("/get_reward", json.dumps({"query": ["x" * 20000]}).encode(), 413, "limit"),
    ],
)
def test_bad_requests_get_4xx_and_server_keeps_serving(math_server, route, content, code, needle):
    r = httpx.post(math_server.url + route, content=content, headers={"content-type": "application/json"})
    assert r.status_code == code, r.text
    assert needle in r.json()["error"]
    assert httpx.get(f"{math_server.url}/health").json()["status"] == "ok"
    ok = httpx.post(f"{math_server.url}/get_reward", json=OPENRLHF_REQUEST)
    assert ok.status_code == 200 and ok.json()["rewards"] == [1.0, 0.0, 0.0]


def test_oversized_body_without_content_length_is_refused(math_server):
    def chunks():
        for _ in range(20):
            yield b"x" * 1000

    r = httpx.post(f"{math_server.url}/get_reward", content=chunks())
    assert r.status_code == 413


def test_health_and_metrics(math_server):
    before = metric_samples(httpx.get(f"{math_server.url}/metrics").text)
    httpx.post(f"{math_server.url}/get_reward", json=OPENRLHF_REQUEST)
    httpx.post(f"{math_server.url}/get_reward", content=b"{bad")
    health = httpx.get(f"{math_server.url}/health").json()
    assert health["status"] == "ok" and health["reward"] == "math"
    r = httpx.get(f"{math_server.url}/metrics")
    assert r.headers["content-type"].startswith("text/plain")
    after = metric_samples(r.text)

    def grew(name: str, **labels: str) -> float:
        key = (name, frozenset(labels.items()))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert grew("rewardsmith_requests_total", route="/get_reward", code="200") == 1
    assert grew("rewardsmith_requests_total", route="/get_reward", code="400") == 1
    assert grew("rewardsmith_request_seconds_count", route="/get_reward") == 2
    assert grew("rewardsmith_request_seconds_bucket", route="/get_reward", le="+Inf") == 2
    assert grew("rewardsmith_verdicts_total", status="ok") == 2  # 4 -> boxed, 16 vs 15 -> wrong
    assert grew("rewardsmith_verdicts_total", status="no_answer") == 1
    assert grew("rewardsmith_batched_samples_total") == 3
    assert after[("rewardsmith_in_flight", frozenset())] == 0


async def _concurrent(url: str, n: int, payload: dict) -> list[httpx.Response]:
    async with httpx.AsyncClient(timeout=30) as client:
        return await asyncio.gather(*(client.post(url, json=payload) for _ in range(n)))


def test_micro_batching_merges_concurrent_requests():
    verifier = SlowVerifier(delay_s=0.2)
    with ServerThread(ServerConfig(reward="test_server_slow", batch_window_ms=50), verifier) as server:
        responses = asyncio.run(_concurrent(f"{server.url}/get_reward", 8, {"query": ["a", "b"]}))
    assert [r.status_code for r in responses] == [200] * 8
    assert all(r.json()["rewards"] == [1.0, 1.0] for r in responses)
    assert sum(verifier.batches) == 16
    assert len(verifier.batches) < 8, verifier.batches


def test_full_queue_gets_503_with_retry_after():
    verifier = SlowVerifier(delay_s=0.5)
    with ServerThread(ServerConfig(reward="test_server_slow", max_queue=2), verifier) as server:
        responses = asyncio.run(_concurrent(f"{server.url}/get_reward", 6, {"query": ["a"]}))
        codes = sorted(r.status_code for r in responses)
        assert codes.count(200) >= 2 and 503 in codes, codes
        refused = next(r for r in responses if r.status_code == 503)
        assert refused.headers["retry-after"] == "1"
        assert "busy" in refused.json()["error"]
        assert httpx.post(f"{server.url}/get_reward", json={"query": ["a"]}, timeout=10).status_code == 200


def test_slow_request_gets_504():
    with ServerThread(ServerConfig(reward="test_server_slow", timeout_s=0.2), SlowVerifier(delay_s=1.0)) as server:
        r = httpx.post(f"{server.url}/get_reward", json={"query": ["a"]}, timeout=10)
    assert r.status_code == 504 and "longer than" in r.json()["error"]


def test_on_error_policies():
    # A JSON-object label is spread into fields: test_field_score reads "s" and "st".
    request = {"query": ["a", "b"], "labels": [json.dumps({"s": 0.7}), json.dumps({"s": 0.9, "st": "error"})]}
    with ServerThread(ServerConfig(reward="test_field_score")) as server:
        body = httpx.post(f"{server.url}/get_reward", json=request).json()
    assert body["rewards"] == [0.7, 0.0]
    assert body["extra_logs"]["status_error"] == [0.0, 1.0]
    with ServerThread(ServerConfig(reward="test_field_score", on_error="raise")) as server:
        r = httpx.post(f"{server.url}/get_reward", json=request)
        assert r.status_code == 500 and "status=error" in r.json()["error"]


@pytest.mark.slow
def test_graceful_shutdown_finishes_in_flight_request():
    server = ServerThread(ServerConfig(reward="test_server_slow"), SlowVerifier(delay_s=1.0)).__enter__()
    result: dict[str, httpx.Response] = {}
    client = threading.Thread(
        target=lambda: result.update(r=httpx.post(f"{server.url}/get_reward", json={"query": ["a"]}, timeout=20))
    )
    client.start()
    time.sleep(0.3)  # the request is being scored
    server.stop()
    client.join(20)
    assert result["r"].status_code == 200 and result["r"].json()["rewards"] == [1.0]
    assert not server.thread.is_alive()


def test_export_openrlhf_reward_func_matches_server(tmp_path, math_server):
    out = tmp_path / "reward_func.py"
    assert cli_main(["export", "openrlhf", "--reward", str(_spec_file(tmp_path)), "-o", str(out)]) == 0
    # How OpenRLHF loads --reward.remote_url *.py: importlib from a path, then reward_func.
    spec = importlib.util.spec_from_file_location("reward_func", str(out))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    got = module.reward_func(OPENRLHF_REQUEST["query"], OPENRLHF_REQUEST["prompts"], OPENRLHF_REQUEST["labels"])
    lists = {k: _as_list(v) for k, v in got.items() if k != "extra_logs"}
    lists["extra_logs"] = {k: _as_list(v) for k, v in got["extra_logs"].items()}
    served = httpx.post(f"{math_server.url}/get_reward", json=OPENRLHF_REQUEST).json()
    assert lists == served


def _spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "reward.json"
    path.write_text(json.dumps(MATH))
    return path


def _as_list(value):
    return value.tolist() if hasattr(value, "tolist") else list(value)


@pytest.mark.slow
def test_cli_serve_with_workers_and_sigterm(tmp_path):
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rewardsmith.adapters.cli", "serve", "--reward", "math", "--port", str(port),
         "--workers", "2", "--log-level", "warning"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read().decode()
            time.sleep(0.2)
        r = httpx.post(f"{url}/get_reward", json=OPENRLHF_REQUEST, timeout=30)
        assert r.status_code == 200 and r.json()["rewards"] == [1.0, 0.0, 0.0]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_spec_fails_at_build():
    with pytest.raises(ValueError, match="available"):
        build("no_such_reward_anywhere")
    assert cli_main(["serve", "--reward", "no_such_reward_anywhere"]) == 2


def test_openrlhf_flags_are_the_ones_its_0_11_parser_declares(capsys, tmp_path):
    """OpenRLHF 0.11.2's train_ppo_ray parser declares --reward.remote_url and --data.label_key
    and rejects the older --remote_rm_url/--label_key (the names, without OpenRLHF installed;
    test_openrlhf_client.py parses every printed command line with that real parser)."""
    from rewardsmith.adapters.trainers.openrlhf import export_source

    texts = [export_source("math", filename="reward_func.py")]
    for command in (["serve", "--help"], ["export", "openrlhf", "--help"]):
        with pytest.raises(SystemExit):
            cli_main(command)
        texts.append(capsys.readouterr().out)
    cli_main(["export", "openrlhf", "--reward", "math", "-o", str(tmp_path / "reward_func.py")])
    texts.append(capsys.readouterr().out)
    for text in texts:
        assert "--reward.remote_url" in text, text[:300]
        assert "--remote_rm_url" not in text and " --label_key" not in text
