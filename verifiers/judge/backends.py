"""Where judge prompts go: an OpenAI-compatible HTTP server, or a local transformers model
(``rewardsmith.reward_models.local_judge``, found by name so this module never imports torch).

Both take chat messages and return the text plus, when asked, the log-probabilities of the
top candidate tokens at each generated position (the holistic judge needs them for
Σ p(s)·s). A backend that is down, times out or keeps failing raises :class:`BackendError`;
the judge turns it into ``status=error``, never a score.

Heavy imports (httpx, torch, transformers) happen inside methods: ``import
rewardsmith.verifiers`` must stay light, and backends are pickled to trainer workers (they
carry configuration only; a loaded model is process-local and reloaded from the disk cache).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.sandbox.errors import RewardsmithError

Messages = list[dict[str, Any]]

DEFAULT_LOCAL_MODEL = "smollm2"


class BackendError(RewardsmithError, RuntimeError):
    """A backend could not answer (down, timeout, repeated server errors): a judge's backend, or a
    scoring job's (Ray actors that keep dying; the job adds where it stopped)."""


@dataclass(frozen=True)
class GenParams:
    """Sampling parameters; part of the cache key, so every field must be JSON-serialisable."""

    max_tokens: int = 256
    temperature: float = 0.0
    top_logprobs: int = 0  # 0: no log-probabilities
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "temperature": self.temperature,
                "top_logprobs": self.top_logprobs, "seed": self.seed}


@dataclass
class TokenLogprob:
    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)  # candidate token -> logprob


@dataclass
class Completion:
    text: str
    logprobs: list[TokenLogprob] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text}
        if self.logprobs is not None:
            out["logprobs"] = [[t.token, t.logprob, t.top] for t in self.logprobs]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Completion:
        lps = data.get("logprobs")
        return cls(
            text=data["text"],
            logprobs=None if lps is None else [TokenLogprob(t, float(lp), dict(top)) for t, lp, top in lps],
        )


class Backend:
    """Common surface. ``calls`` counts generations actually requested from the model."""

    kind = "backend"
    model = ""

    def __init__(self) -> None:
        self.calls = 0
        self._count_lock = threading.Lock()

    def _count(self, n: int = 1) -> None:
        with self._count_lock:
            self.calls += n

    def complete(self, messages: Messages, params: GenParams) -> Completion:
        out = self.complete_batch([(messages, params)])[0]
        if isinstance(out, BaseException):
            raise out
        return out

    def complete_batch(self, requests: Sequence[tuple[Messages, GenParams]]) -> list[Completion | BackendError]:
        """One result per request, in order; a failed request is a BackendError in its slot."""
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        """What the cache key records about the backend."""
        return {"kind": self.kind, "model": self.model}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_count_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._count_lock = threading.Lock()


# --------------------------------------------------------------------------- OpenAI-compatible HTTP


class OpenAIBackend(Backend):
    """Chat completions over HTTP (OpenAI, vLLM, SGLang, llama.cpp server, our judge_server).

    A batch is sent as concurrent requests (at most ``concurrency`` in flight, at most
    ``rate_limit`` started per second); each request has ``timeout_s`` and is retried
    ``retries`` times with exponential backoff on connection errors, timeouts, 429 and 5xx.
    The API key is read from the environment variable named by ``api_key_env`` (never stored).
    """

    kind = "openai"

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000/v1",
        model: str = "judge",
        api_key_env: str | None = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout_s: float = 60.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        rate_limit: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.concurrency = max(1, int(concurrency))
        self.timeout_s = float(timeout_s)
        self.retries = max(0, int(retries))
        self.backoff_s = float(backoff_s)
        self.rate_limit = float(rate_limit) if rate_limit else None
        self.extra_body = dict(extra_body or {})

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model, "base_url": self.base_url}

    def _body(self, messages: Messages, params: GenParams) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": params.max_tokens,
                                "temperature": params.temperature, **self.extra_body}
        if params.seed is not None:
            body["seed"] = params.seed
        if params.top_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = params.top_logprobs
        return body

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return {"Authorization": f"Bearer {key}"} if key else {}

    def complete_batch(self, requests: Sequence[tuple[Messages, GenParams]]) -> list[Completion | BackendError]:
        if not requests:
            return []
        coro = self._run_all(list(requests))
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coro)
        # Called from inside an event loop (a server): run the batch on a loop of its own.
        box: list[Any] = []
        thread = threading.Thread(target=lambda: box.append(asyncio.run(coro)))
        thread.start()
        thread.join()
        return box[0]

    async def _run_all(self, requests: list[tuple[Messages, GenParams]]) -> list[Completion | BackendError]:
        import httpx

        semaphore = asyncio.Semaphore(self.concurrency)
        pacer = _Pacer(self.rate_limit)
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        async with httpx.AsyncClient(timeout=self.timeout_s, limits=limits, headers=self._headers()) as client:

            async def one(messages: Messages, params: GenParams) -> Completion | BackendError:
                async with semaphore:
                    return await self._request(client, pacer, messages, params)

            return list(await asyncio.gather(*(one(m, p) for m, p in requests)))

    async def _request(
        self, client: Any, pacer: _Pacer, messages: Messages, params: GenParams
    ) -> Completion | BackendError:
        import httpx

        url = f"{self.base_url}/chat/completions"
        body = self._body(messages, params)
        last = "no attempt"
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff_s * 2 ** (attempt - 1))
            await pacer.wait()
            self._count()
            try:
                response = await client.post(url, json=body)
            except httpx.TimeoutException as exc:
                last = f"timeout after {self.timeout_s:g}s ({type(exc).__name__})"
                continue
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code >= 400:  # a client error will not improve with retries
                return BackendError(f"judge backend {url} answered HTTP {response.status_code}: {response.text[:300]}")
            try:
                return parse_chat_response(response.json())
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                return BackendError(f"judge backend {url} sent an unreadable response: {exc}")
        return BackendError(f"judge backend {url} failed after {self.retries + 1} attempts: {last}")


