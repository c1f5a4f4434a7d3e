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

With a token (``--token-file`` or ``$REWARDSMITH_SERVER_TOKEN``, :mod:`.auth`), every route but
``/health`` answers 401 without ``Authorization: Bearer <token>``.

Why a bare ASGI app and not FastAPI: four fixed routes need no framework, and on 2 cores FastAPI's
routing, middleware and request objects cost more per request than parsing, scoring bookkeeping
and metrics together (``benchmarks/server_load.py --breakdown`` measures each part).
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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from rewardsmith.adapters.console import show_logs
from rewardsmith.adapters.health import InputHealth
from rewardsmith.adapters.on_error import NO_MISSING, RewardError, check_on_error
from rewardsmith.adapters.serve.auth import (
    CHALLENGE,
    CHALLENGE_INVALID,
    TOKEN_ENV,
    authorized,
    bearer,
    is_loopback,
    load_token,
    open_server_warning,
)
from rewardsmith.adapters.trainers.openrlhf import CONSUMER, HEALTH_MIN_ROWS, openrlhf_health, reward_dict, to_samples
from rewardsmith.verifiers import RewardsmithError, Sample, SpecError, Verdict, Verifier, build
from rewardsmith.verifiers.json_text import json_text
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
    batch_window_ms: float = 0.0  # continuous batching needs no wait; see RewardService._collect
    max_body_mb: float = 32.0
    timeout_s: float = 60.0
    max_queue: int = 256  # requests admitted (waiting or being scored) before 503
    label_field: str = "answer"
    on_error: str = "zero"
    log_level: str = "info"
    metrics_dir: str | None = None  # set by `serve` for several workers: prometheus multiprocess mode
    token_file: str | None = None  # the bearer token's file (each worker reads it; the token never travels)
    token_from_env: bool = False  # or the token is $REWARDSMITH_SERVER_TOKEN (workers inherit it)

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

        # Labelled children looked up once (``labels()`` costs as much as the increment).
        self._requests: dict[tuple[str, int], Any] = {}
        self._latency: dict[str, Any] = {}
        self._verdicts: dict[str, Any] = {}

    def observe(self, route: str, code: int, seconds: float) -> None:
        key = (route, code)
        child = self._requests.get(key)
        if child is None:
            child = self._requests[key] = self.requests.labels(route=route, code=str(code))
        child.inc()
        latency = self._latency.get(route)
        if latency is None:
            latency = self._latency[route] = self.latency.labels(route=route)
        latency.observe(seconds)

    def scored(self, verdicts: Sequence[Verdict]) -> None:
        self.batches.inc()
        self.batched_samples.inc(len(verdicts))
        counts: dict[str, int] = {}
        for verdict in verdicts:
            counts[verdict.status] = counts.get(verdict.status, 0) + 1
        for status, n in counts.items():
            child = self._verdicts.get(status)
            if child is None:
                child = self._verdicts[status] = self.verdicts.labels(status=status)
            child.inc(n)

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
        self._wake = asyncio.Event()  # set on every enqueue and when a batch is scored; wakes the collector
        self._collector: asyncio.Task[None] | None = None
        self._scoring: asyncio.Task[None] | None = None  # the batch being scored, if any

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
        for task in (self._collector, self._scoring):
            if task is not None:
                task.cancel()
                with _suppress_cancel():
                    await task
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
            self._wake.set()
            try:
                return await asyncio.wait_for(asyncio.shield(job.future), self.config.timeout_s)
            except TimeoutError:
                raise HTTPProblem(504, f"scoring took longer than {self.config.timeout_s:g}s") from None
        finally:
            self.in_flight -= 1
            self.metrics.in_flight.dec()

    async def _collect(self) -> None:
        """Continuous batching: one batch is scored while the next one gathers.

        Requests that arrive while the verifier is busy join the next batch, which starts the
        moment the verifier is free (or at ``max_batch`` samples); so the batch size follows the
        load and the worker pool never idles while requests wait. Only when the verifier is idle
        does a first request wait, at most ``batch_window_ms``, for others to join it.
        """
        assert self._queue is not None
        queue, window, limit = self._queue, self.config.batch_window_ms / 1000, self.config.max_batch
        while True:
            jobs = [await queue.get()]
            size = len(jobs[0].samples)
            deadline = time.monotonic() + window
            # Waits on an event, not ``wait_for(queue.get())``: on Python 3.11 that can drop
            # an item arriving just as the timeout fires, and a dropped job never answers.
            while size < limit:
                if not queue.empty():
                    job = queue.get_nowait()
                    jobs.append(job)
                    size += len(job.samples)
                    continue
                self._wake.clear()  # set by an arrival or by the batch being scored finishing
                if self._scoring is not None and not self._scoring.done():
                    await self._wake.wait()
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), remaining)
            if self._scoring is not None:  # full before the verifier is free: one batch at a time
                await asyncio.wait({self._scoring})
            self._scoring = asyncio.create_task(self._run(jobs))

    async def _run(self, jobs: list[_Job]) -> None:
        try:
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
        finally:
            self._wake.set()


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


