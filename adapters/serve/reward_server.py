"""The reward server: one reward spec behind HTTP, for trainers that call rewards remotely.

Routes: ``POST /get_reward`` (OpenRLHF's remote reward protocol; the contract and the
version matched are in :mod:`rewardsmith.adapters.trainers.openrlhf`), ``POST /v1/score`` (native:
samples in, verdicts out), ``GET /health``, ``GET /metrics`` (Prometheus text).

Why the machinery: a trainer fires many small concurrent requests. A collector merges
whatever arrives within ``batch_window_ms`` (or up to ``max_batch`` samples) into one
``verify_batch``, so the math pool sees big batches; admission is bounded (503 +
Retry-After rather than an unbounded queue), each request has a deadline (504), the body
size is checked before parsing (413), and bad input gets a 4xx that names the field.

In production: the math worker pool is started and warm before the first request is
accepted; each request gets one log line (reward, rows, invalid_input and error counts,
latency); a batch that is mostly ``invalid_input`` is warned about once, naming the missing
field and the flag that fixes it; and ``/metrics`` totals are right across ``--workers``
processes (``prometheus_client``'s multiprocess mode: each worker writes its counters to a
shared directory that ``serve`` creates before the workers start and removes at exit).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from rewardsmith.adapters.console import show_logs
from rewardsmith.adapters.health import InputHealth
from rewardsmith.adapters.on_error import NO_MISSING, RewardError, check_on_error
from rewardsmith.adapters.trainers.openrlhf import CONSUMER, HEALTH_MIN_ROWS, openrlhf_health, reward_dict, to_samples
from rewardsmith.verifiers import RewardsmithError, Sample, SpecError, Verdict, Verifier, build
from rewardsmith.verifiers.pool import started_workers
from rewardsmith.verifiers.wording import plural

CONFIG_ENV = "REWARDSMITH_SERVE_CONFIG"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"  # read by prometheus_client when it is first imported
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

logger = logging.getLogger("rewardsmith.server")


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
    log_level: str = "info"
    metrics_dir: str | None = None  # set by `serve` for several workers: prometheus multiprocess mode

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


class Metrics:
    """The server's Prometheus metrics, in this app's own registry.

    With ``multiprocess_dir`` (several server processes), prometheus_client keeps every value in
    a per-process file in that directory and :meth:`render` merges all of them, so the totals
    do not depend on which worker answers the scrape; counters of a worker that exited stay in
    the totals, its share of the in-flight gauge (``livesum``) is dropped.
    """

    def __init__(self, multiprocess_dir: str | None = None) -> None:
        self.multiprocess_dir = multiprocess_dir
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("rewardsmith_requests", "HTTP requests by route and status code.",
                                ["route", "code"], registry=r)
        self.latency = Histogram("rewardsmith_request_seconds", "Request latency.", ["route"],
                                 buckets=LATENCY_BUCKETS, registry=r)
        self.verdicts = Counter("rewardsmith_verdicts", "Verdicts by status.", ["status"], registry=r)
        self.batches = Counter("rewardsmith_batches", "verify_batch calls.", registry=r)
        self.batched_samples = Counter("rewardsmith_batched_samples", "Samples scored.", registry=r)
        self.in_flight = Gauge("rewardsmith_in_flight", "Requests admitted and not yet answered.",
                               registry=r, multiprocess_mode="livesum")

    def observe(self, route: str, code: int, seconds: float) -> None:
        self.requests.labels(route=route, code=str(code)).inc()
        self.latency.labels(route=route).observe(seconds)

    def scored(self, verdicts: Sequence[Verdict]) -> None:
        self.batches.inc()
        self.batched_samples.inc(len(verdicts))
        for verdict in verdicts:
            self.verdicts.labels(status=verdict.status).inc()

    def render(self) -> bytes:
        if self.multiprocess_dir is None:
            return generate_latest(self.registry)
        from prometheus_client.multiprocess import MultiProcessCollector

        _forget_dead_workers(self.multiprocess_dir)
        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=self.multiprocess_dir)
        return generate_latest(merged)

    def close(self) -> None:
        """This process stops serving: its in-flight gauge leaves the live sum."""
        if self.multiprocess_dir is not None:
            from prometheus_client.multiprocess import mark_process_dead

            mark_process_dead(os.getpid(), self.multiprocess_dir)


def _forget_dead_workers(path: str) -> None:
    """Drop the live gauges of workers that died without closing (killed, crashed); uvicorn
    starts a replacement, whose own files count instead."""
    from prometheus_client.multiprocess import mark_process_dead

    for file in Path(path).glob("gauge_live*_*.db"):
        pid = file.stem.rpartition("_")[2]
        if pid.isdigit() and not _alive(int(pid)):
            mark_process_dead(int(pid), path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, another user's
        return True
    return True


def _multiprocess_ready(path: str) -> bool:
    """prometheus_client picks its value store once, at import, from the environment."""
    from prometheus_client import values

    return os.environ.get(MULTIPROC_ENV) == path and bool(getattr(values.ValueClass, "_multiprocess", False))


class RewardService:
    """The verifier, the micro-batching collector and admission control (one per worker process)."""

    def __init__(self, config: ServerConfig, verifier: Verifier | None = None) -> None:
        self.config = config
        self.verifier = verifier or build(config.reward)
        self.name = reward_name(config.reward)
        self.metrics = Metrics(config.metrics_dir)
        self.health = {  # one per route: each names its own fix
            "/get_reward": openrlhf_health(config.label_field, f"rewardsmith serve ({CONSUMER}, /get_reward)"),
            "/v1/score": InputHealth("rewardsmith serve (/v1/score)", _native_fix, min_rows=HEALTH_MIN_ROWS),
        }
        self.in_flight = 0
        self._queue: asyncio.Queue[_Job] | None = None
        self._arrived = asyncio.Event()  # set on every enqueue; wakes the collector's window
        self._collector: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Warm the worker pools, then start the collector: runs before the server accepts
        requests, so the first request does not wait for the workers to import sympy."""
        started = time.perf_counter()
        try:
            await asyncio.to_thread(self.verifier.start, True)
            workers = started_workers()
        except Exception as exc:  # only a head start: the first batch reports a real fault properly
            logger.warning("could not warm the worker pool: %s: %s", type(exc).__name__, exc)
        else:
            if workers:
                logger.info("worker pool warm: %s in %.1f s", plural(workers, "worker"), time.perf_counter() - started)
        self._queue = asyncio.Queue()
        self._collector = asyncio.create_task(self._collect())

    async def stop(self) -> None:
        if self._collector is not None:
            self._collector.cancel()
            with _suppress_cancel():
                await self._collector
        self.metrics.close()

    def check_reward(self, requested: Any) -> None:
        if requested is None:
            return
        names = ["default", self.name]
        if requested not in names:
            raise HTTPProblem(400, f"unknown reward {requested!r}; this server serves: {', '.join(names)}")

    async def score(self, samples: list[Sample]) -> list[Verdict]:
        """Admit, queue for the collector, wait with the deadline."""
        if self.in_flight >= self.config.max_queue:
            raise HTTPProblem(503, f"server busy: {plural(self.in_flight, 'request')} in flight "
                              f"(max {self.config.max_queue})",
                              {"Retry-After": "1"})
        assert self._queue is not None, "service not started"
        self.in_flight += 1
        self.metrics.in_flight.inc()
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
            self.metrics.in_flight.dec()

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
        self.metrics.scored(verdicts)
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


