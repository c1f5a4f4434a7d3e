"""What several test modules share to drive the reward server: a uvicorn thread on a free port,
a request shaped as OpenRLHF 0.11.2's client sends it, and ``/metrics`` parsed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import uvicorn

from rewardsmith.adapters.serve.reward_server import ServerConfig, create_app
from rewardsmith.verifiers import Verifier

# Qwen-style chat template, as OpenRLHF's prompt dataset applies it.
PROMPTS = [
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nWhat is 3*5?<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nWhat is 10-7?<|im_end|>\n<|im_start|>assistant\n",
]
RESPONSES = [
    "2+2 is \\boxed{4}.<|im_end|>",
    "3*5 = 16, so the answer is 16<|im_end|><|endoftext|>",
    "I don't know<|im_end|>",
]
OPENRLHF_REQUEST = {"query": [p + r for p, r in zip(PROMPTS, RESPONSES, strict=True)], "prompts": PROMPTS,
                    "labels": ["4", "15", "3"]}



def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cli_server(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """``rewardsmith serve`` as a subprocess on a free port (``env``: its whole environment, default
    ours); returns once ``/health`` answers 200, with the process and its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rewardsmith.adapters.cli", "serve", "--port", str(port), *args],
                            env={**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"server did not start: {proc.communicate()[0]}")
        time.sleep(0.2)


def stop_cli_server(proc: subprocess.Popen[str]) -> str:
    """SIGTERM (a graceful stop), killed after 30 s; everything it printed."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()[0]


class ServerThread:
    """uvicorn in a thread; ``stop`` is the same graceful path as SIGTERM (should_exit)."""

    def __init__(self, config: ServerConfig, verifier: Verifier | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(create_app(config, verifier), host="127.0.0.1", port=self.port,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(20)

    def __exit__(self, *exc: object) -> None:
        self.stop()


def metric_samples(text: str) -> dict[tuple[str, frozenset], float]:
    """``/metrics`` parsed by prometheus_client's own parser: (sample name, labels) -> value."""
    from prometheus_client.parser import text_string_to_metric_families

    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}
