"""A recording environment writes what each call did onto the rollout's tool messages; nothing is read from
the results' text."""

from __future__ import annotations

import inspect

import pytest

from rewardsmith.adapters.trainers.recorded_tools import RanCall, RecordsCalls, with_statuses


class Env(RecordsCalls):
    def reset(self, **kwargs):
        return "ready"

    def divide(self, a: int, b: int) -> float:
        """Divide.

        Args:
            a: numerator.
            b: denominator.
        """
        return a / b

    def slow(self) -> str:
        """Never answers in time."""
        raise TimeoutError("took too long")


def test_each_call_is_recorded_as_it_ran_and_reset_starts_anew():
    env = Env()
    assert env.divide(6, 3) == 2
    with pytest.raises(ZeroDivisionError):
        env.divide(1, 0)
    with pytest.raises(TypeError):
        env.divide(x=1)
    with pytest.raises(TimeoutError):
        env.slow()
    assert env.records == [RanCall("divide", "ok"), RanCall("divide", "error"),
                           RanCall("divide", "bad_arguments"), RanCall("slow", "timeout")]
    assert env.reset() == "ready" and env.records == []
    # the tool keeps what a trainer builds its schema from
    assert inspect.signature(Env.divide).parameters.keys() == {"self", "a", "b"}
    assert Env.divide.__doc__.startswith("Divide.")
    assert Env.tool_names() == {"divide", "slow"}


def test_statuses_follow_the_records_in_call_order_and_never_the_text():
    env = Env()
    env.divide(6, 3)
    with pytest.raises(ZeroDivisionError):
        env.divide(1, 0)
    messages = [{"role": "assistant", "content": ""},
                {"role": "tool", "name": "divide", "content": "{'error': 'division by zero'}"},  # ran fine: ok
                {"role": "tool", "name": "divide", "content": "2.0"},  # failed: error
                {"role": "tool", "name": "nope", "content": "42"},  # no such tool
                {"role": "tool", "name": "divide", "content": "3"}]  # no record left
    out = with_statuses(messages, env)
    assert [m.get("status") for m in out] == [None, "ok", "error", "unknown_tool", None]
    assert "status" not in messages[1]  # the input is not changed
    assert with_statuses(messages, object()) == messages  # an environment that does not record


def test_records_that_part_ways_with_the_messages_vouch_for_nothing_after():
    env = Env()
    env.divide(6, 3)
    env.divide(8, 2)
    messages = [{"role": "tool", "name": "slow", "content": "x"}, {"role": "tool", "name": "divide", "content": "2"}]
    assert [m.get("status") for m in with_statuses(messages, env)] == [None, None]
