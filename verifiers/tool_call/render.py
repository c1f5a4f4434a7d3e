"""Writing calls in each format the verifier reads: for example rows, the audit's probes and the
parity benchmark (the inverse of :mod:`~rewardsmith.verifiers.tool_call.parse`)."""

from __future__ import annotations

import json
from typing import Any

from rewardsmith.verifiers.core import Text

CallSpec = tuple[str, dict[str, Any]]


def python_text(calls: list[CallSpec]) -> str:
    """``[f(a=1), g(b='x')]``: the list BFCL's prompting models write (``[]`` for no call)."""
    return "[" + ", ".join(f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})" for name, args in calls) + "]"


def hermes_text(calls: list[CallSpec]) -> str:
    """One ``<tool_call>`` tag per call, a line each."""
    return "\n".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>" for n, a in calls)


def openai_messages(calls: list[CallSpec], content: str | None = None) -> list[dict[str, Any]]:
    """One assistant message whose ``tool_calls`` carry the calls (arguments as JSON strings)."""
    items = [
        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a) in enumerate(calls)
    ]
    return [{"role": "assistant", "content": content, "tool_calls": items}]


def render(calls: list[CallSpec], form: str) -> Text:
    """The calls in ``form`` (``python``, ``hermes`` or ``openai``)."""
    if form == "python":
        return python_text(calls)
    if form == "hermes":
        return hermes_text(calls)
    if form == "openai":
        return openai_messages(calls)
    raise ValueError(f"unknown call format {form!r}")
