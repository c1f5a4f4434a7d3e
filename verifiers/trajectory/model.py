"""One agent rollout as every reward reads it: who said what, what the policy generated, what the tools did.

Each trainer carries a multi-turn rollout its own way (TRL's message lists, verl's one decoded string,
OpenRLHF's per-step observations), and each way loses something a reward must not guess: whether a
``<tool_response>`` was the environment's or typed by the policy, whether a call failed, why the rollout
stopped. A :class:`Trajectory` keeps exactly those facts, and only as recorded:

* ``sampled`` is true only for what the policy generated in this rollout (never for prompt messages,
  tool results, or an assistant message a dataset or an environment supplied);
* a tool result's ``status`` is what the environment recorded when it ran the call (``unknown`` when it
  recorded nothing), never read from the result's text: a policy that writes "status: ok" in its own turn
  has written assistant text;
* ``stop_reason`` says why the rollout ended (``done``, ``max_turns``, ``max_length``, ``tool_limit``,
  ``error``); ``None`` when the trainer did not say.

Answer verifiers read :meth:`Trajectory.final_answer` only: the last sampled assistant message without
tool calls, never a tool's output nor a context message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")
CallStatus = Literal["ok", "error", "unknown_tool", "bad_arguments", "timeout", "truncated", "unknown"]
CALL_STATUSES: tuple[CallStatus, ...] = ("ok", "error", "unknown_tool", "bad_arguments", "timeout", "truncated",
                                         "unknown")
StopReason = Literal["done", "max_turns", "max_length", "tool_limit", "error"]
STOP_REASONS: tuple[StopReason, ...] = ("done", "max_turns", "max_length", "tool_limit", "error")


@dataclass(frozen=True)
class ToolCall:
    """A call as the policy wrote it: ``raw`` is the argument text as generated; ``arguments`` the parsed
    object, or ``None`` when ``raw`` is not a JSON object (the call is then malformed, whatever ran)."""

    name: str
    raw: str
    arguments: Mapping[str, Any] | None = None
    id: str | None = None

    @property
    def well_formed(self) -> bool:
        return bool(self.name) and self.arguments is not None


@dataclass(frozen=True)
class Message:
    """One message of a trajectory. ``content`` is its visible text. A tool result names the call it
    answers (``tool_call_id``) and carries the ``status`` the environment recorded."""

    role: Role
    content: str = ""
    sampled: bool = False
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    status: CallStatus | None = None  # tool results only: what the environment recorded
    finish_reason: str | None = None  # assistant messages: the engine's (stop, length, tool_calls, ...)
    refused: bool = False  # assistant messages: it carries a refusal (OpenAI's ``refusal`` part or field)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {self.role!r}")
        if self.status is not None and self.status not in CALL_STATUSES:
            raise ValueError(f"a tool result's status must be one of {', '.join(CALL_STATUSES)}, got {self.status!r}")
        if self.role != "tool" and self.status is not None:
            raise ValueError("only a tool result carries a status")
        if self.role != "assistant" and (self.sampled or self.tool_calls or self.refused):
            raise ValueError("only an assistant message is sampled, calls tools or refuses")


@dataclass(frozen=True)
class CallRecord:
    """A sampled call with the environment's record of it: its result message (``None`` when none answered
    it) and that result's status (``unknown`` when nothing was recorded)."""

    call: ToolCall
    turn: int  # the index, in the rollout's messages, of the assistant message that made the call
    result: Message | None

    @property
    def status(self) -> CallStatus:
        if self.result is None or self.result.status is None:
            return "unknown"
        return self.result.status


@dataclass(frozen=True)
class Trajectory:
    """A rollout: the ``prompt`` messages it started from, the ``messages`` of the rollout, why it stopped,
    the row's dataset ``fields`` and an optional reward the environment computed itself."""

    prompt: tuple[Message, ...] = ()
    messages: tuple[Message, ...] = ()
    stop_reason: StopReason | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    env_reward: float | None = None

    def __post_init__(self) -> None:
        if self.stop_reason is not None and self.stop_reason not in STOP_REASONS:
            raise ValueError(f"stop_reason must be one of {', '.join(STOP_REASONS)}, got {self.stop_reason!r}")
        if any(m.sampled for m in self.prompt):
            raise ValueError("a prompt message is never sampled: the policy did not generate it in this rollout")

    def final_answer(self) -> Message | None:
        """The policy's last turn, when it makes no tool call; else ``None``: a rollout whose policy last called
        a tool (or never spoke) has stated no final answer, whatever a tool returned. A turn is the run of
        sampled assistant messages with no other message between them: one split across messages is read
        whole (its parts joined by a blank line), so an answer in one part and another in the next is seen."""
        turn = self.last_turn()
        if not turn or any(m.tool_calls for m in turn):
            return None
        if len(turn) == 1:
            return turn[0]
        return Message("assistant", "\n\n".join(m.content for m in turn), sampled=True,
                       finish_reason=turn[-1].finish_reason, refused=any(m.refused for m in turn))

    def last_turn(self) -> list[Message]:
        """The messages of the policy's last turn (see :meth:`final_answer`); empty when it never spoke."""
        turns = self.turns()
        return turns[-1] if turns else []

    def turns(self) -> list[list[Message]]:
        """The policy's turns, in order: each the run of sampled assistant messages with no other message
        between them."""
        grouped: dict[int, list[Message]] = {}
        for i, turn in self.turn_numbers().items():
            grouped.setdefault(turn, []).append(self.messages[i])
        return [grouped[t] for t in sorted(grouped)]

    def turn_numbers(self) -> dict[int, int]:
        """The policy turn (from 0) each sampled assistant message belongs to, by its index in ``messages``."""
        numbers: dict[int, int] = {}
        turn, previous = -1, False
        for i, message in enumerate(self.messages):
            sampled = message.role == "assistant" and message.sampled
            if sampled and not previous:
                turn += 1
            if sampled:
                numbers[i] = turn
            previous = sampled
        return numbers

    def sampled_turns(self) -> list[tuple[int, Message]]:
        """(index in ``messages``, message) of each assistant message the policy generated."""
        return [(i, m) for i, m in enumerate(self.messages) if m.role == "assistant" and m.sampled]

    def calls(self) -> list[CallRecord]:
        """Every call the policy made, in order, each with the tool result that answers it: by id when the
        call has one, else the next unanswered tool result after its turn (chat templates without ids)."""
        records: list[CallRecord] = []
        used: set[int] = set()
        for turn, message in self.sampled_turns():
            for call in message.tool_calls:
                at = _result_for(self.messages, turn, call, used)
                if at is not None:
                    used.add(at)
                records.append(CallRecord(call, turn, None if at is None else self.messages[at]))
        return records


def _result_for(messages: tuple[Message, ...], turn: int, call: ToolCall, used: set[int]) -> int | None:
    for i in range(turn + 1, len(messages)):
        message = messages[i]
        if message.role == "assistant" and message.sampled:
            return None  # the policy spoke again: no later result answers this call
        if message.role != "tool" or i in used:
            continue
        if call.id is None or message.tool_call_id is None or message.tool_call_id == call.id:
            return i
    return None
