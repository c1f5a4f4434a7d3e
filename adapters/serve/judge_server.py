"""A small OpenAI-compatible chat-completions server in front of a local transformers model.

Why: the judge's HTTP path (concurrency, retries, logprobs) should be testable end to end
with no internet, and a team can serve one judge model to many trainer workers. Concurrent
requests are gathered into batches (up to ``max_batch``, waiting at most ``max_wait_s``) and
generated together, which is where concurrent judging gains its throughput.

    python -m rewardsmith.adapters.serve.judge_server --model smollm2 --port 8001   # loopback by default

Endpoints: ``POST /v1/chat/completions`` (``messages``, ``max_tokens``, ``temperature``,
``seed``, ``logprobs``, ``top_logprobs``) and ``GET /v1/models``.

With ``--token-file FILE`` (or ``$REWARDSMITH_SERVER_TOKEN``) every route needs
``Authorization: Bearer <token>``, which is what OpenAI-compatible clients send as their API key
(the judge's ``backend: {kind: openai, api_key_env: VAR}`` with the token in ``$VAR``); the same
checks as the reward server's (:mod:`rewardsmith.adapters.serve.auth`).
"""

import argparse
import contextlib
import queue
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

from rewardsmith.adapters.serve.auth import (
    CHALLENGE,
    TOKEN_ENV,
    TokenError,
    authorized,
    is_loopback,
    load_token,
    token_source,
)
from rewardsmith.reward_models.local_judge import TransformersBackend
from rewardsmith.verifiers.judge.backends import BackendError, Completion, GenParams, Messages


class Batcher:
    """Gathers concurrent requests into batches for one backend, on one worker thread."""

    def __init__(self, backend: TransformersBackend, max_batch: int = 16, max_wait_s: float = 0.01) -> None:
        self.backend = backend
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.queue: queue.Queue[tuple[Messages, GenParams, Future] | None] = queue.Queue()
        self.batches: list[int] = []  # sizes, for tests and the benchmark
        self.thread = threading.Thread(target=self._loop, name="judge-batcher", daemon=True)
        self.thread.start()

    def submit(self, messages: Messages, params: GenParams) -> Future:
        future: Future = Future()
        self.queue.put((messages, params, future))
        return future

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join(timeout=5)

    def _loop(self) -> None:
        while True:
            first = self.queue.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.max_wait_s
            while len(batch) < self.max_batch:
                try:
                    item = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    self.queue.put(None)
                    break
                batch.append(item)
            self.batches.append(len(batch))
            try:
                results = self.backend.complete_batch([(m, p) for m, p, _ in batch])
            except Exception as exc:
                results = [BackendError(f"{type(exc).__name__}: {exc}")] * len(batch)
            for (_, _, future), result in zip(batch, results, strict=True):
                if isinstance(result, BaseException):
                    future.set_exception(result)
                else:
                    future.set_result(result)


def _response(model: str, completion: Completion, want_logprobs: bool) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": completion.text},
                              "finish_reason": "stop", "logprobs": None}
    if want_logprobs and completion.logprobs is not None:
        choice["logprobs"] = {"content": [
            {"token": t.token, "logprob": t.logprob, "bytes": list(t.token.encode()),
             "top_logprobs": [{"token": k, "logprob": v, "bytes": list(k.encode())} for k, v in t.top.items()]}
            for t in completion.logprobs
        ]}
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [choice], "usage": {}}


def create_app(backend: TransformersBackend, model_name: str | None = None, max_batch: int = 16,
               max_wait_s: float = 0.01, token: bytes | None = None) -> Any:
    """The FastAPI app; ``app.state.batcher`` and ``app.state.requests`` are there for tests. With
    ``token``, a request without ``Authorization: Bearer <token>`` gets 401 (OpenAI's error shape)."""
    import asyncio

    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, ConfigDict

    name = model_name or backend.model
    batcher = Batcher(backend, max_batch=max_batch, max_wait_s=max_wait_s)
    app = FastAPI(title="rewardsmith judge server")
    app.state.batcher = batcher
    app.state.requests = 0

    if token is not None:
        @app.middleware("http")
        async def require_token(request: Request, call_next: Any) -> Any:
            header = request.headers.get("authorization")
            if authorized(header.encode("latin-1") if header is not None else None, token):
                return await call_next(request)
            message = (f"this judge server requires 'Authorization: Bearer <token>' (the judge backend's "
                       f"api_key_env names the variable that holds it; the server reads --token-file or {TOKEN_ENV})")
            return JSONResponse({"error": {"message": message, "type": "invalid_request_error",
                                           "code": "invalid_api_key"}},
                                status_code=401, headers={"WWW-Authenticate": CHALLENGE})

    class ChatRequest(BaseModel):
        model_config = ConfigDict(extra="allow")
        model: str | None = None
        messages: list[dict[str, Any]]
        max_tokens: int | None = None
        max_completion_tokens: int | None = None
        temperature: float = 0.0
        seed: int | None = None
        logprobs: bool = False
        top_logprobs: int | None = None

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "rewardsmith"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: ChatRequest) -> dict[str, Any]:
        app.state.requests += 1
        top = (request.top_logprobs or 1) if request.logprobs else 0
        if top > 20:
            raise HTTPException(400, "top_logprobs must be at most 20")
        params = GenParams(max_tokens=request.max_tokens or request.max_completion_tokens or 256,
                           temperature=request.temperature, top_logprobs=top, seed=request.seed)
        future = batcher.submit(request.messages, params)
        try:
            completion = await asyncio.wrap_future(future)
        except BackendError as exc:
            raise HTTPException(503, str(exc)) from exc
        return _response(name, completion, request.logprobs)

    return app


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_in_thread(backend: TransformersBackend, host: str = "127.0.0.1", port: int | None = None,
                    **app_options: Any) -> Iterator[tuple[str, Any]]:
    """Run the server on a background thread; yields (base_url ending in /v1, app)."""
    import uvicorn

    port = port or free_port(host)
    app = create_app(backend, **app_options)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, name="judge-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("judge server did not start")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}/v1", app
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        app.state.batcher.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2", help="directory, .gguf file, hub id, or 'smollm2' (offline)")
    parser.add_argument("--name", default=None, help="model name the server reports (default: --model)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-batch", type=int, default=16)
    parser.add_argument("--token-file", default=None, metavar="FILE",
                        help=f"require 'Authorization: Bearer <token>', the token read from FILE (or set {TOKEN_ENV})")
    args = parser.parse_args(argv)
    import uvicorn

    try:
        token_file, from_env = token_source(args.token_file)
        token = load_token(token_file, from_env)
    except TokenError as exc:
        parser.error(str(exc))
    if token is None and not is_loopback(args.host):
        print(f"warning: serving on {args.host}:{args.port} without a token: anyone who can reach this port can "
              f"run the judge model on this machine; require one with --token-file FILE or {TOKEN_ENV}",
              file=sys.stderr)
    backend = TransformersBackend(args.model, device=args.device, max_batch=args.max_batch)
    backend.load()
    uvicorn.run(create_app(backend, args.name, max_batch=args.max_batch, token=token), host=args.host,
                port=args.port)


if __name__ == "__main__":
    main()