def _native_fix(field: str | None) -> str:
    if field == "completion":
        return "give each sample in /v1/score a 'completion' (a string or a list of chat messages)"
    if field is None:
        return "see the verdicts' feedback for what the rows lack"
    return f"give each sample in /v1/score a {field!r} key (a dotted name reaches into a nested object)"


def request_line(name: str, route: str, code: int, verdicts: Sequence[Verdict], seconds: float) -> str:
    """The one log line per request: what was scored and how it went."""
    invalid = sum(v.status == "invalid_input" for v in verdicts)
    errors = sum(v.status == "error" for v in verdicts)
    return (f"reward={name} route={route} code={code} rows={len(verdicts)} invalid_input={invalid} "
            f"error={errors} latency_ms={1000 * seconds:.1f}")


# A route's work: the response body; the verdicts it scored go into the list, for the log line
# even when the request then fails (on_error=raise).
Work = Callable[[Request, list[Verdict]], Awaitable[dict[str, Any]]]


def create_app(config: ServerConfig | None = None, verifier: Verifier | None = None) -> Any:
    """The FastAPI app for one reward spec (``verifier`` overrides building from the spec)."""
    config = config or ServerConfig()
    try:
        check_on_error(config.on_error, NO_MISSING, CONSUMER)
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    if config.metrics_dir is not None and not _multiprocess_ready(config.metrics_dir):
        raise RuntimeError(f"metrics_dir needs {MULTIPROC_ENV}={config.metrics_dir} in the environment before "
                           "prometheus_client is imported (rewardsmith serve sets it for its workers)")
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

    async def handle(route: str, request: Request, work: Work) -> Any:
        start = time.perf_counter()
        verdicts: list[Verdict] = []
        try:
            response = JSONResponse(await work(request, verdicts))
        except HTTPProblem as problem:
            response = JSONResponse({"error": problem.message}, status_code=problem.status, headers=problem.headers)
        except Exception as exc:
            response = JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=500)
        seconds = time.perf_counter() - start
        service.metrics.observe(route, response.status_code, seconds)
        if logger.isEnabledFor(logging.INFO):
            logger.info(request_line(service.name, route, response.status_code, verdicts, seconds))
        return response

    async def get_reward(request: Request, verdicts: list[Verdict]) -> dict[str, Any]:
        payload = await read_body(request)
        queries, prompts, labels = parse_get_reward(payload)
        service.check_reward(payload.get("reward"))
        verdicts += await service.score(to_samples(queries, prompts, labels, config.label_field))
        service.health["/get_reward"].check(verdicts)
        try:
            return reward_dict(verdicts, service.verifier, config.on_error)
        except RewardError as exc:
            raise HTTPProblem(500, str(exc)) from None

    async def score(request: Request, verdicts: list[Verdict]) -> dict[str, Any]:
        payload = await read_body(request)
        samples = parse_score(payload)
        service.check_reward(payload.get("reward"))
        verdicts += await service.score(samples)
        service.health["/v1/score"].check(verdicts)
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
        return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return app


