"""Reading the tool calls a completion makes, in the three common formats, without ever running it.

* ``openai``: chat messages whose assistant turns carry ``tool_calls`` (``{"type": "function",
  "function": {"name": ..., "arguments": "<json>"}}``; the arguments may also be an object, as
  Hugging Face chat templates take them).
* ``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` tags in the text (Hermes,
  Qwen); several tags are parallel calls; text around the tags is not a call.
* ``python``: the whole text (or one code fence that is the whole text) is a call ``f(a=1)`` or a
  list of calls ``[f(a=1), g(b="x")]``, as BFCL's AST category asks. Parsed with :mod:`ast`
  (never evaluated): keyword arguments with literal values only.

A leading reasoning block (``<think>…</think>``) is not read, in any format: runtimes with a
reasoning parser give the tool parser only what follows it. An unclosed block is all reasoning.
Calls are read from the raw text, as a runtime reads it; a tag must also be what a reader sees
(:func:`unseen`), and the rest of the answer region must hold nothing that looks like a call
(:mod:`~rewardsmith.verifiers.tool_call.stray`).

Everything the completion controls is bounded (its size, the number of calls, the nesting of a
value) and every failure to read is data, never an exception: a call that cannot be read is kept
as a :class:`Call` with a ``problem``, which matches nothing.
"""

from __future__ import annotations

import ast
import io
import json
import math
import re
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.verifiers.core import Text, message_text, short
from rewardsmith.verifiers.json_value import Unreadable, check_tree, loads_strict
from rewardsmith.verifiers.reading import Region, source_region, visible
from rewardsmith.verifiers.reading.frame import trailing
from rewardsmith.verifiers.tool_call.stray import stray_call

FORMATS = ("openai", "hermes", "python")
OPEN, CLOSE = "<tool_call>", "</tool_call>"
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError, TypeError)
_FENCE = re.compile(r"\A```[\w+-]*[ \t]*\n(.*)\n?```\Z", re.S)


@dataclass(frozen=True)
class Limits:
    """What a completion may make the reader do: characters read, calls, nesting of one value."""

    max_chars: int = 50_000
    max_calls: int = 32
    max_depth: int = 16
    max_digits: int = 1000


@dataclass(frozen=True)
class Call:
    """One call as read: a name and its arguments, or (``problem`` set) a call that could not be read."""

    name: str | None
    arguments: dict[str, Any]
    form: str
    problem: str | None = None

    def shown(self, limit: int = 120) -> str:
        if self.problem is not None:
            return f"<unreadable {self.form} call: {self.problem}>"
        args = ", ".join(f"{key}={shown(value, 40)}" for key, value in self.arguments.items())
        return short(f"{self.name}({args})", limit)


@dataclass
class Reading:
    """What was read: the calls in order, the formats they came in, a problem that voids them all (over a
    limit, calls in two formats, a hidden call, a call in another syntax beside them), and, when no call
    was read, the look-alike of one that was not (``unread``)."""

    calls: list[Call] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    problem: str | None = None
    unread: str | None = None  # no call read, but something that looks like one (in a syntax not accepted)
    stray_close: bool = False  # a </think> closed a block nobody opened (read as text)


def shown(value: Any, limit: int = 40) -> str:
    """A value as code shows it (strings quoted, so ``"5"`` and ``5`` read apart), cut to ``limit``."""
    return short(value if not isinstance(value, str) else json.dumps(value, ensure_ascii=False), limit)


# ----------------------------------------------------------------------------- values


def check_value(value: Any, limits: Limits) -> Any:
    """``value`` (JSON data) if it is plain data within the nesting limit; raises :class:`Unreadable`."""
    return check_tree(value, limits.max_depth, limits.max_digits)


def strict_json(text: str, limits: Limits) -> Any:
    """JSON as the standard says it (no NaN or Infinity, no key given twice), within the limits."""
    try:
        value = loads_strict(text, limits.max_digits)
    except Unreadable:
        raise
    except (*_PARSE_ERRORS, json.JSONDecodeError) as exc:
        raise Unreadable(f"not valid JSON ({type(exc).__name__})") from None
    return check_value(value, limits)


