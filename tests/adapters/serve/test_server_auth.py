"""A server you can expose (issue 27, items 9 and 11): the bearer token (required, checked in
constant time, sent by the exported OpenRLHF client), the warning for an open server bound beyond
loopback, and the client side under overload (503 + Retry-After, every request scored exactly once,
retries get every reward). Real uvicorn, real HTTP."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import secrets
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from server_helpers import OPENRLHF_REQUEST, ServerThread, metric_samples, start_cli_server, stop_cli_server

from rewardsmith.adapters.cli import main as cli_main
from rewardsmith.adapters.serve import auth
from rewardsmith.adapters.serve.auth import TOKEN_ENV, TokenError, exposure, load_token, token_source
from rewardsmith.adapters.serve.reward_server import ServerConfig
from rewardsmith.verifiers import Sample, Verdict, Verifier, build, register

MATH = {"type": "math", "workers": 0}


@pytest.fixture(scope="module")
def token_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("token") / "token"
    path.write_text(secrets.token_urlsafe(32) + "\n")
    return path


@pytest.fixture(scope="module")
def guarded(token_file):
    with ServerThread(ServerConfig(reward=MATH, token_file=str(token_file))) as server:
        yield server, token_file.read_text().strip()


def test_every_route_but_health_needs_the_token(guarded):
    server, token = guarded
    for method, route, body in (("POST", "/get_reward", OPENRLHF_REQUEST), ("POST", "/v1/score", {"samples": []}),
                                ("GET", "/metrics", None)):
        missing = httpx.request(method, server.url + route, json=body)
        assert missing.status_code == 401, route
        assert missing.headers["www-authenticate"] == 'Bearer realm="rewardsmith"'
        assert "Authorization: Bearer <token>" in missing.json()["error"]
        for wrong in ("Bearer " + "x" * 43, "Bearer " + token[:-1], "Basic " + token, token):
            refused = httpx.request(method, server.url + route, json=body, headers={"Authorization": wrong})
            assert refused.status_code == 401, (route, wrong)
            assert refused.headers["www-authenticate"].startswith("Bearer realm=")
        right = httpx.request(method, server.url + route, json=body, headers={"Authorization": f"bearer {token}"})
        assert right.status_code == 200, (route, right.text)
    answer = httpx.post(f"{server.url}/get_reward", json=OPENRLHF_REQUEST, headers={"Authorization": f"Bearer {token}"})
    assert answer.json()["rewards"] == [1.0, 0.0, 0.0]
    wrong = httpx.post(f"{server.url}/v1/score", json={}, headers={"Authorization": "Bearer " + "y" * 40})
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    health = httpx.get(f"{server.url}/health")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    seen = metric_samples(httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {token}"}).text)
    assert seen[("rewardsmith_requests_total", frozenset({("route", "/get_reward"), ("code", "401")}))] == 5


def test_the_token_is_compared_with_hmac_compare_digest_on_bytes(guarded, monkeypatch):
    server, token = guarded
    calls = []
    real = auth.hmac.compare_digest

    def recording(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", recording)
    guess = "z" * len(token)
    assert httpx.post(f"{server.url}/v1/score", json={"samples": []},
                      headers={"Authorization": f"Bearer {guess}"}).status_code == 401
    assert httpx.post(f"{server.url}/v1/score", json={"samples": []},
                      headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert calls == [(guess.encode(), token.encode()), (token.encode(), token.encode())]


def test_where_the_token_comes_from(tmp_path):
    good = secrets.token_urlsafe(24)
    path = tmp_path / "token"
    path.write_text(f"  {good}\n")
    assert load_token(path) == good.encode()
    assert load_token(None, use_env=True, environ={TOKEN_ENV: good}) == good.encode()
    assert load_token(None) is None
    assert token_source(None, {}) == (None, False)
    assert token_source(None, {TOKEN_ENV: good}) == (None, True)
    with pytest.raises(TokenError, match="both --token-file and REWARDSMITH_SERVER_TOKEN"):
        token_source(str(path), {TOKEN_ENV: good})
    for text, needle in (("", "is empty"), ("short", "at least 16"), ("has spaces in it, quite long", "characters"),
                         ("\n\n", "is empty")):
        path.write_text(text)
        with pytest.raises(TokenError, match=needle):
            load_token(path)
    with pytest.raises(TokenError, match="cannot read --token-file"):
        load_token(tmp_path / "absent")
    with pytest.raises(TokenError, match="is empty"):
        load_token(None, use_env=True, environ={TOKEN_ENV: ""})


def test_serve_refuses_a_bad_token_before_starting(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert cli_main(["serve", "--reward", "math", "--token-file", str(tmp_path / "absent")]) == 2
    assert "cannot read --token-file" in capsys.readouterr().err
    (tmp_path / "token").write_text(secrets.token_urlsafe(32))
    monkeypatch.setenv(TOKEN_ENV, secrets.token_urlsafe(32))
    assert cli_main(["serve", "--reward", "math", "--token-file", str(tmp_path / "token")]) == 2
    assert "both --token-file and REWARDSMITH_SERVER_TOKEN are set" in capsys.readouterr().err


def test_the_warning_says_what_an_open_server_exposes():
    spec = {"type": "route", "field": "task", "routes": {
        "code": {"type": "code"},
        "chat": {"type": "judge", "backend": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}},
        "math": "math"}}
    said = exposure(build(spec))
    assert "run code of their choosing in the sandbox (code)" in said and "spend the judge's budget" in said
    assert "sandbox" not in exposure(build("math")) and "CPUs" in exposure(build("math"))
    assert auth.is_loopback("127.0.0.1") and auth.is_loopback("::1") and auth.is_loopback("localhost")
    assert not auth.is_loopback("0.0.0.0") and not auth.is_loopback("::")


@pytest.mark.slow
def test_serve_beyond_loopback_warns_without_a_token_and_workers_check_the_one_from_the_environment():
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    proc, _ = start_cli_server("--host", "0.0.0.0", "--reward", '{"type": "format"}', "--log-level", "warning", env=env)
    out = stop_cli_server(proc)
    assert "warning: serving on 0.0.0.0:" in out and "without a token: anyone who can reach this port" in out, out
    assert "--token-file FILE or REWARDSMITH_SERVER_TOKEN" in out

    token = secrets.token_urlsafe(32)
    proc, url = start_cli_server("--host", "0.0.0.0", "--reward", json.dumps(MATH), "--workers", "2",
                                 "--log-level", "warning", env={**env, TOKEN_ENV: token})
    try:
        for _ in range(6):  # fresh connections: either worker may answer
            assert httpx.post(f"{url}/get_reward", json=OPENRLHF_REQUEST).status_code == 401
            ok = httpx.post(f"{url}/get_reward", json=OPENRLHF_REQUEST, headers={"Authorization": f"Bearer {token}"})
            assert ok.status_code == 200 and ok.json()["rewards"] == [1.0, 0.0, 0.0]
    finally:
        out = stop_cli_server(proc)
    assert "without a token" not in out and token not in out, out


def _load(path: Path):
    """As OpenRLHF loads --reward.remote_url *.py: importlib from a path, then reward_func."""
    spec = importlib.util.spec_from_file_location("reward_func", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lists(got: dict) -> dict:
    plain = {k: v.tolist() if hasattr(v, "tolist") else v for k, v in got.items() if k != "extra_logs"}
    plain["extra_logs"] = {k: v.tolist() if hasattr(v, "tolist") else v for k, v in got["extra_logs"].items()}
    return plain


def test_exported_client_sends_the_token_it_reads_at_each_call(guarded, token_file, tmp_path, monkeypatch):
    server, token = guarded
    path = tmp_path / "reward_func.py"
    assert cli_main(["export", "openrlhf", "--url", f"{server.url}/get_reward", "--token-file", str(token_file),
                     "-o", str(path)]) == 0
    source = path.read_text()
    assert token not in source and str(token_file.resolve()) in source
    module = _load(path)
    got = _lists(module.reward_func(OPENRLHF_REQUEST["query"], OPENRLHF_REQUEST["prompts"], OPENRLHF_REQUEST["labels"]))
    served = httpx.post(f"{server.url}/get_reward", json=OPENRLHF_REQUEST,
                        headers={"Authorization": f"Bearer {token}"}).json()
    assert got == served and got["rewards"] == [1.0, 0.0, 0.0]

    # Without --token-file: $REWARDSMITH_SERVER_TOKEN, read when reward_func is called, not when written.
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert cli_main(["export", "openrlhf", "--url", server.url, "-o", str(path)]) == 0
    module = _load(path)
    with pytest.raises(RuntimeError, match=r"answered 401: this server requires a bearer token.*\$REWARDSMITH_SERVER"):
        module.reward_func(["a"], [""], ["1"])
    monkeypatch.setenv(TOKEN_ENV, "w" * 40)
    with pytest.raises(RuntimeError, match="answered 401: the bearer token is not the one"):
        module.reward_func(["a"], [""], ["1"])
    monkeypatch.setenv(TOKEN_ENV, token)
    assert _lists(module.reward_func(["\\boxed{4}"], [""], ["4"]))["rewards"] == [1.0]


def test_export_with_url_refuses_what_only_the_server_decides(tmp_path, capsys):
    out = str(tmp_path / "f.py")
    assert cli_main(["export", "openrlhf", "--url", "http://h:8000", "--reward", "math", "-o", out]) == 2
    assert "pass it to `rewardsmith serve`" in capsys.readouterr().err
    assert cli_main(["export", "openrlhf", "--url", "h:8000", "-o", out]) == 2
    assert "is not an http:// or https:// address" in capsys.readouterr().err
    assert cli_main(["export", "openrlhf", "--token-file", out, "-o", out]) == 2
    assert "--token-file goes with --url" in capsys.readouterr().err


def test_unknown_routes_and_methods_answer_as_before():
    with ServerThread(ServerConfig(reward=MATH)) as server:
        assert httpx.get(f"{server.url}/nope").status_code == 404
        assert httpx.get(f"{server.url}/nope").json() == {"detail": "Not Found"}
        wrong = httpx.get(f"{server.url}/get_reward")
        assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
        assert httpx.post(f"{server.url}/health").status_code == 405
        assert httpx.head(f"{server.url}/health").status_code == 200
        assert httpx.get(f"{server.url}/health/").json()["status"] == "ok"


# ---------------------------------------------------------------- under overload


@register("test_server_counting")
class CountingVerifier(Verifier):
    """Test-only: records every sample id it scores; score = (id % 7) / 7; ``delay_s`` per batch."""

    name = "test_server_counting"

    def __init__(self, delay_s: float = 0.05) -> None:
        self.delay_s = delay_s
        self.scored: list[int] = []
        self.lock = threading.Lock()

    def verify_batch(self, samples):
        time.sleep(self.delay_s)
        with self.lock:
            self.scored.extend(int(s.get("id")) for s in samples)
        return [Verdict(score=(int(s.get("id")) % 7) / 7, correct=None) for s in samples]


async def _burst(url: str, ids: list[int]) -> dict[int, httpx.Response]:
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=len(ids))) as client:
        answers = await asyncio.gather(*(client.post(url, json={"samples": [{"completion": "c", "id": i}]})
                                         for i in ids))
    return dict(zip(ids, answers, strict=True))


def test_overload_refuses_with_retry_after_and_scores_every_admitted_request_exactly_once():
    verifier = CountingVerifier(delay_s=0.05)
    ids = list(range(40))
    with ServerThread(ServerConfig(reward="test_server_counting", max_queue=2), verifier) as server:
        answers = asyncio.run(_burst(f"{server.url}/v1/score", ids))
        refused = [i for i, r in answers.items() if r.status_code == 503]
        accepted = [i for i, r in answers.items() if r.status_code == 200]
        assert len(refused) + len(accepted) == len(ids) and refused and accepted, Counter(
            r.status_code for r in answers.values())
        assert all(answers[i].headers["retry-after"] == "1" for i in refused)
        assert Counter(verifier.scored) == Counter(accepted)  # nothing refused was scored, nothing twice

        rewards = {i: answers[i].json()["rewards"][0] for i in accepted}
        pending = refused
        while pending:  # a well-behaved client: wait Retry-After, send again what was refused
            time.sleep(float(answers[pending[0]].headers["retry-after"]))
            answers = asyncio.run(_burst(f"{server.url}/v1/score", pending))
            rewards |= {i: r.json()["rewards"][0] for i, r in answers.items() if r.status_code == 200}
            pending = [i for i, r in answers.items() if r.status_code == 503]
        seen = metric_samples(httpx.get(f"{server.url}/metrics").text)
    assert Counter(verifier.scored) == Counter(ids)  # every request scored exactly once, none lost
    reference = build("test_server_counting")
    assert rewards == {i: reference.verify(Sample(prompt="", completion="c", fields={"id": i})).reward for i in ids}
    assert seen[("rewardsmith_batched_samples_total", frozenset())] == len(ids)
    assert seen[("rewardsmith_requests_total", frozenset({("route", "/v1/score"), ("code", "200")}))] == len(ids)


def test_exported_client_under_overload_gets_every_reward_once(token_file, tmp_path):
    """The OpenRLHF client file retries a 503 after Retry-After: 16 concurrent rollouts against a
    server that admits 2 all get their reward, and the server scores each row exactly once."""
    verifier = CountingVerifier(delay_s=0.05)
    path = tmp_path / "reward_func.py"
    config = ServerConfig(reward="test_server_counting", max_queue=2, token_file=str(token_file))
    with ServerThread(config, verifier) as server:
        assert cli_main(["export", "openrlhf", "--url", server.url, "--token-file", str(token_file),
                         "-o", str(path)]) == 0
        module = _load(path)
        got: dict[int, float] = {}

        def rollout(i: int) -> None:
            got[i] = _lists(module.reward_func(["q"], [""], [json.dumps({"id": i})]))["rewards"][0]

        threads = [threading.Thread(target=rollout, args=(i,)) for i in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        token = token_file.read_text().strip()
        seen = metric_samples(httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {token}"}).text)
    assert got == pytest.approx({i: (i % 7) / 7 for i in range(16)}, abs=1e-6)  # float32 tensors
    assert Counter(verifier.scored) == Counter(range(16))
    assert seen.get(("rewardsmith_requests_total", frozenset({("route", "/get_reward"), ("code", "503")})), 0) > 0


# ---------------------------------------------------------------- the judge server


class _EchoModel:
    """Stand-in for the local model behind the judge server: answers every prompt with a score."""

    model = "echo-judge"

    def complete_batch(self, requests):
        from rewardsmith.verifiers.judge.backends import Completion

        return [Completion("fine.\nScore: 4") for _ in requests]


def test_judge_server_with_a_token_takes_it_as_the_openai_api_key(monkeypatch):
    pytest.importorskip("fastapi")
    from rewardsmith.adapters.serve.judge_server import serve_in_thread
    from rewardsmith.verifiers.judge.backends import GenParams, OpenAIBackend

    token = secrets.token_urlsafe(32)
    with serve_in_thread(_EchoModel(), token=token.encode()) as (url, app):
        refused = httpx.get(f"{url}/models")
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        assert refused.json()["error"]["code"] == "invalid_api_key"
        assert httpx.get(f"{url}/models", headers={"Authorization": "Bearer " + "q" * 43}).status_code == 401
        monkeypatch.setenv("MY_JUDGE_TOKEN", token)
        judge = OpenAIBackend(base_url=url, model="echo-judge", api_key_env="MY_JUDGE_TOKEN")
        (answer,) = judge.complete_batch([([{"role": "user", "content": "rate"}], GenParams(max_tokens=8))])
        assert answer.text.endswith("Score: 4") and app.state.requests == 1
