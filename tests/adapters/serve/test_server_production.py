"""The reward server as it runs in production (issue 11, item 11, and the server's share of
items 5 and 8): metrics that add up across ``--workers`` processes, the math pool warm before
the first request, one log line per request, one warning when a batch is mostly invalid, and
one clear line when the port is taken. Real uvicorn, real HTTP, real subprocesses.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import subprocess
import sys
from collections import Counter

import httpx
import pytest
from server_helpers import OPENRLHF_REQUEST, ServerThread, metric_samples, start_cli_server, stop_cli_server

from rewardsmith.adapters.serve.reward_server import ServerConfig
from rewardsmith.verifiers.math import GradeTask
from rewardsmith.verifiers.pool import DEFAULT_MEMORY_MB, _shared, shared_pool

MATH = {"type": "math", "workers": 0}


@pytest.mark.slow
def test_metrics_totals_are_right_whichever_of_several_workers_answers(tmp_path):
    spec = tmp_path / "reward.json"
    spec.write_text(json.dumps(MATH))
    proc, url = start_cli_server("--reward", str(spec), "--workers", "2", "--log-level", "info")
    try:
        # Each request on a fresh connection, so the kernel hands them to either worker.
        # Until both workers have answered some (their pids are in the request log lines).
        n = 0
        while n < 40:
            r = httpx.post(f"{url}/get_reward", json=OPENRLHF_REQUEST, timeout=30)
            assert r.status_code == 200 and r.json()["rewards"] == [1.0, 0.0, 0.0]
            n += 1
        scrapes = [metric_samples(httpx.get(f"{url}/metrics", timeout=10).text) for _ in range(12)]
        for seen in scrapes:
            assert seen[("rewardsmith_requests_total", frozenset({("route", "/get_reward"), ("code", "200")}))] == n
            assert seen[("rewardsmith_request_seconds_count", frozenset({("route", "/get_reward")}))] == n
            assert seen[("rewardsmith_verdicts_total", frozenset({("status", "ok")}))] == 2 * n
            assert seen[("rewardsmith_verdicts_total", frozenset({("status", "no_answer")}))] == n
            assert seen[("rewardsmith_batched_samples_total", frozenset())] == 3 * n
            assert seen[("rewardsmith_in_flight", frozenset())] == 0
    finally:
        out = stop_cli_server(proc)
    answered = Counter(re.findall(r"\[(\d+)\] rewardsmith\.server: reward=math route=/get_reward code=200 rows=3", out))
    assert sum(answered.values()) == n, out[-3000:]
    # Per-process counters (the old hand-written text) pass only if one worker answered all.
    assert len(answered) == 2, f"one worker answered every request, the test proves nothing: {answered}"
    assert proc.returncode == 0
    directory = re.search(r"workers write their metrics to (\S+) ", out)
    assert directory is not None, out[-3000:]
    assert not os.path.exists(directory.group(1))  # serve removed it at exit


def test_math_worker_pool_is_warm_before_the_first_request():
    """Lifespan start-up starts the math pool and has every worker load the grading task, so the
    first request pays no imports. Read from the pool's own bookkeeping (no timing)."""
    stale = _shared.pop((1, DEFAULT_MEMORY_MB), None)
    if stale is not None:
        stale.close()
    spec = {"type": "gate", "when": {"type": "format"}, "then": {"type": "math", "workers": 1}}
    with ServerThread(ServerConfig(reward=spec)) as server:
        assert (1, DEFAULT_MEMORY_MB) in _shared, "no math pool was started before requests were accepted"
        pool = shared_pool(1)
        workers = list(pool._workers)
        assert len(workers) == 1 and workers[0].proc.poll() is None
        assert workers[0].tasks_loaded, "the worker has not loaded the grading task yet"
        assert set(GradeTask.preload) <= set(pool.preload)
        r = httpx.post(f"{server.url}/v1/score", json={"samples": [
            {"prompt": "p", "completion": "<think>x</think><answer>4</answer>", "answer": "4"}]}, timeout=30)
        assert r.status_code == 200 and r.json()["rewards"] == [1.0]
        assert pool._workers == workers and pool.restarts == 0  # the same warm worker graded it


