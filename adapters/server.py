"""The reward server: one reward spec behind HTTP, for trainers that call rewards remotely.

Routes: ``POST /get_reward`` (OpenRLHF's remote reward protocol; the contract and the
version matched are in :mod:`rewardsmith.adapters.openrlhf`), ``POST /v1/score`` (native:
samples in, verdicts out), ``GET /health``, ``GET /metrics`` (Prometheus text).

Why the machinery: a trainer fires many small concurrent requests. A collector merges
whatever arrives within ``batch_window_ms`` (or up to ``max_batch`` samples) into one
``verify_batch``, so the math pool sees big batches; admission is bounded (503 +
Retry-After rather than an unbounded queue), each request has a deadline (504), the body
size is checked before parsing (413), and bad input gets a 4xx that names the field.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Mapping
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from rewardsmith.adapters.openrlhf import ON_ERROR_CHOICES, RewardError, reward_dict, to_samples
from rewardsmith.verifiers import Sample, SpecError, Verdict, Verifier, build

CONFIG_ENV = "REWARDSMITH_SERVE_CONFIG"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


@dataclass
class ServerConfig:
    """Everything a worker process needs to build the same app (travels as JSON in an env var)."""

    reward: Any = "math"
    max_batch: int = 256
    batch_window_ms: float = 5.0
    max_body_mb: float = 32.0
    timeout_s: float = 60.0
    max_queue: int = 256  # requests admitted (waiting or being scored) before 503
    label_field: str = "answer"
    on_error: str = "zero"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServerConfig:
        return cls(**json.loads(text))


def reward_name(spec: Any) -> str:
    """The name requests may use in ``reward``: the spec string, or a dict's ``type``."""
    if isinstance(spec, Mapping):
        return str(spec.get("type", "default"))
    return str(spec)