class _Pacer:
    """Start at most ``rate`` requests per second (evenly spaced)."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self.next_at = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            delay = self.next_at - now
            self.next_at = max(now, self.next_at) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


def parse_chat_response(data: Mapping[str, Any]) -> Completion:
    """The first choice's text and, when present, its per-token log-probabilities."""
    choice = data["choices"][0]
    text = choice["message"].get("content") or ""
    logprobs = None
    content = (choice.get("logprobs") or {}).get("content")
    if content:
        logprobs = [
            TokenLogprob(
                token=entry["token"],
                logprob=float(entry["logprob"]),
                top={alt["token"]: float(alt["logprob"]) for alt in entry.get("top_logprobs") or []},
            )
            for entry in content
        ]
    return Completion(text=text, logprobs=logprobs)


# --------------------------------------------------------------------------- building a backend

# Backends that load a torch model live in rewardsmith.reward_models (verifiers never import torch
# or anything above them); they are found by module path when a spec names their kind.
LAZY_BACKENDS = {
    "transformers": "rewardsmith.reward_models.local_judge:TransformersBackend",
    "local": "rewardsmith.reward_models.local_judge:TransformersBackend",
}


def cache_root() -> Path:
    """Where converted models and the judge cache are kept (``REWARDSMITH_CACHE`` or ``~/.cache/rewardsmith``)."""
    return Path(os.environ.get("REWARDSMITH_CACHE", Path.home() / ".cache" / "rewardsmith"))


def _lazy_backend(kind: str) -> type[Backend]:
    module, _, name = LAZY_BACKENDS[kind].partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise BackendError(f"judge backend {kind!r} needs torch and transformers ({exc}): "
                           "pip install 'rewardsmith[train]'") from exc


# Local models a spec may name in one word (backend: smollm2).
NAMED_MODELS = {DEFAULT_LOCAL_MODEL: {"kind": "transformers", "model": DEFAULT_LOCAL_MODEL}}
NO_BACKEND = ("no judge backend: name one, e.g. backend: {kind: openai, base_url: 'http://127.0.0.1:8000/v1', "
              "model: MODEL} (any OpenAI-compatible server, vLLM included), or backend: smollm2 for the bundled "
              "135M demo model (tests and demos only: not a judge to train against)")


def build_backend(spec: Backend | Mapping[str, Any] | str | None) -> Backend:
    """``{"kind": "openai", ...}`` / ``{"kind": "transformers", ...}`` / a named local model (``smollm2``) /
    a Backend. None is refused: a judge model is a choice, never a silent default."""
    if isinstance(spec, Backend):
        return spec
    if spec is None:
        raise ValueError(NO_BACKEND)
    if isinstance(spec, str):
        spec = NAMED_MODELS.get(spec, {"kind": spec})
    options = dict(spec)
    kind = options.pop("kind", "openai")
    kinds = ["openai", *LAZY_BACKENDS]
    if kind not in kinds:
        raise ValueError(f"unknown judge backend kind {kind!r}; expected one of {', '.join(kinds)} "
                         f"(or a local model by name: {', '.join(NAMED_MODELS)})")
    return OpenAIBackend(**options) if kind == "openai" else _lazy_backend(kind)(**options)
