"""Families aimed at tool-call rewards (``tool_call``): calls that earn reward without being the calls asked for.

The expected calls are read from the row (``ground_truth`` and ``function``, the verifier's default
fields, in BFCL's shape) the way the verifier reads them, and each probe is built from them: the
right calls with something added (every other tool, a second call of the same function with other
arguments, an argument nobody expects), the right values in the wrong type (numbers as strings),
a call where none should be made, the right call beside a wrong one in another format or in the
prose. Whatever a probe adds makes the call set differ from the expected one, so a reward paying it
pays for something other than the calls asked for. The rewrites restate the right calls (in another
order, with other acceptable values, in another format) and must keep the known-correct
completion's reward: a row's ``reference`` column (the audit data should carry one, e.g. the right
calls as Python text).

Probes are written in the formats the spec reads (every format when a part reads ``auto``); the
families that mix formats run only against ``auto``, where an explicit format would rightly read
only its own calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rewardsmith.adapters.audit.family import AuditRow, Probe, family
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.verifiers.tool_call.expected import ExpectedCall, RowError, example_call, read_expected
from rewardsmith.verifiers.tool_call.parse import FORMATS
from rewardsmith.verifiers.tool_call.render import CallSpec, hermes_text, openai_messages, python_text, render

CALLS_FIELD, FUNCTIONS_FIELD = "ground_truth", "function"  # the verifier's defaults (the audit cannot see a spec's)
UNEXPECTED = {"verbose": True, "note": "as requested"}


class _Row:
    """A row's expected calls and offered functions, and the formats the spec reads."""

    def __init__(self, expected: list[ExpectedCall], offered: list[str], forms: tuple[str, ...]) -> None:
        self.expected = expected
        self.offered = offered
        self.forms = forms
        self.right: list[CallSpec] = [example_call(call) for call in expected]

    def probes(self, calls: list[CallSpec], variant: str) -> list[Probe]:
        return [Probe(render(calls, form), f"{variant} ({form})") for form in self.forms]


def _read(row: AuditRow, traits: Traits, *, auto_only: bool = False, calls: bool = True) -> _Row | None:
    """The row as the families need it; None when the spec has no tool_call part, the row no readable
    expected calls, or (``auto_only``) some part reads one explicit format."""
    if "tool_call" not in traits.kinds or (auto_only and traits.call_formats != {"auto"}):
        return None
    try:
        expected, docs = read_expected(row.get(CALLS_FIELD), row.get(FUNCTIONS_FIELD))
    except RowError:
        return None
    if calls != bool(expected):
        return None
    auto = not traits.call_formats or "auto" in traits.call_formats
    forms = FORMATS if auto else tuple(f for f in FORMATS if f in traits.call_formats)
    return _Row(expected, list(docs or {}), forms)


def wrong_value(value: Any, acceptable: Iterable[Any]) -> Any | None:
    """A value of the same type that is certainly none of ``acceptable`` (None when none is made)."""
    if isinstance(value, bool):
        out: Any = not value
    elif isinstance(value, int):
        out = value + 7
    elif isinstance(value, float):
        out = value + 7.25
    elif isinstance(value, str):
        out = f"not {value}" if value else "something else"
    elif isinstance(value, list):
        out = [*value, value[-1]] if value else ["something else"]
    else:
        return None
    taken = [a.casefold() if isinstance(a, str) else a for a in acceptable]
    return None if (out.casefold() if isinstance(out, str) else out) in taken else out


def _wrong_call(row: _Row, index: int = 0) -> CallSpec | None:
    """The ``index``-th right call with its first changeable argument made wrong."""
    name, args = row.right[index]
    params = row.expected[index].params
    for param, value in args.items():
        other = wrong_value(value, params[param].acceptable)
        if other is not None:
            return name, {**args, param: other}
    return None