class HTTPProblem(Exception):
    """A request we refuse, with its status code and message."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


@dataclass
class _Job:
    samples: list[Sample]
    future: asyncio.Future[list[Verdict]]


@dataclass
class Metrics:
    """Hand-formatted Prometheus metrics (no extra dependency)."""

    requests: Counter[tuple[str, int]] = field(default_factory=Counter)
    latency: dict[str, list[int]] = field(default_factory=dict)
    latency_sum: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)
    batches: int = 0
    batched_samples: int = 0

    def observe(self, route: str, code: int, seconds: float) -> None:
        self.requests[(route, code)] += 1
        buckets = self.latency.setdefault(route, [0] * (len(LATENCY_BUCKETS) + 1))
        for i, bound in enumerate(LATENCY_BUCKETS):
            if seconds <= bound:
                buckets[i] += 1
        buckets[-1] += 1
        self.latency_sum[route] += seconds

    def render(self, in_flight: int) -> str:
        lines = ["# HELP rewardsmith_requests_total HTTP requests by route and status code.",
                 "# TYPE rewardsmith_requests_total counter"]
        for (route, code), n in sorted(self.requests.items()):
            lines.append(f'rewardsmith_requests_total{{route="{route}",code="{code}"}} {n}')
        lines += ["# HELP rewardsmith_request_seconds Request latency.", "# TYPE rewardsmith_request_seconds histogram"]
        for route, buckets in sorted(self.latency.items()):
            for bound, n in zip((*map(str, LATENCY_BUCKETS), "+Inf"), buckets, strict=True):
                lines.append(f'rewardsmith_request_seconds_bucket{{route="{route}",le="{bound}"}} {n}')
            lines.append(f'rewardsmith_request_seconds_sum{{route="{route}"}} {self.latency_sum[route]:.6f}')
            lines.append(f'rewardsmith_request_seconds_count{{route="{route}"}} {buckets[-1]}')
        lines += ["# HELP rewardsmith_verdicts_total Verdicts by status.", "# TYPE rewardsmith_verdicts_total counter"]
        for status, n in sorted(self.statuses.items()):
            lines.append(f'rewardsmith_verdicts_total{{status="{status}"}} {n}')
        lines += ["# HELP rewardsmith_batches_total verify_batch calls.", "# TYPE rewardsmith_batches_total counter",
                  f"rewardsmith_batches_total {self.batches}",
                  "# HELP rewardsmith_batched_samples_total Samples scored.",
                  "# TYPE rewardsmith_batched_samples_total counter",
                  f"rewardsmith_batched_samples_total {self.batched_samples}",
                  "# HELP rewardsmith_in_flight Requests admitted and not yet answered.",
                  "# TYPE rewardsmith_in_flight gauge", f"rewardsmith_in_flight {in_flight}"]
        return "\n".join(lines) + "\n"


class RewardService:
    """The verifier, the micro-batching collector and admission control (one per worker process)."""

    def __init__(self, config: ServerConfig, verifier: Verifier | None = None) -> None:
        self.config = config
        self.verifier = verifier or build(config.reward)
        self.name = reward_name(config.reward)
        self.metrics = Metrics()
        self.in_flight = 0
        self._queue: asyncio.Queue[_Job] | None = None
        self._arrived = asyncio.Event()  # set on every enqueue; wakes the collector's window
        self._collector: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._queue = asyncio.Queue()
        self._collector = asyncio.create_task(self._collect())

    async def stop(self) -> None:
        if self._collector is not None:
            self._collector.cancel()
            with _suppress_cancel():
                await self._collector

    def check_reward(self, requested: Any) -> None:
        if requested is None:
            return
        names = ["default", self.name]
        if requested not in names:
            raise HTTPProblem(400, f"unknown reward {requested!r}; this server serves: {', '.join(names)}")

    async def score(self, samples: list[Sample]) -> list[Verdict]:
        """Admit, queue for the collector, wait with the deadline."""
        if self.in_flight >= self.config.max_queue:
            raise HTTPProblem(503, f"server busy: {self.in_flight} requests in flight (max {self.config.max_queue})",
                              {"Retry-After": "1"})
        assert self._queue is not None, "service not started"
        self.in_flight += 1
        try:
            if not samples:
                return []
            job = _Job(samples, asyncio.get_running_loop().create_future())
            self._queue.put_nowait(job)
            self._arrived.set()
            try:
                return await asyncio.wait_for(asyncio.shield(job.future), self.config.timeout_s)
            except TimeoutError:
                raise HTTPProblem(504, f"scoring took longer than {self.config.timeout_s:g}s") from None
        finally:
            self.in_flight -= 1

    async def _collect(self) -> None:
        assert self._queue is not None
        window = self.config.batch_window_ms / 1000
        while True:
            jobs = [await self._queue.get()]
            size = len(jobs[0].samples)
            deadline = time.monotonic() + window
            # Waits on an event, not ``wait_for(queue.get())``: on Python 3.11 that can drop
            # an item arriving just as the timeout fires, and a dropped job never answers.
            while size < self.config.max_batch:
                if self._queue.empty():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._arrived.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._arrived.wait(), remaining)
                    continue
                job = self._queue.get_nowait()
                jobs.append(job)
                size += len(job.samples)
            await self._run(jobs)

    async def _run(self, jobs: list[_Job]) -> None:
        samples = [s for job in jobs for s in job.samples]
        try:
            verdicts = await asyncio.to_thread(self.verifier.verify_batch, samples)
        except Exception as exc:  # a verifier bug: every request in the batch learns of it
            for job in jobs:
                if not job.future.done():
                    job.future.set_exception(exc)
            return
        self.metrics.batches += 1
        self.metrics.batched_samples += len(samples)
        self.metrics.statuses.update(v.status for v in verdicts)
        at = 0
        for job in jobs:
            n = len(job.samples)
            if not job.future.done():
                job.future.set_result(verdicts[at:at + n])
            at += n


class _suppress_cancel:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, *_: Any) -> bool:
        return kind is asyncio.CancelledError


# ---------------------------------------------------------------- request parsing


def _parse_json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise HTTPProblem(400, f"request body is not valid JSON: {exc}") from None


def _object(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise HTTPProblem(422, f"request body must be a JSON object, got {type(payload).__name__}")
    return payload


def _string_list(payload: dict[str, Any], name: str, required: bool) -> list[str] | None:
    value = payload.get(name)
    if value is None:
        if required:
            raise HTTPProblem(422, f"field {name!r} is required (a list of strings)")
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise HTTPProblem(422, f"field {name!r} must be a list of strings")
    return value


def parse_get_reward(payload: Any) -> tuple[list[str], list[str] | None, list[Any] | None]:
    """OpenRLHF's ``query``/``prompts``/``labels``, checked: lists of equal length."""
    body = _object(payload)
    queries = _string_list(body, "query", required=True)
    assert queries is not None
    prompts = _string_list(body, "prompts", required=False)
    labels = body.get("labels")
    if labels is not None and not isinstance(labels, list):
        raise HTTPProblem(422, "field 'labels' must be a list")
    for name, value in (("prompts", prompts), ("labels", labels)):
        if value is not None and len(value) != len(queries):
            raise HTTPProblem(422, f"field {name!r} has {len(value)} items but 'query' has {len(queries)}")
    return queries, prompts, labels


