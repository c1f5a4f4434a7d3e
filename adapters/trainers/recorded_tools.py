"""A tool environment that records what each call did, so the reward reads statuses instead of guessing them.

TRL runs an ``environment_factory`` environment's public methods as tools and hands the reward only the
messages: a failed call reaches it as the text ``{'error': '...'}``, which the policy could have typed
itself, and a call to a tool that does not exist looks the same. Subclass :class:`RecordsCalls` and each
call is recorded as it runs (``ok``, ``bad_arguments`` when the arguments do not fit the method,
``timeout`` for a :class:`TimeoutError`, ``error`` for any other exception, which is re-raised so the
trainer's own handling is unchanged); ``reset`` starts a new record. :func:`with_statuses` then writes each
recorded status onto the rollout's tool messages, and a call to a name the environment does not have is
``unknown_tool``: both are the environment's facts, never read from a result's text.

    class Calculator(RecordsCalls):
        def reset(self, **kwargs): ...
        def calculate(self, expression: str) -> str:
            \"\"\"Evaluate an arithmetic expression.

            Args:
                expression: The expression.
            \"\"\"
            ...

    GRPOTrainer(..., environment_factory=Calculator, reward_funcs=reward_funcs(spec))

The reward functions of :mod:`rewardsmith.adapters.trainers.trl` read the records from the ``environments``
TRL passes them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["RanCall", "RecordsCalls", "with_statuses"]

_NOT_TOOLS = ("reset", "get_reward")


@dataclass(frozen=True)
class RanCall:
    """One call the environment ran: the tool's name and what happened."""

    name: str
    status: str


class RecordsCalls:
    """Mixin for a TRL environment: every public method (a tool) records each call's status in
    ``call_records``; ``reset`` clears them. ``tool_names`` lists the tools the environment offers."""

    call_records: list[RanCall]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, member in list(vars(cls).items()):
            if not inspect.isfunction(member) or name.startswith("_"):
                continue
            if name == "reset":
                setattr(cls, name, _resetting(member))
            elif name not in _NOT_TOOLS:
                setattr(cls, name, _recording(name, member))

    @classmethod
    def tool_names(cls) -> frozenset[str]:
        return frozenset(name for name, member in inspect.getmembers(cls, predicate=inspect.isfunction)
                         if not name.startswith("_") and name not in _NOT_TOOLS)

    @property
    def records(self) -> list[RanCall]:
        return self.__dict__.setdefault("call_records", [])


def _resetting(reset: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(reset)
    def wrapper(self: RecordsCalls, *args: Any, **kwargs: Any) -> Any:
        self.records.clear()
        return reset(self, *args, **kwargs)

    return wrapper


def _recording(name: str, tool: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(tool)

    @functools.wraps(tool)  # keeps the signature and docstring TRL builds the tool schema from
    def wrapper(self: RecordsCalls, *args: Any, **kwargs: Any) -> Any:
        try:
            signature.bind(self, *args, **kwargs)
        except TypeError:
            self.records.append(RanCall(name, "bad_arguments"))
            raise
        try:
            result = tool(self, *args, **kwargs)
        except TimeoutError:
            self.records.append(RanCall(name, "timeout"))
            raise
        except Exception:
            self.records.append(RanCall(name, "error"))
            raise
        self.records.append(RanCall(name, "ok"))
        return result

    return wrapper


def with_statuses(messages: Sequence[Mapping[str, Any]], environment: Any) -> list[dict[str, Any]]:
    """``messages`` with each tool message's ``status`` from the environment's records, in call order: a tool
    message naming a tool the environment lacks is ``unknown_tool``; one the records do not account for is
    left without a status (``unknown``). An environment that does not record leaves the messages as they are."""
    if not isinstance(environment, RecordsCalls):
        return [dict(m) for m in messages]
    offered = environment.tool_names()
    pending = list(environment.records)
    out = []
    for message in messages:
        message = dict(message)
        if message.get("role") == "tool" and "status" not in message:
            name = message.get("name")
            if name not in offered:
                message["status"] = "unknown_tool"
            elif pending and pending[0].name == name:
                message["status"] = pending.pop(0).status
            else:
                pending = []  # the records and the messages part ways here: nothing after is vouched for
        out.append(message)
    return out
