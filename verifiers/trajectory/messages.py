"""A trajectory from chat messages in the OpenAI shape, the one every trainer and JSONL file can write.

* An assistant message is ``{"role": "assistant", "content": ..., "tool_calls": [{"id": ..., "type":
  "function", "function": {"name": ..., "arguments": "<JSON text>"}}]}``; in the rollout it is sampled unless it
  says ``"sampled": false`` (an assistant turn the environment or the dataset supplied). A message without a
  role is an assistant message (TRL's conversational completions).
* A tool result is ``{"role": "tool", "tool_call_id": ..., "content": ..., "status": ...}``: ``status`` is
  what the environment recorded when it ran the call (``ok``, ``error``, ``unknown_tool``,
  ``bad_arguments``, ``timeout``, ``truncated``); without it the status is ``unknown``. Nothing is read from
  the result's text.
* ``developer`` is read as ``system``; content given as parts is read part by part (``text``,
  ``output_text``, ``input_text``, ``refusal``); a part of any other type (an image, audio, a file) is
  refused, since what a user sees and nobody read could hold anything. An assistant message with a
  ``refusal`` part (or OpenAI's ``refusal`` field) is a refusal: its text is read, and it is marked
  ``refused`` (a refusal states no answer, whatever else the message says).

A message that cannot be read raises :class:`TrajectoryError`, naming the message: a row is reported,
never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.verifiers.trajectory.model import (
    CALL_STATUSES,
    ROLES,
    STOP_REASONS,
    Message,
    ToolCall,
    Trajectory,
)

_ALIASES = {"developer": "system"}


class TrajectoryError(ValueError):
    """A message, call or field of a trajectory that cannot be read as written."""


def from_messages(
    prompt: Any,
    completion: Sequence[Mapping[str, Any]],
    *,
    stop_reason: Any = None,
    fields: Mapping[str, Any] | None = None,
    env_reward: Any = None,
) -> Trajectory:
    """The trajectory of a rollout given as chat messages: ``prompt`` (messages, or a string: one user
    message) and the rollout's ``completion`` messages."""
    if stop_reason is not None and stop_reason not in STOP_REASONS:
        raise TrajectoryError(f"stop_reason must be one of {', '.join(STOP_REASONS)}, got {stop_reason!r}")
    if env_reward is not None and (isinstance(env_reward, bool) or not isinstance(env_reward, int | float)):
        raise TrajectoryError(f"env_reward must be a number, got {env_reward!r}")
    return Trajectory(
        prompt=_prompt(prompt),
        messages=tuple(_message(m, i, rollout=True) for i, m in enumerate(_listed(completion, "completion"))),
        stop_reason=stop_reason,
        fields=dict(fields or {}),
        env_reward=None if env_reward is None else float(env_reward),
    )