JSON_TYPE = (b"content-type", b"application/json")
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
# A POST route's work: the request's body in, the response's body out; the verdicts it scored go
# into the list, for the log line even when the request then fails (on_error=raise).
Work = Callable[[bytes, list[Verdict]], Awaitable[dict[str, Any]]]


def _json(body: Any) -> bytes:
    """The response body, written as ``rewardsmith score`` writes its rows (:func:`json_text`): a
    verdict that quotes a completion holding a lone surrogate or a number Python will not print
    is sent, not turned into a 500 for the whole batch."""
    return json_text(body, compact=True).encode("utf-8")


async def _respond(send: Send, status: int, body: bytes, content_type: bytes = b"application/json",
                   headers: Mapping[str, str] | None = None, head_only: bool = False) -> None:
    raw = [(b"content-type", content_type), (b"content-length", str(len(body)).encode("latin-1"))]
    if headers:
        raw += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": b"" if head_only else body})


class RewardApp:
    """The reward server as a bare ASGI app: ``POST /get_reward``, ``POST /v1/score``, ``GET /health``,
    ``GET /metrics``; 404 and 405 as FastAPI answered them (``{"detail": ...}``), a trailing slash
    accepted. ``service`` is there for tests and the benchmark."""

    POST_ROUTES = ("/get_reward", "/v1/score")
    GET_ROUTES = ("/health", "/metrics")

    def __init__(self, service: RewardService, token: bytes | None = None) -> None:
        self.service = service
        self.token = token
        self.limit = int(service.config.max_body_mb * 1024 * 1024)
        self.work: dict[str, Work] = {"/get_reward": self._get_reward, "/v1/score": self._score}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":  # no websocket routes: refuse the handshake
            await send({"type": "websocket.close", "code": 1000})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.service.start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": f"{type(exc).__name__}: {exc}"})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.service.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if len(path) > 1 and path.endswith("/"):
            path = path.rstrip("/")
        method = scope["method"]
        if path in self.POST_ROUTES:
            if method != "POST":
                await _respond(send, 405, b'{"detail":"Method Not Allowed"}', headers={"Allow": "POST"})
                return
            await self._post(path, scope, receive, send)
        elif path in self.GET_ROUTES:
            if method not in ("GET", "HEAD"):
                await _respond(send, 405, b'{"detail":"Method Not Allowed"}', headers={"Allow": "GET, HEAD"})
                return
            head = method == "HEAD"
            if path == "/health":
                service = self.service
                body = _json({"status": "ok", "reward": service.name, "in_flight": service.in_flight,
                              "pid": os.getpid()})
                await _respond(send, 200, body, head_only=head)
                return
            problem = self._refused(_header(scope, b"authorization"))
            if problem is not None:
                await _respond(send, problem.status, _json({"error": problem.message}), headers=problem.headers,
                               head_only=head)
                return
            await _respond(send, 200, self.service.metrics.render(), CONTENT_TYPE_LATEST.encode("latin-1"),
                           head_only=head)
        else:
            await _respond(send, 404, b'{"detail":"Not Found"}')

    def _refused(self, header: bytes | None) -> HTTPProblem | None:
        """401 unless the request carries the token (checked before the body is read)."""
        if self.token is None or authorized(header, self.token):
            return None
        if bearer(header) is None:
            return HTTPProblem(401, "this server requires a bearer token: send the header 'Authorization: Bearer "
                               f"<token>' with the token the server was started with (--token-file or {TOKEN_ENV})",
                               {"WWW-Authenticate": CHALLENGE})
        return HTTPProblem(401, "the bearer token is not the one this server was started with",
                           {"WWW-Authenticate": CHALLENGE_INVALID})

    async def _post(self, route: str, scope: Scope, receive: Receive, send: Send) -> None:
        service = self.service
        start = time.perf_counter()
        verdicts: list[Verdict] = []
        headers: Mapping[str, str] | None = None
        try:
            problem = self._refused(_header(scope, b"authorization"))
            if problem is not None:
                raise problem
            body = await self._read_body(scope, receive)
            status, payload = 200, _json(await self.work[route](body, verdicts))
        except HTTPProblem as problem:
            status, payload, headers = problem.status, _json({"error": problem.message}), problem.headers
        except Exception as exc:
            status, payload = 500, _json({"error": f"{type(exc).__name__}: {exc}"})
        await _respond(send, status, payload, headers=headers)
        seconds = time.perf_counter() - start
        service.metrics.observe(route, status, seconds)
        if logger.isEnabledFor(logging.INFO):
            logger.info(request_line(service.name, route, status, verdicts, seconds))

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes:
        limit = self.limit
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise HTTPProblem(413, f"request body of {declared.decode()} bytes exceeds the limit of {limit} bytes")
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise HTTPProblem(400, "the client disconnected before sending the whole body")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise HTTPProblem(413, f"request body exceeds the limit of {limit} bytes")
            chunks.append(chunk)
            more = message.get("more_body", False)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _get_reward(self, body: bytes, verdicts: list[Verdict]) -> dict[str, Any]:
        service = self.service
        payload = _parse_json(body)
        queries, prompts, labels = parse_get_reward(payload)
        service.check_reward(payload.get("reward"))
        verdicts += await service.score(to_samples(queries, prompts, labels, service.config.label_field))
        service.health["/get_reward"].check(verdicts)
        try:
            return reward_dict(verdicts, service.verifier, service.config.on_error)
        except RewardError as exc:
            raise HTTPProblem(500, str(exc)) from None

    async def _score(self, body: bytes, verdicts: list[Verdict]) -> dict[str, Any]:
        service = self.service
        payload = _parse_json(body)
        samples = parse_score(payload)
        service.check_reward(payload.get("reward"))
        verdicts += await service.score(samples)
        service.health["/v1/score"].check(verdicts)
        return {"verdicts": [v.to_dict() for v in verdicts], "rewards": [v.reward for v in verdicts]}


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return value
    return None


def create_app(config: ServerConfig | None = None, verifier: Verifier | None = None) -> RewardApp:
    """The ASGI app for one reward spec (``verifier`` overrides building from the spec); it reads
    the token (``config.token_file`` or ``$REWARDSMITH_SERVER_TOKEN``) now, so a bad one fails here."""
    config = config or ServerConfig()
    try:
        check_on_error(config.on_error, NO_MISSING, CONSUMER)
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    if config.metrics_dir is not None and not _multiprocess_ready(config.metrics_dir):
        raise RuntimeError(f"metrics_dir needs {MULTIPROC_ENV}={config.metrics_dir} in the environment before "
                           "prometheus_client is imported (rewardsmith serve sets it for its workers)")
    token = load_token(config.token_file, config.token_from_env)
    return RewardApp(RewardService(config, verifier), token)


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

    verifier = build(config.reward)  # fail fast, before forking workers, on a bad spec
    load_token(config.token_file, config.token_from_env)  # and on a token that cannot be used
    check_bindable(host, port)
    if config.token_file is None and not config.token_from_env and not is_loopback(host):
        logger.warning(open_server_warning(host, port, verifier))
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