def app_from_env() -> Any:
    """App factory for ``uvicorn --workers N``: each worker reads the config from the environment."""
    text = os.environ.get(CONFIG_ENV)
    config = ServerConfig.from_json(text) if text else ServerConfig()
    _log_to_stderr(config.log_level)
    return create_app(config)


def _log_to_stderr(level: str) -> None:
    """The request lines and warnings of the ``rewardsmith`` loggers, beside uvicorn's own."""
    show_logs(level, logging.Formatter("%(levelname)s:     [%(process)d] %(name)s: %(message)s"))


class BindError(RewardsmithError, RuntimeError):
    """The address cannot be served on (in use, not ours, not allowed); the message says what to do."""


def check_bindable(host: str, port: int) -> None:
    """Bind ``host:port`` the way uvicorn will, and let go: a port in use is one clear line now
    rather than a log trace from every worker later."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise BindError(f"port {port} on {host} is in use; pick another with --port") from None
            if exc.errno == errno.EACCES:
                raise BindError(f"no permission to bind port {port} on {host}; use a port above 1023 "
                                "with --port") from None
            if exc.errno == errno.EADDRNOTAVAIL:
                raise BindError(f"{host} is not an address of this machine; pass one of its addresses "
                                "(or 0.0.0.0) with --host") from None
            raise BindError(f"cannot bind {host}:{port}: {exc.strerror or exc}") from None
        except socket.gaierror as exc:
            raise BindError(f"cannot resolve --host {host!r}: {exc}") from None


def serve(config: ServerConfig, host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
          log_level: str = "info") -> None:
    """Run the server until SIGINT/SIGTERM; uvicorn finishes in-flight requests before exiting.

    Raises :class:`BindError` before anything starts when the address cannot be served on.
    With several workers, the metrics directory is created here, before they start (each
    reads it from the environment when it first imports prometheus_client), and removed at exit.
    """
    import uvicorn

    build(config.reward)  # fail fast, before forking workers, on a bad spec
    check_bindable(host, port)
    metrics_dir = tempfile.mkdtemp(prefix="rewardsmith-metrics-") if workers > 1 else None
    config = ServerConfig(**{**asdict(config), "log_level": log_level, "metrics_dir": metrics_dir})
    saved = {name: os.environ.get(name) for name in (CONFIG_ENV, MULTIPROC_ENV)}
    os.environ[CONFIG_ENV] = config.to_json()
    if metrics_dir is not None:
        os.environ[MULTIPROC_ENV] = metrics_dir
        _log_to_stderr(log_level)
        logger.info("%d workers write their metrics to %s (removed at exit)", workers, metrics_dir)
    try:
        uvicorn.run("rewardsmith.adapters.serve.reward_server:app_from_env", factory=True, host=host, port=port,
                    workers=workers if workers > 1 else None, log_level=log_level, timeout_graceful_shutdown=None)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if metrics_dir is not None:
            shutil.rmtree(metrics_dir, ignore_errors=True)