def to_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The messages back in the OpenAI shape (what :func:`from_messages` reads), for JSONL and trainers."""
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.role == "assistant":
            item["sampled"] = m.sampled
        if m.refused:  # read back as a refusal
            item["content"] = [{"type": "refusal", "refusal": m.content}]
        if m.tool_calls:
            item["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw}}
                                  for c in m.tool_calls]
        if m.tool_call_id is not None:
            item["tool_call_id"] = m.tool_call_id
        if m.status is not None:
            item["status"] = m.status
        if m.finish_reason is not None:
            item["finish_reason"] = m.finish_reason
        out.append(item)
    return out


def _prompt(prompt: Any) -> tuple[Message, ...]:
    if prompt is None or prompt == "":
        return ()
    if isinstance(prompt, str):
        return (Message("user", prompt),)
    return tuple(_message(m, i, rollout=False) for i, m in enumerate(_listed(prompt, "prompt")))


def _listed(messages: Any, where: str) -> list[Mapping[str, Any]]:
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise TrajectoryError(f"{where} must be a list of chat messages, got {type(messages).__name__}")
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise TrajectoryError(f"{where} message {i} is a {type(m).__name__}, not an object")
    return list(messages)


def _message(raw: Mapping[str, Any], index: int, rollout: bool) -> Message:
    where = f"{'completion' if rollout else 'prompt'} message {index}"
    role = _ALIASES.get(raw.get("role", "assistant"), raw.get("role", "assistant"))
    if role not in ROLES:
        raise TrajectoryError(f"{where}: role must be one of {', '.join(ROLES)} (or developer), got {role!r}")
    content, refused = _text(raw.get("content"), where)
    if role == "assistant":
        refusal = raw.get("refusal")
        if isinstance(refusal, str) and refusal.strip():
            content, refused = "\n\n".join(t for t in (content, refusal) if t), True
        sampled = raw.get("sampled", rollout)
        if not isinstance(sampled, bool):
            raise TrajectoryError(f"{where}: sampled must be true or false, got {sampled!r}")
        if sampled and not rollout:
            raise TrajectoryError(f"{where}: a prompt message is never sampled")
        calls = tuple(_call(c) for c in _calls(raw.get("tool_calls")))
        finish = raw.get("finish_reason")
        return Message("assistant", content, sampled=sampled, tool_calls=calls,
                       finish_reason=None if finish is None else str(finish), refused=refused)
    if role == "tool":
        status = raw.get("status")
        if status is not None and status not in CALL_STATUSES:
            raise TrajectoryError(f"{where}: status must be one of {', '.join(CALL_STATUSES)}, got {status!r}")
        call_id = raw.get("tool_call_id")
        return Message("tool", content, tool_call_id=None if call_id is None else str(call_id),
                       status=status or "unknown")
    if raw.get("tool_calls"):
        raise TrajectoryError(f"{where}: only an assistant message calls tools")
    return Message(role, content)


# Content parts whose text a reader sees, and the key that holds it (OpenAI's chat and Responses shapes).
_TEXT_PARTS = {"text": "text", "output_text": "text", "input_text": "text", "refusal": "refusal"}


def _text(content: Any, where: str) -> tuple[str, bool]:
    """A message's visible text, and whether a part of it is a refusal. Parts are read by type; a part no
    reader's text holds (an image, audio, a file) is refused rather than skipped: what a user sees and nobody
    read could hold anything."""
    if content is None:
        return "", False
    if isinstance(content, str):
        return content, False
    if isinstance(content, str | bytes) or not isinstance(content, Sequence):
        raise TrajectoryError(f"{where}: content must be text or a list of parts, got {type(content).__name__}")
    texts = []
    for part in content:
        kind = part.get("type", "text") if isinstance(part, Mapping) else None
        key = _TEXT_PARTS.get(kind) if isinstance(kind, str) else None
        if key is None or not isinstance(part.get(key), str):
            shown = kind if isinstance(kind, str) else type(part).__name__
            raise TrajectoryError(f"{where}: a content part of type {shown!r} cannot be read as text "
                                  f"(parts read: {', '.join(_TEXT_PARTS)})")
        texts.append(part[key])
    refused = any(isinstance(part, Mapping) and part.get("type") == "refusal" for part in content)
    return "\n\n".join(texts), refused  # each part its own block: words of two parts never join


def _calls(items: Any) -> list[Any]:
    if items is None:
        return []
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        return [items]  # read as one malformed call: what the policy wrote is scored, not refused
    return list(items)


def _call(item: Any) -> ToolCall:
    """A call as written; one the runtime could not read (no function object, no name, arguments that are
    not JSON text) is kept as a malformed call (``arguments`` None), which every reward scores as such."""
    function = item.get("function") if isinstance(item, Mapping) else None
    if not isinstance(function, Mapping):
        return ToolCall("", _shown(item))
    name = function.get("name")
    name = name if isinstance(name, str) else ""
    arguments = function.get("arguments")
    call_id = item.get("id")
    call_id = None if call_id is None else str(call_id)
    if item.get("type", "function") != "function":
        return ToolCall(name, _shown(arguments), None, call_id)
    if isinstance(arguments, Mapping):  # already parsed by the runtime
        return ToolCall(name, _shown(arguments), dict(arguments), call_id)
    raw = "" if arguments is None else arguments if isinstance(arguments, str) else _shown(arguments)
    return ToolCall(name, raw, _object(raw) if isinstance(arguments, str) else None, call_id)


def _shown(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _object(raw: str) -> Mapping[str, Any] | None:
    """The arguments ``raw`` writes, when it is exactly one JSON object (no constant a JSON parser would
    not accept: NaN and Infinity are not JSON)."""
    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    try:
        value = json.loads(raw, parse_constant=refuse)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