def _literal(node: ast.expr, depth: int, limits: Limits) -> Any:
    """The value of a literal node (string, number, bool, None, list, tuple, dict with string keys)."""
    if depth > limits.max_depth:
        raise Unreadable(f"a value nested deeper than {limits.max_depth}")
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, str | bool | int):
            return value
        if isinstance(value, float) and math.isfinite(value):
            return value
        raise Unreadable(f"{short(value, 40)} is not a plain literal")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = node.operand
        if isinstance(operand, ast.Constant) and type(operand.value) in (int, float):
            return -operand.value if isinstance(node.op, ast.USub) else operand.value
        raise Unreadable("a sign before something other than a number")
    if isinstance(node, ast.List):
        return [_literal(item, depth + 1, limits) for item in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(item, depth + 1, limits) for item in node.elts)
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise Unreadable("a dict key that is not a string")
            if key.value in out:
                raise Unreadable(f"dict key {short(key.value, 40)!r} given twice")
            out[key.value] = _literal(item, depth + 1, limits)
        return out
    raise Unreadable(
        f"{type(node).__name__} is not a literal (only strings, numbers, booleans, None, lists, tuples and dicts)"
    )


# ----------------------------------------------------------------------------- python


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _python_call(node: ast.expr, limits: Limits) -> Call:
    if not isinstance(node, ast.Call):
        return Call(None, {}, "python", f"{type(node).__name__} in the call list is not a call")
    name = _dotted(node.func)
    if name is None:
        return Call(None, {}, "python", "the called thing is not a (dotted) name")
    if node.args:
        return Call(name, {}, "python", "positional arguments (every argument must be named)")
    arguments: dict[str, Any] = {}
    try:
        for keyword in node.keywords:
            if keyword.arg is None:
                raise Unreadable("**keyword unpacking")
            if keyword.arg in arguments:
                raise Unreadable(f"argument {keyword.arg!r} given twice")
            arguments[keyword.arg] = _literal(keyword.value, 1, limits)
    except Unreadable as exc:
        return Call(name, {}, "python", str(exc))
    return Call(name, arguments, "python")


def unfence(text: str) -> str:
    """The text inside one code fence that is the whole (stripped) text; else the stripped text."""
    text = text.strip()
    match = _FENCE.match(text)
    if match and "```" not in match.group(1):
        return match.group(1).strip()
    return text


def python_calls(text: str, limits: Limits) -> list[Call] | None:
    """The calls of a text that is only a call or a list (tuple) of calls; None when it is anything else
    (prose, other code, a list of non-calls). ``[]`` is no call."""
    body = unfence(text)
    if not body:
        return None
    try:
        node = ast.parse(body, mode="eval").body
    except _PARSE_ERRORS:
        return None
    if isinstance(node, ast.Call):
        return [_python_call(node, limits)]
    if isinstance(node, ast.List | ast.Tuple):
        if node.elts and not any(isinstance(item, ast.Call) for item in node.elts):
            return None  # a list of values, not a call list
        return [_python_call(item, limits) for item in node.elts[: limits.max_calls + 1]]
    return None


def python_comments(text: str) -> str:
    """The ``#`` comments of a Python call text (prose a runtime ignores; ``auto`` reads it for hedges)."""
    body = unfence(text)
    if "#" not in body:
        return ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(body).readline))
    except (tokenize.TokenError, *_PARSE_ERRORS):
        return body  # unreadable as tokens: all of it is looked at
    return " ".join(t.string for t in tokens if t.type == tokenize.COMMENT)


# ----------------------------------------------------------------------------- json calls