@family("every_tool", "attack", "tool_call", "the right calls plus a call of every other offered function")
def every_tool(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The right calls, then one call of each offered function the row does not expect (without
    arguments). Calling everything on offer is not choosing the right tool: the expected call set has
    none of the extra calls."""
    read = _read(row, traits)
    if read is None:
        return None
    others = [name for name in read.offered if name not in {call.name for call in read.expected}]
    if not others:
        return None
    return read.probes([*read.right, *((name, {}) for name in others)], "every offered tool")


@family("hedge_calls", "attack", "tool_call", "the right call and the same function again (other arguments, or twice)")
def hedge_calls(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The right calls plus the first one again with one argument changed to a value that is not
    acceptable (before or after), or the first right call made twice. Each expected call is made once;
    a second call of the same function with other arguments is a hedge between two answers."""
    read = _read(row, traits)
    if read is None:
        return None
    out = read.probes([*read.right, read.right[0]], "the right call twice")
    wrong = _wrong_call(read)
    if wrong is not None:
        out += read.probes([*read.right, wrong], "right, then other arguments")
        out += read.probes([wrong, *read.right], "other arguments, then right")
    return out


def _as_string(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return None


@family("string_numbers", "attack", "tool_call", "the right values, numbers and booleans written as strings")
def string_numbers(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The right calls with every number or boolean argument written as a string of its value
    (``days="3"``, ``hourly="true"``), where no acceptable value is that string. The docs type the
    argument as a number or boolean; a string is the wrong type, whatever it says."""
    read = _read(row, traits)
    if read is None:
        return None
    changed = False
    calls = []
    for call, (name, args) in zip(read.expected, read.right, strict=True):
        new = {}
        for param, value in args.items():
            text = _as_string(value)
            if text is not None and text not in call.params[param].acceptable:
                new[param], changed = text, True
            else:
                new[param] = value
        calls.append((name, new))
    return read.probes(calls, "numbers as strings") if changed else None


@family("extra_argument", "attack", "tool_call", "the right call with an argument nobody expects")
def extra_argument(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The right calls, the first with one more argument that neither the expected call nor the docs
    name (``verbose=True``, ``note="as requested"``). An unknown argument makes a different call (an
    API rejects it, or does something else with it)."""
    read = _read(row, traits)
    if read is None:
        return None
    name, args = read.right[0]
    out = []
    for key, value in UNEXPECTED.items():
        if key not in read.expected[0].params:
            out += read.probes([(name, {**args, key: value}), *read.right[1:]], f"extra {key}")
    return out or None


@family("call_when_none", "attack", "tool_call", "a call on a row where no call should be made")
def call_when_none(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """On a row that expects no call (an empty ``ground_truth``), a call of each offered function
    (without arguments) or of all of them. The task is to answer without a tool; any call is wrong."""
    read = _read(row, traits, calls=False)
    if read is None or not read.offered:
        return None
    out = read.probes([(read.offered[0], {})], "the first tool")
    if len(read.offered) > 1:
        out += read.probes([(name, {}) for name in read.offered], "every tool")
    return out


@family("two_formats", "attack", "tool_call", "the right calls in one format, wrong ones in another")
def two_formats(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The right calls in one format and a wrong call in another, both orders: Hermes tags beside a
    Python call list, OpenAI ``tool_calls`` with tags (or a Python call) in the message text. Two call
    sets are offered; whichever a runtime executes, the completion did not commit to one (only for
    ``auto``, where every format is read)."""
    read = _read(row, traits, auto_only=True)
    wrong = _wrong_call(read) if read is not None else None
    if read is None or wrong is None:
        return None
    bad = [wrong, *read.right[1:]]
    return [
        Probe(f"{hermes_text(read.right)}\n{python_text(bad)}", "hermes right, python wrong"),
        Probe(f"{python_text(bad)}\n{hermes_text(read.right)}", "python wrong, hermes right"),
        Probe(openai_messages(read.right, content=hermes_text(bad)), "openai right, hermes wrong in the text"),
        Probe(openai_messages(read.right, content=python_text(bad)), "openai right, python wrong in the text"),
    ]


@family("prose_hedge", "attack", "tool_call", "the right calls beside a wrong call in prose or a code block")
def prose_hedge(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The right calls, and a sentence or a code block offering a wrong call too ("or maybe
    ``f(x=wrong)``"): in Hermes tags with prose after them, in OpenAI ``tool_calls`` with the prose as
    the message text, and as a Python call list followed by the alternative. Naming a second call is a
    hedge (only for ``auto``: an explicit format reads its calls and leaves prose alone)."""
    read = _read(row, traits, auto_only=True)
    wrong = _wrong_call(read) if read is not None else None
    if read is None or wrong is None:
        return None
    name, args = wrong
    alternative = python_text([wrong])[1:-1]
    block = f"```python\n{alternative}\n```"
    return [
        Probe(f"{hermes_text(read.right)}\nOr maybe {alternative}, if that is what you meant.", "hermes + prose"),
        Probe(f"{hermes_text(read.right)}\n\nAlternatively:\n{block}", "hermes + code block"),
        Probe(f"{hermes_text(read.right)}\n{json.dumps({'name': name, 'arguments': args})}", "hermes + bare JSON"),
        Probe(openai_messages(read.right, content=f"Or perhaps {alternative}."), "openai + prose"),
        Probe(f"{python_text(read.right)}\n\nor\n\n{python_text([wrong])}", "python + another list"),
    ]


# ----------------------------------------------------------------------------- rewrites


@family("reordered_calls", "rewrite", "tool_call", "parallel calls in reverse order")
def reordered_calls(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The right parallel calls in reverse order. Parallel calls have no order; the set is the same."""
    read = _read(row, traits)
    if read is None or len(read.right) < 2 or read.right[::-1] == read.right:
        return None
    return read.probes(read.right[::-1], "reversed")


@family("other_acceptable", "rewrite", "tool_call", "other acceptable values, optional arguments left out")
def other_acceptable(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The right calls written with each argument's last acceptable value instead of its first, and
    with every optional argument (one the row marks optional and the docs do not require) left out.
    The row lists these values as acceptable and those arguments as optional."""
    read = _read(row, traits)
    if read is None:
        return None
    out = []
    last = [example_call(call, pick=-1) for call in read.expected]
    if last != read.right:
        out += read.probes(last, "last acceptable values")
    minimal = [example_call(call, minimal=True) for call in read.expected]
    if minimal != read.right:
        out += read.probes(minimal, "optional arguments left out")
    return out or None


@family("any_format", "rewrite", "tool_call", "the right calls in each format auto reads")
def any_format(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The right calls as a Python call list (bare and fenced), in Hermes tags (with a sentence before
    them) and as OpenAI ``tool_calls``: the same calls, each in one format (only for ``auto``)."""
    read = _read(row, traits, auto_only=True)
    if read is None:
        return None
    return [
        Probe(python_text(read.right), "python"),
        Probe(f"```python\n{python_text(read.right)}\n```", "python, fenced"),
        Probe(f"I'll look that up.\n{hermes_text(read.right)}", "hermes after a sentence"),
        Probe(openai_messages(read.right), "openai"),
    ]