def parse_score(payload: Any) -> list[Sample]:
    """``{"samples": [{"prompt", "completion", ...fields}]}``."""
    body = _object(payload)
    rows = body.get("samples")
    if not isinstance(rows, list):
        raise HTTPProblem(422, "field 'samples' is required (a list of objects)")
    samples = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise HTTPProblem(422, f"field 'samples[{i}]' must be an object")
        for key in ("prompt", "completion"):
            if key in row and not isinstance(row[key], str | list):
                raise HTTPProblem(422, f"field 'samples[{i}].{key}' must be a string or a list of chat messages")
        samples.append(Sample.from_row(row))
    return samples


# ---------------------------------------------------------------- the app


def create_app(config: ServerConfig | None = None, verifier: Verifier | None = None) -> Any:
    """The FastAPI app for one reward spec (``verifier`` overrides building from the spec)."""
    config = config or ServerConfig()
    if config.on_error not in ON_ERROR_CHOICES:
        raise SpecError(f"on_error must be one of {', '.join(ON_ERROR_CHOICES)}, got {config.on_error!r}")
    service = RewardService(config, verifier)
    limit = int(config.max_body_mb * 1024 * 1024)

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        await service.start()
        yield
        await service.stop()

    app = FastAPI(title="rewardsmith reward server", lifespan=lifespan)
    app.state.service = service

    async def read_body(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise HTTPProblem(413, f"request body of {declared} bytes exceeds the limit of {limit} bytes")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPProblem(413, f"request body exceeds the limit of {limit} bytes")
            chunks.append(chunk)
        return _parse_json(b"".join(chunks))

    async def handle(route: str, request: Request, work: Any) -> Any:
        start = time.perf_counter()
        try:
            response = JSONResponse(await work(request))
        except HTTPProblem as problem:
            response = JSONResponse({"error": problem.message}, status_code=problem.status, headers=problem.headers)
        except RewardError as exc:
            response = JSONResponse({"error": str(exc)}, status_code=500)
        except Exception as exc:
            response = JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=500)
        service.metrics.observe(route, response.status_code, time.perf_counter() - start)
        return response

    async def get_reward(request: Request) -> dict[str, Any]:
        payload = await read_body(request)
        queries, prompts, labels = parse_get_reward(payload)
        service.check_reward(payload.get("reward"))
        verdicts = await service.score(to_samples(queries, prompts, labels, config.label_field))
        return reward_dict(verdicts, service.verifier, config.on_error)  # type: ignore[arg-type]

    async def score(request: Request) -> dict[str, Any]:
        payload = await read_body(request)
        samples = parse_score(payload)
        service.check_reward(payload.get("reward"))
        verdicts = await service.score(samples)
        return {"verdicts": [v.to_dict() for v in verdicts], "rewards": [v.reward for v in verdicts]}

    @app.post("/get_reward")
    async def get_reward_route(request: Request) -> Any:
        return await handle("/get_reward", request, get_reward)

    @app.post("/v1/score")
    async def score_route(request: Request) -> Any:
        return await handle("/v1/score", request, score)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "reward": service.name, "in_flight": service.in_flight, "pid": os.getpid()}

    @app.get("/metrics")
    async def metrics() -> Any:
        return PlainTextResponse(service.metrics.render(service.in_flight),
                                 media_type="text/plain; version=0.0.4; charset=utf-8")

    return app


def app_from_env() -> Any:
    """App factory for ``uvicorn --workers N``: each worker reads the config from the environment."""
    text = os.environ.get(CONFIG_ENV)
    return create_app(ServerConfig.from_json(text) if text else ServerConfig())


def serve(config: ServerConfig, host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
          log_level: str = "info") -> None:
    """Run the server until SIGINT/SIGTERM; uvicorn finishes in-flight requests before exiting."""
    import uvicorn

    build(config.reward)  # fail fast, before forking workers, on a bad spec
    os.environ[CONFIG_ENV] = config.to_json()
    uvicorn.run("rewardsmith.adapters.server:app_from_env", factory=True, host=host, port=port,
                workers=workers if workers > 1 else None, log_level=log_level, timeout_graceful_shutdown=None)