def test_one_log_line_per_request_with_counts(caplog):
    caplog.set_level(logging.INFO, logger="rewardsmith")
    rows = {"query": ["a", "b", "c", "d"],
            "labels": [json.dumps({"s": 0.7}), json.dumps({"s": 0.9, "st": "error"}),
                       json.dumps({"s": 0.0, "st": "invalid_input"}), json.dumps({"s": 1.0})]}
    with ServerThread(ServerConfig(reward="test_field_score")) as server:
        assert httpx.post(f"{server.url}/get_reward", json=rows).status_code == 200
        assert httpx.post(f"{server.url}/get_reward", content=b"{bad").status_code == 400
        assert httpx.post(f"{server.url}/v1/score", json={"samples": [{"completion": "c", "s": 1}]}).status_code == 200
    lines = [r.getMessage() for r in caplog.records if r.name == "rewardsmith.server" and "route=" in r.getMessage()]
    assert len(lines) == 3, lines
    first = dict(item.split("=", 1) for item in lines[0].split())
    assert first["reward"] == "test_field_score" and first["route"] == "/get_reward" and first["code"] == "200"
    assert (first["rows"], first["invalid_input"], first["error"]) == ("4", "1", "1")
    assert float(first["latency_ms"]) >= 0
    assert "code=400 rows=0 invalid_input=0 error=0" in lines[1]
    assert "route=/v1/score code=200 rows=1 invalid_input=0 error=0" in lines[2]


def test_a_request_refused_under_on_error_raise_still_logs_what_it_scored(caplog):
    caplog.set_level(logging.INFO, logger="rewardsmith")
    rows = {"query": ["a", "b"], "labels": [json.dumps({"s": 0.7}), json.dumps({"s": 0.9, "st": "error"})]}
    with ServerThread(ServerConfig(reward="test_field_score", on_error="raise")) as server:
        assert httpx.post(f"{server.url}/get_reward", json=rows).status_code == 500
    lines = [r.getMessage() for r in caplog.records if r.name == "rewardsmith.server" and "route=" in r.getMessage()]
    assert len(lines) == 1 and "code=500 rows=2 invalid_input=0 error=1" in lines[0], lines


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("rewardsmith")]


def test_mostly_unlabeled_rows_warn_once_naming_the_field_and_openrlhfs_flag(caplog):
    """OpenRLHF sends one query per request: the warning waits for enough rows, then fires once."""
    caplog.set_level(logging.INFO, logger="rewardsmith")
    unlabeled = {"query": [OPENRLHF_REQUEST["query"][0]], "prompts": [OPENRLHF_REQUEST["prompts"][0]]}
    with ServerThread(ServerConfig(reward=MATH)) as server:
        first = httpx.post(f"{server.url}/get_reward", json=unlabeled).json()
        assert first["extra_logs"]["status_invalid_input"] == [1.0]
        assert _warnings(caplog) == []  # one row says nothing yet
        for _ in range(40):
            assert httpx.post(f"{server.url}/get_reward", json=unlabeled).json()["rewards"] == [0.0]
    warnings = _warnings(caplog)
    assert len(warnings) == 1, warnings
    assert "'answer'" in warnings[0] and "--data.label_key" in warnings[0] and "--label-field" in warnings[0]


def test_a_good_stream_does_not_warn(caplog):
    caplog.set_level(logging.INFO, logger="rewardsmith")
    with ServerThread(ServerConfig(reward=MATH)) as server:
        for _ in range(12):
            assert httpx.post(f"{server.url}/get_reward", json=OPENRLHF_REQUEST).status_code == 200
    assert _warnings(caplog) == []


def test_queries_without_their_prompt_warn_about_the_completion(caplog):
    caplog.set_level(logging.INFO, logger="rewardsmith")
    prompt = "<|im_start|>user\nWhat is 2+2? Think it through before answering.<|im_end|>\n<|im_start|>assistant\n"
    request = {"query": ["The answer is 4. " + prompt] * 20, "prompts": [prompt] * 20, "labels": ["4"] * 20}
    with ServerThread(ServerConfig(reward=MATH)) as server:
        body = httpx.post(f"{server.url}/get_reward", json=request).json()
    assert body["rewards"] == [0.0] * 20 and body["extra_logs"]["status_invalid_input"] == [1.0] * 20
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and "'completion'" in warnings[0] and "prompt" in warnings[0], warnings


def test_native_route_names_its_own_fix(caplog):
    caplog.set_level(logging.INFO, logger="rewardsmith")
    with ServerThread(ServerConfig(reward=MATH)) as server:
        samples = [{"prompt": "p", "completion": "\\boxed{4}", "solution": "4"}] * 20
        assert httpx.post(f"{server.url}/v1/score", json={"samples": samples}).status_code == 200
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and "/v1/score" in warnings[0] and "'answer' key" in warnings[0], warnings


@pytest.mark.parametrize("workers", ["1", "2"])
def test_port_in_use_is_one_line_and_a_nonzero_exit(workers):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "rewardsmith.adapters.cli", "serve", "--reward", "math", "--port", str(port),
             "--workers", workers],
            capture_output=True, text=True, timeout=120,
        )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == f"rewardsmith: error: port {port} on 127.0.0.1 is in use; pick another with --port\n"