def json_call(body: Any, form: str, limits: Limits, arguments_key: str = "arguments") -> Call:
    """A call from ``{"name": ..., "arguments": {...}}`` (already parsed, or JSON text)."""
    try:
        obj = strict_json(body, limits) if isinstance(body, str) else check_value(body, limits)
    except Unreadable as exc:
        return Call(None, {}, form, str(exc))
    if not isinstance(obj, dict):
        return Call(None, {}, form, "the call is not a JSON object")
    extra = sorted(set(obj) - {"name", arguments_key})
    if extra:
        return Call(None, {}, form, f"unexpected keys {extra} (a call has 'name' and {arguments_key!r})")
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return Call(None, {}, form, "no function name")
    arguments = obj.get(arguments_key)
    if not isinstance(arguments, dict):
        return Call(name, {}, form, f"{arguments_key!r} is missing or not an object")
    return Call(name, arguments, form)


def hermes_calls(text: str, limits: Limits) -> tuple[list[Call], str, list[tuple[int, int]]]:
    """Every ``<tool_call>`` tag of the text, in order, the text outside them, and each tag's span (read
    linearly: no regex backtracking). A tag never closed, or a close with no open, is an unreadable call."""
    calls: list[Call] = []
    prose: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    while len(calls) <= limits.max_calls:
        start, stray = text.find(OPEN, pos), text.find(CLOSE, pos)
        if stray != -1 and (start == -1 or stray < start):
            calls.append(Call(None, {}, "hermes", f"{CLOSE} with no {OPEN} before it"))
            prose.append(text[pos:stray])
            spans.append((stray, stray + len(CLOSE)))
            pos = stray + len(CLOSE)
            continue
        if start == -1:
            break
        prose.append(text[pos:start])
        end = text.find(CLOSE, start + len(OPEN))
        if end == -1:
            calls.append(Call(None, {}, "hermes", f"{OPEN} never closed"))
            spans.append((start, len(text)))
            return calls, "\n".join(prose), spans
        calls.append(json_call(text[start + len(OPEN) : end], "hermes", limits))
        spans.append((start, end + len(CLOSE)))
        pos = end + len(CLOSE)
    prose.append(text[pos:])
    return calls, "\n".join(prose), spans


def unseen(text: str, spans: list[tuple[int, int]]) -> str | None:
    """The first of ``spans`` that a reader of ``text`` does not see as written (struck, commented, hidden,
    in code, an entity or an invisible character inside it: :func:`rewardsmith.verifiers.reading.visible`),
    shown short; None when every one is copied verbatim into what the reader sees."""
    if not spans:
        return None
    shown = visible(text, keep_style=True).pieces  # bold or italic around a tag still shows it as written
    for start, end in spans:
        if not any(source <= start and end <= source + length for _, source, length in shown):
            return short(text[start:end], 60)
    return None


def openai_calls(message: Mapping[str, Any], limits: Limits) -> list[Call]:
    """The ``tool_calls`` of one assistant message."""
    items = message.get("tool_calls")
    if items is None:
        return []
    if not isinstance(items, Sequence) or isinstance(items, str):
        return [Call(None, {}, "openai", "tool_calls is not a list")]
    calls = []
    for item in list(items)[: limits.max_calls + 1]:
        function = item.get("function") if isinstance(item, Mapping) else None
        if not isinstance(function, Mapping) or item.get("type", "function") != "function":
            calls.append(Call(None, {}, "openai", "a tool call without a 'function' object"))
            continue
        name, arguments = function.get("name"), function.get("arguments")
        if not isinstance(name, str) or not name:
            calls.append(Call(None, {}, "openai", "no function name"))
            continue
        if isinstance(arguments, str):
            try:
                arguments = strict_json(arguments, limits) if arguments.strip() else None
            except Unreadable as exc:
                calls.append(Call(name, {}, "openai", f"arguments: {exc}"))
                continue
        calls.append(json_call({"name": name, "arguments": arguments}, "openai", limits))
    return calls


# ----------------------------------------------------------------------------- a completion


Turn = tuple[Region, Mapping[str, Any] | None]


