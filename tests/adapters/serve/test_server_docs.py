"""docs/server.md runs as written (issue 27, item 10): every ``curl`` example is sent to a server
started as the page starts it (``data/reward.yaml``, a token in ``$TOKEN``) and must answer the
status code and the body its ``# ->`` line shows; the TRL/verl client in the page's Python block
gets the rewards ``build(spec).verify`` gives; and every file path the serving and trainer pages
name exists."""

from __future__ import annotations

import itertools
import re
import secrets
import shlex

import httpx
import pytest
from conftest import REPO
from server_helpers import ServerThread

from rewardsmith.adapters.serve.auth import TOKEN_ENV
from rewardsmith.adapters.serve.reward_server import ServerConfig
from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.registry import load_spec

PAGE = REPO / "docs" / "server.md"
SPEC = load_spec(str(REPO / "data" / "reward.yaml"))


def fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def curl_examples(text: str) -> list[tuple[list[str], int, str]]:
    """(curl's argv, the status code and the body its ``# ->`` line shows), from the bash blocks."""
    examples = []
    for block in fenced(text, "bash"):
        lines = block.replace("\\\n", " ").splitlines()
        for i, line in enumerate(lines):
            if line.startswith("curl "):
                shown = re.match(r"# -> (\d{3}) ?(.*)", lines[i + 1])
                assert shown, f"a curl example without its '# -> CODE' line: {line[:80]}"
                examples.append((shlex.split(line), int(shown.group(1)), shown.group(2)))
    return examples


def send(argv: list[str], base: str, token: str) -> httpx.Response:
    url = next(a for a in argv[1:] if a.startswith("http"))
    headers, body = {}, None
    for flag, value in itertools.pairwise(argv):
        if flag == "-H":
            name, _, content = value.partition(":")
            headers[name] = content.strip().replace("$TOKEN", token)
        elif flag == "-d":
            body = value.encode()
    url = re.sub(r"^http://[^/]+", base, url)
    return httpx.request("POST" if body is not None else "GET", url, content=body, headers=headers, timeout=60)


@pytest.fixture(scope="module")
def server():
    token = secrets.token_urlsafe(32)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TOKEN_ENV, token)
        with ServerThread(ServerConfig(reward=SPEC, token_from_env=True)) as running:
            yield running, token


def test_every_curl_example_answers_what_the_page_shows(server):
    running, token = server
    examples = curl_examples(PAGE.read_text())
    routes = {re.sub(r"^http://[^/]+", "", next(x for x in argv if x.startswith("http"))) for argv, _, _ in examples}
    assert routes >= {"/get_reward", "/v1/score", "/health", "/metrics"}, "an endpoint has no curl example"
    for argv, code, body in examples:
        response = send(argv, running.url, token)
        assert response.status_code == code, (argv, response.text[:300])
        at = 0
        for fragment in body.split("..."):  # the shown body, "..." standing for what is left out
            found = response.text.find(fragment, at)
            assert found >= 0, (argv, fragment, response.text[:500])
            at = found + len(fragment)
        sends_token = any("Authorization: Bearer $TOKEN" in a for a in argv)
        assert sends_token == (code != 401 and "/health" not in " ".join(argv)), argv


def test_the_python_client_for_trl_and_verl_sends_the_token_and_gets_the_spec_rewards(server, monkeypatch):
    running, token = server
    (source,) = fenced(PAGE.read_text(), "python")
    monkeypatch.setenv(TOKEN_ENV, token)
    namespace: dict = {}
    exec(compile(source.replace("http://127.0.0.1:8000", running.url), str(PAGE), "exec"), namespace)
    prompts, completions, answers = ["What is 2+2?", "What is 3*5?"], ["\\boxed{4}", "It is 16."], ["4", "15"]
    want = [build(SPEC).verify(Sample(prompt=p, completion=c, fields={"answer": a})).reward
            for p, c, a in zip(prompts, completions, answers, strict=True)]
    assert namespace["remote_reward"](prompts, completions, answers) == want == [1.0, 0.0]
    assert namespace["compute_score"]("openai/gsm8k", "<think>2+2</think><answer>4</answer>", "4") == \
        pytest.approx(build(SPEC).verify(Sample(prompt="", completion="<think>2+2</think><answer>4</answer>",
                                                fields={"answer": "4", "data_source": "openai/gsm8k"})).reward)
    monkeypatch.setitem(namespace["HEADERS"], "Authorization", "Bearer " + "x" * 43)
    with pytest.raises(httpx.HTTPStatusError, match="401"):
        namespace["remote_reward"](prompts, completions, answers)


def test_every_file_the_serving_and_trainer_pages_name_exists():
    pages = [PAGE, REPO / "docs" / "trainers.md", REPO / "README.md"]
    named = set()
    for page in pages:
        text = page.read_text()
        named |= set(re.findall(r"(?<![\w/.])((?:data|benchmarks|tests)/[\w./-]+\.(?:yaml|jsonl|json|py))\b", text))
        named |= {m for m in re.findall(r"--reward (\S+\.(?:yaml|json))\b", text) if not m.startswith("/abs/")}
    assert "data/reward.yaml" in named
    missing = sorted(path for path in named if not (REPO / path).exists())
    assert not missing, missing