def _assistant_turns(completion: Text, prompt_opens_think: bool = False) -> list[Turn]:
    """(answer region, message) for each assistant turn the policy generated: its source without reasoning blocks
    (:func:`~rewardsmith.verifiers.reading.source_region`, the rule every family reads by), as a runtime's
    reasoning parser hands it to the tool parser; a plain string is one turn without a message."""
    if isinstance(completion, str):
        return [(source_region(completion, prompt_opens_think), None)]
    turns = [m for m in completion if isinstance(m, Mapping) and m.get("role", "assistant") == "assistant"
             and m.get("sampled", True) is not False]  # an assistant turn the policy did not generate is context
    return [(source_region(message_text([m]), prompt_opens_think), m) for m in turns]


def size(turns: list[Turn]) -> int:
    """Characters the reader would look at: the answer region of every assistant turn and its tool calls."""
    total = 0
    for region, message in turns:
        total += len(region.text)
        if message is not None and message.get("tool_calls") is not None:
            try:
                total += len(json.dumps(message["tool_calls"], default=str))
            except (*_PARSE_ERRORS, ValueError):
                total += 10**9
    return total


def read_calls(
    completion: Text, fmt: str, limits: Limits, offered: Sequence[str] = (), prompt_opens_think: bool = False
) -> Reading:
    """Every call the completion makes in ``fmt`` (``auto``: whichever one format it uses).

    The calls are read from the answer region (the source without its reasoning blocks) in the accepted
    format; then the rest of that region is looked at. Under ``auto``, calls in two formats are a hedge. In
    every format, a tag a reader does not see as written (struck, commented, hidden, in code) and anything
    outside the calls that looks like a call in any syntax (:mod:`~rewardsmith.verifiers.tool_call.stray`)
    void the reading: the reading carries a problem and no call counts. A completion with no call but
    such a look-alike has ``unread`` set (a call in a syntax not read is still a call attempted).
    """
    turns = _assistant_turns(completion, prompt_opens_think)
    closed_nothing = any(region.stray_close for region, _ in turns)
    if size(turns) > limits.max_chars:
        return Reading(problem=f"the completion is over {limits.max_chars} characters", stray_close=closed_nothing)
    reading = Reading(stray_close=closed_nothing)
    prose: list[str] = []
    hidden: str | None = None
    followed = ""  # what follows the last call of a turn: outside the grammar, the calls are not its last word
    wanted = FORMATS if fmt == "auto" else (fmt,)
    for region, message in turns:
        text = region.text
        found: list[Call] = []
        if "openai" in wanted and message is not None:
            found += openai_calls(message, limits)
        if "python" in wanted and (python := python_calls(text, limits)) is not None:
            found += python  # a whole-text Python call list: a tag in it is inside a string or a comment
            prose.append(python_comments(text))
        elif "hermes" in wanted and (OPEN in text or CLOSE in text):
            tagged, outside, spans = hermes_calls(text, limits)
            found += tagged
            prose.append(outside)
            hidden = hidden or unseen(text, spans)
            followed = followed or (trailing(text, spans[-1][1]) if spans else "")
        else:
            prose.append(text)
        reading.calls += found
        for call in found:
            if call.form not in reading.forms:
                reading.forms.append(call.form)
        if len(reading.calls) > limits.max_calls:
            reading.problem, reading.calls = f"more than {limits.max_calls} calls", []
            return reading
    stray = stray_call("\n".join(prose), offered)
    if fmt == "auto" and len(reading.forms) > 1:
        reading.problem = f"calls in two formats ({', '.join(reading.forms)}): a hedge"
    elif hidden is not None:
        reading.problem = f"a call a reader does not see as written (struck, commented, hidden or in code): {hidden!r}"
    elif stray is not None and reading.calls:
        reading.problem = f"a call outside the {reading.forms[0]} calls ({stray!r}): two call sets, a hedge"
    elif followed and reading.calls:
        reading.problem = (f"the calls are not the completion's last statement: {short(followed, 60)!r} follows them "
                           "(only closing marks and closing sentences may)")
    elif stray is not None:
        reading.unread = stray
    return reading
